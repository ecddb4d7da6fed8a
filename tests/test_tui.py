"""The TUI driven like a user would, through Textual's Pilot, on the real H100 sample."""

from __future__ import annotations

from itertools import pairwise

import pytest
from textual.widgets import ContentSwitcher, DataTable, Input, Static
from textual.worker import WorkerCancelled

from roofscope.tui.app import RoofscopeApp
from roofscope.tui.panes.kernels import KernelsPane
from roofscope.tui.panes.roofline import RooflinePane
from roofscope.tui.screens.modals import HelpScreen
from roofscope.tui.widgets.virtual_table import VirtualTable
from tests.conftest import SAMPLES
from tests.screen_text import screen_text

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("shared_sample_cache")]

RESNET = str(SAMPLES / "resnet18_fp32_h100.ncu-raw.csv")


async def settle(app: RoofscopeApp, pilot, rounds: int = 3) -> None:
    """Let workers finish (an exclusive worker replaced by a newer one counts as done), each
    round until the app is idle: messages processed, no CPU spent (Pilot.pause without a
    delay, as Pilot.press does), rather than a fixed 50 ms that was mostly spent waiting."""
    for _ in range(rounds):
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:
            continue
        await pilot.pause()


async def opened(app: RoofscopeApp, pilot) -> None:
    for _ in range(200):
        await pilot.pause()  # ≥ 20 ms, until idle
        if app.query("#groups") and app.query_one("#groups", DataTable).row_count:
            break
    await settle(app, pilot)


def groups(app: RoofscopeApp) -> list[str]:
    return [str(r["name"]) for r in app.query_one(KernelsPane).rows]


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
async def test_panes_by_number_keys(size, in_tmp_cwd):
    app = RoofscopeApp([RESNET])
    async with app.run_test(size=size) as pilot:
        await opened(app, pilot)
        assert app.first_paint_s is not None
        assert "conv fprop" in groups(app)
        switcher = app.query_one(ContentSwitcher)
        for key, pane in (
            ("2", "roofline"),
            ("3", "efficiency"),
            ("4", "detail"),
            ("1", "kernels"),
        ):
            await pilot.press(key)
            await settle(app, pilot)
            assert switcher.current == pane
        await pilot.press("2")
        await settle(app, pilot)
        chart = app.query_one(RooflinePane).text
        assert "┤" in chart and "TB/s" in chart  # axes drawn, roofs labelled on the chart
        assert any(g in chart for g in "●•·◉"), "points are drawn"
        assert chart.count("\n") + 1 <= app.query_one("#roofline-chart").size.height + 1


async def test_drill_down_sort_reverse_and_back(in_tmp_cwd):
    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        first = groups(app)[0]
        assert app.state.group == first
        await pilot.press("enter")
        await settle(app, pilot)
        table = app.query_one("#launches", VirtualTable)
        expected = next(
            r["launches"] for r in app.query_one(KernelsPane).rows if r["name"] == first
        )
        assert table.count == expected
        times = [table.row(i)[2] for i in range(min(5, table.count))]
        assert times == sorted(times, reverse=True)
        await pilot.press("r")
        await settle(app, pilot)
        times = [table.row(i)[2] for i in range(min(5, table.count))]
        assert times == sorted(times)
        await pilot.press("down", "down")
        await settle(app, pilot)
        assert app.state.launch == table.row(2)[0]
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.query_one(ContentSwitcher).current == "detail"
        metrics = app.query_one("#metrics", DataTable)
        assert metrics.row_count > 1000  # every raw column of the launch plus derived values
        await pilot.press("1", "escape")
        await settle(app, pilot)
        assert not app.query_one(KernelsPane).has_class("drilled")
        await pilot.press("s")  # next sort column on groups: "%"
        await settle(app, pilot)
        shares = [r["time_pct"] for r in app.query_one(KernelsPane).rows]
        assert shares == sorted(shares)  # the reverse from before is kept


async def test_filter_by_regex_and_bad_regex(in_tmp_cwd):
    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        await pilot.press("slash")
        await pilot.press(*"conv")
        await pilot.press("enter")
        await settle(app, pilot)
        assert set(groups(app)) == {"conv fprop", "conv dgrad", "conv wgrad"}
        status = str(app.query_one("#kernels-status", Static).render())
        assert "/conv/" in status
        await pilot.press("slash")
        app.query_one("#kernels-filter", Input).value = "(?<=x)y"
        await pilot.press("enter")
        await settle(app, pilot)
        assert set(groups(app)) == {"conv fprop", "conv dgrad", "conv wgrad"}  # unchanged
        await pilot.press("escape")  # clears the filter
        await settle(app, pilot)
        assert len(groups(app)) > 5


async def test_efficiency_bin_filters_kernels(in_tmp_cwd):
    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        await pilot.press("3")
        await settle(app, pilot)
        title = str(app.query_one("#bins-title", Static).render())
        assert "potential speedup 4.91×" in title
        bins = app.query_one("#bins", DataTable)
        assert bins.row_count == 10
        bins.focus()
        await pilot.press("down")  # the 10–20% bin
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.query_one(ContentSwitcher).current == "kernels"
        kernels = app.query_one(KernelsPane)
        assert app.state.filter.eff_bin == 1
        expected = app.session.reports[0].histogram()["bins"][1]["time_s"]
        assert sum(r["time_s"] for r in kernels.rows) == pytest.approx(expected)


async def test_roofline_toggles_and_selection(in_tmp_cwd):
    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(100, 36)) as pilot:
        await opened(app, pilot)
        await pilot.press("down", "2")
        await settle(app, pilot)
        pane = app.query_one(RooflinePane)
        legend = str(app.query_one("#roofline-legend", Static).render())
        assert f"▶ {groups(app)[1]}" in legend
        assert "◉" in pane.text
        await pilot.press("l")
        assert pane.level == "l2"
        await pilot.press("t")
        await settle(app, pilot)
        assert pane.by == "launch" and len(pane.rows) == 361
        app.query_one(RooflinePane).toggle_roof("dram")
        assert "DRAM" not in str(app.query_one("#roofline-legend", Static).render())


async def test_roofline_of_a_durations_only_export_says_why_it_has_no_points(in_tmp_cwd):
    """`profile --preset time` exports kernel durations only: the roofs are drawn, no point,
    and the legend says why (not the key to numbers that are not on the chart)."""
    app = RoofscopeApp([str(SAMPLES / "resnet50_bf16_b8_h200.ncu-raw.csv.gz")])
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        legend = str(app.query_one("#roofline-legend", Static).render())
        assert "no FLOP or byte counts in this export, so no points" in " ".join(legend.split())
        assert "1 batch norm" not in legend
        assert groups(app)[0] == "batch norm"


async def test_rule_editor_regroups_and_saves(in_tmp_cwd):
    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        await pilot.press("g")
        await pilot.pause(0.1)
        await pilot.press(*"nchwToNhwc")
        await pilot.press("tab")
        await pilot.press(*"to NHWC")
        preview = str(app.screen.query_one("#rule-preview", Static).render())
        assert preview.startswith("matches ")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert "to NHWC" in groups(app)
        saved = (in_tmp_cwd / "roofscope.toml").read_text()
        assert "nchwToNhwc" in saved and "to NHWC" in saved


async def test_export_help_palette_and_quit(in_tmp_cwd):
    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        await pilot.press("e")
        await pilot.pause(0.1)
        app.screen.query_one("#export-path", Input).value = str(in_tmp_cwd / "groups.md")
        await pilot.press("enter")
        await settle(app, pilot)
        text = (in_tmp_cwd / "groups.md").read_text()
        assert text.startswith("| group |") and "conv fprop" in text
        await pilot.press("2", "e")
        await pilot.pause(0.1)
        app.screen.query_one("#export-path", Input).value = str(in_tmp_cwd / "roof.txt")
        await pilot.press("enter")
        await settle(app, pilot)
        exported = (in_tmp_cwd / "roof.txt").read_text()
        assert "┤" in exported and "TB/s" in exported  # axes and roof labels
        assert "x: FLOP/B at DRAM" in exported and "B/s ━━ DRAM" in exported  # axis titles, legend
        await pilot.press("question_mark")
        await pilot.pause(0.1)
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        app.query_one(KernelsPane).jump_to("GEMM")
        await settle(app, pilot)
        assert app.state.group == "GEMM"
        await pilot.press("q")
    assert app.return_code in (0, None)


async def test_ascii_mode_draws_no_braille(in_tmp_cwd):
    app = RoofscopeApp([RESNET], ascii_only=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        text = app.query_one(RooflinePane).text
        assert text.strip()
        assert not any(0x2800 <= ord(ch) <= 0x28FF for ch in text)
        assert any(ch in text for ch in "@o.X")


async def test_a_bad_file_named_on_the_command_line_leaves_with_its_one_line(tmp_path, in_tmp_cwd):
    """Nothing to show: the app leaves with exit code 2 and the line the CLI prints after it,
    as `roofscope report` would, rather than waiting on a blank screen for q."""
    bad = tmp_path / "bad.csv"
    bad.write_text("name,value\n1,2\n")
    app = RoofscopeApp([str(bad)])
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot, 5)
    assert app.return_code == 2
    assert app.fatal_line is not None and app.fatal_line.startswith("roofscope: ")
    assert "not an Nsight Compute CSV" in app.fatal_line


async def test_several_reports_switch_with_full_stop(in_tmp_cwd):
    bf16 = str(SAMPLES / "resnet18_bf16_h100.ncu-raw.csv")
    app = RoofscopeApp([RESNET, bf16])
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        assert "[1/2]" in str(app.query_one("#kernels-status", Static).render())
        fp32_total = sum(r["launches"] for r in app.query_one(KernelsPane).rows)
        await pilot.press("full_stop")
        await settle(app, pilot, 5)
        assert "[2/2]" in str(app.query_one("#kernels-status", Static).render())
        assert sum(r["launches"] for r in app.query_one(KernelsPane).rows) == 450 != fp32_total


async def palette(app: RoofscopeApp, pilot, text: str) -> None:
    """Type ``text`` into the command palette and run the best hit."""
    await pilot.press("ctrl+p")
    await pilot.pause(0.2)
    await pilot.press(*text)
    await pilot.pause(0.5)
    await pilot.press("enter")
    await settle(app, pilot)


async def test_command_palette_jumps_to_a_group(in_tmp_cwd):
    """Before typing the palette lists the panes first; typed, it jumps to a group or pane."""
    from roofscope.tui.app import RoofscopeCommands

    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        provider = RoofscopeCommands(app.screen)
        found = [str(hit.display) async for hit in provider.discover()]
        assert found[:2] == ["Pane: Kernels", "Pane: Roofline"] and len(found) == 9
        await palette(app, pilot, "Group: GEMM")
        assert app.state.group == "GEMM"
        await palette(app, pilot, "Pane: Roofline")
        assert app.query_one(ContentSwitcher).current == "roofline"


async def test_first_hour_keys_at_80x24(in_tmp_cwd):
    """What a new user at 80×24 needs: ? and q in the footer, a help that scrolls to its
    end, Escape back from Detail, and a word when . has nothing to switch to."""

    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(app, pilot)
        footer = screen_text(app).splitlines()[-1]
        assert "? Help" in footer and "q Quit" in footer
        await pilot.press("question_mark")
        await pilot.pause(0.1)
        assert "Ctrl+P" not in screen_text(app)  # below the fold at 24 rows
        await pilot.press("pagedown", "pagedown", "pagedown")
        await pilot.pause(0.1)
        assert "3  Efficiency" not in screen_text(app)  # it scrolled
        await pilot.press("end")
        await pilot.pause(0.1)
        assert "Ctrl+P" in screen_text(app)
        await pilot.press("escape")
        await pilot.press("enter")  # a group's launches
        await settle(app, pilot)
        await pilot.press("enter")  # a launch's metrics
        await settle(app, pilot)
        assert app.query_one(ContentSwitcher).current == "detail"
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.query_one(ContentSwitcher).current == "kernels"
        assert app.query_one(KernelsPane).has_class("drilled")  # back where it came from
        await pilot.press("full_stop")
        await pilot.pause(0.1)
        assert any("only one report" in str(n.message) for n in app._notifications)


async def test_sorting_and_filtering_launches_leaves_one_temp_table(in_tmp_cwd):
    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)

        def perms() -> int:
            with app.session.lock:
                return app.session.con.execute(
                    "SELECT count(*) FROM duckdb_tables() "
                    "WHERE temporary AND table_name LIKE 'rs_perm_%'"
                ).fetchall()[0][0]

        await pilot.press("enter")
        await settle(app, pilot)
        assert perms() == 1
        for key in ("s", "r", "s", "s", "r"):
            await pilot.press(key)
            await settle(app, pilot)
        app.query_one(KernelsPane).apply_filter("conv")
        await settle(app, pilot)
        assert app.query_one(KernelsPane).has_class("drilled")
        assert perms() == 1
        await pilot.press("escape")  # back to the groups: the launch list is dropped
        await settle(app, pilot)
        assert perms() == 0


DETAILS = str(SAMPLES / "resnet18_fp32_h100.ncu-details.csv")


async def test_efficiency_sections_and_speedup_at_80x24(in_tmp_cwd):
    """Two titled sections, one above the other at 80 columns, the speedup column in view."""
    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(app, pilot)
        await pilot.press("3")
        await settle(app, pilot, 5)
        await pilot.pause(0.2)
        text = screen_text(app)
        assert "Run time by efficiency" in text and "Groups by headroom" in text
        assert "speedup" in text.split("Groups by headroom", 1)[1]
        assert "1.23×" in text  # layout transform's speedup, not cut off
        lines = text.splitlines()
        bins = next(i for i, line in enumerate(lines) if "Run time by efficiency" in line)
        ranking = next(i for i, line in enumerate(lines) if "Groups by headroom" in line)
        assert ranking > bins + 10  # below the ten bins, not beside them
        assert "≥" not in text and "≤" not in text  # the raw page's utilisations are complete


async def test_detail_pane_keys_and_escape_after_a_search(in_tmp_cwd):
    """`4 / dram Enter 1` switches to Kernels; back on Detail a digit switches panes and does
    not replace the search; Esc after a search goes back to Kernels."""
    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(app, pilot)
        switcher = app.query_one(ContentSwitcher)
        box = app.query_one("#detail-search", Input)
        await pilot.press("4", "slash", "d", "r", "a", "m", "enter")
        await settle(app, pilot)
        assert app.focused is app.query_one("#metrics", DataTable)
        await pilot.press("1")
        await settle(app, pilot)
        assert switcher.current == "kernels"
        await pilot.press("4")
        await settle(app, pilot)
        assert switcher.current == "detail" and app.focused is not box
        await pilot.press("3")
        await settle(app, pilot)
        assert switcher.current == "efficiency" and box.value == "dram"
        await pilot.press("4", "escape")
        await settle(app, pilot)
        assert switcher.current == "kernels"
        await pilot.press("4", "slash", "f", "p", "enter", "escape")
        await settle(app, pilot)
        assert switcher.current == "kernels"


async def test_detail_metric_names_keep_their_distinguishing_end(in_tmp_cwd):
    """Long ncu names are cut in the middle of their longest parts: neighbouring rows (the
    avg/max/min/sum of one counter) no longer look alike, and a search's hits all differ."""
    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(app, pilot)
        await pilot.press("enter")  # a group's launches
        await settle(app, pilot)
        await pilot.press("enter")  # a launch's metrics
        await settle(app, pilot)
        table = app.query_one("#metrics", DataTable)
        shown = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        assert all(len(name) <= 40 for name in shown) and any("…" in n for n in shown)
        alike = sum(a == b for a, b in pairwise(shown))
        assert alike <= len(shown) // 100  # cut at the end, 745 of 1,284 rows were
        await pilot.press("slash", "d", "r", "a", "m", "enter")
        await settle(app, pilot)
        hits = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        assert len(hits) > 20 and len(set(hits)) == len(hits)
        assert "gpu__dram…roughput.avg.pct_…_elapsed" in hits


@pytest.mark.parametrize("path", [DETAILS, RESNET], ids=["details", "raw"])
async def test_lower_bounds_are_marked_in_the_tui(path, in_tmp_cwd):
    """The details page (no tensor/FP32 utilisation): ≥ on eff, ≤ on speedups, the reason;
    the raw page of the same run: neither; on both, at 200 columns, Efficiency's two
    sections stand side by side."""
    partial = path == DETAILS
    app = RoofscopeApp([path])
    async with app.run_test(size=(200, 60)) as pilot:
        await opened(app, pilot)
        kernels = screen_text(app)
        await pilot.press("3")
        await settle(app, pilot, 5)
        await pilot.pause(0.2)
        efficiency = screen_text(app)
        # 200 columns: Efficiency's two sections side by side
        line = next(x for x in efficiency.splitlines() if "Run time by efficiency" in x)
        assert "Groups by headroom" in line
        await pilot.press("1", "enter", "enter")  # a launch's metrics
        await settle(app, pilot)
        detail = app.query_one("#metrics", DataTable)
        eff = next(
            detail.get_row_at(i)
            for i in range(detail.row_count)
            if str(detail.get_row_at(i)[1]) == "efficiency"
        )
    if partial:
        assert "≥ 8%" in kernels and "no tensor or FP32 utilisation" in kernels
        assert "≤ 7.15×" in efficiency and "≤ 1.11×" in efficiency  # step, conv fprop
        assert "no tensor or FP32 utilisation" in efficiency
        assert str(eff[2]).startswith("≥ ") and "lower bound" in str(eff[4])
    else:
        for text in (kernels, efficiency, str(eff[2])):
            assert "≥" not in text and "≤" not in text
        assert "4.91×" in efficiency


async def test_efficiency_follows_the_selection_and_selects_only_when_moved(in_tmp_cwd):
    """Showing Efficiency used to select the top of its ranking: Detail then showed another
    group than the one chosen in Kernels."""
    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        await pilot.press("down", "down")
        chosen = app.state.group
        await pilot.press("3")
        await settle(app, pilot)
        assert app.state.group == chosen
        ranking = app.query_one("#ranking", DataTable)
        assert ranking.coordinate_to_cell_key(ranking.cursor_coordinate).row_key.value == chosen
        ranking.focus()
        await pilot.press("down")
        await settle(app, pilot)
        assert app.state.group != chosen
        await pilot.press("4")
        await settle(app, pilot)
        assert repr(app.state.group) in str(app.query_one("#detail-title").render())


async def test_q_while_panes_are_still_built_leaves_cleanly(in_tmp_cwd):
    """``q`` right after the first screen, while the later panes mount: a Select of the Runs
    pane looked for its overlay as the app took it down (Textual's ``NoMatches``; CI, 1 of 6
    cold opens on a loaded machine) and the exit became an internal error, code 1. Once the
    user asked to leave, that is no error; before, it still is one."""
    from textual.css.query import NoMatches

    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(app, pilot)
        app.exit()
        app._handle_exception(NoMatches("No nodes match 'SelectOverlay' on Select(id='run-model')"))
        await pilot.pause()
    assert app.return_code == 0 and app.fatal_line is None
    broken = RoofscopeApp([RESNET])
    with pytest.raises(NoMatches):  # Textual's test harness raises what ended the app
        async with broken.run_test(size=(100, 30)) as pilot:
            await opened(broken, pilot)
            broken._handle_exception(NoMatches("a pane's own bug"))
            await pilot.pause()
    assert broken.return_code == 1 and (broken.fatal_line or "").startswith("roofscope: internal")


async def test_ctrl_c_says_how_to_quit_in_plain_text(in_tmp_cwd):
    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(app, pilot)
        await pilot.press("ctrl+c")
        await settle(app, pilot)
        said = [str(n.message) for n in app._notifications]
        assert any(m.startswith("Press ") and m.endswith(" to quit the app") for m in said), said
        assert not any("[b]" in m for m in said)
