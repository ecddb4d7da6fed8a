"""The timeline numbers, the Timeline pane, and nsys + ncu of the same kernels, on exports
built with known values (real nsys 2025 schema; real ncu raw-page layout)."""

from __future__ import annotations

import pytest

from roofscope.analysis.timeline import Window
from roofscope.cli import main
from roofscope.session import load
from roofscope.tui.app import RoofscopeApp
from roofscope.tui.panes.kernels import KernelsPane
from roofscope.tui.panes.timeline import TimelinePane
from tests.ncu_builder import raw_page, write
from tests.nsys_builder import Export, Kernel

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

GEMM = "void cutlass::Kernel<cutlass_80_tensorop_sgemm_128x64>(Params)"
ADD = "void at::native::vectorized_elementwise_kernel<4, add>(int, T2)"
US = 1000  # ns


def _export() -> Export:
    """Two GEMMs overlapping on two streams, then adds; memcpy first; one idle gap of 20 µs.

    t(µs): memcpy 0–10 · GEMM 10–50 (s7) · GEMM 30–70 (s8) · gap 70–90 · ADD 90–95,
    ADD 100–110 (5 µs gap) · ranges: 'fwd' 0–80 (both GEMMs), 'step' 0–200 encloses all."""
    return Export(
        kernels=[
            Kernel(GEMM, 10 * US, 50 * US, stream=7, launched_at=2 * US),
            Kernel(GEMM, 30 * US, 70 * US, stream=8, launched_at=3 * US),
            Kernel(ADD, 90 * US, 95 * US, launched_at=85 * US),
            Kernel(ADD, 100 * US, 110 * US, launched_at=86 * US),
        ],
        ranges=[(0, 200 * US, "step"), (1 * US, 80 * US, "fwd")],
        memcpy=[(0, 10 * US, 40_000_000, 1)],
        metrics={"SM Active": [(20 * US, 80), (60 * US, 40), (100 * US, 20)]},
    )


@pytest.fixture
def nsys_path(tmp_path):
    return _export().write(tmp_path / "run.sqlite")


def test_timeline_numbers_against_hand_computation(nsys_path) -> None:
    session = load(nsys_path)
    t = session.reports[0].timeline(buckets=11)
    assert t is not None
    assert t.window == Window(0, 110 * US)
    assert t.launches == 4
    assert t.kernel_time_s == pytest.approx((40 + 40 + 5 + 10) * 1e-6)
    assert t.busy_s == pytest.approx((60 + 5 + 10) * 1e-6)  # 10–70 merged, 90–95, 100–110
    assert (t.gaps, t.gap_total_s, t.gap_longest_s) == (
        2,
        pytest.approx(25e-6),
        pytest.approx(20e-6),
    )
    assert t.max_concurrency == 2
    # 10 µs buckets: 30–50 runs both GEMMs; 70–90 is idle
    assert t.concurrency[3] == pytest.approx(2.0) and t.concurrency[7] == 0.0
    assert t.busy[0] == 0.0 and t.busy[1] == pytest.approx(1.0) and t.busy[9] == pytest.approx(0.5)
    assert t.memcpy[0] == pytest.approx(40_000_000 / 10e-6)  # 4 TB/s over its bucket
    assert t.metrics["GPU metrics 1: SM Active"][2] == 80.0  # the -66163 garbage sample dropped
    assert t.metric_stats["GPU metrics 1: SM Active"]["samples"] == 3


def test_zoomed_window_and_kernels_filter(nsys_path) -> None:
    session = load(nsys_path)
    t = session.reports[0].timeline(Window(85 * US, 110 * US), buckets=5)
    assert t.launches == 2 and t.busy_s == pytest.approx(15e-6) and t.gaps == 1
    from roofscope.analysis.browse import Filter

    rows = session.reports[0].rows("group", Filter(window=(0, 85 * US, 110 * US)))
    assert [(r["name"], r["launches"]) for r in rows] == [("element-wise", 2)]


def test_nvtx_innermost_and_outermost(nsys_path) -> None:
    inner = {r["name"]: r["launches"] for r in load(nsys_path, axis="nvtx-inner").reports[0].rows()}
    outer = {r["name"]: r["launches"] for r in load(nsys_path, axis="nvtx-outer").reports[0].rows()}
    assert inner == {"fwd": 2, "step": 2}
    assert outer == {"step": 4}


def test_report_json_has_the_timeline(nsys_path, capsys) -> None:
    import json

    assert main(["report", str(nsys_path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)["reports"][0]
    assert report["format"] == "nsys-sqlite"
    assert report["timeline"]["idle_gaps"]["count"] == 2
    assert report["timeline"]["busy_fraction"] == pytest.approx(75 / 110)
    gemm = next(g for g in report["groups"] if g["name"] == "GEMM")
    assert (gemm["launches"], gemm["time_avg_s"], gemm["time_min_s"]) == (
        2,
        pytest.approx(40e-6),
        pytest.approx(40e-6),
    )


def _ncu(tmp_path):
    """ncu of the same program: the same 4 launches, replayed (times 2× the real ones)."""
    ffma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
    units = {"gpu__time_duration.sum": "ns", ffma: "inst"}
    launches = [
        (name, {"gpu__time_duration.sum": t, ffma: n})
        for name, t, n in (
            (GEMM, "80000", "1000000"),
            (GEMM, "80000", "3000000"),
            (ADD, "10000", "0"),
            (ADD, "20000", "0"),
        )
    ]
    return write(tmp_path / "run.ncu-raw.csv", raw_page(launches, units))


def test_nsys_and_ncu_join_by_name_and_launch_order(tmp_path, nsys_path) -> None:
    session = load(_ncu(tmp_path), nsys_path)
    assert session.reports[0].partner is session.reports[1] and session.reports[1].partner is None
    groups = {r["name"]: r for r in session.reports[0].rows("group")}
    gemm, add = groups["GEMM"]["nsys"], groups["element-wise"]["nsys"]
    # real time on the timeline, share of all real kernel time (95 µs)
    assert gemm["time_s"] == pytest.approx(80e-6) and add["time_s"] == pytest.approx(15e-6)
    assert gemm["time_pct"] == pytest.approx(100 * 80 / 95)
    assert (gemm["matched_launches"], add["matched_launches"]) == (2, 2)
    # 2·(1e6 + 3e6) FLOP over the paired real durations (40 + 40 µs)
    assert gemm["flop_per_s"] == pytest.approx(8e6 / 80e-6)
    # ncu's own (replayed) time stays beside it
    assert groups["GEMM"]["time_s"] == pytest.approx(160e-6)
    cover = session.reports[0].nsys_join()
    assert cover["coverage"] == pytest.approx(1.0) and cover["paired_launches"] == 4
    assert "locked clocks" in cover["note"]


def test_join_pairs_the_kth_launch_with_the_kth(tmp_path, nsys_path) -> None:
    session = load(_ncu(tmp_path), nsys_path)
    pairs = session.con.execute("SELECT ncu_launch, nsys_launch FROM join_pairs_0_1 ORDER BY 1")
    # nsys launch ids follow start time: GEMM 10 µs (0), GEMM 30 µs (1), ADD (2), ADD (3)
    assert pairs.fetchall() == [(0, 0), (1, 1), (2, 2), (3, 3)]


def test_join_falls_back_to_base_names(tmp_path) -> None:
    """ncu --print-kernel-base function writes 'at::native::vectorized_elementwise_kernel'."""
    nsys = _export().write(tmp_path / "run.sqlite")
    units = {"gpu__time_duration.sum": "ns"}
    ncu = write(
        tmp_path / "base.csv",
        raw_page(
            [("at::native::vectorized_elementwise_kernel", {"gpu__time_duration.sum": "1"})], units
        ),
    )
    session = load(ncu, nsys)
    assert session.reports[0].nsys_join()["paired_launches"] == 1


async def _wait(pilot, predicate, tries: int = 100) -> None:
    for _ in range(tries):
        await pilot.pause(0.05)
        if predicate():
            return
    raise AssertionError("timed out")


async def test_timeline_pane_zoom_and_filter_kernels(nsys_path) -> None:
    app = RoofscopeApp([str(nsys_path)], use_cache=False, ascii_only=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await _wait(pilot, lambda: bool(app.query(KernelsPane) and app.query_one(KernelsPane).rows))
        kernels = app.query_one(KernelsPane)
        assert [c.title for c in kernels.columns] == [
            "group",
            "n",
            "time",
            "%",
            "avg",
            "med",
            "min",
            "max",
        ]
        await pilot.press("8")
        pane = app.query_one(TimelinePane)
        await _wait(pilot, lambda: pane.data is not None)
        text = pane.chart_text(pane.data)
        lines = text.splitlines()
        assert lines[0].startswith("GPU busy") and lines[1].startswith("kernels running")
        assert any(ch in lines[0] for ch in "#@*") and "SM Active" in text
        full = pane.window
        await pilot.press("plus")
        await _wait(pilot, lambda: pane.data is not None and pane.data.window != full)
        assert pane.window.width == pytest.approx(full.width / 2, rel=0.01)
        await pilot.press("0")
        await _wait(pilot, lambda: pane.data.window == full)
        pane.window = Window(85 * US, 110 * US)
        pane.reload()
        await _wait(pilot, lambda: pane.data.window == Window(85 * US, 110 * US))
        await pilot.press("f")
        await _wait(pilot, lambda: [r["name"] for r in kernels.rows] == ["element-wise"])
        assert "window" in str(app.query_one("#kernels-status").render())
        await pilot.press("escape")  # clears the filter
        await _wait(pilot, lambda: len(kernels.rows) == 2)


async def test_nvtx_key_cycles_the_grouping_axis(nsys_path) -> None:
    app = RoofscopeApp([str(nsys_path)], use_cache=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await _wait(pilot, lambda: bool(app.query(KernelsPane) and app.query_one(KernelsPane).rows))
        kernels = app.query_one(KernelsPane)
        await pilot.press("n")
        await _wait(pilot, lambda: {r["name"] for r in kernels.rows} == {"fwd", "step"})
        await pilot.press("n")
        await _wait(pilot, lambda: [r["name"] for r in kernels.rows] == ["step"])
        await pilot.press("n")
        await _wait(pilot, lambda: {r["name"] for r in kernels.rows} == {"GEMM", "element-wise"})


async def test_joined_kernels_pane_shows_both_times(tmp_path, nsys_path) -> None:
    app = RoofscopeApp([str(_ncu(tmp_path)), str(nsys_path)], use_cache=False)
    async with app.run_test(size=(140, 30)) as pilot:
        await _wait(pilot, lambda: bool(app.query(KernelsPane) and app.query_one(KernelsPane).rows))
        kernels = app.query_one(KernelsPane)
        assert [c.title for c in kernels.columns][-3:] == ["nsys %", "nsys time", "FLOP/s real"]
        header, rows = kernels.current_table()
        gemm = rows[[r[0] for r in rows].index("GEMM")]
        assert gemm[header.index("nsys %")] == "84.2%"
        status = str(app.query_one("#kernels-status").render())
        assert "locked clocks" in status


async def test_ncu_report_timeline_pane_explains(tmp_path) -> None:
    app = RoofscopeApp([str(_ncu(tmp_path))], use_cache=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await _wait(pilot, lambda: bool(app.query(KernelsPane) and app.query_one(KernelsPane).rows))
        await pilot.press("8")
        summary = app.query_one("#timeline-summary")
        await _wait(pilot, lambda: "No timeline" in str(summary.render()))


def test_cli_nvtx_axis_and_joined_markdown(tmp_path, nsys_path, capsys) -> None:
    import json

    assert main(["report", str(nsys_path), "--nvtx", "outermost", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)["reports"][0]
    assert report["axis"] == "nvtx-outer" and [g["name"] for g in report["groups"]] == ["step"]
    assert main(["report", str(_ncu(tmp_path)), str(nsys_path), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "| nsys % time | FLOP/s real |" in md and "| 84.2% |" in md
    assert main(["report", str(nsys_path)]) == 0
    table = capsys.readouterr().out
    assert "avg" in table and "idle gaps" in table and "FLOP/s" not in table


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_timeline_snapshot(size, nsys_path) -> None:
    from tests.screen_text import assert_snapshot
    from tests.test_tui_snapshots import stable_screen

    app = RoofscopeApp([str(nsys_path)], use_cache=False)
    async with app.run_test(size=size) as pilot:
        await _wait(pilot, lambda: bool(app.query(KernelsPane) and app.query_one(KernelsPane).rows))
        await pilot.press("8")
        pane = app.query_one(TimelinePane)
        await _wait(pilot, lambda: pane.data is not None)
        text = await stable_screen(app, pilot)
        assert "GPU busy" in text and "SM Active" in text and "idle gaps" in text
        chart = next(line for line in text.splitlines() if line.startswith("GPU busy"))
        assert any(ch in chart for ch in "▁▂▃▄▅▆▇█")  # the busy sparkline has content
        assert_snapshot(f"timeline-{size[0]}x{size[1]}", text)
