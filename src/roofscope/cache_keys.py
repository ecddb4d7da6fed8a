"""Where the cache lives and what names its files: the identity of the inputs (path, size,
modification time) and the key made of it.

Apart from ``store.py`` because the answer of ``roofscope report`` kept beside a cache
(``report_memo.py``) is looked up with these before anything imports DuckDB; nothing here
loads a native library.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from roofscope.ingest.sniff import sidecars
from roofscope.schema_version import SCHEMA_VERSION


def cache_dir() -> Path:
    """``$ROOFSCOPE_CACHE_DIR``, else the platform user cache directory (XDG on Linux)."""
    override = os.environ.get("ROOFSCOPE_CACHE_DIR")
    if override:
        return Path(override)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("roofscope", appauthor=False))


def input_identity(paths: list[Path]) -> list[dict[str, object]]:
    """What makes a cache valid: resolved path, size and modification time of each input, and
    of the non-empty ``-wal``/``-journal`` beside an SQLite file (commits SQLite reads from the
    WAL change the data while the main file stays as it was)."""
    out = []
    for p in paths:
        files = [p]
        if p.is_dir():  # an nsys parquetdir, or a recording (only its complete parts)
            from roofscope.telemetry.recording import is_recording, parts

            files = parts(p) if is_recording(p) else sorted(p.iterdir())
        stats = [f.stat() for f in files]
        entry: dict[str, object] = {
            "path": str(p.resolve()),
            "size": sum(st.st_size for st in stats),
            "mtime_ns": max((st.st_mtime_ns for st in stats), default=0),
        }
        # only non-empty ones (SQLite leaves an empty one behind when nothing is pending), and
        # only then a key: caches of files without them keep their keys
        found = [(f.name[len(p.name) :], f.stat()) for f in ([] if p.is_dir() else sidecars(p))]
        if found:
            entry["sidecars"] = [[suffix, st.st_size, st.st_mtime_ns] for suffix, st in found]
        out.append(entry)
    return out


def cache_key(identity: list[dict[str, object]]) -> str:
    blob = json.dumps({"schema": SCHEMA_VERSION, "inputs": identity}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]
