"""The derived chain, built in one place and in its one order.

facts (metrics) → launch_facts (efficiency, which needs each report's ceilings) → kernel_groups
and launch_view (the grouping) → the ncu/nsys joins. The modules that make each step never call
each other; only :func:`build_views` knows the order, and :func:`apply_groups` is the one step
a session re-runs (new rules, another axis).
"""

from __future__ import annotations

from math import isfinite
from typing import TYPE_CHECKING

import duckdb

from roofscope.analysis import efficiency, join
from roofscope.grouping import AXES, Grouper
from roofscope.metrics import build_facts
from roofscope.quantities import BYTES, FLOPS, LEVELS, PRECISIONS, TIME_S, flop_total
from roofscope.sqlutil import insert_rows

if TYPE_CHECKING:
    from roofscope.session.report import Report

NO_RANGE = "(no NVTX range)"


def build_views(
    con: duckdb.DuckDBPyConnection, reports: list[Report], grouper: Grouper, axis: str
) -> None:
    """Every derived table and view of the session, in order; pairs each ncu report with the
    nsys report it is joined to (``Report.partner``)."""
    build_facts(con, [r.plan for r in reports])
    efficiency.build_launch_table(con, {r.report_id: r.ceilings for r in reports})
    _flag_overflowing_totals(con, reports)
    apply_groups(con, grouper, axis)
    for ncu, nsys in _pair_reports(reports):
        ncu.partner = nsys
        join.build(con, ncu.report_id, nsys.report_id)


def apply_groups(con: duckdb.DuckDBPyConnection, grouper: Grouper, axis: str) -> None:
    """``kernel_groups`` (each kernel name's group under the rules) and ``launch_view``
    (launch_facts with the group of the chosen axis): the regroup step."""
    kernels = [
        k
        for (k,) in con.execute(
            "SELECT DISTINCT kernel FROM launches WHERE kernel IS NOT NULL"
        ).fetchall()
    ]
    con.execute(
        "CREATE OR REPLACE TEMP TABLE kernel_groups (kernel VARCHAR, grp VARCHAR, rule VARCHAR)"
    )
    insert_rows(
        con,
        "kernel_groups",
        ("kernel", "grp", "rule"),
        [(k, *g) for k, g in zip(kernels, grouper.match_all(kernels, con), strict=True)],
    )
    column = AXES[axis]
    if column is None:
        grp, rule, on_nvtx = "coalesce(g.grp, '(unnamed)')", "g.rule", ""
    else:
        grp = f"coalesce(n.{column}, {NO_RANGE!r})"
        rule, on_nvtx = (
            f"'NVTX {column} range'",
            "LEFT JOIN launch_nvtx n ON n.report_id = f.report_id AND n.launch_id = f.launch_id",
        )
    con.execute(
        f"CREATE OR REPLACE TEMP VIEW launch_view AS SELECT f.*, {grp} AS grp, "
        f"{rule} AS group_rule FROM launch_facts f "
        f"LEFT JOIN kernel_groups g ON g.kernel = f.kernel {on_nvtx}"
    )


def _flag_overflowing_totals(con: duckdb.DuckDBPyConnection, reports: list[Report]) -> None:
    """Sums past the largest double (~1.8e308) are ``inf``, which JSON prints as null and
    tables as ``inf``: name each such total on its report, so it never reads as unmeasured.
    Launch values are finite and never negative (ingest), so any group's sum that overflows
    makes its report's total overflow too: checking the totals covers every row. The totals
    are the report's own (``Report.totals``, queried once and kept, all reports' in one query:
    ``fill_totals``), not a query of their own: each query over ``launch_facts`` costs ~5 ms
    to plan."""
    from roofscope.session.report import fill_totals

    fill_totals(con, [r for r in reports if r._totals is None])
    for report in reports:
        t = report.totals()
        quantities = {
            "GPU time": t[TIME_S],
            **{f"{f} FLOPs": t[FLOPS][f] for f in PRECISIONS},
            "FLOPs of all precisions": flop_total(t[FLOPS]),
            **{f"{b} bytes": t[BYTES][b] for b in LEVELS},
        }
        names = [name for name, v in quantities.items() if v is not None and not isfinite(v)]
        if not names:
            continue
        what = (
            f"total of {names[0]} overflows"
            if len(names) == 1
            else (f"totals of {', '.join(names)} overflow")
        )
        report.warnings.append(
            f"the {what} a double (over 1.8e308): shown as unknown (null in JSON, inf in "
            "tables), with the shares, rates and ratios built on it; the export holds "
            "implausibly large values there"
        )


def _pair_reports(reports: list[Report]) -> list[tuple[Report, Report]]:
    """Each ncu report → the first nsys report opened with it (same program, we trust)."""
    nsys = [r for r in reports if r.is_nsys and r.launches]
    return [(r, nsys[0]) for r in reports if not r.is_nsys] if nsys else []
