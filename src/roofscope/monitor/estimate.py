"""The live estimates of a sample (est. FLOP/s, est. DRAM B/s) from its GPM pipe activities:
the sample's fields mapped onto the pipes of :mod:`roofscope.hardware.pipes`, which owns the
arithmetic. Every live source calls :func:`fill_estimate` once per sample."""

from __future__ import annotations

from roofscope.hardware.pipes import estimate
from roofscope.hardware.specs import GpuSpec
from roofscope.telemetry.sample import GpuSample

# GpuSample field → GPM pipe (hardware.pipes.PIPE_PEAKS).
PIPE_FIELDS = {
    "hmma": "hmma_active",
    "dmma": "dmma_active",
    "fp64": "fp64_active",
    "fp32": "fp32_active",
    "fp16": "fp16_active",
}


def fill_estimate(sample: GpuSample, spec: GpuSpec | None) -> None:
    """Set ``est_flops``, ``est_dram_bps`` and ``est_status``. Nothing where GPM was not read:
    ``gpm_status`` already says why, and the estimates stay None (shown as "—")."""
    if sample.gpm_status is not None:
        return
    est = estimate(
        spec,
        sample.name,
        sample.sm_clock_hz,
        {pipe: getattr(sample, field) for pipe, field in PIPE_FIELDS.items()},
        sample.dram_bw_util,
        mig=sample.mig_mode,
    )
    sample.est_flops, sample.est_dram_bps, sample.est_status = (
        est.flop_per_s,
        est.dram_bps,
        est.status,
    )
