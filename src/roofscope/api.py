"""The session every front end shares: open reports, derive, group, summarise.

``roofscope.load(*paths)`` returns a :class:`Session`; the CLI's ``report`` command, the TUI and
Python users all read the same numbers from it. pandas is imported only when a DataFrame is
asked for, so the CLI and TUI start without it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from roofscope.analysis import (
    browse,
    compare,
    cost,
    detail,
    efficiency,
    join,
    mig,
    model_check,
    scaling,
    summary,
    timeline,
)
from roofscope.analysis.recording import StoredRecordingSource, summarise
from roofscope.errors import RoofscopeError
from roofscope.grouping import Grouper, Rule, default_rules
from roofscope.hardware.ceilings import Ceiling, load_ceilings_file, resolve_ceilings
from roofscope.hardware.specs import GpuSpec, find_gpu, match_device_name
from roofscope.metrics import (
    FP16_CONVENTIONS,
    MetricPlan,
    build_facts,
    plan_report,
    store_facts,
)
from roofscope.quantities import (
    CACHE_LEVELS,
    LEVELS,
    PRECISIONS,
    flop_per_s,
    flop_total,
    flop_total_sql,
)
from roofscope.sqlutil import insert_rows
from roofscope.store import (
    OpenedStore,
    changed_since_loaded,
    discard_damaged,
    is_damaged,
    open_store,
    stored_identity,
)

if TYPE_CHECKING:
    import pandas as pd

JSON_SCHEMA_VERSION = 1
# Grouping axes: name rules (every report), or the NVTX range a kernel was launched in.
AXES = {"rules": None, "nvtx-inner": "innermost", "nvtx-outer": "outermost"}
NO_RANGE = "(no NVTX range)"


@dataclass
class Report:
    """One loaded export and everything resolved about it."""

    report_id: int
    path: str
    layout: str
    gpu_name: str | None
    cc: str | None
    sm_count: int | None
    launches: int
    spec: GpuSpec | None
    plan: MetricPlan
    ceilings: list[Ceiling] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def is_nsys(self) -> bool:
        return self.layout.startswith("nsys")

    @property
    def is_recording(self) -> bool:
        return self.layout == "gpu-recording"


@dataclass
class Options:
    """What the user chose, resolved (and so validated) before any file is read."""

    gpu: str | None = None
    ceilings_file: str | None = None
    fp16_convention: str = "ncu"
    rules: list[Rule] | None = None
    use_cache: bool = True
    axis: str = "rules"  # how launches are grouped: AXES
    spec: GpuSpec | None = field(default=None, init=False)
    user_ceilings: dict[str, float] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        if self.fp16_convention not in FP16_CONVENTIONS:
            raise RoofscopeError(
                f"unknown FP16 convention {self.fp16_convention!r}",
                hint=f"use one of {', '.join(FP16_CONVENTIONS)}",
            )
        self.spec = find_gpu(self.gpu) if self.gpu else None
        if self.ceilings_file:
            self.user_ceilings = load_ceilings_file(self.ceilings_file)
        if self.rules is None:
            self.rules = default_rules()
        if self.axis not in AXES:
            raise RoofscopeError(
                f"unknown grouping axis {self.axis!r}", hint=f"use one of {', '.join(AXES)}"
            )


class Session:
    """Reports opened together, with derived facts in a session-local DuckDB connection."""

    def __init__(self, store: OpenedStore, options: Options):
        self.store = store
        self.identity = stored_identity(store.con)
        self.con = store.con
        # One connection, used by one thread at a time: the TUI's workers query through it,
        # and the session's temporary tables are per connection in DuckDB.
        self.lock = threading.RLock()
        self.options = options
        self.reports = self._load_reports(options.spec, options.user_ceilings)
        self.grouper = Grouper(options.rules or [])
        self.axis = options.axis
        efficiency.build_launch_table(self.con, {r.report_id: r.ceilings for r in self.reports})
        self._flag_overflowing_totals()
        self.partner: dict[int, int] = {}
        self._apply_groups()
        self.partner = self._pair_reports()
        for ncu, nsys in self.partner.items():
            join.build(self.con, self.reports[ncu].report_id, self.reports[nsys].report_id)

    def _flag_overflowing_totals(self) -> None:
        """Sums past the largest double (~1.8e308) are ``inf``, which JSON prints as null and
        tables as ``inf``: name each such total on its report, so it never reads as unmeasured.
        Launch values are finite and never negative (ingest), so any group's sum that overflows
        makes its report's total overflow too: checking the totals covers every row."""
        quantities = {
            "time_s": ("GPU time", "time_s"),
            **{f: (f"{f} FLOPs", f) for f in PRECISIONS},
            "all_flops": ("FLOPs of all precisions", f"({flop_total_sql()})"),
            **{b: (f"{b} bytes", b) for b in LEVELS},
        }
        checks = ", ".join(
            f"coalesce(NOT isfinite(sum({expr} * invocations)), FALSE) AS {key}"
            for key, (_, expr) in quantities.items()
        )
        found = self.con.execute(
            f"SELECT report_id, {checks} FROM launch_facts GROUP BY report_id"
        ).fetchall()
        by_id = {r.report_id: r for r in self.reports}
        for rid, *flags in found:
            report = by_id.get(rid)
            names = [q[0] for q, bad in zip(quantities.values(), flags, strict=True) if bad]
            if report is None or not names:
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

    def _pair_reports(self) -> dict[int, int]:
        """Each ncu report → the first nsys report opened with it (same program, we trust)."""
        nsys = [i for i, r in enumerate(self.reports) if r.is_nsys and r.launches]
        pairs = {}
        if nsys:
            for i, r in enumerate(self.reports):
                if not r.is_nsys:
                    pairs[i] = nsys[0]
        return pairs

    # -- building -------------------------------------------------------------------------
    def _load_reports(
        self, user_spec: GpuSpec | None, user_ceilings: dict[str, float]
    ) -> list[Report]:
        warn_rows = self.con.execute("SELECT report_id, message FROM warnings").fetchall()
        metrics = _report_metrics(self.con)
        reports = []
        for row, spec, plan in _plans(self.con, metrics, user_spec, self.options.fp16_convention):
            rid, path, layout, gpu_name, cc, sm_count, launches = row
            report = Report(
                rid, path, layout, gpu_name, plan_cc(cc, spec), sm_count, launches, spec, plan
            )
            report.warnings = [m for r, m in warn_rows if r == rid] + plan.warnings
            if spec is None:
                what = (
                    f"GPU {gpu_name!r} is not in the spec table"
                    if gpu_name
                    else f"the export does not name its GPU ({_NO_GPU_WHY.get(layout, _NO_GPU)})"
                )
                report.warnings.append(f"{what}; pass --gpu NAME for datasheet ceilings")
            reports.append(report)
        build_facts(self.con, [r.plan for r in reports])
        for r in reports:
            r.ceilings = resolve_ceilings(
                self.con,
                r.report_id,
                metrics.get(r.report_id, set()),
                r.spec,
                user_ceilings,
                f"user: {self.options.ceilings_file}",
                r.cc,
                traffic_levels(r.plan),
            )
        return reports

    def _apply_groups(self) -> None:
        kernels = [
            k
            for (k,) in self.con.execute(
                "SELECT DISTINCT kernel FROM launches WHERE kernel IS NOT NULL"
            ).fetchall()
        ]
        self.con.execute(
            "CREATE OR REPLACE TEMP TABLE kernel_groups (kernel VARCHAR, grp VARCHAR, rule VARCHAR)"
        )
        insert_rows(
            self.con,
            "kernel_groups",
            ("kernel", "grp", "rule"),
            [(k, *g) for k, g in zip(kernels, self.grouper.match_all(kernels), strict=True)],
        )
        column = AXES[self.axis]
        if column is None:
            grp, rule, on_nvtx = "coalesce(g.grp, '(unnamed)')", "g.rule", ""
        else:
            grp = f"coalesce(n.{column}, {NO_RANGE!r})"
            rule, on_nvtx = (
                f"'NVTX {column} range'",
                "LEFT JOIN launch_nvtx n ON n.report_id = f.report_id "
                "AND n.launch_id = f.launch_id",
            )
        self.con.execute(
            f"CREATE OR REPLACE TEMP VIEW launch_view AS SELECT f.*, {grp} AS grp, "
            f"{rule} AS group_rule FROM launch_facts f "
            f"LEFT JOIN kernel_groups g ON g.kernel = f.kernel {on_nvtx}"
        )

    def set_rules(self, rules: list[Rule]) -> None:
        """Regroup with new rules (the TUI's rule editor): only the name table changes."""
        with self.lock:
            self.grouper = Grouper(rules)
            self._apply_groups()

    def kernel_names(self) -> list[str]:
        """Every distinct kernel name of the open reports (the rule editor's preview)."""
        with self.lock:
            rows = self.con.execute(
                "SELECT DISTINCT kernel FROM launches WHERE kernel IS NOT NULL ORDER BY 1"
            ).fetchall()
        return [r[0] for r in rows]

    def set_axis(self, axis: str) -> None:
        if axis not in AXES:
            raise RoofscopeError(f"unknown grouping axis {axis!r}", hint=", ".join(AXES))
        with self.lock:
            self.axis = axis
            self._apply_groups()

    def has_nvtx(self, report: int = 0) -> bool:
        rid = self.reports[report].report_id
        with self.lock:
            return bool(
                self.con.execute(
                    "SELECT count(*) FROM launch_nvtx WHERE report_id = ?", [rid]
                ).fetchall()[0][0]
            )

    # -- timeline (nsys) ------------------------------------------------------------------
    def has_timeline(self, report: int = 0) -> bool:
        with self.lock:
            return timeline.has_timeline(self.con, self.reports[report].report_id)

    def timeline(
        self,
        report: int = 0,
        window: timeline.Window | None = None,
        device: int | None = None,
        buckets: int = 60,
    ) -> timeline.Timeline | None:
        """Busy fraction, gaps, concurrency, memcpy rate and GPU metrics in a window."""
        with self.lock:
            return timeline.timeline(
                self.con, self.reports[report].report_id, window, device, buckets
            )

    def devices(self, report: int = 0) -> list[int | None]:
        with self.lock:
            return timeline.devices(self.con, self.reports[report].report_id)

    # -- reading --------------------------------------------------------------------------
    @property
    def warnings(self) -> list[str]:
        notes = [self.store.note] if self.store.note else []
        return notes + [f"{r.path}: {w}" for r in self.reports for w in r.warnings]

    def changed_on_disk(self) -> list[str]:
        """Inputs modified (or removed) since this session loaded them (stat calls only)."""
        return changed_since_loaded(self.identity)

    def rows(
        self,
        by: str = "group",
        report: int = 0,
        flt: browse.Filter | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """Aggregated rows; with a filter, ``time_pct`` stays a share of the whole report."""
        if by not in summary.KEYS:
            raise RoofscopeError(f"unknown grouping {by!r}", hint="use group, kernel or launch")
        r = self.reports[report]
        where = flt.sql() if flt else "TRUE"
        with self.lock:
            total = self.totals(report)["time_s"] if flt or limit else None
            out = summary.rows(self.con, r.report_id, by, r.ceilings, where, total, limit)
            if by == "group" and report in self.partner:
                other = self.reports[self.partner[report]].report_id
                columns = join.group_columns(self.con, r.report_id, other, where)
                for row in out:
                    row["nsys"] = columns.get(row["name"])
            return out

    def nsys_join(self, report: int = 0) -> dict[str, Any] | None:
        """Coverage of the real timeline by this ncu report's kernels (None: no nsys)."""
        if report not in self.partner:
            return None
        other = self.partner[report]
        with self.lock:
            out = join.coverage(
                self.con, self.reports[report].report_id, self.reports[other].report_id
            )
        return {"nsys_report": self.reports[other].path, **out}

    def pager(
        self, report: int, flt: browse.Filter, sort: str = "time_s", descending: bool = True
    ) -> browse.LaunchPager:
        with self.lock:
            return browse.LaunchPager(
                self.con, self.reports[report].report_id, flt.sql(), sort, descending
            )

    def page(self, pager: browse.LaunchPager, start: int, size: int) -> list[tuple]:
        with self.lock:
            return pager.page(start, size)

    def close_pager(self, pager: browse.LaunchPager | None) -> None:
        """Drop a pager's table (a new sort or filter replaced it); later pages of it are empty."""
        if pager is not None:
            with self.lock:
                pager.close()

    def launch_detail(self, report: int, launch_id: int) -> list[detail.MetricRow]:
        r = self.reports[report]
        where = f"launch_id = {int(launch_id)}"
        with self.lock:
            return [
                *detail.derived_rows(self.con, r.report_id, where, r.plan.provenance),
                *detail.raw_rows_for_launch(self.con, r.report_id, int(launch_id)),
            ]

    def group_detail(self, report: int, group: str) -> list[detail.MetricRow]:
        r = self.reports[report]
        where = detail.group_where(group)
        with self.lock:
            return [
                *detail.derived_rows(self.con, r.report_id, where, r.plan.provenance),
                *detail.raw_rows_for_group(self.con, r.report_id, where),
            ]

    def histogram(self, report: int = 0) -> dict[str, Any]:
        with self.lock:
            bins, unknown = efficiency.histogram(self.con, self.reports[report].report_id)
        return {
            "potential_speedup": efficiency.potential_speedup(bins),
            "bins": [b.to_dict() for b in bins],
            "unknown": unknown,
        }

    def totals(self, report: int = 0) -> dict[str, Any]:
        rid = self.reports[report].report_id
        cols = ", ".join(f"sum({c} * invocations)" for c in (*PRECISIONS, *LEVELS))
        with self.lock:  # the TUI's workers share the connection (diff, scaling call this)
            row = self.con.execute(
                f"SELECT sum(invocations), count(DISTINCT kernel), sum(time_s * invocations), "
                f"{cols} FROM launch_facts WHERE report_id = {rid}"
            ).fetchall()[0]
        flops = dict(zip(PRECISIONS, row[3:7], strict=True))
        bytes_ = dict(zip(LEVELS, row[7:10], strict=True))
        return {
            "launches": int(row[0] or 0),
            "kernels": int(row[1] or 0),
            "time_s": row[2],
            "flops": flops,
            "bytes": bytes_,
        }

    def phase_totals(self, ranges: list[list], report: int = 0) -> list[dict[str, Any]]:
        """Kernels, time and FLOPs of launch-ID ranges (a profiling run's phases)."""
        rid = self.reports[report].report_id
        out = []
        for phase, spans in model_check.merge_phases(ranges).items():
            where = " OR ".join(f"launch_id BETWEEN {int(a)} AND {int(b)}" for a, b in spans)
            with self.lock:
                row = self.con.execute(
                    f"SELECT count(*), sum(time_s * invocations), "
                    f"sum(({flop_total_sql()}) * invocations), bool_and(tensor IS NOT NULL) "
                    f"FROM launch_facts "
                    f"WHERE report_id = {rid} AND ({where})"
                ).fetchall()[0]
            out.append({
                "phase": phase,
                "kernels": int(row[0] or 0),
                "time_s": row[1],
                "flops": row[2],
                "tensor_known": bool(row[3]),
            })  # fmt: skip
        return out

    def report_dict(self, by: str = "group", top: int | None = None) -> dict[str, Any]:
        """The documented JSON contract (docs/json.md): ``groups`` always, ``rows`` too when
        ``by`` is ``kernel`` or ``launch``; ``top`` keeps the rows with the most time."""
        out = []
        for i, r in enumerate(self.reports):
            totals = self.totals(i)
            entry: dict[str, Any] = {
                "path": r.path,
                "format": r.layout,
                "gpu": {
                    "name": r.gpu_name,
                    "cc": r.cc,
                    "sm_count": r.sm_count,
                    "spec": r.spec.key if r.spec else None,
                },
                "launches": totals["launches"],
                "kernels": totals["kernels"],
                "time_s": totals["time_s"],
                "flops": totals["flops"],
                "bytes": totals["bytes"],
                "ceilings": [c.to_dict() for c in r.ceilings],
                "efficiency": self.histogram(i),
                "provenance": dict(r.plan.provenance),
                "fp16_convention": self.options.fp16_convention,
                "by": by,
                "axis": self.axis,
                "nsys_join": self.nsys_join(i),
                "timeline": self._timeline_dict(i),
                "recording": self.recording_summary(i) if r.is_recording else None,
                "groups": self.rows("group", i)[:top],
                "warnings": list(r.warnings),
            }
            if by != "group":
                entry["rows"] = self.rows(by, i)[:top]
            out.append(entry)
        return {"schema_version": JSON_SCHEMA_VERSION, "reports": out, "warnings": self.warnings}

    # -- comparing ------------------------------------------------------------------------
    def diff(self, before: int = 0, after: int = 1, by: str = "group") -> compare.Diff:
        """``after`` against ``before``, row by row (groups, kernels or launches)."""
        if by not in summary.KEYS:
            raise RoofscopeError(f"unknown grouping {by!r}", hint="use group, kernel or launch")
        for i in (before, after):
            if self.reports[i].is_recording:
                raise RoofscopeError(
                    "is a GPU recording, not a kernel profile",
                    path=self.reports[i].path,
                    hint="diff compares ncu or nsys exports; roofscope record --summary "
                    "summarises recordings",
                )
        a, b = self.reports[before], self.reports[after]
        with self.lock:
            ka = compare.kernel_infos(self.con, a.report_id)
            kb = compare.kernel_infos(self.con, b.report_id)
            rows_a, rows_b = self.rows(by, before), self.rows(by, after)
        if by == "group":
            rows, match = compare.diff_groups(rows_a, rows_b, ka, kb)
        else:
            match = compare.match_kernels(ka, kb)
            pair = compare.diff_kernels if by == "kernel" else compare.diff_launches
            rows = pair(rows_a, rows_b, match)
        heads = [self._head(i) for i in (before, after)]
        totals = [
            compare.Totals(h["time_s"], h["flops_total"], h["launches"], h["kernels"])
            for h in heads
        ]
        return compare.Diff(
            by,
            heads[0],
            heads[1],
            compare.total_change(*totals),
            rows,
            match,
            _diff_warnings(a, b),
        )

    def scaling(self, settings: dict[int, scaling.Setting] | None = None) -> dict[str, Any]:
        """Time per sample, throughput, FLOP/s and efficiency per report (setting); settings
        not given are read from the file names."""
        rows = []
        for i, r in enumerate(self.reports):
            if r.is_recording:
                continue
            setting = (settings or {}).get(i) or scaling.infer_setting(r.path)
            totals = self.totals(i)
            flops, eff, roof = scaling.step_numbers(self.rows("group", i), totals, r.ceilings)
            rows.append(
                scaling.ScalingRow(r.path, r.gpu_name, setting, totals["time_s"], flops, eff, roof)
            )
        if not rows:
            raise RoofscopeError(
                "no kernel profiles among the files (only GPU recordings)",
                hint="scaling and cost measure ncu or nsys exports; roofscope mig reads recordings",
            )
        rows = scaling.relate(rows)
        warnings = [
            f"{Path(r.path).name}: batch size unknown, so no per-sample numbers (name the file "
            "…_b64… or pass --batch)"
            for r in rows
            if r.setting.batch is None
        ]
        if any(not r.setting.sources.get("steps") for r in rows):
            warnings.append(
                "each report is taken as one profiled step (--steps N when a report holds more)"
            )
        if any(not r.is_nsys for r in self.reports if not r.is_recording):
            warnings.append(
                "ncu times are kernels replayed one at a time with locked clocks: no launch gaps, "
                "so time per sample is a lower bound of the real step (an nsys export has it)"
            )
        return {
            "varying": scaling.varying(rows),
            "rows": [r.to_dict() for r in rows],
            "warnings": warnings,
        }

    def cost(
        self,
        table: cost.PriceTable,
        run_steps: int | None = None,
        epochs: float | None = None,
        samples: int | None = None,
        settings: dict[int, scaling.Setting] | None = None,
    ) -> dict[str, Any]:
        """What a run of ``run_steps`` (or ``epochs`` × ``samples``) costs on each report's GPU
        at the table's prices; GPUs without a price get no cost and a warning."""
        doc = cost.cost_doc(self.scaling(settings), table, run_steps, epochs, samples)
        return {"schema_version": JSON_SCHEMA_VERSION, **doc}

    def gpu_keys(self) -> list[str]:
        """Spec-table keys of the reports' GPUs."""
        return sorted({r.spec.key for r in self.reports if r.spec and not r.is_recording})

    def _head(self, report: int) -> dict[str, Any]:
        r = self.reports[report]
        t = self.totals(report)
        flops = flop_total(t["flops"])
        return {
            "path": r.path,
            "format": r.layout,
            "gpu": r.gpu_name,
            "spec": r.spec.key if r.spec else None,
            "launches": t["launches"],
            "kernels": t["kernels"],
            "time_s": t["time_s"],
            "flops_total": flops,
            "flop_per_s": flop_per_s(flops, t["time_s"]),
        }

    def recording_summary(self, report: int) -> list[dict[str, Any]]:
        """Per-GPU averages, energy and low-utilisation time of a GPU recording."""
        with self.lock:
            return [g.to_dict() for g in summarise(self.con, self.reports[report].report_id)]

    def mig_advice(
        self, gpu: GpuSpec | None = None, tolerance: float = mig.SLOWDOWN_TOLERANCE
    ) -> list[dict[str, Any]]:
        """A MIG slice suggestion per recorded GPU (``gpu`` overrides the recorded name)."""
        out = []
        for i, r in enumerate(self.reports):
            if not r.is_recording:
                continue
            for g in self.recording_summary(i):
                spec = gpu or match_device_name(g["name"])
                if spec is None:
                    raise RoofscopeError(
                        f"GPU {g['name']!r} is not in the spec table",
                        path=r.path,
                        hint="pass --gpu NAME",
                    )
                if g["util_gpu"] is None or g["mem_used_max"] is None:
                    raise RoofscopeError("has no utilisation or memory samples", path=r.path)
                advice = mig.advise(
                    spec, g["util_gpu"], g["mem_used_max"], g["sm_active"], tolerance
                )
                out.append({"source": f"{g['host']} GPU {g['gpu']}", **advice.to_dict()})
        return out

    def recording_source(self) -> StoredRecordingSource | None:
        """The recordings opened in this session, for the Monitor pane; None if there are none."""
        ids = [r.report_id for r in self.reports if r.is_recording]
        if not ids:
            return None
        names = ", ".join(Path(r.path).name for r in self.reports if r.is_recording)
        return StoredRecordingSource(self.con, self.lock, ids, f"recording {names}")

    def _timeline_dict(self, report: int) -> dict[str, Any] | None:
        if not self.has_timeline(report):
            return None
        devs = self.devices(report)
        t = self.timeline(report, device=devs[0] if len(devs) == 1 else None)
        return t.to_dict() if t else None

    # -- pandas ---------------------------------------------------------------------------
    def _frame(self, by: str, report: int | None) -> pd.DataFrame:
        import pandas as pd

        indices = range(len(self.reports)) if report is None else [report]
        frames = []
        for i in indices:
            flat = [
                {**summary.flat_row(r), "report": self.reports[i].path} for r in self.rows(by, i)
            ]
            frames.append(pd.DataFrame(flat))
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def groups(self, report: int | None = None) -> pd.DataFrame:
        """One row per kernel group (pandas DataFrame)."""
        return self._frame("group", report)

    def kernels(self, report: int | None = None) -> pd.DataFrame:
        return self._frame("kernel", report)

    def launches(self, report: int | None = None) -> pd.DataFrame:
        """One row per launch with every derived column, straight from DuckDB."""
        where = "" if report is None else f"WHERE report_id = {self.reports[report].report_id}"
        return self.con.execute(
            f"SELECT * FROM launch_view {where} ORDER BY report_id, launch_id"
        ).df()

    def close(self) -> None:
        self.con.close()


def _diff_warnings(a: Report, b: Report) -> list[str]:
    """What makes a Δ mean less than it seems."""
    out = []
    if a.is_nsys != b.is_nsys:
        out.append(
            "one report is ncu (kernels replayed one by one, clocks locked) and one nsys (the "
            "real timeline): their times are not measured alike"
        )
    if (a.spec and b.spec and a.spec.key != b.spec.key) or a.gpu_name != b.gpu_name:
        out.append(
            f"different GPUs ({a.gpu_name or '?'} → {b.gpu_name or '?'}): each row's % of roof "
            "is against its own GPU's roofs"
        )
    return out


def plan_cc(cc: str | None, spec: GpuSpec | None) -> str | None:
    return cc or (spec.cc if spec else None)


# why an export of this layout has no GPU name, so the hint fits the file in hand
_NO_GPU_WHY = {
    "ncu-details": "details pages rarely do",
    "ncu-summary": "summary pages never do",
    "nsys-stats": "nsys stats tables never do",
    "nsys-events": "the Events View has no device name",
    "ncu-raw": "its device__attribute_display_name column is missing",
}
_NO_GPU = "no device table in it"


def _report_metrics(con: duckdb.DuckDBPyConnection) -> dict[int, set[str]]:
    metrics: dict[int, set[str]] = {}
    rows = con.execute("SELECT report_id, metric FROM catalogue WHERE wanted AND known_unit")
    for rid, metric in rows.fetchall():
        metrics.setdefault(rid, set()).add(metric)
    return metrics


def _plans(
    con: duckdb.DuckDBPyConnection,
    metrics: dict[int, set[str]],
    user_spec: GpuSpec | None,
    fp16_convention: str,
) -> list[tuple[tuple, GpuSpec | None, MetricPlan]]:
    """Each report's row, spec-table entry and metric plan under the given options."""
    rows = con.execute(
        "SELECT report_id, path, layout, gpu_name, cc, sm_count, launches FROM reports "
        "ORDER BY report_id"
    ).fetchall()
    out = []
    for row in rows:
        rid, gpu_name, cc = row[0], row[3], row[4]
        spec = user_spec or match_device_name(gpu_name)
        plan = plan_report(rid, metrics.get(rid, set()), plan_cc(cc, spec), fp16_convention)
        out.append((row, spec, plan))
    return out


def traffic_levels(plan: MetricPlan) -> frozenset[str]:
    """Cache levels whose bytes are traffic counters (their roofs are measured differently)."""
    return frozenset(lvl for lvl in CACHE_LEVELS if "traffic" in plan.provenance[lvl])


def store_default_facts(con: duckdb.DuckDBPyConnection) -> None:
    """Build hook: persist the facts of the default options into the cache being built."""
    metrics = _report_metrics(con)
    for row, spec, plan in _plans(con, metrics, None, "ncu"):
        store_facts(con, plan)
        rid, cc = row[0], row[4]
        # Run once here, with the arguments Session gives, so that their scans over every
        # launch land in ``query_memo`` under the same SQL a re-open asks for.
        resolve_ceilings(con, rid, metrics.get(rid, set()), spec, cc=plan_cc(cc, spec),
                         traffic_levels=traffic_levels(plan))  # fmt: skip


def load(
    *paths: str | Path,
    gpu: str | None = None,
    ceilings: str | None = None,
    fp16_convention: str = "ncu",
    rules: list[Rule] | None = None,
    use_cache: bool = True,
    axis: str = "rules",
) -> Session:
    """Open ncu exports (CSV, ``.csv.gz``, ``.ncu-rep`` with ncu installed) and nsys exports
    (SQLite, parquetdir, stats CSV, ``.nsys-rep`` with nsys installed)."""
    options = Options(gpu, ceilings, fp16_convention, rules, use_cache, axis)
    store = open_store(list(paths), use_cache=use_cache, on_build=store_default_facts)
    try:
        session = Session(store, options)
    except duckdb.Error as exc:
        if not (store.from_cache and is_damaged(exc)):
            raise
        # A cache that rotted on disk: drop it and build a new one from the report.
        store.con.close()
        discard_damaged()
        store = open_store(list(paths), use_cache=use_cache, on_build=store_default_facts)
        session = Session(store, options)
    for report, given in zip(session.reports, paths, strict=False):
        report.path = str(given)  # a cache made from another spelling of the same file
    return session
