"""The Runs pane (6) driven through Pilot: start a run from the form, watch it, land in its
report; cancel; open a past run; the pane alone when no report is open (``roofscope profile``)."""

from __future__ import annotations

import time

import pytest
from textual.widgets import ContentSwitcher, DataTable, Input, Select

from roofscope.profiling import runner as runner_module
from roofscope.profiling import runs
from roofscope.profiling.command import RunSpec
from roofscope.tui.app import RoofscopeApp
from roofscope.tui.panes.runs import RunsPane, progress_lines
from tests.conftest import DATA, SAMPLES
from tests.screen_text import assert_snapshot
from tests.test_tui import opened, settle
from tests.test_tui_snapshots import stable_screen

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

FAKE_PYTHON = str(DATA / "fake_python.py")


@pytest.fixture
def fake_ncu(monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("torch")
    monkeypatch.setenv("ROOFSCOPE_NCU", str(DATA / "fake_ncu.py"))
    monkeypatch.setenv("FAKE_NCU_DELAY", "0.002")
    real = runner_module.Runner.__init__

    def with_stand_in_python(self, *args, **kwargs):
        kwargs.setdefault("python", FAKE_PYTHON)
        kwargs["tick"] = 0.05
        real(self, *args, **kwargs)

    monkeypatch.setattr(runner_module.Runner, "__init__", with_stand_in_python)


async def _until(pilot, condition, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.05)


async def test_a_run_from_the_form_lands_in_its_report(fake_ncu, tmp_path):
    app = RoofscopeApp([], start_pane="runs", runs_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.query_one(RunsPane)
        await pilot.pause()
        pane.query_one("#run-model", Select).value = "mlp"
        await pilot.pause()
        assert pane.query_one("#run-batch", Input).value == "128"  # the model's default
        pane.query_one("#run-batch", Input).value = "4"
        await pilot.press("1")  # no report yet: a hint, not a crash
        assert app.query_one(ContentSwitcher).current == "runs"
        await pilot.press("s")
        # the text on screen, not the Progress the runner thread is still updating
        await _until(pilot, lambda: "ETA" in str(pane.query_one("#run-detail").render()))
        detail = str(pane.query_one("#run-detail").render())
        assert "kernel " in detail and "ETA" in detail
        await _until(pilot, lambda: app.session is not None and bool(app.query("#groups")))
        await opened(app, pilot)
        assert app.session.reports[0].path.endswith("mlp_fp32_b4_roofline.ncu-raw.csv")
        assert app.query_one(ContentSwitcher).current == "kernels"
        await pilot.press("6")
        await settle(app, pilot)
        runs_pane = app.query_one(RunsPane)
        await _until(pilot, lambda: "measured" in str(runs_pane.query_one("#run-detail").render()))
        text = str(runs_pane.query_one("#run-detail").render())
        assert "done" in text and "forward" in text and "analytic" in text
        table = runs_pane.query_one("#runs-table", DataTable)
        assert table.row_count == 1 and "done" in [str(c) for c in table.get_row_at(0)]


async def test_cancel_from_the_pane(fake_ncu, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_DELAY", "0.05")
    app = RoofscopeApp([], start_pane="runs", runs_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.query_one(RunsPane)
        pane.query_one("#run-model", Select).value = "cnn"
        await pilot.pause()
        pane.query_one("#run-batch", Input).value = "2"
        await pilot.press("s")
        await _until(pilot, lambda: pane.progress is not None and pane.progress.done >= 2)
        await pilot.press("c")
        await _until(pilot, lambda: pane.runner is None)
        [run] = runs.list_runs(tmp_path)
        assert run.status == runs.CANCELLED
        assert app.session is None  # nothing opened


async def test_bad_batch_in_the_form_is_a_notification(fake_ncu, tmp_path):
    app = RoofscopeApp([], start_pane="runs", runs_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.query_one(RunsPane)
        pane.query_one("#run-batch", Input).value = "0"
        await pilot.press("s")
        await pilot.pause()
        assert pane.runner is None and not runs.list_runs(tmp_path)
        assert any("batch must be at least 1" in n.message for n in app._notifications)


def _past_run(root, model: str, status: str, started: float, report: bool) -> runs.Run:
    run = runs.new_run(RunSpec(model, batch=8), root)
    run.status, run.started, run.finished = status, started, started + 201.5
    run.kernels, run.expected_kernels = 361, 361
    if report:
        target = run.folder / "resnet18_fp32_b8_roofline.ncu-raw.csv"
        target.write_bytes((SAMPLES / "resnet18_fp32_h100.ncu-raw.csv").read_bytes())
        run.report = target.name
    else:
        run.error = "ERR_NVGPUCTRPERM"
    run.save()
    return run


def _first(app: RoofscopeApp) -> str:
    return app.session.reports[0].path


async def test_open_a_past_run_with_enter(tmp_path, in_tmp_cwd, monkeypatch):
    monkeypatch.setenv("ROOFSCOPE_NCU", "/nowhere/ncu")
    _past_run(tmp_path, "resnet18", runs.DONE, 1_700_000_000, report=True)
    _past_run(tmp_path, "vgg11", runs.FAILED, 1_700_000_500, report=False)
    app = RoofscopeApp([str(SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv")], runs_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(app, pilot)
        await pilot.press("6")
        await settle(app, pilot)
        table = app.query_one("#runs-table", DataTable)
        assert [str(table.get_row_at(i)[1]) for i in range(2)] == ["vgg11", "resnet18"]
        await pilot.press("o")  # the failed run has no report
        await pilot.pause()
        assert app.session.reports[0].path.endswith("mobilenetv2_fp32_h100.ncu-raw.csv")
        await pilot.press("down", "enter")
        await _until(
            pilot, lambda: app.session is not None and "resnet18" in app.session.reports[0].path
        )
        await opened(app, pilot)
        assert app.query_one(ContentSwitcher).current == "kernels"


async def test_runs_pane_snapshot_80x24(tmp_path, in_tmp_cwd, monkeypatch):
    monkeypatch.setenv("ROOFSCOPE_NCU", "/nowhere/ncu")
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    root = in_tmp_cwd / "runs"
    _past_run(root, "resnet18", runs.DONE, 1_700_000_000, report=True)
    _past_run(root, "vgg11", runs.FAILED, 1_700_000_500, report=False)
    app = RoofscopeApp([], start_pane="runs", runs_dir="runs")
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(RunsPane)
        await settle(app, pilot)
        screen = await stable_screen(app, pilot)
        assert "ncu not found" in screen and "resnet18" in screen and "failed" in screen
        assert pane.query_one("#runs-table", DataTable).row_count == 2
        assert_snapshot("runs_80x24", screen)


def test_progress_lines_show_bar_eta_and_kernel():
    from roofscope.profiling.progress import Progress

    p = Progress(expected=10)
    assert progress_lines(p, 80)[0].startswith("starting")
    p.feed("==ROOFSCOPE== phase backward")
    for i in range(5):
        p.feed(f'==PROF== Profiling "k{i}" - {i}: 0%....50%....100% - 17 passes')
    p.first_kernel_at = time.monotonic() - 5
    bar, counts, now = progress_lines(p, 80, ascii_only=True)
    assert bar.count("#") == bar.count("-") and bar.endswith(" 50%")
    assert "kernel 5/10 · backward" in counts and "ETA 0:05" in counts
    assert now.startswith("now: k4")
