"""What each preset asks ncu (or nsys) to collect, as argument lists — never a shell string.

``time`` asks for the kernels' durations only: one replay pass per kernel, the fastest way to
compare two runs' steps group by group (no FLOPs or bytes, so no roofline or bound).
``quick`` is the classic count-metric set of the studies (time, FLOP instruction counts per
precision, bytes per level, tensor ops, the three utilisations of the efficiency histogram): few
replay passes. ``roofline`` is ncu's hierarchical roofline sections plus those utilisations.
``full`` is ``--set full``, exported twice: the raw page (every counter) and the details page
(ncu's rule results). ``nsys`` records a timeline of the profiled range.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofscope import metric_names as mn
from roofscope.errors import RoofscopeError

_SASS_OPS = ("fadd", "fmul", "ffma", "hadd", "hmul", "hfma", "dadd", "dmul", "dfma")
UTILISATIONS = (mn.UTIL_TENSOR[0], mn.UTIL_FP32[0], mn.UTIL_DRAM[0])
QUICK_METRICS = (
    mn.TIME,
    mn.SM_CYCLES,
    mn.SM_CLOCK,
    mn.DRAM_READ,
    mn.DRAM_WRITE,
    mn.L2_BYTES,
    mn.L1_BYTES,
    *(mn.sass_op(op, "smsp") for op in _SASS_OPS),
    mn.TENSOR_INST,
    *UTILISATIONS,
    mn.DEVICE_NAME,
)
# every aggregate tensor-op counter of this GPU (names differ per architecture)
TENSOR_REGEX = r"regex:^sm__ops_path_tensor_src_.*\.sum$"
ROOFLINE_SECTIONS = (
    "SpeedOfLight",
    "SpeedOfLight_RooflineChart",
    "SpeedOfLight_HierarchicalDoubleRooflineChart",
    "SpeedOfLight_HierarchicalSingleRooflineChart",
    "SpeedOfLight_HierarchicalHalfRooflineChart",
    "SpeedOfLight_HierarchicalTensorRooflineChart",
)


@dataclass(frozen=True)
class Preset:
    name: str
    tool: str  # "ncu" or "nsys"
    args: tuple[str, ...]
    summary: str
    # also export ncu's details page: its rule results (with estimated speedups) are what
    # `roofscope advise` rolls up; the raw page has every counter but no rule rows
    details: bool = False


def _metrics(*names: str) -> tuple[str, ...]:
    """ncu refuses a second ``--metrics`` (seen on the H100): one comma list, ``regex:`` items
    included."""
    return ("--metrics", ",".join(names))


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("time", "ncu", _metrics(mn.TIME, mn.DEVICE_NAME),
               "kernel durations only: one pass per kernel (no roofline, no bound)"),
        Preset("quick", "ncu", _metrics(*QUICK_METRICS, TENSOR_REGEX),  # one --metrics only
               "time + FLOP/byte counts + utilisations (fewest passes)"),
        Preset("roofline", "ncu",
               (*(a for s in ROOFLINE_SECTIONS for a in ("--section", s)),
                *_metrics(*UTILISATIONS, mn.DEVICE_NAME)),
               "hierarchical roofline sections + efficiency utilisations"),
        Preset("full", "ncu", ("--set", "full"),
               "every section ncu has (slowest); its rule results in a details export",
               details=True),
        Preset("nsys", "nsys", ("--trace", "cuda,nvtx", "--capture-range", "cudaProfilerApi",
                                "--capture-range-end", "stop"),
               "timeline of the profiled step (needs an nsys that can record)"),
    )
}  # fmt: skip


def preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise RoofscopeError(
            f"unknown preset {name!r}", hint=f"choose one of {', '.join(PRESETS)}"
        ) from None
