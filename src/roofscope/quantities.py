"""The nouns every layer shares, defined once: memory levels, FLOP precisions, derived keys.

A low-level module (it imports nothing of roofscope), so ingest, metrics, analysis, the
renderers and both front ends may all read it. docs/metrics.md defines the quantities.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# FLOP precisions, in the order every table and JSON object lists them
PRECISIONS = ("fp64", "fp32", "fp16", "tensor")
SCALAR_PRECISIONS = ("fp64", "fp32", "fp16")  # counted from SASS instructions (not tensor)
PRECISION_TITLES = {"fp64": "FP64", "fp32": "FP32", "fp16": "FP16", "tensor": "tensor"}

# Memory levels, innermost first (the order of bytes in tables and JSON)
LEVELS = ("l1", "l2", "dram")
CACHE_LEVELS = ("l1", "l2")  # levels with two byte conventions (traffic and chart)
LEVELS_OUTERMOST_FIRST = ("dram", "l2", "l1")  # the order a view cycles through, DRAM first
LEVEL_TITLES = {"l1": "L1", "l2": "L2", "dram": "DRAM"}

# The roofs drawn and listed by default: one per precision, one per level
ROOFS = (*PRECISIONS, *LEVELS)

FLOP_UNIT = "FLOP"
BYTE_UNIT = "B"

# Derived quantity keys (columns of launch_view, keys of the row dicts and the JSON contract)
TIME_S = "time_s"
FLOPS = "flops"  # per precision, a dict in rows
FLOPS_TOTAL = "flops_total"
BYTES = "bytes"  # per level, a dict in rows
FLOP_PER_S = "flop_per_s"
AI = "ai"  # FLOP per byte, per level, a dict in rows
EFFICIENCY = "efficiency"
# False where an efficiency is a lower bound: a launch's utilisations were not all known
EFFICIENCY_COMPLETE = "efficiency_complete"
# False where FLOPs (and FLOP/s, intensity) are a lower bound: a precision was not measured
# and its unit was not shown idle; None where no FLOPs are known at all
FLOPS_COMPLETE = "flops_complete"
# what a row's bound rests on: "roofline" (FLOPs and bytes), "utilisation" (FLOPs incomplete:
# the busiest unit by its pipe or throughput use), None (unknown)
BOUND_BASIS = "bound_basis"
BY_USE = " by use"  # the suffix of a bound read from utilisations (``compute (tensor) by use``)


LAUNCHES = "launches"
TIME_PCT = "time_pct"
TIME_AVG_S = "time_avg_s"
TIME_MED_S = "time_med_s"
TIME_MIN_S = "time_min_s"
TIME_MAX_S = "time_max_s"
HEADROOM_S = "headroom_s"
BOUND = "bound"
UTIL_EFF = ("util_tensor_eff", "util_fp32_eff", "util_dram_eff")  # achieved ÷ ceiling, 0..1
UTIL_COMPONENTS = ("tensor", "fp32", "dram")  # the component each of UTIL_EFF measures
UTIL_TITLES = ("tensor", "FP32", "DRAM")
TRAFFIC = tuple(f"{level}_traffic" for level in CACHE_LEVELS)  # cache bytes, two conventions
CHART = tuple(f"{level}_chart" for level in CACHE_LEVELS)


def ai_key(level: str) -> str:
    """The flat column of arithmetic intensity at ``level`` (``ai_dram``)."""
    return f"{AI}_{level}"


# -- One record per derived quantity: what every table, view and export reads ---------------
# How a value over many launches (a group, a report) is made from the launches' values:
SUM = "sum"  # extensive: Σ value × invocations (seconds, FLOPs, bytes)
TIME_WEIGHTED = "time-weighted"  # intensive: Σ value × time ÷ Σ time of the launches knowing it
COUNT = "count"  # Σ invocations
MEAN = "mean"  # per launch: Σ time ÷ launches
MEDIAN = "median"  # of single launches only (a median of medians is no median)
MIN = "min"
MAX = "max"
SHARE = "share"  # of the total the view is a part of, in percent
FROM_SUMS = "from sums"  # computed from the row's own sums, never averaged (FLOP/s, AI, roof)
AGGREGATIONS = (SUM, TIME_WEIGHTED, COUNT, MEAN, MEDIAN, MIN, MAX, SHARE, FROM_SUMS)


@dataclass(frozen=True)
class Quantity:
    """A derived quantity as data: its key (the row key, launch_view column or JSON key), its
    unit (``""``: a 0..1 fraction or a label), how a group's value is aggregated, and its
    title (Markdown headers, the report's long names) and short title (narrow table headers,
    where it differs: ``% time`` → ``%``). How its value reads is roofscope.present's."""

    key: str
    unit: str
    aggregation: str
    title: str
    short: str = ""

    @property
    def short_title(self) -> str:
        return self.short or self.title


def _records(*records: Quantity) -> dict[str, Quantity]:
    return {r.key: r for r in records}


QUANTITIES: dict[str, Quantity] = _records(
    Quantity(LAUNCHES, "", COUNT, "launches", "n"),
    Quantity(TIME_S, "s", SUM, "time"),
    Quantity(TIME_PCT, "%", SHARE, "% time", "%"),
    Quantity(TIME_AVG_S, "s", MEAN, "avg"),
    Quantity(TIME_MED_S, "s", MEDIAN, "med"),
    Quantity(TIME_MIN_S, "s", MIN, "min"),
    Quantity(TIME_MAX_S, "s", MAX, "max"),
    *(Quantity(p, FLOP_UNIT, SUM, f"{PRECISION_TITLES[p]} FLOPs") for p in PRECISIONS),
    Quantity(FLOPS_TOTAL, FLOP_UNIT, SUM, "FLOPs"),
    *(Quantity(level, BYTE_UNIT, SUM, f"{LEVEL_TITLES[level]} bytes") for level in LEVELS),
    *(
        Quantity(key, BYTE_UNIT, SUM, f"{LEVEL_TITLES[level]} bytes ({kind})")
        for keys, kind in ((TRAFFIC, "traffic"), (CHART, "chart"))
        for key, level in zip(keys, CACHE_LEVELS, strict=True)
    ),
    Quantity(FLOP_PER_S, f"{FLOP_UNIT}/s", FROM_SUMS, "FLOP/s"),
    *(
        Quantity(ai_key(level), f"{FLOP_UNIT}/{BYTE_UNIT}", FROM_SUMS, f"AI {LEVEL_TITLES[level]}")
        for level in LEVELS
    ),
    Quantity(BOUND, "", FROM_SUMS, "bound"),
    Quantity(EFFICIENCY, "", TIME_WEIGHTED, "eff"),
    *(
        Quantity(key, "", TIME_WEIGHTED, title)
        for key, title in zip(UTIL_EFF, UTIL_TITLES, strict=True)
    ),
    Quantity(HEADROOM_S, "s", SUM, "headroom"),
)


# -- Unknown stays unknown (docs/metrics.md): one rule for every sum and rate ---------------
def sum_known_sql(terms: Sequence[str | tuple[int, str]]) -> str:
    """SQL Σ of ``terms`` (expressions, or (weight, expression)) where an unknown (NULL) term
    counts 0 but all of them unknown stays unknown: NULL only when every term is NULL."""
    weighted = [t if isinstance(t, tuple) else (1, t) for t in terms]
    body = " + ".join(
        f"{w} * coalesce({sql}, 0)" if w != 1 else f"coalesce({sql}, 0)" for w, sql in weighted
    )
    none = " AND ".join(f"({sql}) IS NULL" for _, sql in weighted)
    return f"CASE WHEN {none} THEN NULL ELSE {body} END"


def flop_total_sql(alias: str = "") -> str:
    """SQL FLOPs over every precision of one launch row (``alias``: ``"v."`` for ``v.fp64``…);
    NULL only when no precision was measured."""
    return sum_known_sql([f"{alias}{p}" for p in PRECISIONS])


def flop_total(flops: Mapping[str, float | None], complete: bool | None = True) -> float | None:
    """The same rule over per-precision totals already summed (a row's or a report's ``flops``
    dict): the known ones add up; None only when none is known. Where a precision was not
    measured (``complete`` False) the sum is a lower bound, and a lower bound of 0 says
    nothing: None (a GEMM whose tensor FLOPs were not collected is not a 0-FLOP kernel)."""
    known = [v for v in flops.values() if v is not None]
    total = sum(known) if known else None
    return total if complete is not False or total else None


def flops_complete_sql(alias: str = "") -> str:
    """SQL: are one launch's FLOPs complete — every precision measured, the tensor precision
    also when the export shows its pipe idle (no tensor instruction, or under 1% busy)?"""
    scalar = " AND ".join(f"{alias}{p} IS NOT NULL" for p in SCALAR_PRECISIONS)
    idle = f"coalesce({alias}tensor_inst = 0, {alias}util_tensor < 0.01, FALSE)"
    return f"({scalar} AND ({alias}tensor IS NOT NULL OR {idle}))"


def ratio_sql(numerator: str, denominator: str) -> str:
    """SQL ``numerator / denominator``: NULL when either is NULL or the denominator is 0
    (FLOP/s over time, intensity over bytes)."""
    return f"({numerator}) / nullif({denominator}, 0)"


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator / denominator``; None when either is unknown or the denominator is 0."""
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def flop_per_s(flops: float | None, time_s: float | None) -> float | None:
    """FLOP/s: None when FLOPs or time is unknown, or the time is 0."""
    return ratio(flops, time_s)
