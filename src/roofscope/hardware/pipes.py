"""Live useful math: an estimated FLOP/s and DRAM B/s from NVML GPM pipe activity.

GPM (Hopper and later) says what fraction of the time each SM pipe was busy between two samples.
A pipe busy 100% of the time at the SM clock ``f`` runs at its datasheet peak scaled to that clock
(peak = FLOP/clk/SM × SMs × clock, so peak(f) = peak × f / datasheet clock). The estimate is

    est. FLOP/s = Σ over pipes  activity(pipe) × peak(pipe at the current SM clock)
    est. DRAM B/s = DRAM bandwidth utilisation × datasheet DRAM bandwidth

with the pipes mapped to the datasheet peaks of :data:`PIPE_PEAKS`. It is an estimate, never a
count: a pipe issuing at less than its full width (a small or partial MMA, a predicated-off lane)
counts as busy, TF32 matrix work runs on the HMMA pipe at half the fp16 rate and FP8 at twice it
(so a TF32 load reads 2× high, an FP8 load 2× low), and IMMA (int8 tensor) work counts integer
operations, not FLOPs, so it is left out. docs/performance.md gives the measured error against
torch's achieved rate; docs/decisions.md the method.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from roofscope.hardware.specs import GpuSpec

# GPM pipe → the datasheet peak (GpuSpec.peaks key) the pipe runs at when busy every cycle.
PIPE_PEAKS: dict[str, str] = {
    "hmma": "fp16_tensor",  # HMMA tensor: fp16/bf16 (also tf32, fp8) matrix ops, dense peak
    "dmma": "fp64_tensor",  # DMMA (NVML's older name: DFMA tensor): fp64 matrix ops
    "fp64": "fp64",  # CUDA cores, non-tensor FP64
    "fp32": "fp32",  # CUDA cores, non-tensor FP32
    "fp16": "fp16",  # CUDA cores, non-tensor FP16 (and bf16)
}
MIG_OFF = (
    "est. FLOP/s and DRAM B/s off under MIG (GPM reads the whole GPU, the peaks are a slice's)"
)


@dataclass(frozen=True)
class Estimate:
    """``flop_per_s``/``dram_bps`` None when not estimated; ``status`` says why, once."""

    flop_per_s: float | None
    dram_bps: float | None
    status: str | None = None


def peak_at_clock(spec: GpuSpec, key: str, sm_clock_hz: float) -> float | None:
    """The datasheet peak ``key`` (FLOP/s) scaled from the datasheet clock to ``sm_clock_hz``;
    None where the table has no such peak or no clock for this GPU."""
    peak = spec.peaks.get(key)
    if peak is None or not spec.clock_mhz:
        return None
    return peak * sm_clock_hz / (spec.clock_mhz * 1e6)


def estimate(
    spec: GpuSpec | None,
    name: str,
    sm_clock_hz: float | None,
    activity: Mapping[str, float | None],
    dram_bw_util: float | None,
    *,
    mig: bool | None = False,
) -> Estimate:
    """``activity``: fraction busy (0..1) of each pipe of :data:`PIPE_PEAKS`, None where GPM did
    not report it. A pipe idle the whole interval adds nothing whatever its peak; a busy pipe
    whose peak is unknown, or a pipe not reported, leaves the FLOP/s unknown (never a guess)."""
    if mig:
        return Estimate(None, None, MIG_OFF)
    if spec is None:
        return Estimate(None, None, f"est.: {name} is not in the GPU table (data/gpu_specs.json)")
    dram = dram_bw_util * spec.dram_bw if dram_bw_util is not None and spec.dram_bw else None
    if sm_clock_hz is None:
        return Estimate(None, dram, "est. FLOP/s: NVML gave no SM clock")
    if not spec.clock_mhz:
        return Estimate(None, dram, f"est. FLOP/s: no datasheet clock for {spec.key}")
    total = 0.0
    for pipe, key in PIPE_PEAKS.items():
        busy = activity.get(pipe)
        if busy is None:
            return Estimate(None, dram, f"est. FLOP/s: GPM gave no {pipe.upper()} activity")
        if busy <= 0:
            continue
        peak = peak_at_clock(spec, key, sm_clock_hz)
        if peak is None:
            return Estimate(None, dram, f"est. FLOP/s: no {key} peak for {spec.key}")
        total += busy * peak
    return Estimate(total, dram)
