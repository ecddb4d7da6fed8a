"""``roofscope report --by launch`` streams its rows from the store (output/streamed.py,
``Report.iter_rows``): the same bytes as rendering the whole document, in every format, for
one report or several, a page and a range of launch ids at a time."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import roofscope
from roofscope.analysis import summary
from roofscope.jsonout import dumps
from roofscope.output.render import render
from roofscope.output.streamed import TABLE_MAX
from roofscope.present.text import console as plain_console
from tests.conftest import SAMPLES, SHARED, run_cli

RAW = SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"
DETAILS = SAMPLES / "resnet18_fp32_h100.ncu-details.csv"
MOBILENET = SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv"
NSYS = SHARED / "wild" / "tomarriott__GTLS__report1.sqlite"  # 23,419 launches


def _rendered(paths: list[Path], fmt: str, top: int | None = None) -> str:
    """What ``render`` writes for the whole document, rows and all, built in memory."""
    session = roofscope.load(*paths)
    try:
        doc = session.report_dict(by="launch", top=top, advice=fmt == "json")
    finally:
        session.close()
    doc = json.loads(dumps(doc, indent=None))  # as the CLI's documents are: JSON's values
    screen = io.StringIO()
    text = render(doc, fmt, plain_console(soft_wrap=False, width=200, file=screen))
    return text if text is not None else screen.getvalue()


def _cli(tmp_path: Path, paths: list[Path], fmt: str, *more: str) -> str:
    done = run_cli(
        "report", *map(str, paths), "--by", "launch", "--format", fmt, *more, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


CASES = [[RAW], [DETAILS], [RAW, MOBILENET]] + ([[NSYS]] if NSYS.exists() else [])


@pytest.mark.parametrize("paths", CASES, ids=lambda p: "+".join(x.name for x in p))
@pytest.mark.parametrize("fmt", ["json", "csv", "md"])
def test_streamed_rows_are_the_rendered_document(tmp_path, _isolated_cache, paths, fmt):
    streamed = _cli(tmp_path, paths, fmt)
    assert streamed == _rendered(paths, fmt)
    assert not list(_isolated_cache.glob("*.report.json"))  # never kept: it is the trace's size


def test_top_and_the_table(tmp_path, _isolated_cache, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    for fmt in ("json", "csv", "md", "table"):
        assert _cli(tmp_path, [RAW], fmt, "--top", "7") == _rendered([RAW], fmt, top=7), fmt


def test_a_table_of_more_rows_than_a_terminal_shows_is_refused(tmp_path, _isolated_cache):
    from tests.nsys_builder import write_many

    path = write_many(tmp_path / "many.sqlite", TABLE_MAX + 1)
    done = run_cli("report", str(path), "--by", "launch", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--top" in done.stderr
    assert "Traceback" not in done.stderr
    top = run_cli("report", str(path), "--by", "launch", "--top", "3", cwd=tmp_path)
    assert top.returncode == 0, top.stderr


@pytest.mark.parametrize("path", [RAW, DETAILS] + ([NSYS] if NSYS.exists() else []))
def test_pages_and_ranges_of_launches_give_the_rows(monkeypatch, path):
    """Pages of 7 rows from launch-id ranges of 50: every carry between pages and ranges is
    crossed; the rows are ``rows``' rows, in its order."""
    monkeypatch.setattr(summary, "STREAM_BATCH", 7)
    monkeypatch.setattr(summary, "STREAM_PARTITION", 50)
    session = roofscope.load(path)
    try:
        report = session.reports[0]
        assert list(report.iter_rows("launch")) == report.rows("launch")
        assert list(report.iter_rows("launch", 12)) == report.rows("launch", limit=12)
        row = report.rows("launch", limit=1)[0]
        assert list(report.empty_row("launch")) == list(row)
        assert report._con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'rs_rows%'"
        ).fetchone() == (0,)  # the staging tables went with the iteration
    finally:
        session.close()
