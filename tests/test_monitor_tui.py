"""The Monitor pane through Pilot: cards at 80×24 for one and eight GPUs, the interval and
history keys, bounded history, followed recordings, and pane 5 inside ``roofscope open``."""

from __future__ import annotations

import pytest

from roofscope.errors import RoofscopeError
from roofscope.monitor.follow import FollowSource
from roofscope.tui.app import RoofscopeApp
from roofscope.tui.monitor_app import MonitorApp
from roofscope.tui.panes.monitor import INTERVALS, MonitorPane
from tests.conftest import SAMPLES
from tests.gpu_fakes import T0, SyntheticSource
from tests.screen_text import assert_snapshot, screen_text
from tests.test_monitor import nvml_present, record_nodes

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

BLOCKS = set("▁▂▃▄▅▆▇█")


@pytest.fixture(autouse=True)
def _utc(utc):
    """The history axis prints clock times: keep snapshots independent of the machine's zone."""


def app_with(source, **options) -> MonitorApp:
    return MonitorApp(lambda: source, autostart=False, **options)


async def fed(app: MonitorApp, pilot, source, ticks: int) -> MonitorPane:
    pane = app.pane
    pane.use_source(source, poll=False)
    for _ in range(ticks):
        pane.ingest(source.read())
    await pilot.pause()
    return pane


async def test_one_gpu_card_at_80x24_shows_every_series_and_the_process():
    src = SyntheticSource(gpus=1)
    app = app_with(src)
    async with app.run_test(size=(80, 24)) as pilot:
        await fed(app, pilot, src, 40)
        text = screen_text(app)
    lines = text.splitlines()
    assert lines[2].startswith("GPU0 H100 80GB HBM3 · 100% util · 20.0/80.0 GB · 570/700 W")
    row = {line.split()[0]: line for line in lines if line[:1].isalpha()}
    assert BLOCKS & set(row["tensor"]) and row["tensor"].endswith("60%")
    assert "4242" in text and "python" in text
    assert_snapshot("monitor-1gpu-80x24", text)


async def test_eight_gpus_fit_80x24_with_a_title_and_utilisation_each():
    src = SyntheticSource(gpus=8, gpm=False)
    app = app_with(src)
    async with app.run_test(size=(80, 24)) as pilot:
        await fed(app, pilot, src, 30)
        text = screen_text(app)
    for gpu in range(8):
        assert f"GPU{gpu} H100 80GB HBM3" in text
    assert text.count("GPU util") == 8
    assert "GPM: GPM not supported on this GPU (Hopper and later have it)" in text
    assert "tensor" not in text  # never-measured series are not drawn as flat zeros
    assert_snapshot("monitor-8gpu-80x24", text)


async def test_interval_keys_step_between_0_1_and_10_seconds():
    src = SyntheticSource()
    app = app_with(src)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await fed(app, pilot, src, 2)
        assert pane.interval == 1.0
        await pilot.press("f")
        assert pane.interval == 0.5 and "every 0.5 s" in screen_text(app)
        for _ in range(5):
            await pilot.press("f")
        assert pane.interval == INTERVALS[0] == 0.1
        for _ in range(10):
            await pilot.press("s")
        assert pane.interval == INTERVALS[-1] == 10.0
        assert pane.seconds_per_column == 10.0  # a column is never finer than a sample


async def test_scrolling_back_zooming_and_returning_to_live():
    src = SyntheticSource()
    app = app_with(src)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await fed(app, pilot, src, 600)
        await pilot.press("left")
        assert pane.end is not None and "scrolled back" in screen_text(app)
        before = pane.end
        await pilot.press("left")
        assert pane.end < before
        await pilot.press("home")
        first, _ = pane._span()
        assert pane.end == pytest.approx(first + pane._columns() * 1.0)
        util_row = next(
            line for line in screen_text(app).splitlines() if line.startswith("GPU util")
        )
        assert util_row.rstrip().endswith("%")  # the value at the window's end, not "now"
        await pilot.press("end")
        assert pane.end is None and "live" in screen_text(app)
        await pilot.press("minus", "minus")
        assert pane.seconds_per_column == 5.0
        assert f"-{pane._columns() * 5 / 60:.3g} min" in screen_text(app)  # the axis follows
        await pilot.press("plus")
        assert pane.seconds_per_column == 2.0


async def test_the_pane_history_stays_bounded_over_a_long_session():
    src = SyntheticSource(step=0.1)
    app = app_with(src, history_capacity=16)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await fed(app, pilot, src, 600)  # almost four times what 160 buckets hold unmerged
        history = pane.histories[("node01", 0)]
        assert history.buckets() <= 16 * 10 and history.added == 600
        assert history.first_ts == T0  # the session's start is still there, averaged


async def test_following_two_nodes_shows_a_card_per_node(tmp_path):
    record_nodes(tmp_path, ("node01", "node02"), gpus=1, ticks=20)
    follower = FollowSource([str(tmp_path / "node*.parquet")], clock=lambda: T0 + 19)
    app = app_with(follower)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.pane
        pane.use_source(follower, poll=False)
        pane.ingest(follower.read())  # the nodes: then the cards on screen are read
        assert pane.histories == {} and follower._watch is None
        pane.ingest(follower.read())
        await pilot.pause()
        text = screen_text(app)
        await pilot.press("f")  # a recording is not re-sampled
        assert pane.interval == 1.0
    assert "node01:0 H100" in text and "node02:0 H100" in text
    assert text.splitlines()[0].startswith("following node*.parquet · 2 nodes · 2 GPUs")
    assert_snapshot("monitor-follow-80x24", text.replace(str(tmp_path), "TMP"))


async def _idle(app, pilot, rounds: int = 10, until=lambda: False) -> None:
    """Let the app's workers finish, a few rounds (a worker may start another)."""
    for _ in range(rounds):
        await app.workers.wait_for_complete()
        await pilot.pause()
        if until():
            return


async def test_pane_5_of_open_shows_a_recording_beside_a_profile():
    app = RoofscopeApp(
        [str(SAMPLES / "h100_matmul.parquet"), str(SAMPLES / "gemm4096_bf16_h100.ncu-raw.csv")]
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await _idle(app, pilot, until=lambda: bool(app.query(MonitorPane)))
        await pilot.press("5")
        await _idle(app, pilot)
        text = screen_text(app)
    assert "recording h100_matmul.parquet · 1 GPU" in text
    assert "vm:0 H100 80GB HBM3" in text
    assert BLOCKS & set(next(line for line in text.splitlines() if line.startswith("tensor")))


@pytest.mark.skipif(nvml_present(), reason="this machine has NVML")
async def test_pane_5_without_nvml_says_why_in_one_line():
    app = RoofscopeApp([str(SAMPLES / "gemm4096_bf16_h100.ncu-raw.csv")])
    async with app.run_test(size=(100, 30)) as pilot:
        await _idle(app, pilot)
        await pilot.press("5")
        await _idle(app, pilot, rounds=5)
        text = screen_text(app)
    assert "roofscope: NVML unavailable:" in text and "--follow" in text
    with pytest.raises(RoofscopeError):
        from roofscope.monitor.nvml import NvmlSource

        NvmlSource()


async def test_open_starts_on_the_profile_when_a_recording_comes_first():
    app = RoofscopeApp(
        [str(SAMPLES / "h100_matmul.parquet"), str(SAMPLES / "gemm4096_bf16_h100.ncu-raw.csv")]
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await _idle(app, pilot)
        assert app.state.report == 1
        assert screen_text(app).startswith("gemm4096_bf16_h100.ncu-raw.csv [2/2]")
