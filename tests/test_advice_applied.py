"""Advice checked by applying it (issue 19 item 4, docs/performance.md): the channels_last item
on the ResNet-18 bf16 b8 step before (NCHW) against the same step profiled with
``roofscope profile --channels-last``, both made by ``roofscope profile`` on one H100. The
measured gain is pinned, and the estimate (LAYOUT_SAVES, fitted on this pair) stays within the
error stated there."""

from __future__ import annotations

import pytest

import roofscope
from roofscope.analysis.advice.evidence import LAYOUT_SAVES, Step, roofscope_advice
from roofscope.analysis.browse import Filter
from tests.conftest import SAMPLES

pytestmark = pytest.mark.usefixtures("shared_sample_cache")

BEFORE = "resnet18_bf16_b8_h100.ncu-raw.csv.gz"
AFTER = "resnet18_bf16_b8_cl_h100.ncu-raw.csv.gz"


def _read(name: str) -> tuple[Step, dict[str, float]]:
    session = roofscope.load(SAMPLES / name)
    try:
        report = session.reports[0]
        groups = tuple(report.rows("group"))
        step = Step(
            groups,
            {c.name: c.value for c in report.ceilings},
            report.head()["time_s"],
            tuple(report.kernel_names(Filter())),
        )
        return step, {str(g["name"]): float(g["time_s"] or 0.0) for g in groups}
    finally:
        session.close()


def test_channels_last_prediction_against_the_applied_run():
    before, before_groups = _read(BEFORE)
    after, after_groups = _read(AFTER)
    assert before.step_s == pytest.approx(3.811e-3, rel=1e-3)
    assert after.step_s == pytest.approx(3.060e-3, rel=1e-3)
    # the transforms are gone entirely; NHWC batch norm and element-wise kernels are slower
    assert before_groups["layout transform"] == pytest.approx(1.001e-3, rel=1e-3)
    assert "layout transform" not in after_groups
    slower = sum(after_groups[g] - before_groups[g] for g in ("batch norm", "element-wise"))
    assert slower == pytest.approx(0.227e-3, rel=0.02)
    measured = before.step_s - after.step_s
    [item] = [a for a in roofscope_advice(before) if a.rule == "channels_last"]
    assert item.est_gain_s == pytest.approx(LAYOUT_SAVES * before_groups["layout transform"])
    # within 1% after the fit (it was +33% with the whole group's time as the gain)
    assert item.est_gain_s == pytest.approx(measured, rel=0.01)
    assert before_groups["layout transform"] / measured == pytest.approx(1.333, abs=0.005)
    assert item.est_step_speedup == pytest.approx(before.step_s / after.step_s, rel=0.01)
    # the applied run has nothing left for the rule
    assert "channels_last" not in {a.rule for a in roofscope_advice(after)}
