"""Decisions across the open reports: diff, scaling, cost and the MIG slice.

Each reads several :class:`~roofscope.session.report.Report` objects of one session, so it
lives beside the session rather than on a report; the arithmetic itself is in
:mod:`roofscope.analysis` (compare, scaling, cost, mig).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from roofscope.analysis import compare, cost, mig, scaling, summary
from roofscope.errors import RoofscopeError
from roofscope.hardware.specs import match_device_name
from roofscope.quantities import FLOPS_TOTAL, LAUNCHES, TIME_S
from roofscope.session.contract import JSON_SCHEMA_VERSION

if TYPE_CHECKING:
    from roofscope.hardware.specs import GpuSpec
    from roofscope.session.opened import Opened
    from roofscope.session.report import Report


def diff(session: Opened, before: int, after: int, by: str) -> compare.Diff:
    """``after`` against ``before``, row by row (groups, kernels or launches)."""
    if by not in summary.KEYS:
        raise RoofscopeError(f"unknown grouping {by!r}", hint="use group, kernel or launch")
    for i in (before, after):
        if session.reports[i].is_recording:
            raise RoofscopeError(
                "is a GPU recording, not a kernel profile",
                path=session.reports[i].path,
                hint="diff compares ncu or nsys exports; roofscope record --summary "
                "summarises recordings",
            )
    a, b = session.reports[before], session.reports[after]
    with session.lock:
        ka = compare.kernel_infos(session.con, a.report_id)
        kb = compare.kernel_infos(session.con, b.report_id)
        rows_a, rows_b = a.rows(by), b.rows(by)
    if by == "group":
        rows, match = compare.diff_groups(rows_a, rows_b, ka, kb)
    else:
        match = compare.match_kernels(ka, kb)
        pair = compare.diff_kernels if by == "kernel" else compare.diff_launches
        rows = pair(rows_a, rows_b, match)
    heads = [a.head(), b.head()]
    totals = [compare.Totals(h[TIME_S], h[FLOPS_TOTAL], h[LAUNCHES], h["kernels"]) for h in heads]
    return compare.Diff(
        by,
        heads[0],
        heads[1],
        compare.total_change(*totals),
        rows,
        match,
        _diff_warnings(a, b),
    )


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


def scaling_doc(
    session: Opened, settings: dict[int, scaling.Setting] | None = None
) -> dict[str, Any]:
    """Time per sample, throughput, FLOP/s and efficiency per report (setting); settings
    not given are read from the file names."""
    rows = []
    for i, r in enumerate(session.reports):
        if r.is_recording:
            continue
        setting = (settings or {}).get(i) or scaling.infer_setting(r.path)
        totals = r.totals()
        flops, eff, roof = scaling.step_numbers(r.rows("group"), totals, r.ceilings)
        rows.append(
            scaling.ScalingRow(r.path, r.gpu_name, setting, totals[TIME_S], flops, eff, roof)
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
    if any(not r.is_nsys for r in session.reports if not r.is_recording):
        warnings.append(
            "ncu times are kernels replayed one at a time with locked clocks: no launch gaps, "
            "so time per sample is a lower bound of the real step (an nsys export has it)"
        )
    return {
        "varying": scaling.varying(rows),
        "rows": [r.to_dict() for r in rows],
        "warnings": warnings,
    }


def cost_doc(
    session: Opened,
    table: cost.PriceTable | None,
    run_steps: int | None,
    epochs: float | None,
    samples: int | None,
    settings: dict[int, scaling.Setting] | None,
    measured: dict[str, Any] | None,
) -> dict[str, Any]:
    """What a run costs on each report's GPU (docs/json.md); ``measured``: a scaling
    document already at hand, so a view that shows both measures once."""
    if table is None:
        table = cost.load_prices()
    if measured is None:
        measured = scaling_doc(session, settings)
    doc = cost.cost_doc(measured, table, run_steps, epochs, samples)
    return {"schema_version": JSON_SCHEMA_VERSION, **doc}


def gpu_keys(session: Opened) -> list[str]:
    """Spec-table keys of the reports' GPUs."""
    return sorted({r.spec.key for r in session.reports if r.spec and not r.is_recording})


def mig_advice(session: Opened, gpu: GpuSpec | None, tolerance: float) -> list[dict[str, Any]]:
    """A MIG slice suggestion per recorded GPU (``gpu`` overrides the recorded name)."""
    out = []
    for r in session.reports:
        if not r.is_recording:
            continue
        for g in r.recording_summary():
            spec = gpu or match_device_name(g["name"])
            if spec is None:
                raise RoofscopeError(
                    f"GPU {g['name']!r} is not in the spec table",
                    path=r.path,
                    hint="pass --gpu NAME",
                )
            if g["util_gpu"] is None or g["mem_used_max"] is None:
                raise RoofscopeError("has no utilisation or memory samples", path=r.path)
            advice = mig.advise(spec, g["util_gpu"], g["mem_used_max"], g["sm_active"], tolerance)
            out.append({"source": f"{g['host']} GPU {g['gpu']}", **advice.to_dict()})
    return out
