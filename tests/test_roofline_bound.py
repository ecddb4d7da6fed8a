"""Which roof bounds a point (analysis/roofline.py): claimed only from numbers that exist."""

from __future__ import annotations

from roofscope.analysis.roofline import classify
from roofscope.hardware.ceilings import Ceiling
from roofscope.quantities import flop_total

ROOFS = {
    "fp32": Ceiling("fp32", "compute", 50e12, "FLOP/s", "t"),
    "tensor": Ceiling("tensor", "compute", 500e12, "FLOP/s", "t"),
    "dram": Ceiling("dram", "memory", 3e12, "B/s", "t"),
    "l2": Ceiling("l2", "memory", 9e12, "B/s", "t"),
}
NONE = {"fp64": None, "fp16": None}
ZERO = {"fp64": 0.0, "fp16": 0.0}


def test_low_intensity_is_memory_bound_at_the_tightest_level():
    bound, attainable, basis = classify(
        {**ZERO, "fp32": 1e9, "tensor": 0.0}, {"l1": None, "l2": 1e9, "dram": 1e9}, ROOFS
    )
    assert (bound, basis) == ("memory (dram)", "roofline")
    assert attainable == 1.0 * 3e12  # AI 1 FLOP/B × 3 TB/s


def test_high_intensity_is_compute_bound_in_the_dominant_precision():
    bound, attainable, _ = classify(
        {**ZERO, "fp32": 1e6, "tensor": 1e12}, {"l1": None, "l2": 1e9, "dram": 1e8}, ROOFS
    )
    assert bound == "compute (tensor)" and attainable == 500e12


def test_no_flops_is_memory_bound_where_busiest_and_nothing_is_unknown():
    measured_zero = {**ZERO, "fp32": 0.0, "tensor": 0.0}
    assert classify(measured_zero, {"l1": None, "l2": 9e9, "dram": 1e9}, ROOFS)[0] == "memory (l2)"
    nothing = {**NONE, "fp32": None, "tensor": None}
    assert classify(nothing, {"l1": None, "l2": None, "dram": None}, ROOFS) == (
        "unknown",
        None,
        None,
    )


def test_flops_without_bytes_have_no_roof():
    assert classify(
        {**ZERO, "fp32": 1e9, "tensor": 0.0}, {"l1": None, "l2": None, "dram": None}, ROOFS
    ) == ("unknown", None, None)


def test_a_missing_numerator_is_no_memory_bound():
    """A --set detailed export of an LLM step: no tensor (nor FP16) counters, FP32 0 for the
    GEMMs, the tensor pipe 73–94% busy and DRAM 17–26%. Its FLOPs are unknown, not 0, and the
    bound is the busiest unit, labelled as read from utilisations — not ``memory (dram)``."""
    flops = {**NONE, "fp32": 0.0, "tensor": None}
    bytes_ = {"l1": None, "l2": 4e9, "dram": 2e9}
    utils = {"util_tensor": 0.85, "util_fp32": 0.02, "util_dram": 0.21}
    assert flop_total(flops, complete=False) is None
    assert classify(flops, bytes_, ROOFS, complete=False, utils=utils) == (
        "compute (tensor) by use",
        None,
        "utilisation",
    )
    memory = {"util_tensor": 0.0, "util_fp32": 0.1, "util_dram": 0.8}
    assert classify(flops, bytes_, ROOFS, complete=False, utils=memory)[0] == "memory (dram) by use"
    assert classify(flops, bytes_, ROOFS, complete=False, utils={}) == ("unknown", None, None)
    no_tensor_pipe = {"util_tensor": None, "util_fp32": 0.02, "util_dram": 0.21}
    assert classify(flops, bytes_, ROOFS, complete=False, utils=no_tensor_pipe)[0] == "unknown"


def test_measured_precisions_place_their_own_point_without_utilisations():
    """FP32 counters, DRAM bytes and time only (the NERSC recipe): the FLOPs are at least the
    FP32 ones, and the FP32 point gives the bound, said to rest on the measured precisions;
    with utilisations in the export, those decide."""
    flops = {**NONE, "fp32": 3e9, "tensor": None}
    bytes_ = {"l1": None, "l2": 1e9, "dram": 1e9}
    assert flop_total(flops, complete=False) == 3e9
    assert classify(flops, bytes_, ROOFS, complete=False) == (
        "memory (dram)",
        3 * 3e12,
        "measured precisions",
    )
    busy = {"util_tensor": 0.9, "util_fp32": 0.1, "util_dram": 0.3}
    assert classify(flops, bytes_, ROOFS, complete=False, utils=busy)[0] == (
        "compute (tensor) by use"
    )
    agree = {"util_tensor": 0.0, "util_fp32": 0.1, "util_dram": 0.7}  # as the FP32 point says
    assert classify(flops, bytes_, ROOFS, complete=False, utils=agree) == (
        "memory (dram)",
        3 * 3e12,
        "measured precisions",
    )
