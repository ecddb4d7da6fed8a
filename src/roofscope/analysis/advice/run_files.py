"""A ``roofscope profile`` run's own files beside its export: ``analytic.json`` (the model's
FLOPs per layer and its memory model) and ``run.json`` (the settings and the step's measured
facts). Both are found in the export's folder (a run folder) or named after the export
(``x_h100.analytic.json`` beside ``x_h100.ncu-raw.csv.gz``, as the samples are)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

ANALYTIC = "analytic.json"
RUN = "run.json"


def _beside(
    path: str | Path, name: str, valid: Callable[[dict[str, Any]], bool]
) -> dict[str, Any] | None:
    export = Path(path)
    # the file named after the export first: a folder's plain one may be another run's
    for candidate in (
        export.with_name(f"{export.name.split('.')[0]}.{name}"),
        export.with_name(name),
    ):
        try:
            data = json.loads(candidate.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and valid(data):
            return data
    return None


def analytic_beside(path: str | Path) -> dict[str, Any] | None:
    """The run's ``analytic.json``; None when absent or not readable: the rules that read it
    then have nothing to compare with."""
    return _beside(path, ANALYTIC, lambda d: isinstance(d.get("layers"), list))


def run_beside(path: str | Path) -> dict[str, Any] | None:
    """The run's ``run.json``; None when absent or not readable."""
    return _beside(path, RUN, lambda d: isinstance(d.get("facts"), dict))
