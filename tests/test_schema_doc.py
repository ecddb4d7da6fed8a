"""docs/schema.md lists the tables of roofscope/schema.py: same names, same columns, same order."""

from __future__ import annotations

import re

from roofscope.schema import PER_REPORT, RECORDING_COLUMNS, TABLES
from tests.conftest import REPO

DOC = REPO / "docs" / "schema.md"
RECORDING = "the recording's columns (below)"  # gpu_samples' cell stands for them
MORE = "…"  # columns that depend on the report follow


def _rows(header: str) -> list[list[str]]:
    """The cells of the Markdown table whose header row starts with ``header``."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    rows: list[list[str]] = []
    for i, line in enumerate(lines):
        if not line.startswith(header):
            continue
        for row in lines[i + 2 :]:
            if not row.startswith("|"):
                break
            rows.append([cell.strip() for cell in row.strip("|").split("|")])
    return rows


def _recording_columns() -> list[str]:
    return [name for row in _rows("| column |") for name in re.findall(r"`([^`]+)`", row[0])]


def _documented() -> list[tuple[str, list[str]]]:
    out = []
    for name, columns, _what in _rows("| table |"):
        cells = [c.strip() for c in columns.split(",")]
        expanded = [
            c for cell in cells for c in (_recording_columns() if cell == RECORDING else [cell])
        ]
        out.append((name.strip("`"), expanded))
    return out


def _defined() -> list[tuple[str, list[str]]]:
    fixed = [(t.name, list(t.names)) for t in TABLES]
    per_report = [(f"{p.prefix}{{N}}", [*p.names, *([MORE] if p.more else [])]) for p in PER_REPORT]
    return fixed + per_report


def test_doc_lists_the_tables_of_schema_py_in_order():
    assert [name for name, _ in _documented()] == [name for name, _ in _defined()]


def test_doc_lists_each_tables_columns_in_order():
    assert _documented() == _defined()


def test_doc_lists_the_recording_columns_gpu_samples_stores():
    assert _recording_columns() == [name for name, _ in RECORDING_COLUMNS]


def test_a_layout_without_rows_to_read_back_gets_derived_values_only():
    """A layout no reader lists (a cache of a format since removed) must not crash Detail: it
    shows the derived values only."""
    import duckdb

    from roofscope.ingest.registry import launch_values

    con = duckdb.connect()
    con.execute(
        "CREATE TABLE reports (report_id INT, layout VARCHAR, raw_values VARCHAR, "
        "decimal VARCHAR, path VARCHAR)"
    )
    con.execute("INSERT INTO reports VALUES (0, 'rocprof-csv', NULL, '.', 'x.csv')")
    assert launch_values(con, 0, 0, lambda path: None) == []
