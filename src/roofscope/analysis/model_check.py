"""Measured beside pen-and-paper: a profiled step's kernels per phase against the model's
analytic FLOPs (the VGG study's table of predicted vs measured FLOPs, per phase).

Phases come from the run (the step's markers between ncu's lines give each profiled kernel's
phase); the analytic FLOPs come from the run's ``analytic.json``. Only matrix multiplies,
convolutions and attention are in the analytic count, so a ratio a little above 1 is expected;
a ratio far below 1 usually means the export lacks the tensor-op counters.
"""

from __future__ import annotations

from typing import Any

from roofscope.quantities import FLOPS, TIME_S

ANALYTIC_KEYS = {"forward": "forward", "backward": "backward"}


def phase_rows(measured: list[dict[str, Any]], analytic: dict[str, Any] | None) -> list[dict]:
    """One row per phase plus ``step``: time, measured FLOPs, analytic FLOPs, their ratio."""
    flops = (analytic or {}).get("flops", {})
    rows: list[dict[str, Any]] = []
    for m in measured:
        key = ANALYTIC_KEYS.get(m["phase"])
        rows.append({**m, "analytic_flops": flops.get(key) if key else None})
    if measured:
        known = [m[FLOPS] for m in measured if m[FLOPS] is not None]
        rows.append(
            {
                "phase": "step",
                "kernels": sum(m["kernels"] for m in measured),
                TIME_S: sum(m[TIME_S] or 0.0 for m in measured),
                FLOPS: sum(known) if known else None,
                "tensor_known": all(m["tensor_known"] for m in measured),
                "analytic_flops": flops.get("step") or None,
            }
        )
    for r in rows:
        a, f = r["analytic_flops"], r[FLOPS]
        r["measured_over_analytic"] = f / a if a and f is not None else None
    return rows


def merge_phases(ranges: list[list]) -> dict[str, list[tuple[int, int]]]:
    """``[[phase, first, last], …]`` (several steps repeat phases) -> phase -> ranges."""
    out: dict[str, list[tuple[int, int]]] = {}
    for phase, first, last in ranges:
        out.setdefault(str(phase), []).append((int(first), int(last)))
    return out
