"""The answer of ``roofscope report``, kept beside the cache it was computed from, so that asking
again about an unchanged report costs no DuckDB, no grouping and no query (issue 31).

A cached report's work is the same every time: DuckDB's import and start (~0.25 s), the
views, the timeline and advice over every kernel. The document is therefore written, once
computed from a cache on disk, to ``<cache key>.<stamp>.report.json`` in the cache folder,
and read back when everything it was computed from is as it was:

* the store file itself (size, modification time, inode: a rebuilt cache is another file),
  and the inputs' identity (path, size, modification time; the store's own key);
* the files as the user spelled them, and every option that reaches the document (GPU,
  ceilings file, FP16 convention, grouping axis, ``--by``, ``--top``, advice);
* the grouping rules files that apply from here (``roofscope.toml`` of the working folder, the
  user's config), the ``--ceilings`` file and the measured ceilings, by path, size and time;
* every ``ROOFSCOPE_*`` variable, roofscope's version and its code (the newest modification
  time under the package, so an edited checkout never reads an older answer).

Anything else, or a memo that cannot be read, and the report is computed as before. Nothing
here imports DuckDB, pyarrow or rich.

The TUI keeps its first screen the same way (``tui/first_screen.py``, suffix
``.first-screen.json``): one set of rules for what makes a kept answer valid.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from roofscope.atomic import write_json
from roofscope.cache_keys import cache_dir, cache_key, input_identity
from roofscope.version import __version__

SUFFIX = ".report.json"
KEPT = 8  # memos of one store (other options): the oldest beyond these go
PACKAGE = Path(__file__).resolve().parent


def memo_path(
    files: list[str], options: dict[str, Any], suffix: str = SUFFIX
) -> tuple[Path, dict[str, Any]] | None:
    """Where the document for these files and options is kept, and what it must have been
    computed from; None when there is no cache to tie it to (or an input cannot be read)."""
    try:
        identity = input_identity([Path(f) for f in files])
        key = cache_key(identity)
        store = cache_dir() / f"{key}.duckdb"
        st = store.stat()
    except OSError:
        return None
    from roofscope.grouping import config_files
    from roofscope.hardware.measured import measured_dir

    ceilings = options.get("ceilings")
    material = {
        "roofscope": __version__,
        "code": _newest(PACKAGE),
        "store": [store.name, st.st_size, st.st_mtime_ns, st.st_ino],
        "inputs": identity,
        "files": list(files),
        "options": options,
        "config": _stamps(config_files()),
        "ceilings": _stamps([Path(ceilings)]) if ceilings else None,
        "measured": _stamps(_listing(measured_dir())),
        "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith("ROOFSCOPE_")},
    }
    stamp = hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:16]
    return store.parent / f"{key}.{stamp}{suffix}", material


def read(files: list[str], options: dict[str, Any], suffix: str = SUFFIX) -> dict[str, Any] | None:
    """The document kept for these files and options, when all it came from is unchanged."""
    found = memo_path(files, options, suffix)
    if found is None:
        return None
    path, material = found
    try:
        with open(path, encoding="utf-8") as fh:
            kept = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("material") != material:
        return None
    doc = kept.get("document")
    return doc if isinstance(doc, dict) else None


def write(
    files: list[str], options: dict[str, Any], doc: dict[str, Any], suffix: str = SUFFIX
) -> None:
    """Keep ``doc`` for the next ask; a cache folder that cannot take it only costs speed."""
    found = memo_path(files, options, suffix)
    if found is None:
        return
    path, material = found
    try:
        write_json(path, {"material": material, "document": doc})
        _prune(path, suffix)
    except OSError:
        pass


def _prune(kept: Path, suffix: str) -> None:
    """Memos of the same store key and kind beyond the ``KEPT`` newest: other options, or a
    store rebuilt since (their stamp differs: never read again) go as newer ones come."""
    key = kept.name.split(".", 1)[0]
    memos = sorted(kept.parent.glob(f"{key}.*{suffix}"), key=_mtime, reverse=True)
    for old in memos[KEPT:]:
        old.unlink(missing_ok=True)


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


def _stamps(paths: list[Path]) -> list[list[Any]]:
    out: list[list[Any]] = []
    for p in paths:
        try:
            st = p.stat()
            out.append([str(p.absolute()), st.st_size, st.st_mtime_ns])
        except OSError:
            out.append([str(p.absolute()), None, None])
    return out


def _listing(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_file())
    except OSError:
        return []


def _newest(folder: Path) -> int:
    """The newest modification time of a file under ``folder`` (caches left out)."""
    newest = 0
    stack = [folder]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    stack.append(Path(entry.path))
            else:
                newest = max(newest, entry.stat(follow_symlinks=False).st_mtime_ns)
    return newest
