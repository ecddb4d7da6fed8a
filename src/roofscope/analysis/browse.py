"""Queries behind interactive views: filters, sorted and paged launches, one launch's metrics.

Views never compute physics; they ask for rows here. A sorted, filtered launch list is a
materialised permutation (``row number → launch``), built once per (filter, sort) in ~0.1 s
for a million launches, so that any page of it is a 60-row join afterwards.
"""

from __future__ import annotations

import contextlib
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from roofscope.quantities import (
    EFFICIENCY,
    FLOP_PER_S,
    TIME_S,
    UTIL_EFF,
    ai_key,
    flop_total_sql,
    flops_complete_sql,
    ratio_sql,
)
from roofscope.regex import check_regex
from roofscope.sqlutil import quote_ident, quote_str

if TYPE_CHECKING:  # imported where used: the TUI's first screen is drawn before DuckDB loads
    import duckdb

# The columns of a launch list page, in order (their titles and formats: present.columns)
LAUNCH_KEYS: tuple[str, ...] = (
    "launch_id",
    "kernel",
    TIME_S,
    FLOP_PER_S,
    ai_key("dram"),
    EFFICIENCY,
    *UTIL_EFF,
    "grid_size",
    "block_size",
)
# Unknown stays unknown: a launch with no FLOP counter at all has no FLOP/s, not 0 FLOP/s, and
# nor has one whose measured precisions sum to 0 while another was not measured (a GEMM of a
# --set detailed export: no tensor counters). A sum above 0 with a precision missing is a lower
# bound (the group rows mark it ≥; quantities.flop_total).
_FLOPS = (
    f"CASE WHEN {flops_complete_sql('v.')} OR ({flop_total_sql('v.')}) > 0 "
    f"THEN {flop_total_sql('v.')} END"
)
_EXPRS = {
    FLOP_PER_S: ratio_sql(_FLOPS, f"v.{TIME_S}"),
    ai_key("dram"): ratio_sql(_FLOPS, "v.dram"),
}
_ids = itertools.count()


@dataclass(frozen=True)
class Filter:
    """What a view is narrowed to; every part optional."""

    regex: str | None = None  # matched against kernel name and group
    group: str | None = None
    eff_bin: int | None = None  # 0..9, the efficiency histogram bin
    window: tuple[int, int, int] | None = None  # (report_id, t0_ns, t1_ns) on the nsys timeline

    def sql(self) -> str:
        parts = ["TRUE"]
        if self.regex:
            check_regex(self.regex)
            rx = quote_str(self.regex)
            # match the distinct names once, not a million launch rows
            parts.append(
                f"(kernel IN (SELECT kernel FROM kernel_groups WHERE "
                f"regexp_matches(kernel, {rx}, 'i') OR regexp_matches(grp, {rx}, 'i')) "
                f"OR regexp_matches(grp, {rx}, 'i'))"
            )
        if self.group is not None:
            parts.append(f"grp = {quote_str(self.group)}")
        if self.eff_bin is not None:
            parts.append(f"least(CAST(floor(efficiency * 10) AS INTEGER), 9) = {int(self.eff_bin)}")
        if self.window is not None:
            rid, t0, t1 = (int(x) for x in self.window)
            parts.append(
                f"launch_id IN (SELECT launch_id FROM spans WHERE report_id = {rid} "
                f"AND end_ns > {t0} AND start_ns < {t1})"
            )
        return " AND ".join(parts)


def _column_sql(name: str) -> str:
    """A launch column as SQL over ``launch_view`` aliased ``v``."""
    return _EXPRS.get(name, f"v.{quote_ident(name)}")


class LaunchPager:
    """One sorted, filtered launch list of a report, read a page at a time."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        report_id: int,
        where: str = "TRUE",
        sort: str = TIME_S,
        descending: bool = True,
    ):
        self.con = con
        self.table = f"rs_perm_{next(_ids)}"
        order = f"{_column_sql(sort)} {'DESC' if descending else 'ASC'} NULLS LAST, v.launch_id"
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {self.table} AS SELECT row_number() OVER "
            f"(ORDER BY {order}) - 1 AS rn, launch_id FROM launch_view v "
            f"WHERE report_id = {report_id} AND ({where})"
        )
        self.report_id = report_id
        self.closed = False
        self.count = int(con.execute(f"SELECT count(*) FROM {self.table}").fetchall()[0][0])

    def page(self, start: int, size: int) -> list[tuple]:
        """Rows ``start … start+size-1`` with the columns of ``LAUNCH_KEYS`` (none once closed:
        a view may still ask for a page of the list it just replaced)."""
        if self.closed:
            return []
        cols = ", ".join(f"{_column_sql(c)} AS {c}" for c in LAUNCH_KEYS)
        return self.con.execute(
            f"SELECT {cols} FROM {self.table} p JOIN launch_view v "
            f"ON v.launch_id = p.launch_id AND v.report_id = {self.report_id} "
            f"WHERE p.rn >= {int(start)} AND p.rn < {int(start + size)} ORDER BY p.rn"
        ).fetchall()

    def close(self) -> None:
        """Drop the permutation table; a pager replaced by another must be closed, or its table
        (up to a row per launch) lives as long as the connection."""
        if self.closed:
            return
        self.closed = True
        import duckdb

        # a session closed first took its temp tables with it
        with contextlib.suppress(duckdb.ConnectionException):
            self.con.execute(f"DROP TABLE IF EXISTS {self.table}")
