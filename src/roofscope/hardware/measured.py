"""Ceilings measured on this machine by ``roofscope ceilings``, one JSON file per GPU model.

They rank between the datasheet and the report's own peaks (DESIGN.md §4, source 2): measured
at the clocks the GPU really runs (boost, power-capped), unlike ncu's locked base clock. A
file applies to reports of the same GPU model (matched through the spec table's key).
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from roofscope.atomic import write_json
from roofscope.errors import RoofscopeError

if TYPE_CHECKING:
    from roofscope.hardware.specs import GpuSpec


def measured_dir() -> Path:
    """``$ROOFSCOPE_CEILINGS_DIR``, else ``ceilings/`` in the platform user data folder."""
    env = os.environ.get("ROOFSCOPE_CEILINGS_DIR")
    if env:
        return Path(env)
    from platformdirs import user_data_dir

    return Path(user_data_dir("roofscope")) / "ceilings"


def gpu_file_key(device_name: str) -> str:
    # the spec table imported here: measured_dir() is read before roofscope open's first
    # screen (report_memo), where the table's ~9 ms of imports would be spent for nothing
    from roofscope.hardware.specs import match_device_name

    spec = match_device_name(device_name)
    if spec is not None and not spec.mig_slice:
        return spec.key
    return re.sub(r"[^a-z0-9]+", "-", device_name.casefold()).strip("-") or "gpu"


def save_measured(device_name: str, results: dict[str, Any], folder: Path | None = None) -> Path:
    """Write ``{"device", "measured_at", "ceilings": {name: {value, method}}}`` atomically."""
    folder = folder or measured_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{gpu_file_key(device_name)}.json"
        doc = {"device": device_name, "measured_at": time.strftime("%Y-%m-%d %H:%M"), **results}
        write_json(path, doc)
    except OSError as exc:
        raise RoofscopeError(
            f"cannot save measured ceilings ({exc.strerror})",
            path=str(folder),
            hint="set ROOFSCOPE_CEILINGS_DIR to a writable folder",
        ) from None
    return path


def load_measured(spec: GpuSpec | None, folder: Path | None = None) -> dict[str, Any] | None:
    """The saved measurement of this GPU model, or None (none saved, unreadable, a MIG slice)."""
    if spec is None or spec.mig_slice:
        return None
    path = (folder or measured_dir()) / f"{spec.key}.json"
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    ceilings = doc.get("ceilings")
    if not isinstance(ceilings, dict):
        return None
    good = {
        name: entry
        for name, entry in ceilings.items()
        if isinstance(entry, dict)
        and isinstance(entry.get("value"), int | float)
        and not isinstance(entry["value"], bool)
        and math.isfinite(entry["value"])
        and entry["value"] > 0
    }
    return {**doc, "ceilings": good, "path": str(path)}
