"""The Kernels pane's first screen kept beside the cache (issue 31, item 3): a re-open draws it
before DuckDB is imported, the same rows the session then shows, and keys typed meanwhile wait
for the session instead of acting on nothing.

Driven through Textual's Pilot on real reports, with the session's load held back by a gate,
so "before the session is there" is a state the test controls rather than a race it hopes to
win. bench/startup.py measures the time it saves (docs/performance.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from textual.widgets import ContentSwitcher, DataTable

import roofscope.session.core as session_core
from roofscope.errors import RoofscopeError
from roofscope.tui import first_screen
from roofscope.tui.app import RoofscopeApp
from roofscope.tui.panes.kernels import KernelsPane
from roofscope.tui.state import Change
from tests.conftest import SAMPLES, shared
from tests.test_tui import opened, settle

pytestmark = pytest.mark.slow  # loads real reports and drives the TUI

RESNET = str(SAMPLES / "resnet18_fp32_h100.ncu-raw.csv")
NSYS = ("public", "Jorgedavyd__cuda__profiling_report1.sqlite")  # a real nsys export
# as `roofscope open FILE` passes them (cli/commands.py)
OPTIONS = {"gpu": None, "ceilings": None, "fp16_convention": "ncu", "use_cache": True}
OPTIONS = {**OPTIONS, "axis": "rules"}


def kept(cache: Path) -> list[Path]:
    return sorted(cache.glob(f"*{first_screen.SUFFIX}"))


def shown(app: RoofscopeApp) -> list[list[str]]:
    """The groups table as drawn: every cell's text, row by row, with the header."""
    table = app.query_one("#groups", DataTable)
    header = [str(c.label) for c in table.ordered_columns]
    rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
    return [header, *rows]


def status(app: RoofscopeApp) -> str:
    return str(app.query_one("#kernels-status").render())


async def open_once(path: str, pilot_size=(120, 40)) -> tuple[list[list[str]], str]:
    """Open ``path`` as the CLI does with no kept screen; what it drew once the session was
    there (and, by then, the screen it kept)."""
    app = RoofscopeApp([path], **OPTIONS)
    async with app.run_test(size=pilot_size) as pilot:
        await opened(app, pilot)
        return shown(app), status(app)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """``session.load`` waits until the test sets the returned event."""
    release = threading.Event()
    real = session_core.load

    def held(*args, **kwargs):
        assert release.wait(60), "the test never let the session load"
        return real(*args, **kwargs)

    monkeypatch.setattr(session_core, "load", held)
    return release


@pytest.mark.parametrize("which", ["ncu", "nsys"])
async def test_a_re_open_draws_the_kept_screen_before_the_session_and_the_same_after(
    which, tmp_path, monkeypatch, in_tmp_cwd, gate
):
    path = RESNET if which == "ncu" else str(shared(*NSYS))
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(tmp_path))
    gate.set()
    live, live_status = await open_once(path)
    assert len(kept(tmp_path)) == 1, "the first open kept its first screen"

    screen = first_screen.read([path], OPTIONS)
    assert screen is not None
    gate.clear()
    app = RoofscopeApp([path], first=screen, **OPTIONS)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(5):
            await pilot.pause()
        # drawn from the kept screen: no session, DuckDB's rows not asked for
        assert app.session is None
        assert shown(app) == live
        assert status(app).startswith(live_status.split(" · ")[0])
        assert "loading the report" in status(app)
        gate.set()
        await opened(app, pilot)
        await settle(app, pilot)
        assert app.session is not None
        assert shown(app) == live and status(app) == live_status
        assert not app.later, "the other panes mounted once the session was there"
        assert len(app.query_one(ContentSwitcher).children) > 1
    assert len(kept(tmp_path)) == 1, "an unchanged screen is not written again"


async def test_keys_typed_before_the_session_act_once_it_is_there(
    tmp_path, monkeypatch, in_tmp_cwd, gate
):
    """Down then Enter on the kept screen: nothing happens until the session loads, then the
    second group opens, as if they had been typed after."""
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(tmp_path))
    gate.set()
    await open_once(RESNET)
    screen = first_screen.read([RESNET], OPTIONS)
    assert screen is not None
    gate.clear()
    app = RoofscopeApp([RESNET], first=screen, **OPTIONS)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        second = str(app.query_one("#groups", DataTable).get_row_at(1)[0])
        await pilot.press("down", "enter")
        pane = app.query_one(KernelsPane)
        assert pane.drilled_group is None and app.session is None  # waiting, not lost
        gate.set()
        await opened(app, pilot)
        for _ in range(20):
            await settle(app, pilot)
            if pane.pager is not None:
                break
        assert pane.drilled_group is not None and pane.drilled_group.startswith(second[:8])
        assert pane.pager is not None and pane.pager.count > 0


async def test_a_load_that_fails_behind_the_kept_screen_leaves_with_its_one_line(
    tmp_path, monkeypatch, in_tmp_cwd
):
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(tmp_path))
    await open_once(RESNET)
    screen = first_screen.read([RESNET], OPTIONS)
    assert screen is not None

    def broken(*args, **kwargs):
        raise RoofscopeError("the cache went away", hint="open it again")

    monkeypatch.setattr(session_core, "load", broken)
    app = RoofscopeApp([RESNET], first=screen, **OPTIONS)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(20):
            await pilot.pause()
            if app.return_code is not None:
                break
    assert app.return_code == 2
    assert app.fatal_line is not None and "the cache went away" in app.fatal_line


async def test_a_kept_screen_is_read_only_while_everything_it_came_from_is_unchanged(
    tmp_path, monkeypatch, in_tmp_cwd
):
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(tmp_path))
    copy = tmp_path / "report.csv"
    copy.write_bytes(Path(RESNET).read_bytes())
    await open_once(str(copy))
    assert first_screen.read([str(copy)], OPTIONS) is not None
    # other options: another screen (another axis groups otherwise; no cache, nothing kept)
    assert first_screen.read([str(copy)], {**OPTIONS, "axis": "nvtx-inner"}) is None
    assert first_screen.read([str(copy)], {**OPTIONS, "use_cache": False}) is None
    assert first_screen.read([str(copy)], {**OPTIONS, "gpu": "A100"}) is None
    # a project rules file appearing in the working folder regroups: not the kept screen
    (in_tmp_cwd / "roofscope.toml").write_text('[[groups]]\npattern = "conv"\nname = "C"\n')
    assert first_screen.read([str(copy)], OPTIONS) is None
    (in_tmp_cwd / "roofscope.toml").unlink()
    assert first_screen.read([str(copy)], OPTIONS) is not None
    # the report rewritten (a new profile in its place): the cache and its screen are stale
    os.utime(copy, ns=(copy.stat().st_atime_ns, copy.stat().st_mtime_ns + 10**9))
    assert first_screen.read([str(copy)], OPTIONS) is None


async def test_a_damaged_kept_screen_is_read_as_none(tmp_path, monkeypatch, in_tmp_cwd):
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(tmp_path))
    await open_once(RESNET)
    (path,) = kept(tmp_path)
    good = json.loads(path.read_text())
    breakages = [
        lambda d: d["document"].pop("groups"),
        lambda d: d["document"]["groups"].__setitem__("rows", [{"no name": 1}]),
        lambda d: d["document"]["groups"].__setitem__("rows", "[not a list]"),
        lambda d: d["document"]["heading"].__setitem__("kind", "spreadsheet"),
        lambda d: d["document"]["groups"].__setitem__("missing", 3),
    ]
    for breakage in breakages:
        broken = json.loads(json.dumps(good))
        breakage(broken)
        path.write_text(json.dumps(broken))
        assert first_screen.read([RESNET], OPTIONS) is None, broken["document"]
    path.write_text(path.read_text()[:100])
    assert first_screen.read([RESNET], OPTIONS) is None
    path.write_text(json.dumps(good))
    assert first_screen.read([RESNET], OPTIONS) is not None


async def test_only_the_screen_the_options_give_is_kept(tmp_path, monkeypatch, in_tmp_cwd):
    """Once rules, axis, filter or report moved, what the pane loads next is not the screen a
    later open starts from: the app takes the hand-over back (a selection keeps it)."""
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(tmp_path))
    app = RoofscopeApp([RESNET], **OPTIONS)
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(app, pilot)
        for change in Change:
            app.state.keep_first = print
            app._changed(change)
            assert (app.state.keep_first is None) == (change is not Change.SELECTION), change


async def test_a_recording_keeps_no_first_screen(tmp_path, monkeypatch, in_tmp_cwd):
    """A GPU recording opens on Monitor: the Kernels pane mounted behind it (no groups) is not
    the screen a re-open starts from, and nothing is kept."""
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(tmp_path))
    app = RoofscopeApp([str(SAMPLES / "h100_matmul.parquet")], **OPTIONS)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(100):
            await settle(app, pilot)
            if not app.later and app.query(KernelsPane) and not app.workers._workers:
                break
        assert app.query_one(ContentSwitcher).current == "monitor"
        assert app.query(KernelsPane), "the Kernels pane was mounted and loaded"
    assert kept(tmp_path) == []


def test_the_command_line_keeps_and_finds_its_first_screen(tmp_path, monkeypatch, in_tmp_cwd):
    """``roofscope open FILE`` twice through the entry point: the first open keeps its first
    screen under the options the command line gives, the second finds it and starts from it
    (the app is run headless here, until its session is there)."""
    import asyncio

    from roofscope.cli import commands, main

    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(commands, "need_terminal", lambda *args: None)
    started: list[first_screen.FirstScreen | None] = []

    def run_headless(app: RoofscopeApp) -> int:
        started.append(app.state.first)

        async def run() -> None:
            async with app.run_test(size=(120, 40)) as pilot:
                for _ in range(200):
                    await settle(app, pilot)
                    if app.session is not None and kept(tmp_path):
                        break

        asyncio.run(run())
        return 0

    monkeypatch.setattr(commands, "_run_app", run_headless)
    assert main(["open", RESNET]) == 0
    assert len(kept(tmp_path)) == 1
    assert main(["open", RESNET]) == 0
    assert started[0] is None and started[1] is not None
    assert "batch norm" in [r["name"] for r in started[1].groups.rows]
    assert main(["open", RESNET, "--nvtx", "innermost"]) == 0  # another axis: not that screen
    assert started[2] is None


def test_the_first_screen_path_imports_no_duckdb_nor_arrow():
    """What ``roofscope open`` imports before drawing a kept screen: Textual, the app and its
    panes' registry, the kept-screen reader. DuckDB (~0.15 s) and pyarrow come after."""
    code = (
        "import sys, roofscope.cli.commands, roofscope.tui.first_screen, roofscope.tui.app\n"
        "from roofscope.tui.panes.registry import PANES\n"
        "PANES[0].load()\n"
        "roofscope.tui.first_screen.read(['report.csv'], {})\n"
        "print(sorted(m for m in ('duckdb', 'pyarrow', 'numpy', 'pandas', 'plotext') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr[-2000:]
