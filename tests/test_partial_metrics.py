"""A launch without a counter the other launches have makes every total from that counter a
lower bound: the report names the metric and a launch (numbers contract, docs/metrics.md §0),
on raw and details pages alike."""

from __future__ import annotations

import pytest

import roofscope
from tests.ncu_builder import details_page, raw_page, write

FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
FADD = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
UNITS = {"gpu__time_duration.sum": "ns", FFMA: "inst", FADD: "inst"}


def _launch(ffma: str) -> dict[str, str]:
    return {"gpu__time_duration.sum": "1,000", FFMA: ffma, FADD: "10"}


@pytest.mark.parametrize("missing", ["n/a", ""])
@pytest.mark.slow
def test_raw_page_launch_without_a_counter_is_named(tmp_path, in_tmp_cwd, missing):
    text = raw_page([("k", _launch("100")), ("k", _launch(missing)), ("k", _launch("100"))], UNITS)
    session = roofscope.load(write(tmp_path / "gap.csv", text), use_cache=False)
    warning = next(w for w in session.warnings if "have no value" in w)
    assert f"{FFMA} (1 of 3)" in warning and "launch 1" in warning
    assert "lower bound" in warning


def test_details_page_launch_without_a_counter_is_named(tmp_path, in_tmp_cwd):
    full = {m: (UNITS[m], v) for m, v in _launch("100").items()}
    short = {m: v for m, v in full.items() if m != FFMA}
    text = details_page([("k", full), ("k", short)])
    session = roofscope.load(write(tmp_path / "gap.csv", text), use_cache=False)
    assert any(f"{FFMA} (1 of 2)" in w for w in session.warnings)


def test_complete_exports_get_no_such_warning(tmp_path, in_tmp_cwd):
    text = raw_page([("k", _launch("100")), ("k", _launch("7"))], UNITS)
    session = roofscope.load(write(tmp_path / "full.csv", text), use_cache=False)
    assert not any("have no value" in w for w in session.warnings)
