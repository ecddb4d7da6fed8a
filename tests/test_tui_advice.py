"""The Advice pane (9): items ranked by estimated gain, Enter shows an item's groups in
Kernels, d its first group in Detail searched to the metrics the rule read."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from roofscope.tui.app import RoofscopeApp
from roofscope.tui.panes.advice import AdvicePane, exact
from roofscope.tui.panes.detail import DetailPane
from roofscope.tui.panes.kernels import KernelsPane
from tests.conftest import SAMPLES
from tests.test_tui import opened, settle

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("shared_sample_cache")]


async def test_advice_pane_ranks_and_leads_to_kernels_and_detail(in_tmp_cwd):
    app = RoofscopeApp([str(SAMPLES / "resnet18_fp32_h100.ncu-details.csv")])
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(app, pilot)
        await pilot.press("9")
        await settle(app, pilot)
        pane = app.query_one(AdvicePane)
        rules = [a.rule for a in pane.items]
        # estimated first (torch.compile's gain includes channels_last's), unknown last
        assert rules[:3] == ["fusion", "channels_last", "SOLBottleneck"]
        assert app.query_one("#advice-items", DataTable).row_count == len(rules)
        detail = str(app.query_one("#advice-detail").render())
        assert "do: torch.compile the model" in detail and "model:" in detail
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.query_one(KernelsPane).display
        # the group where the predicted gain is largest, among the item's groups
        assert app.state.group == "layout transform" == pane.items[0].groups[0]
        shown = {r["name"] for r in app.query_one(KernelsPane).rows}
        assert shown == set(pane.items[0].groups) and "batch norm" in shown
        await pilot.press("9", "down", "down", "d")  # SOLBottleneck's metrics
        await settle(app, pilot)
        detail_pane = app.query_one(DetailPane)
        assert detail_pane.display and detail_pane.pattern == "throughput|time|duration"
        assert any("throughput" in r.name for r in detail_pane.metrics)


def test_exact_matches_group_names_with_regex_characters():
    import re

    rx = exact(["GEMM (nvjet)", "dropout/RNG", "a.b*"])
    assert re.fullmatch(rx, "GEMM (nvjet)") and re.fullmatch(rx, "a.b*")
    assert not re.fullmatch(rx, "GEMM") and not re.fullmatch(rx, "axb")
