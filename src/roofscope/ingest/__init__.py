"""Readers for profiler exports; each writes the canonical tables defined in schema.py.

The format is decided by the readers' claims (``registry.py``): an SQLite file is an nsys
export, a folder of Parquet tables an nsys parquetdir (or a GPU recording, when roofscope wrote
it), a ``.ncu-rep`` goes through NVIDIA's reader (or ncu), a ``.nsys-rep`` through nsys, and a
CSV is an nsys stats table or an ncu page depending on its header.

The readers are imported when a file of their format is read, never with this package: the
cache's readers (``roofscope report`` of a cached export, the TUI) import ``roofscope.ingest``
through the store and must not pay for pyarrow (the nsys and recording readers) or the
CSV readers. The detectors tried on every file are the cheap ones, on the first bytes.

Importing this package loads no native library (the registry waits for ``ingest_file``): the
``.ncu-rep`` worker runs under it, and Nsight Compute 2025.3.1's ``ncu_report`` crashes in
``IMetric.unit`` in a process that loaded DuckDB or pyarrow first.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from roofscope.ingest.report_info import ReportInfo
from roofscope.ingest.sniff import check_input

if TYPE_CHECKING:
    import duckdb

# What a file name promises, for the formats whose content is unmistakable.
_SUFFIX_KINDS = {
    ".sqlite": "an SQLite database",
    ".sqlite3": "an SQLite database",
    ".db": "an SQLite database",
    ".parquet": "Parquet",
    ".csv": "text",
    ".tsv": "text",
    ".json": "text",
    ".txt": "text",
}


def ingest_file(con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
    """Load one export through the reader that claims it (``registry.READERS``)."""
    from roofscope.ingest.registry import layout, reader_for

    check_input(path)  # before anything opens it: a FIFO would block the first open
    info = reader_for(path).ingest(con, path, report_id)
    kind = layout(info.layout)
    if kind.counters:
        from roofscope.ingest.ncu.gaps import warn_partial_metrics

        warn_partial_metrics(con, info)
    promised = _SUFFIX_KINDS.get(path.suffix.lower())
    if promised is not None and promised != kind.container:
        info.warnings.append(
            f"the name ends in {path.suffix} but the file holds {kind.container} "
            f"({info.layout}); it was read by its content"
        )
    return info


__all__ = ["ReportInfo", "check_input", "ingest_file"]
