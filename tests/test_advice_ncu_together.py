"""ncu's rules on real details pages (issue 32, item 3): no item contradicts ncu's own text on
the launches it covers, and the estimates of overlapping rules are combined for the step,
never summed past what the launches' time allows. Checked against a reading of the cache's
``ncu_rules`` rows done here in Python, apart from the SQL that computes them."""

from __future__ import annotations

import math
import re

import pytest

import roofscope
from roofscope.analysis.advice import step_speedup
from roofscope.analysis.advice.ncu_rules import VARIANTS
from tests.conftest import SAMPLES

pytestmark = pytest.mark.usefixtures("shared_sample_cache")

CNN = SAMPLES / "cnn_fp32_b128_full_h100.ncu-details.csv.gz"  # estimates on 44 launches
RESNET = SAMPLES / "resnet18_fp32_h100.ncu-details.csv"  # SOLBottleneck, four kinds of text


def _rows(session):
    """(rule, launch, text, estimate %, launch time) of every OPT/WRN result."""
    rid = session.reports[0].report_id
    return session.con.execute(
        "SELECT r.rule, r.launch_id, r.description, r.speedup_pct, "
        "v.time_s * coalesce(v.invocations, 1) FROM ncu_rules r "
        "LEFT JOIN launch_view v ON v.report_id = r.report_id AND v.launch_id = r.launch_id "
        "WHERE r.report_id = ? AND r.type IN ('OPT', 'WRN')",
        [rid],
    ).fetchall()


@pytest.mark.parametrize("path", [CNN, RESNET], ids=["cnn", "resnet18"])
def test_no_item_contradicts_ncus_text_on_its_launches(path):
    session = roofscope.load(path)
    try:
        items = [a for a in session.reports[0].advice() if a.source == "ncu"]
        launches: dict[str, set[int]] = {}
        for rule, launch, _, _, _ in _rows(session):
            launches.setdefault(rule, set()).add(launch)
    finally:
        session.close()
    for rule, variants in VARIANTS.items():
        mine = [a for a in items if a.rule == rule]
        for a in mine:
            [kind] = [v for v in variants if a.title.endswith(v[1])] or [None]
            if kind is None:
                continue  # a text none of the kinds matches keeps the rule's general title
            quoted = a.evidence[0]
            assert re.search(kind[0], quoted.split(": ", 1)[1]), (a.title, quoted[:120])
        # every launch counted once, in the item of its own kind of text
        assert sum(a.launches for a in mine) == len(launches.get(rule, set()))
    pipes = [a for a in items if a.rule == "HighPipeUtilization"]
    if path == CNN:
        assert [a.title for a in pipes] == [
            "ncu HighPipeUtilization: every compute pipeline under-used"
        ]
        assert "one pipeline is the busiest" not in " ".join(a.title for a in items)


def test_overlapping_estimates_are_combined_never_summed():
    session = roofscope.load(CNN)
    try:
        report = session.reports[0]
        together = report.ncu_rules_together()
        step = report.totals()["time_s"]
        items = [a for a in report.advice() if a.source == "ncu"]
        rows = _rows(session)
    finally:
        session.close()
    # the reading apart: per launch, each rule's largest estimate (at most 100 %), combined
    best: dict[tuple[str, int], float] = {}
    times: dict[int, float] = {}
    for rule, launch, _, pct, t in rows:
        if pct is None or t is None:
            continue
        times[launch] = t
        best[rule, launch] = max(best.get((rule, launch), 0.0), min(pct, 100.0) / 100)
    left: dict[int, float] = {}
    for (_, launch), s in best.items():
        left[launch] = left.get(launch, 1.0) * (1 - s)
    combined = sum(times[launch] * (1 - kept) for launch, kept in left.items())
    summed = sum(times[launch] * s for (_, launch), s in best.items())
    assert together is not None
    assert together["launches"] == len(left) == 44
    assert together["est_gain_s"] == pytest.approx(combined, rel=1e-9)
    assert together["summed_gain_s"] == pytest.approx(summed, rel=1e-9)
    # summed, the rules claim 3.7 steps; combined, never more than the launches' time
    assert summed > 3 * step
    assert together["est_gain_s"] <= sum(times.values()) <= step * (1 + 1e-9)
    largest = max(a.est_gain_s for a in items if a.est_gain_s is not None)
    assert largest <= together["est_gain_s"] + 1e-15
    assert together["est_step_speedup"] == pytest.approx(step_speedup(step, combined))


def test_an_item_without_any_estimate_claims_no_gain():
    """SOLBottleneck carries no Estimated Speedup in this export: no gain, not 100 % of it."""
    session = roofscope.load(CNN)
    try:
        sol = [a for a in session.reports[0].advice() if a.rule == "SOLBottleneck"]
    finally:
        session.close()
    assert sol and all(a.est_gain_s is None and a.est_step_speedup is None for a in sol)


def test_a_gain_of_the_whole_step_is_an_infinite_speedup_not_a_rounding():
    step = 3.3315200000000013e-4
    almost = sum([step / 44] * 44)  # the whole step, summed launch by launch
    assert step_speedup(step, almost) == math.inf
    assert step_speedup(step, step / 2) == pytest.approx(2.0)
    assert step_speedup(step, None) is None
