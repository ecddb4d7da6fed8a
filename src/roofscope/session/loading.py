"""What the user chose, and what each stored report resolves to under it.

:class:`Options` is validated before any file is read; :func:`read_reports` turns the store's
``reports`` rows into :class:`Report` objects with their GPU, metric plan, ceilings and
warnings. :func:`store_default_facts` is the store's build hook: the same plans under the
default options, persisted into the cache so that a re-open computes nothing per launch.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import duckdb

from roofscope.errors import RoofscopeError
from roofscope.grouping import AXES, Rule, config_files, rules_from_files
from roofscope.hardware.ceilings import load_ceilings_file, resolve_ceilings, tensor_ops_by_type
from roofscope.hardware.specs import GpuSpec, find_gpu, match_device_name
from roofscope.ingest.registry import layout as layout_record
from roofscope.metrics import FP16_CONVENTIONS, MetricPlan, plan_report, store_facts
from roofscope.quantities import CACHE_LEVELS
from roofscope.session.report import Report


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
    # the roofscope.toml (and user config) whose rules apply: said in every report's header
    config_files: list[str] = field(default_factory=list, init=False)

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
            files = config_files()
            self.rules = rules_from_files(files)
            self.config_files = [str(p) for p in files]
        if self.axis not in AXES:
            raise RoofscopeError(
                f"unknown grouping axis {self.axis!r}", hint=f"use one of {', '.join(AXES)}"
            )


def read_reports(
    con: duckdb.DuckDBPyConnection, options: Options, lock: threading.RLock
) -> list[Report]:
    """Each stored report with its spec-table entry, metric plan, ceilings and warnings (the
    derived views are built afterwards, by :func:`roofscope.session.views.build_views`)."""
    warn_rows = con.execute("SELECT report_id, message FROM warnings").fetchall()
    metrics = _report_metrics(con)
    reports = []
    for row, spec, plan in _plans(con, metrics, options.spec, options.fp16_convention):
        rid, path, layout, gpu_name, cc, sm_count, launches = row
        report = Report(
            rid,
            path,
            layout,
            gpu_name,
            plan_cc(cc, spec),
            sm_count,
            launches,
            spec,
            plan,
            _con=con,
            _lock=lock,
        )
        report.warnings = [m for r, m in warn_rows if r == rid] + plan.warnings
        if spec is None:
            what = (
                f"GPU {gpu_name!r} is not in the spec table"
                if gpu_name
                else "the export does not name its GPU "
                f"({layout_record(layout).unnamed_gpu or _NO_GPU})"
            )
            report.warnings.append(f"{what}; pass --gpu NAME for datasheet ceilings")
        reports.append(report)
    for r in reports:
        r.ceilings = resolve_ceilings(
            con,
            r.report_id,
            metrics.get(r.report_id, set()),
            r.spec,
            options.user_ceilings,
            f"user: {options.ceilings_file}",
            r.cc,
            traffic_levels(r.plan),
        )
        r.tensor_types = tensor_ops_by_type(con, r.report_id, metrics.get(r.report_id, set()))
    return reports


def plan_cc(cc: str | None, spec: GpuSpec | None) -> str | None:
    return cc or (spec.cc if spec else None)


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
        tensor_ops_by_type(con, rid, metrics.get(rid, set()))  # the precision shares' scan
