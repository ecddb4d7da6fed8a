"""Which roof bounds a point (analysis/roofline.py)."""

from __future__ import annotations

from roofscope.analysis.roofline import classify
from roofscope.hardware.ceilings import Ceiling

ROOFS = {
    "fp32": Ceiling("fp32", "compute", 50e12, "FLOP/s", "t"),
    "tensor": Ceiling("tensor", "compute", 500e12, "FLOP/s", "t"),
    "dram": Ceiling("dram", "memory", 3e12, "B/s", "t"),
    "l2": Ceiling("l2", "memory", 9e12, "B/s", "t"),
}
NONE = {"fp64": None, "fp16": None}


def test_low_intensity_is_memory_bound_at_the_tightest_level():
    bound, attainable = classify(
        {**NONE, "fp32": 1e9, "tensor": None}, {"l1": None, "l2": 1e9, "dram": 1e9}, ROOFS
    )
    assert bound == "memory (dram)"
    assert attainable == 1.0 * 3e12  # AI 1 FLOP/B × 3 TB/s


def test_high_intensity_is_compute_bound_in_the_dominant_precision():
    bound, attainable = classify(
        {**NONE, "fp32": 1e6, "tensor": 1e12}, {"l1": None, "l2": 1e9, "dram": 1e8}, ROOFS
    )
    assert bound == "compute (tensor)" and attainable == 500e12


def test_no_flops_is_memory_bound_where_busiest_and_nothing_is_unknown():
    assert (
        classify(
            {**NONE, "fp32": 0.0, "tensor": None}, {"l1": None, "l2": 9e9, "dram": 1e9}, ROOFS
        )[0]
        == "memory (l2)"
    )
    assert classify(
        {**NONE, "fp32": None, "tensor": None}, {"l1": None, "l2": None, "dram": None}, ROOFS
    ) == ("unknown", None)


def test_flops_without_bytes_have_no_roof():
    assert classify(
        {**NONE, "fp32": 1e9, "tensor": None}, {"l1": None, "l2": None, "dram": None}, ROOFS
    ) == ("unknown", None)
