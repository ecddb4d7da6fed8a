"""One open report, and every question asked of it alone.

A front end holds the report it shows (``session.reports[i]``) and asks it directly: rows,
launch lists, detail, the efficiency histogram, totals, the timeline and the nsys join. Each
method takes the session's lock itself (the TUI's workers share one DuckDB connection), so no
caller handles the connection or an index. Detail, advice and recordings import their
analysis modules when first asked: the table of a report needs none of them.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import duckdb

from roofscope.analysis import browse, efficiency, join, model_check, summary, timeline
from roofscope.errors import RoofscopeError
from roofscope.hardware.ceilings import Ceiling
from roofscope.hardware.specs import GpuSpec
from roofscope.ingest.contract import Layout
from roofscope.ingest.registry import layout as layout_record
from roofscope.metrics import MetricPlan
from roofscope.quantities import (
    BYTES,
    EFFICIENCY_COMPLETE,
    FLOP_PER_S,
    FLOPS,
    FLOPS_COMPLETE,
    FLOPS_TOTAL,
    LAUNCHES,
    LEVELS,
    PRECISION_TITLES,
    PRECISIONS,
    TIME_S,
    flop_per_s,
    flop_total,
    flop_total_sql,
    flops_complete_sql,
)

if TYPE_CHECKING:
    from roofscope.analysis import detail
    from roofscope.analysis.advice import Advice


GROUP_ROWS_KEPT = 16  # filters whose group rows a report keeps (a few bytes a group)


@dataclass
class Report:
    """One loaded export, everything resolved about it, and its queries."""

    report_id: int
    path: str
    layout: str
    gpu_name: str | None
    cc: str | None
    sm_count: int | None
    launches: int
    spec: GpuSpec | None
    plan: MetricPlan
    _con: duckdb.DuckDBPyConnection = field(repr=False, compare=False, kw_only=True)
    _lock: threading.RLock = field(repr=False, compare=False, kw_only=True)
    ceilings: list[Ceiling] = field(default_factory=list)
    # tensor-path ops per data type ({"tf32": 1.9e10}) where the counters give them
    tensor_types: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    _totals: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)
    # group rows by filter, while the grouping stands (forget_groups): clearing a filter or
    # leaving a launch list shows rows already computed instead of a query over every launch
    _group_rows: dict[Any, list[dict[str, Any]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    # the nsys report this ncu report's kernels are joined to (set when the views are built)
    partner: Report | None = field(default=None, repr=False, compare=False)

    @property
    def kind(self) -> Layout:
        """What this report holds, as its reader's record says (never a layout name tested)."""
        return layout_record(self.layout)

    @property
    def is_nsys(self) -> bool:
        """Durations from a real timeline, no counters: shown as times, paired with ncu."""
        return self.kind.timeline

    @property
    def is_recording(self) -> bool:
        """GPU samples and no kernels (a roofscope recording)."""
        return not self.kind.kernels

    # -- tables ---------------------------------------------------------------------------
    def rows(
        self, by: str = "group", flt: browse.Filter | None = None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Aggregated rows; with a filter, ``time_pct`` stays a share of the whole report."""
        if by not in summary.KEYS:
            raise RoofscopeError(f"unknown grouping {by!r}", hint="use group, kernel or launch")
        where = flt.sql() if flt else "TRUE"
        with self._lock:
            key = (flt or browse.Filter(), limit)
            if by == "group" and key in self._group_rows:
                return copy.deepcopy(self._group_rows[key])
            total = self.totals()[TIME_S]  # the shares of every view: of the whole report
            out = summary.rows(self._con, self.report_id, by, self.ceilings, where, total, limit)
            if by == "group" and self.partner is not None:
                columns = join.group_columns(
                    self._con, self.report_id, self.partner.report_id, where
                )
                for row in out:
                    row["nsys"] = columns.get(row["name"])
            if by == "group":
                if len(self._group_rows) >= GROUP_ROWS_KEPT:
                    self._group_rows.pop(next(iter(self._group_rows)))
                self._group_rows[key] = copy.deepcopy(out)
            return out

    def iter_rows(self, by: str, limit: int | None = None) -> Iterator[dict[str, Any]]:
        """:meth:`rows` unfiltered, a batch at a time (``report --by launch``: ten million
        launches are written in bounded memory, never held). The lock is held until the
        iteration ends."""
        if by not in summary.KEYS:
            raise RoofscopeError(f"unknown grouping {by!r}", hint="use group, kernel or launch")
        total = self.totals()[TIME_S]
        with self._lock:
            yield from summary.iter_rows(self._con, self.report_id, by, self.ceilings, total, limit)

    def row_count(self, by: str) -> int:
        """How many rows :meth:`rows` has (a summary page's launch is one row, whatever its
        Invocations)."""
        with self._lock:
            return summary.row_count(self._con, self.report_id, by)

    def empty_row(self, by: str) -> dict[str, Any]:
        """One of :meth:`rows` with nothing known: its keys and nesting, no row computed."""
        with self._lock:
            return summary.empty_row(self._con, self.report_id, by)

    def forget_groups(self) -> None:
        """The grouping changed (rules, axis): group rows kept so far are no longer true."""
        with self._lock:
            self._group_rows.clear()

    def pager(
        self, flt: browse.Filter, sort: str = TIME_S, descending: bool = True
    ) -> browse.LaunchPager:
        with self._lock:
            return browse.LaunchPager(self._con, self.report_id, flt.sql(), sort, descending)

    def page(self, pager: browse.LaunchPager, start: int, size: int) -> list[tuple]:
        with self._lock:
            return pager.page(start, size)

    def kernel_names(self, flt: browse.Filter) -> list[str]:
        """The distinct kernel names of the launches ``flt`` keeps (a launch list's names)."""
        with self._lock:
            return [
                str(r[0])
                for r in self._con.execute(
                    f"SELECT DISTINCT kernel FROM launch_view "
                    f"WHERE report_id = {self.report_id} AND ({flt.sql()})"
                ).fetchall()
            ]

    def kernel_times(self, per_launch: bool = False) -> list[tuple[str, str, str, int, float]]:
        """(group, kernel name, block shape, launches, GPU time in s) of every kernel and block
        shape: what the channels_last model reads (analysis/advice/layout.py). ``per_launch``:
        one tuple per launch, in launch order, which fitting that model matches layer by layer
        (bench/fit_advice.py layout; an ncu report's size, never a trace's)."""
        rid = self.report_id
        sql = (
            f"SELECT grp, kernel, block_size, invocations, time_s * invocations FROM launch_view "
            f"WHERE report_id = {rid} AND time_s IS NOT NULL ORDER BY launch_id"
            if per_launch
            else f"SELECT grp, kernel, block_size, sum(invocations), sum(time_s * invocations) "
            f"FROM launch_view WHERE report_id = {rid} AND time_s IS NOT NULL "
            f"GROUP BY ALL ORDER BY ALL"
        )
        with self._lock:
            return [
                (str(g), str(k), str(b or ""), int(n), float(t))
                for g, k, b, n, t in self._con.execute(sql).fetchall()
            ]

    def close_pager(self, pager: browse.LaunchPager | None) -> None:
        """Drop a pager's table (a new sort or filter replaced it); later pages of it are empty."""
        if pager is not None:
            with self._lock:
                pager.close()

    def has_launch(self, launch_id: int) -> bool:
        with self._lock:
            return bool(
                self._con.execute(
                    "SELECT count(*) FROM launches WHERE report_id = ? AND launch_id = ?",
                    [self.report_id, int(launch_id)],
                ).fetchall()[0][0]
            )

    def launch_detail(self, launch_id: int) -> list[detail.MetricRow]:
        from roofscope.analysis import detail
        from roofscope.ingest.registry import launch_values

        where = f"launch_id = {int(launch_id)}"
        with self._lock:
            values = launch_values(self._con, self.report_id, int(launch_id), self._export_problem)
            return [
                *detail.derived_rows(self._con, self.report_id, where, self.plan.provenance),
                *detail.hot_instruction_rows(self._con, self.report_id, int(launch_id)),
                *detail.raw_rows(values),
            ]

    def _export_problem(self, path: str) -> str | None:
        """Why the export cannot be read again for values the store does not hold (None: it
        can): reading a file that changed since it was loaded would show another report's."""
        from pathlib import Path

        from roofscope.store import changed_since_loaded, stored_identity

        if not Path(path).exists():
            return f"not copied into the store and {path} is gone"
        resolved = str(Path(path).resolve())
        if changed_since_loaded([i for i in stored_identity(self._con) if i["path"] == resolved]):
            return f"{path} changed since it was opened: reopen it (Ctrl+R in roofscope open)"
        return None

    def group_detail(self, group: str) -> list[detail.MetricRow]:
        from roofscope.analysis import detail

        where = detail.group_where(group)
        with self._lock:
            return [
                *detail.derived_rows(self._con, self.report_id, where, self.plan.provenance),
                *detail.raw_rows_for_group(self._con, self.report_id, where),
            ]

    # -- sums -----------------------------------------------------------------------------
    def histogram(self) -> dict[str, Any]:
        with self._lock:
            bins, unknown, incomplete = efficiency.histogram(self._con, self.report_id)
        known = any(b.launches for b in bins)
        return {
            "potential_speedup": efficiency.potential_speedup(bins),
            # false: some efficiencies are lower bounds, the potential speedup an upper bound
            EFFICIENCY_COMPLETE: not incomplete[LAUNCHES] if known else None,
            "bins": [b.to_dict() for b in bins],
            "unknown": unknown,
            "incomplete": incomplete,
        }

    def missing_components(self) -> list[str]:
        """Why some efficiencies are lower bounds: the utilisations they lack (none: exact)."""
        with self._lock:
            return efficiency.missing_components(self._con, self.report_id)

    def totals(self) -> dict[str, Any]:
        """Launches, kernels, time, FLOPs per precision and bytes per level of the whole
        report. Queried once per session (``launch_facts`` never changes in one; regrouping
        does not touch it): the JSON, the advice, the overflow check and the panes all ask."""
        with self._lock:  # the TUI's workers share the connection (diff, scaling call this)
            if self._totals is None:
                fill_totals(self._con, [self])
            t = self._totals
            assert t is not None
        return {**t, FLOPS: dict(t[FLOPS]), BYTES: dict(t[BYTES])}  # a copy: callers keep it

    def precision(self) -> list[dict[str, Any]]:
        """Which precision did the work: each precision's share of the report's FLOPs, the
        largest first (``[{"precision": "tensor_tf32", "title": "TF32 tensor", "flops": …,
        "share": 0.95}, …]``); tensor FLOPs split by data type where the counters give it."""
        return precision_shares(self.totals()[FLOPS], self.tensor_types)

    def phase_totals(self, ranges: list[list]) -> list[dict[str, Any]]:
        """Kernels, time and FLOPs of launch-ID ranges (a profiling run's phases)."""
        out = []
        for phase, spans in model_check.merge_phases(ranges).items():
            where = " OR ".join(f"launch_id BETWEEN {int(a)} AND {int(b)}" for a, b in spans)
            with self._lock:
                row = self._con.execute(
                    f"SELECT count(*), sum(time_s * invocations), "
                    f"sum(({flop_total_sql()}) * invocations), bool_and(tensor IS NOT NULL) "
                    f"FROM launch_facts "
                    f"WHERE report_id = {self.report_id} AND ({where})"
                ).fetchall()[0]
            out.append({
                "phase": phase,
                "kernels": int(row[0] or 0),
                TIME_S: row[1],
                FLOPS: row[2],
                "tensor_known": bool(row[3]),
            })  # fmt: skip
        return out

    def head(self) -> dict[str, Any]:
        """Who the report is and its totals: one side of a diff."""
        t = self.totals()
        flops = flop_total(t[FLOPS], t[FLOPS_COMPLETE])
        return {
            "path": self.path,
            "format": self.layout,
            "family": self.kind.family,
            "gpu": self.gpu_name,
            "spec": self.spec.key if self.spec else None,
            LAUNCHES: t[LAUNCHES],
            "kernels": t["kernels"],
            TIME_S: t[TIME_S],
            FLOPS_TOTAL: flops,
            FLOPS_COMPLETE: t[FLOPS_COMPLETE] if flops is not None else None,
            FLOP_PER_S: flop_per_s(flops, t[TIME_S]),
        }

    # -- advice -----------------------------------------------------------------------------
    def advice(self) -> list[Advice]:
        """What to change first: the items of every advice producer (ncu's rules rolled up over
        the report; docs/json.md ``advice``), ranked by estimated gain, unknown gains last. The
        producers (every rule module) are imported on the first call: a report without advice
        does not load them."""
        from roofscope.analysis.advice import Context, ranked
        from roofscope.analysis.advice.sources import PRODUCERS

        with self._lock:
            ctx = Context(self._con, self.report_id, self.totals()[TIME_S], self)
            items = [item for produce in PRODUCERS for item in produce(ctx)]
        return ranked(items)

    def ncu_rules_together(self) -> dict[str, Any] | None:
        """ncu's rule estimates combined over the step, overlapping rules never summed
        (docs/json.md ``ncu_rules_together``); None without any estimate."""
        from roofscope.analysis.advice import Context
        from roofscope.analysis.advice.ncu_rules import together

        with self._lock:
            return together(Context(self._con, self.report_id, self.totals()[TIME_S], self))

    # -- NVTX, timeline (nsys) and the ncu/nsys join ---------------------------------------
    def has_nvtx(self) -> bool:
        with self._lock:
            return bool(
                self._con.execute(
                    "SELECT count(*) FROM launch_nvtx WHERE report_id = ?", [self.report_id]
                ).fetchall()[0][0]
            )

    def has_timeline(self) -> bool:
        with self._lock:
            return timeline.has_timeline(self._con, self.report_id)

    def timeline(
        self, window: timeline.Window | None = None, device: int | None = None, buckets: int = 60
    ) -> timeline.Timeline | None:
        """Busy fraction, gaps, concurrency, memcpy rate and GPU metrics in a window."""
        with self._lock:
            return timeline.timeline(self._con, self.report_id, window, device, buckets)

    def devices(self) -> list[int | None]:
        with self._lock:
            return timeline.devices(self._con, self.report_id)

    def nsys_join(self) -> dict[str, Any] | None:
        """Coverage of the real timeline by this ncu report's kernels (None: no nsys)."""
        if self.partner is None:
            return None
        with self._lock:
            out = join.coverage(self._con, self.report_id, self.partner.report_id)
        return {"nsys_report": self.partner.path, **out}

    # -- GPU recordings -------------------------------------------------------------------
    def recording_summary(self) -> list[dict[str, Any]]:
        """Per-GPU averages, energy and low-utilisation time of a GPU recording."""
        from roofscope.analysis.recording import summarise

        with self._lock:
            return [g.to_dict() for g in summarise(self._con, self.report_id)]


def precision_shares(
    flops: dict[str, float | None], tensor_types: dict[str, float]
) -> list[dict[str, Any]]:
    """Shares of the FLOPs per precision (zero ones left out); the tensor FLOPs are split in
    the proportions of the tensor ops per data type, "tensor" alone when none is known."""
    parts: list[tuple[str, str, float]] = []
    known = {t: v for t, v in tensor_types.items() if v and v > 0}
    for p in PRECISIONS:
        value = flops.get(p)
        if not value:
            continue
        if p == "tensor" and known:
            ops = sum(known.values())
            for t, v in known.items():
                parts.append((f"tensor_{t}", f"{t.upper()} tensor", value * v / ops))
        else:
            parts.append((p, PRECISION_TITLES[p], value))
    total = sum(v for _, _, v in parts)
    if not total:
        return []
    parts.sort(key=lambda part: -part[2])
    return [
        {"precision": key, "title": title, FLOPS: v, "share": v / total} for key, title, v in parts
    ]


def fill_totals(con: duckdb.DuckDBPyConnection, reports: list[Report]) -> None:
    """Each report's ``totals`` in one query grouped by report: a query over ``launch_facts``
    per report took ~30 ms to plan and run, 30 s of ``record --summary`` over 1,000
    recordings (issue 30). The caller holds the session's lock."""
    if not reports:
        return
    cols = ", ".join(f"sum({c} * invocations)" for c in (*PRECISIONS, *LEVELS))
    ids = ", ".join(str(int(r.report_id)) for r in reports)
    rows = {
        row[0]: row[1:]
        for row in con.execute(
            f"SELECT report_id, sum(invocations), count(DISTINCT kernel), "
            f"sum(time_s * invocations), {cols}, bool_and({flops_complete_sql()}) "
            f"FROM launch_facts WHERE report_id IN ({ids}) GROUP BY report_id"
        ).fetchall()
    }
    for report in reports:
        row = rows.get(report.report_id, (None,) * 11)
        report._totals = {
            LAUNCHES: int(row[0] or 0),
            "kernels": int(row[1] or 0),
            TIME_S: row[2],
            FLOPS: dict(zip(PRECISIONS, row[3:7], strict=True)),
            BYTES: dict(zip(LEVELS, row[7:10], strict=True)),
            FLOPS_COMPLETE: row[10],
        }
