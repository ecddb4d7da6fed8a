"""Group rows a report computed are kept per filter while the grouping stands (issue 31: clearing
a filter or leaving a launch list shows them at once instead of a query over every launch):
never stale after the rules or the axis change, never shared with a caller that edits them."""

from __future__ import annotations

import roofscope
from roofscope.analysis.browse import Filter
from roofscope.grouping import Rule
from tests.conftest import SAMPLES

RESNET = SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"


def names(rows):
    return sorted(str(r["name"]) for r in rows)


def test_kept_rows_are_the_queried_ones_and_follow_the_rules():
    session = roofscope.load(RESNET, use_cache=False)
    report = session.reports[0]
    first = report.rows("group")
    again = report.rows("group")
    assert again == first and again is not first
    again[0]["name"] = "edited by a caller"
    again[0]["flops"]["fp32"] = -1.0
    assert report.rows("group") == first  # what the caller edits is its own copy
    narrowed = report.rows("group", Filter("conv"))
    assert 0 < len(narrowed) < len(first)
    assert report.rows("group") == first  # the unfiltered rows are kept beside

    original = list(session.grouper.rules)
    session.set_rules([Rule("conv|gemm|sgemm", "matrix work", "test"), *original])
    regrouped = report.rows("group")
    assert "matrix work" in names(regrouped) and regrouped != first
    assert "matrix work" in names(report.rows("group", Filter("conv")))

    session.set_rules(original)  # back to the rules of before: the first answer again
    assert report.rows("group") == first


def test_the_axis_change_forgets_the_kept_rows():
    session = roofscope.load(RESNET, use_cache=False)
    report = session.reports[0]
    report.rows("group")
    assert report._group_rows
    session.set_axis("rules")
    assert not report._group_rows
