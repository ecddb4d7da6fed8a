"""Where a point sits on the hierarchical roofline: which roof limits it.

For a kernel (or group) with FLOPs F in its dominant precision p and bytes B_L at each memory
level L, the attainable rate is min(C_p, min_L F/B_L × BW_L). The limiting term names the roof:
``compute (fp32)`` or ``memory (dram)``. A kernel whose measured FLOPs are all 0 is memory
bound at the level it keeps busiest (largest B_L / BW_L).

A roof is claimed only from numbers that exist. Where a precision was not measured (a
``--set detailed`` export has no tensor counters), the FLOPs are a lower bound. The point of
the precisions that were measured gives the bound (basis ``measured precisions``) where the
export has no utilisations to say otherwise (the NERSC recipe: FP32 counters, DRAM bytes and
time only) or where the unit it shows busiest (tensor pipe, FMA pipe, DRAM throughput) is the
same; otherwise that busiest unit is the bound, labelled ``… by use`` (basis
``utilisation``). Where the measured FLOPs are 0 the point says nothing: the busiest unit, or
``unknown`` — never memory bound for want of a numerator.
"""

from __future__ import annotations

from collections.abc import Mapping

from roofscope.hardware.ceilings import Ceiling
from roofscope.quantities import BY_USE

_USE_LABELS = {
    "util_tensor": "compute (tensor)",
    "util_fp32": "compute (fp32)",
    "util_dram": "memory (dram)",
}


def classify(
    flops: dict[str, float | None],
    bytes_: dict[str, float | None],
    ceilings: dict[str, Ceiling],
    *,
    complete: bool = True,
    utils: Mapping[str, float | None] | None = None,
) -> tuple[str, float | None, str | None]:
    """(bound label, attainable FLOP/s, basis) of one point: basis ``"roofline"``; where the
    FLOPs are not ``complete``, ``"utilisation"`` or ``"measured precisions"``; None with
    ``unknown``."""
    if complete:
        label, attainable = _on_roofline(flops, bytes_, ceilings)
        return label, attainable, ("roofline" if label != "unknown" else None)
    used = by_use(utils or {})
    if not any(v is not None and v > 0 for v in flops.values()):
        return used  # no numerator: the utilisations or nothing
    label, attainable = _on_roofline(flops, bytes_, ceilings)
    if label == "unknown":
        return used
    if used[2] is None or used[0] == label + BY_USE:
        # no utilisations to say otherwise, or they agree: the measured precisions' point
        return label, attainable, "measured precisions"
    return used


def by_use(utils: Mapping[str, float | None]) -> tuple[str, None, str | None]:
    """The busiest unit by its busy fraction (``util_tensor``, ``util_fp32``, ``util_dram``),
    where FLOPs cannot place a point; ``unknown`` unless the export has all three (with the
    tensor pipe's use unknown, DRAM "busiest" says nothing of a GEMM on the tensor cores)."""
    known = {k: v for k, v in utils.items() if v is not None and k in _USE_LABELS}
    if len(known) < len(_USE_LABELS):
        return "unknown", None, None
    busiest = max(known, key=lambda k: known[k])  # type: ignore[arg-type,return-value]
    return _USE_LABELS[busiest] + BY_USE, None, "utilisation"


def _on_roofline(
    flops: dict[str, float | None], bytes_: dict[str, float | None], ceilings: dict[str, Ceiling]
) -> tuple[str, float | None]:
    known = {p: v for p, v in flops.items() if v is not None and v > 0}
    total = sum(known.values())
    levels = {lvl: b for lvl, b in bytes_.items() if b is not None and b > 0 and lvl in ceilings}
    if not known:
        if not levels or all(v is None for v in flops.values()):
            return "unknown", None  # no FLOPs measured: bytes alone place no point
        busiest = max(levels, key=lambda lvl: levels[lvl] / ceilings[lvl].value)
        return f"memory ({busiest})", None
    if not levels:
        return "unknown", None  # FLOPs without bytes: no intensity, so no roof to compare
    dominant = max(known, key=lambda p: known[p])
    if dominant not in ceilings:
        return "unknown", None  # no roof for the precision doing most of the work
    candidates: list[tuple[float, str]] = [(ceilings[dominant].value, f"compute ({dominant})")]
    for lvl, b in levels.items():
        candidates.append((total / b * ceilings[lvl].value, f"memory ({lvl})"))
    value, label = min(candidates)
    return label, value
