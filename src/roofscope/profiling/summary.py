"""A finished run in numbers: settings, timings, and each phase measured beside the analytic
FLOPs (shared by ``roofscope profile``'s summary and the Runs pane)."""

from __future__ import annotations

from typing import Any

from roofscope.analysis.model_check import phase_rows
from roofscope.profiling.runs import Run


def run_summary(run: Run) -> dict[str, Any]:
    measured: list[dict[str, Any]] = []
    if run.report_path is not None and run.report_path.exists() and run.phases:
        from roofscope.session import load

        session = load(str(run.report_path))
        try:
            measured = session.reports[0].phase_totals(run.phases)
        finally:
            session.close()
    analytic = run.analytic()
    if analytic and run.spec.steps > 1:  # analytic.json is one step; the report holds N
        flops = analytic.get("flops", {})
        for key in ("forward", "backward", "step"):
            if isinstance(flops.get(key), int | float):
                flops[key] *= run.spec.steps
    return {
        "run": run.name,
        "status": run.status,
        "report": str(run.report_path) if run.report_path else None,
        # ncu's details page (its rule results) beside the report: `roofscope advise` it
        "details": str(run.folder / run.details) if run.details else None,
        "spec": run.spec.to_dict(),
        "timings": run.timings,
        "facts": run.facts,
        "memory": (analytic or {}).get("memory"),
        "phases": phase_rows(measured, analytic),
    }
