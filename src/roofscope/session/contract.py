"""The JSON contract of ``roofscope report`` and ``Session.report_dict`` (docs/json.md).

Its shape is documented and tested field by field: a change here is a change of
``JSON_SCHEMA_VERSION``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roofscope.quantities import BYTES, EFFICIENCY, FLOPS, FLOPS_COMPLETE, LAUNCHES, TIME_S

if TYPE_CHECKING:
    from roofscope.session.opened import Opened
    from roofscope.session.report import Report

JSON_SCHEMA_VERSION = 1


def report_dict(
    session: Opened,
    by: str = "group",
    top: int | None = None,
    advice: bool = True,
    rows: bool = True,
) -> dict[str, Any]:
    """``groups`` always, ``rows`` too when ``by`` is ``kernel`` or ``launch``; ``top`` keeps
    the rows with the most time. ``advice=False`` leaves the ``advice`` key out: running every
    rule is most of a cached report's queries, and only JSON shows it. ``rows=False`` leaves
    ``rows`` out for a writer that streams them (``Report.iter_rows``, output/streamed.py)."""
    out = []
    for r in session.reports:
        totals = r.totals()
        entry: dict[str, Any] = {
            "path": r.path,
            "format": r.layout,
            "family": r.kind.family,
            "gpu": {
                "name": r.gpu_name,
                "cc": r.cc,
                "sm_count": r.sm_count,
                "spec": r.spec.key if r.spec else None,
            },
            LAUNCHES: totals[LAUNCHES],
            "kernels": totals["kernels"],
            TIME_S: totals[TIME_S],
            FLOPS: totals[FLOPS],
            FLOPS_COMPLETE: r.head()[FLOPS_COMPLETE],
            "precision": r.precision(),
            BYTES: totals[BYTES],
            "ceilings": [c.to_dict() for c in r.ceilings],
            EFFICIENCY: r.histogram(),
            "provenance": dict(r.plan.provenance),
            "fp16_convention": session.options.fp16_convention,
            "by": by,
            "axis": session.axis,
            "nsys_join": r.nsys_join(),
            "timeline": _timeline_dict(r),
            "recording": r.recording_summary() if r.is_recording else None,
            "groups": r.rows("group")[:top],
        }
        if advice:
            entry["advice"] = [a.to_dict() for a in r.advice()]
            entry["ncu_rules_together"] = r.ncu_rules_together()
        entry["warnings"] = list(r.warnings)
        if by != "group" and rows:
            entry["rows"] = r.rows(by, limit=top)  # shares of the whole report either way
        out.append(entry)
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "config_files": list(session.options.config_files),
        "reports": out,
        "warnings": session.warnings,
    }


def _timeline_dict(report: Report) -> dict[str, Any] | None:
    """The whole run's timeline, on its one device (all devices together when several)."""
    if not report.has_timeline():
        return None
    devs = report.devices()
    t = report.timeline(device=devs[0] if len(devs) == 1 else None)
    return t.to_dict() if t else None
