"""Names of the ncu metrics roofscope computes with.

Shared by ingest (which of an export's thousands of columns to type as numbers) and metrics
(which formula a report supports). Listed once here so the two never disagree.
"""

from __future__ import annotations

import re
from typing import NamedTuple

TIME = "gpu__time_duration.sum"
SM_CYCLES = "sm__cycles_elapsed.avg"
SM_CLOCK = "sm__cycles_elapsed.avg.per_second"
SMSP_CLOCK = "smsp__cycles_elapsed.avg.per_second"
GPC_CLOCK = "gpc__cycles_elapsed.avg.per_second"
DRAM_CLOCK = "dram__cycles_elapsed.avg.per_second"
LTS_CLOCK = "lts__cycles_elapsed.avg.per_second"
L1_CLOCK = "l1tex__cycles_elapsed.avg.per_second"

FLOP_OPS = ("dadd", "dmul", "dfma", "fadd", "fmul", "ffma", "hadd", "hmul", "hfma")


def sass_op(op: str, unit: str = "smsp") -> str:
    """Thread-level predicated-on instruction counter of one FP opcode class."""
    return f"{unit}__sass_thread_inst_executed_op_{op}_pred_on.sum"


TENSOR_INST = "sm__inst_executed_pipe_tensor.sum"
TENSOR_OPS_PREFIX = "sm__ops_path_tensor_src_"

DRAM_BYTES = "dram__bytes.sum"
DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
L2_BYTES = "lts__t_bytes.sum"
L1_BYTES = "l1tex__t_bytes.sum"
L1_WRITEBACK_LG = "l1tex__lsu_writeback_active_mem_lg.sum"
L1_WRITEBACK_LGDS = "l1tex__lsu_writeback_active_mem_lgds.sum"
L1_WRITEBACK_OLD = "l1tex__lsu_writeback_active.sum"
L2_LTS2XBAR = "lts__lts2xbar_cycles_active.sum"

PCT = ".avg.pct_of_peak_sustained_elapsed"
UTIL_TENSOR = tuple(
    f"{m}{PCT}"
    for m in (
        "sm__pipe_tensor_cycles_active",
        "sm__pipe_tensor_cycles_active_v2",
        "sm__pipe_tc_cycles_active",
        "sm__pipe_tensor_op_hmma_cycles_active",
        "sm__pipe_tensor_op_hmma_cycles_active_v2",
    )
)
UTIL_FP32 = (f"sm__pipe_fma_cycles_active{PCT}",)
UTIL_DRAM = (f"gpu__dram_throughput{PCT}", f"dram__throughput{PCT}")

# ---------------------------------------------------------------------------------------------
# Spellings (aliases) across architectures and ncu versions. Each quantity lists its spellings
# in order of precedence: the exact metric first, then equal quantities under other names, then
# derived ones (sectors × 32). The first spelling an export has wins, so one export always gets
# the same formula. Sources, cited per entry:
#   [KPG]   Nsight Compute Kernel Profiling Guide, "Metrics Structure": a ``.per_second`` rollup
#           is the value divided by the kernel duration (gpu__time_duration), so
#           ``X / X.per_second`` is the duration for any counter X; a sector is 32 bytes.
#   [SOL]   SpeedOfLight_RooflineChart.section (ncu 2020.1 - 2025.x): achieved work uses
#           ``smsp__sass_thread_inst_executed_op_*_pred_on.sum.per_cycle_elapsed`` times
#           ``smsp__cycles_elapsed.avg.per_second`` ("SM Frequency"), peaks use the ``sm__``
#           spellings with ``sm__cycles_elapsed.avg.per_second``: the two prefixes count the
#           same instructions and tick the same clock.
#   [TENSOR] SpeedOfLight_HierarchicalTensorRooflineChart.section (ncu 2020.x, Volta): achieved
#           ``smsp__inst_executed_pipe_tensor.sum.per_cycle_elapsed`` against the peak
#           ``sm__inst_executed_pipe_tensor.sum.peak_sustained × 512``.
#   [HIER]  SpeedOfLight_Hierarchical*RooflineChart.section: L1 chart bytes are
#           ``128 × l1tex__lsu_writeback_active`` (CC <= 7.2), ``…_mem_lg`` (7.5 - 8.9),
#           ``…_mem_lgds`` (9.0 and later); L2 chart bytes ``32 × lts__lts2xbar_cycles_active``.
#   [NVPROF] Nsight Compute CLI guide, "nvprof Transition Guide - Metric Comparison":
#           dram_read_bytes -> dram__bytes_read.sum, dram_write_bytes -> dram__bytes_write.sum,
#           flop_count_* -> smsp__sass_thread_inst_executed_op_*_pred_on.sum.
#   [NERSC] NERSC roofline-on-nvidia-gpus metric set (gitlab.com/NERSC/roofline-on-nvidia-gpus,
#           docs.nersc.gov roofline page): sm__cycles_elapsed.avg / .avg.per_second for time,
#           dram__bytes.sum, lts__t_bytes.sum, l1tex__t_bytes.sum; its earlier revision spelt
#           the same set with ``smsp__`` prefixes (smsp__cycles_elapsed.avg,
#           smsp__inst_executed_pipe_tensor.sum), as in the Gardenia-Tian wild sample.
#   [GB20x] GeForce Blackwell (GB20x, CC 12.0) ncu 2025.x ``--query-metrics`` lists DRAM traffic
#           per direction as ``dram__bytes_op_read`` / ``dram__bytes_op_write`` (the [KPG]
#           ``op_<x>`` qualifier form); no ``dram__bytes_read``. No section file names them
#           (sections use dram__bytes.sum on every CC), so they are read only when the export
#           lacks dram__bytes.sum and dram__bytes_read/write.
#   [H100]  shared/samples/generated/ncu_2025.3.1_h100/app_full_raw.csv: on every launch
#           dram__bytes_read.sum = 32 × dram__sectors_read.sum (same for write), and
#           sm__/smsp__/gpc__cycles_elapsed.avg / .avg.per_second = gpu__time_duration.sum
#           to 1e-6.


class Spelling(NamedTuple):
    """One way an export may spell a counter: ``metric × factor`` is the quantity."""

    metric: str
    factor: int
    source: str


# Kernel duration: (cycles, its own .per_second, source); gpu__time_duration.sum (TIME) first.
TIME_PAIRS: tuple[tuple[str, str, str], ...] = (
    (SM_CYCLES, SM_CLOCK, "[NERSC] [KPG]"),
    ("smsp__cycles_elapsed.avg", SMSP_CLOCK, "[NERSC] (smsp__ revision) [KPG] [SOL]"),
    ("gpc__cycles_elapsed.avg", GPC_CLOCK, "[KPG]"),
    ("sm__cycles_elapsed.max", "sm__cycles_elapsed.max.per_second", "[KPG]"),
    ("smsp__cycles_elapsed.max", "smsp__cycles_elapsed.max.per_second", "[KPG]"),
    ("gpc__cycles_elapsed.max", "gpc__cycles_elapsed.max.per_second", "[KPG]"),
)

# Counters, each read as the count, ``.per_second × time`` or ``.per_cycle_elapsed × clock ×
# time`` (metrics.py) before the next spelling is tried.
DRAM_SPELLINGS = (Spelling(DRAM_BYTES, 1, "[NERSC] [SOL]"),)
DRAM_READ_SPELLINGS = (
    Spelling(DRAM_READ, 1, "[NVPROF] dram_read_bytes"),
    Spelling("dram__bytes_op_read.sum", 1, "[GB20x]"),
    Spelling("dram__sectors_read.sum", 32, "[KPG] sector = 32 B, [H100]"),
    Spelling("dram__sectors_op_read.sum", 32, "[GB20x] [KPG] sector = 32 B"),
)
DRAM_WRITE_SPELLINGS = (
    Spelling(DRAM_WRITE, 1, "[NVPROF] dram_write_bytes"),
    Spelling("dram__bytes_op_write.sum", 1, "[GB20x]"),
    Spelling("dram__sectors_write.sum", 32, "[KPG] sector = 32 B, [H100]"),
    Spelling("dram__sectors_op_write.sum", 32, "[GB20x] [KPG] sector = 32 B"),
)
L2_SPELLINGS = (
    Spelling(L2_BYTES, 1, "[NERSC]"),
    Spelling("lts__t_sectors.sum", 32, "[KPG] sector = 32 B"),
)
L1_SPELLINGS = (
    Spelling(L1_BYTES, 1, "[NERSC]"),
    Spelling("l1tex__t_sectors.sum", 32, "[KPG] sector = 32 B"),
)
TENSOR_INST_SPELLINGS = (
    Spelling(TENSOR_INST, 1, "[NERSC]"),
    Spelling("smsp__inst_executed_pipe_tensor.sum", 1, "[TENSOR] [NERSC] (smsp__ revision)"),
)


def sass_op_spellings(op: str) -> tuple[Spelling, ...]:
    """The two spellings of one FP opcode counter: ``smsp__`` ([NVPROF]) then ``sm__`` ([SOL])."""
    return (
        Spelling(sass_op(op, "smsp"), 1, "[NVPROF] [SOL]"),
        Spelling(sass_op(op, "sm"), 1, "[SOL] [NERSC]"),
    )


# What to collect, per quantity, when none of its spellings is in the export.
COLLECT = {
    "time": TIME,
    "dram": DRAM_BYTES,
    "l2": L2_BYTES,
    "l1": L1_BYTES,
}
# Unit prefixes whose byte or sector counters measure a quantity: an export with such a
# counter under none of the spellings above gets a warning, never a silent unknown.
UNIT_PREFIXES = {"dram": ("dram__", "fbpa__"), "l2": ("lts__",), "l1": ("l1tex__",)}

SM_COUNT = ("device__attribute_multiprocessor_count", "launch__sm_count")
# ncu's LaunchStats: blocks ÷ (SMs × blocks one SM holds at once); the launch_grid advice reads it
WAVES_PER_SM = "launch__waves_per_multiprocessor"
CC_MAJOR = "device__attribute_compute_capability_major"
CC_MINOR = "device__attribute_compute_capability_minor"
DEVICE_NAME = "device__attribute_display_name"

_EXACT = {
    TIME,
    SM_CYCLES,
    SM_CLOCK,
    SMSP_CLOCK,
    GPC_CLOCK,
    DRAM_CLOCK,
    LTS_CLOCK,
    L1_CLOCK,
    *(m for pair in TIME_PAIRS for m in pair[:2]),
    *SM_COUNT,
    CC_MAJOR,
    CC_MINOR,
    "launch__grid_size",
    "launch__block_size",
    "launch__registers_per_thread",
    WAVES_PER_SM,
    *UTIL_TENSOR,
    *UTIL_FP32,
    *UTIL_DRAM,
    *(m.replace(".avg.", ".sum.") for m in (*UTIL_TENSOR, *UTIL_FP32, *UTIL_DRAM)),
    f"sm__throughput{PCT}",
    f"gpu__compute_memory_throughput{PCT}",
}
_COUNTERS = [sass_op(op, u) for op in FLOP_OPS for u in ("smsp", "sm")] + [
    *(
        s.metric
        for group in (
            DRAM_SPELLINGS,
            DRAM_READ_SPELLINGS,
            DRAM_WRITE_SPELLINGS,
            L2_SPELLINGS,
            L1_SPELLINGS,
            TENSOR_INST_SPELLINGS,
        )
        for s in group
    ),
    L1_WRITEBACK_LG,
    L1_WRITEBACK_LGDS,
    L1_WRITEBACK_OLD,
    L2_LTS2XBAR,
]
_SUFFIXES = ("", ".per_second", ".per_cycle_elapsed", ".peak_sustained")
_WANTED = _EXACT | {c + s for c in _COUNTERS for s in _SUFFIXES}
_TENSOR_RE = re.compile(
    r"^sm__ops_path_tensor_src_[a-z0-9_]+\.sum(\.per_second|\.per_cycle_elapsed|\.peak_sustained)?$"
)


# Byte and sector totals of the memory units under any spelling: typed too, so that one no
# table above lists is seen and warned about (metrics.py) instead of leaving a silent unknown.
# Only the unit totals and their op_ splits, never the hundreds of srcunit/aperture/evict splits.
_UNIT_TOTAL_RE = re.compile(
    r"^(?:(?:dram|fbpa)__\w*(?:bytes|sectors)\w*"
    r"|(?:lts|l1tex)__t_(?:bytes|sectors)(?:_op_(?:read|write|atom|red))?)\.sum$"
)


def is_wanted(metric: str) -> bool:
    """True for metrics that feed a derived number (typed into the per-launch table)."""
    return metric in _WANTED or bool(_TENSOR_RE.match(metric) or _UNIT_TOTAL_RE.match(metric))


def tensor_aggregates(present: set[str], suffix: str = "") -> list[str]:
    """The aggregate ``sm__ops_path_tensor_src_*`` counters to sum, never their splits.

    Per-opcode counters (``_op_hgmma_…``) partition the aggregates and are never listed here
    because they do not start with ``…_tensor_src_``. A ``…_sparsity_on/off`` pair is used only
    when the family has no plain aggregate of its own (GA100 lists only the pairs; GH100 has
    ``src_fp8`` only as the pair).
    """
    bases = sorted(
        m[: len(m) - len(".sum" + suffix)]
        for m in present
        if m.startswith(TENSOR_OPS_PREFIX)
        and m.endswith(".sum" + suffix)
        and "_op_" not in m[len(TENSOR_OPS_PREFIX) :]
    )
    base_set = set(bases)
    chosen = []
    for base in bases:
        for split in ("_sparsity_on", "_sparsity_off"):
            if base.endswith(split) and base[: -len(split)] in base_set:
                break
        else:
            chosen.append(base + ".sum" + suffix)
    return chosen
