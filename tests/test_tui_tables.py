"""Tables follow the terminal (issue 18): names take the width left over, numbers are never
cut, and at 80 columns the columns that say the most stay in sight beside a fixed name."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input

from roofscope.present import columns as cols
from roofscope.present.units import distinct
from roofscope.tui.app import RoofscopeApp
from roofscope.tui.panes.kernels import KernelsPane
from roofscope.tui.widgets.virtual_table import VirtualTable
from tests.conftest import SAMPLES
from tests.ncu_builder import raw_page, write
from tests.screen_text import screen_text
from tests.test_tui import RESNET, opened, settle

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("shared_sample_cache")]

PREFIX = "julia_broadcast_kernel_CuKernelContext_CuDeviceArray_Float32_2_1_Broadcasted_"
LONG = [PREFIX + tail for tail in ("Style2D_Axes_Tuple_OneTo_Int64_identity", "Style3D_exp_x")]
UNITS = {
    "gpu__time_duration.sum": "nsecond",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "inst",
    "dram__bytes.sum": "byte",
}


def long_names(folder: Path) -> Path:
    launches = [
        (
            name,
            {
                "gpu__time_duration.sum": str(5000 * (i + 1)),
                "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "1000000",
                "dram__bytes.sum": "1000000",
            },
        )
        for i, name in enumerate(LONG)
    ]
    return write(folder / "julia.ncu-raw.csv", raw_page(launches, UNITS))


def test_distinct_keeps_the_difference_of_a_long_shared_prefix():
    for width in (16, 24, 40, 80):
        cut = distinct(LONG, width)
        assert len(set(cut.values())) == 2, cut
        assert all(len(v) <= width for v in cut.values())
    assert distinct(["short", *LONG], 200)["short"] == "short"
    assert distinct(LONG, 200) == {n: n for n in LONG}


def _header_and_rows(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("group"))
    return lines[start:]


async def test_200_columns_cut_no_name_and_no_bound(in_tmp_cwd):
    app = RoofscopeApp([RESNET])
    app.state.use_color = False
    async with app.run_test(size=(200, 60)) as pilot:
        await opened(app, pilot)
        text = screen_text(app)
        for row in app.query_one(KernelsPane).rows:
            assert str(row["name"]) in text
            assert str(row["bound"]) in text  # compute (fp32), memory (dram): whole
        assert "…" not in "\n".join(_header_and_rows(text))


async def test_80_columns_keep_share_bound_and_eff_beside_a_fixed_name(in_tmp_cwd):
    app = RoofscopeApp([RESNET])
    app.state.use_color = False
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(app, pilot)
        lines = _header_and_rows(screen_text(app))
        header = lines[0].split()
        for title in ("%", "bound", "eff"):
            assert title in header, lines[0]
        at = lines[0].index(" bound") + 1  # the column, wherever the name's width puts it
        bounds = {line[at:].split()[0] for line in lines[1:13] if line.strip()}
        assert bounds <= {"DRAM", "L2", "L1", "fp32", "tensor", "fp16", "fp64"}, bounds
        table = app.query_one("#groups", DataTable)
        assert table.fixed_columns == 1
        table.focus()
        table.scroll_to(x=table.max_scroll_x, animate=False)
        await settle(app, pilot)
        scrolled = _header_and_rows(screen_text(app))
        assert scrolled[0].split()[0] == "group"
        assert "headroom" in scrolled[0]
        assert "layout transform" in scrolled[1]


async def test_long_shared_prefixes_stay_apart_at_80_columns(tmp_path, in_tmp_cwd):
    app = RoofscopeApp([str(long_names(tmp_path))])
    app.state.use_color = False
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(app, pilot)
        rows = _header_and_rows(screen_text(app))[1:3]
        names = [line[1 : 1 + app.query_one(KernelsPane).table_layout.widths[0]] for line in rows]
        assert len(set(names)) == 2 and all(PREFIX[:8] in n for n in names), names


async def test_launch_list_names_fixed_and_apart(in_tmp_cwd):
    app = RoofscopeApp([RESNET])
    app.state.use_color = False
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(app, pilot)
        pane = app.query_one(KernelsPane)
        pane.jump_to("layout transform")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot, 5)
        table = app.query_one("#launches", VirtualTable)
        kernel = table.columns[1]
        shown = {}
        for i in range(min(table.count, 100)):
            row = table.row(i)
            if row is not None:
                shown.setdefault(kernel.fmt(row[1]), set()).add(row[1])
        assert len(shown) > 1 and all(len(k) == 1 for k in shown.values()), shown
        assert "eff" in screen_text(app).splitlines()[3]
        table.scroll_to(x=table.max_scroll_x, animate=False)
        await settle(app, pilot)
        line = table.render_line(1).text
        assert line.split()[1] == kernel.fmt(table.row(table.scroll_offset.y)[1]).split()[0]


def test_fit_moves_the_kept_columns_beside_the_names():
    rows = [{"name": "x" * 30, "launches": 1, "time_s": 1e-3, "bound": "compute (tensor)"}]
    wide = cols.fit(cols.column_set(cols.GROUP, cols.PANE), rows, 200)
    assert not wide.narrow and wide.widths[0] == 30
    narrow = cols.fit(cols.column_set(cols.GROUP, cols.PANE), rows, 50)
    assert narrow.narrow
    assert [c.key for c in narrow.columns[1:5]] == list(cols.PANE_KEEP)


async def _export(app: RoofscopeApp, pilot, path: Path) -> list[dict[str, str]]:
    await pilot.press("e")
    await pilot.pause(0.1)
    app.screen.query_one("#export-path", Input).value = str(path)
    await pilot.press("enter")
    await settle(app, pilot)
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


async def test_exported_csv_is_numbers_in_base_units(in_tmp_cwd):
    bf16 = str(SAMPLES / "resnet18_bf16_h100.ncu-raw.csv")
    app = RoofscopeApp([RESNET, bf16])
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        groups = await _export(app, pilot, in_tmp_cwd / "groups.csv")
        rows = {r["name"]: r for r in app.query_one(KernelsPane).rows}
        for g in groups:
            row = rows[g["name"]]
            assert float(g["time_s"]) == pytest.approx(row["time_s"])  # 0.000885…, not 885 µs
            assert float(g["time_pct"]) == pytest.approx(row["time_pct"])  # 22.58…, not 22.6%
            assert float(g["efficiency (fraction)"]) == pytest.approx(row["efficiency"])
            assert float(g["flop_per_s"]) == pytest.approx(row["flop_per_s"])
            assert float(g["ai_dram (FLOP/B)"]) == pytest.approx(row["ai"]["dram"])
            assert int(g["launches"]) == row["launches"]
            assert g["bound"] == row["bound"]
        await pilot.press("enter")
        await settle(app, pilot, 5)
        launches = await _export(app, pilot, in_tmp_cwd / "launches.csv")
        assert launches and {"launch_id", "kernel", "time_s", "flop_per_s"} <= set(launches[0])
        assert all(float(r["time_s"]) < 1 for r in launches)
        await pilot.press("escape", "3")
        await settle(app, pilot)
        bins = await _export(app, pilot, in_tmp_cwd / "bins.csv")
        assert [float(b["efficiency_lo (fraction)"]) for b in bins][:2] == [0.0, 0.1]
        assert sum(float(b["share (fraction)"]) for b in bins) == pytest.approx(1.0)
        await pilot.press("7")  # Compare
        await settle(app, pilot, 5)
        diff = await _export(app, pilot, in_tmp_cwd / "diff.csv")
        assert diff and all(float(r["delta_time_s"]) < 1 for r in diff if r["delta_time_s"]), diff[
            0
        ]
