"""The nouns every layer shares, defined once: memory levels, FLOP precisions, derived keys.

A low-level module (it imports nothing of roofscope), so ingest, metrics, analysis, the
renderers and both front ends may all read it. docs/metrics.md defines the quantities.
"""

from __future__ import annotations

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


def ai_key(level: str) -> str:
    """The flat column of arithmetic intensity at ``level`` (``ai_dram``)."""
    return f"{AI}_{level}"
