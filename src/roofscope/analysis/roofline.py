"""Where a point sits on the hierarchical roofline: which roof limits it.

For a kernel (or group) with FLOPs F in its dominant precision p and bytes B_L at each memory
level L, the attainable rate is min(C_p, min_L F/B_L × BW_L). The limiting term names the roof:
``compute (fp32)`` or ``memory (dram)``. A kernel without FLOPs is memory bound at the level it
keeps busiest (largest B_L / BW_L).
"""

from __future__ import annotations

from roofscope.hardware.ceilings import Ceiling


def classify(
    flops: dict[str, float | None], bytes_: dict[str, float | None], ceilings: dict[str, Ceiling]
) -> tuple[str, float | None]:
    """(bound label, attainable FLOP/s) of one point; ``unknown`` when nothing is measured."""
    known = {p: v for p, v in flops.items() if v is not None and v > 0}
    total = sum(known.values())
    levels = {lvl: b for lvl, b in bytes_.items() if b is not None and b > 0 and lvl in ceilings}
    if not known:
        if not levels:
            return "unknown", None
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
