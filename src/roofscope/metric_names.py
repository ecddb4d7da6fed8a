"""Names of the ncu metrics roofscope computes with.

Shared by ingest (which of an export's thousands of columns to type as numbers) and metrics
(which formula a report supports). Listed once here so the two never disagree.
"""

from __future__ import annotations

import re

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

SM_COUNT = ("device__attribute_multiprocessor_count", "launch__sm_count")
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
    TENSOR_INST,
    *SM_COUNT,
    CC_MAJOR,
    CC_MINOR,
    "launch__grid_size",
    "launch__block_size",
    "launch__registers_per_thread",
    *UTIL_TENSOR,
    *UTIL_FP32,
    *UTIL_DRAM,
    *(m.replace(".avg.", ".sum.") for m in (*UTIL_TENSOR, *UTIL_FP32, *UTIL_DRAM)),
    f"sm__throughput{PCT}",
    f"gpu__compute_memory_throughput{PCT}",
}
_COUNTERS = [sass_op(op, u) for op in FLOP_OPS for u in ("smsp", "sm")] + [
    DRAM_BYTES,
    DRAM_READ,
    DRAM_WRITE,
    L2_BYTES,
    L1_BYTES,
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


def is_wanted(metric: str) -> bool:
    """True for metrics that feed a derived number (typed into the per-launch table)."""
    return metric in _WANTED or bool(_TENSOR_RE.match(metric))


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
