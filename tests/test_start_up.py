"""Start-up (issue 20, item 4): what ``roofscope --help``, a cached ``roofscope report`` and
``roofscope open`` load, checked by the modules a process imported, never by a timing.

bench/startup.py measures the times; docs/performance.md has them and docs/decisions.md says
which import is lazy and why. A test here fails when a heavy import comes back on a path that
does not use it (pyarrow and numpy ~0.15 s, pandas, Textual ~0.15 s, plotext, the readers).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import ContentSwitcher

from roofscope.grouping import BUILTIN_RULES, Grouper
from roofscope.session import load_in_thread
from roofscope.tui.app import RoofscopeApp
from roofscope.tui.panes.registry import PANES
from roofscope.tui.panes.roofline import RooflinePane
from tests.conftest import SAMPLES
from tests.test_tui import groups, opened, settle

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

SAMPLE = SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"
HEAVY = ("pyarrow", "numpy", "pandas", "textual", "plotext", "torch", "mcp")
# what the console script runs, then prints (to stderr, at exit) the modules it loaded of these
ENTRY = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: print('LOADED', json.dumps(sorted(m for m in {watch} "
    "if m in sys.modules)), file=sys.stderr))\n"
    "from roofscope.cli import main\n"
    "sys.exit(main())\n"
)


def loaded(watch: tuple[str, ...], *args: str, cache: Path | None = None) -> list[str]:
    """Of ``watch``, the modules ``roofscope ARGS`` imported (its exit code must be 0)."""
    import os

    env = dict(os.environ)
    if cache is not None:
        env["ROOFSCOPE_CACHE_DIR"] = str(cache)
    out = subprocess.run(
        [sys.executable, "-c", ENTRY.format(watch=watch), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    line = next(x for x in out.stderr.splitlines() if x.startswith("LOADED "))
    return json.loads(line.removeprefix("LOADED "))


def test_help_imports_neither_the_data_stack_nor_the_drawing():
    """``roofscope --help`` (and a command's --help) builds the parser and prints: no DuckDB,
    no Rich, no pyarrow/numpy/pandas/Textual."""
    watch = (*HEAVY, "duckdb", "rich", "roofscope.session", "roofscope.ingest")
    assert loaded(watch, "--help") == []
    assert loaded(watch, "report", "--help") == []


def test_a_cached_report_imports_no_reader_and_no_arrow(tmp_path):
    """The first ``report`` of an ncu raw page builds the cache with the CSV reader and
    pyarrow (which parses the page, ``ncu_arrow``), and no nsys reader, pandas or Textual; the
    second reads the cache: no reader is imported at all (the readers are imported by the
    dispatch, per format), nor pyarrow, numpy, pandas or Textual."""
    readers = ("roofscope.ingest.ncu.pages", "roofscope.ingest.nsys.export")
    first = loaded((*HEAVY, *readers), "report", str(SAMPLE), cache=tmp_path)
    assert first == ["numpy", "pyarrow", "roofscope.ingest.ncu.pages"]
    assert list(tmp_path.glob("*.duckdb")), "the first run left a cache"
    for fmt in ("table", "json"):  # csv and md take the table's path (no advice)
        again = loaded((*HEAVY, *readers), "report", str(SAMPLE), "--format", fmt, cache=tmp_path)
        assert again == [], fmt


def test_the_cache_side_of_the_store_imports_no_pyarrow():
    """The modules a cache reader goes through: pyarrow only where Parquet is read or written
    (the recording's columns are described without it; its errors are looked up lazily)."""
    code = (
        "import sys, roofscope.store, roofscope.schema, roofscope.ingest, "
        "roofscope.ingest.recording, roofscope.ingest.raw_rows, roofscope.telemetry.recording, "
        "roofscope.analysis.recording, roofscope.session, roofscope.output.render; "
        "print(sorted(m for m in ('pyarrow', 'numpy', 'pandas') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_the_recording_schema_is_still_the_parquet_one():
    """``SCHEMA`` (made on first use) and the pyarrow-free ``COLUMNS`` describe one table, and
    the cache's ``gpu_samples`` has a column for each."""
    from roofscope.schema import RECORDING_COLUMNS
    from roofscope.telemetry.recording import COLUMNS, SCHEMA, arrow_schema

    assert SCHEMA is arrow_schema()
    assert SCHEMA.names == [name for name, _ in COLUMNS] == [n for n, _ in RECORDING_COLUMNS]
    assert SCHEMA.metadata == {b"roofscope.recording": b"1"}
    assert (
        dict(RECORDING_COLUMNS)["processes"]
        == "STRUCT(pid BIGINT, name VARCHAR, mem_bytes BIGINT)[]"
    )
    assert dict(RECORDING_COLUMNS)["ts"] == "DOUBLE" and dict(RECORDING_COLUMNS)["gpu"] == "INTEGER"


def test_every_built_in_rule_passes_the_check_a_grouper_skips():
    """A Grouper no longer checks the built-in rules at every start (~70 ms): they are
    checked here, by the same check a user's rule gets."""
    for rule in BUILTIN_RULES:
        rule.check()
    assert Grouper(BUILTIN_RULES).match("sm90_xmma_gemm_f32f32")[0] == "GEMM"


def test_load_in_thread_hands_over_the_session_or_the_error(tmp_path, shared_sample_cache):
    session = load_in_thread(str(SAMPLE)).result(timeout=120)
    try:
        assert session.reports[0].totals()["launches"] == 361
    finally:
        session.close()
    failed = load_in_thread(str(tmp_path / "missing.csv")).exception(timeout=120)
    assert failed is not None and "no such file" in str(failed)


async def test_open_shows_a_report_opened_before_textual_and_mounts_the_rest_later(
    in_tmp_cwd, shared_sample_cache
):
    """``roofscope open`` starts opening the report before importing Textual (``opening``);
    the app mounts the start pane first and the other panes once its table is drawn, and a
    number key for a pane not mounted yet mounts it and shows it."""
    opening = load_in_thread(str(SAMPLE))
    app = RoofscopeApp([str(SAMPLE)], opening=opening)
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        assert "conv fprop" in groups(app)
        switcher = app.query_one(ContentSwitcher)
        assert switcher.children[0].id == "kernels"
        assert not app.later, "every pane is mounted once the first screen is drawn"
        assert sorted(p.id for p in switcher.children) == sorted(cls.KEY for cls in PANES)
        assert [p.id for p in switcher.children if p.display] == ["kernels"]
        await pilot.press("2")
        await settle(app, pilot)
        assert switcher.current == "roofline" and "TB/s" in app.query_one(RooflinePane).text


async def test_a_number_key_before_the_rest_is_mounted_mounts_them_and_shows_its_pane(
    in_tmp_cwd, shared_sample_cache, monkeypatch
):
    async def never(self, *args):  # the rest is not mounted on its own: only the key does it
        return None

    monkeypatch.setattr(RoofscopeApp, "_mount_later_when_ready", never)
    app = RoofscopeApp([str(SAMPLE)])
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        assert app.later and len(app.query_one(ContentSwitcher).children) == 1
        await pilot.press("3")  # Efficiency: not mounted yet
        await settle(app, pilot)
        switcher = app.query_one(ContentSwitcher)
        assert switcher.current == "efficiency" and not app.later
        assert [p.id for p in switcher.children if p.display] == ["efficiency"]
        await pilot.press("2")
        await settle(app, pilot)
        assert "TB/s" in app.query_one(RooflinePane).text


async def test_leaving_while_the_rest_mounts_waits_for_them(
    in_tmp_cwd, shared_sample_cache, monkeypatch
):
    """``q`` (or a test's end) while the other panes are still mounting: the app lets them
    finish, rather than end in a traceback from a widget pruned while it mounted (Textual's
    ``Select`` in the Runs pane). Without ``RoofscopeApp._shutdown`` this fails every time."""

    async def never(self, *args):
        return None

    monkeypatch.setattr(RoofscopeApp, "_mount_later_when_ready", never)
    app = RoofscopeApp([str(SAMPLE)])
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        app._mount_later()  # the rest starts mounting: leave at once
        await asyncio.sleep(0)
    assert app.return_code in (0, None)
