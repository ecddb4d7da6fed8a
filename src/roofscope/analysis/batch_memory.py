"""Memory by batch size: a linear model ``bytes(batch) = fixed + per_sample × batch`` (the NERSC
study's: weights, gradients and optimizer state fixed, saved activations per sample), what it
estimates at a batch, and the largest batch it fits into a GPU's memory. The model's numbers
come from ``profiling/analytic.py`` (a shapes-only pass over a bundled model); the rule that
says the largest batch is ``analysis/advice/memory.py``.
"""

from __future__ import annotations


def estimate_at(model: dict[str, float], batch: int) -> float:
    return model["fixed_bytes"] + model["per_sample_bytes"] * batch


# The share of a GPU's memory left free when saying which batch fits. The model, anchored on a
# measured peak at batch 8, came within -17%..+19% of the peak PyTorch's allocator measured at
# batch 128 on ten bundled models in bf16 and fp32 (an H200; tools/device/memory_by_batch.py,
# tests/data/device/memory_by_batch_h200.json): cuDNN's and cuBLAS's workspaces, which
# no shape says, made the lows; attention that saves less than its shapes (flash) the highs.
MEMORY_RESERVE = 0.2
# Beyond the batches measured, the bytes per sample decide: the peak's growth from batch 32 to
# 128 was 0.83-1.28 times the model's bytes per sample on the same twenty runs (the highest,
# ResNet-18 fp32; the lowest, ViT-B/16 fp32). A batch extrapolated far from the run's is
# said with the highest.
SLOPE_MARGIN = 1.28


def largest_batch(
    model: dict[str, float],
    memory_bytes: float,
    reserve: float = MEMORY_RESERVE,
    measured: tuple[int, float] | None = None,
    slope: float = 1.0,
) -> int:
    """The largest batch whose estimate fits in ``memory_bytes`` less a reserve fraction. With
    ``measured`` (a batch and the peak measured at it), the estimate starts from that peak
    (the workspaces and the allocator's rounding, which the model does not count, are in it)
    and adds ``slope`` × the model's bytes per sample for each sample more."""
    per_sample = model["per_sample_bytes"] * slope
    if per_sample <= 0:
        return 0
    if measured is not None:
        batch, peak = measured
        return max(batch + int((memory_bytes * (1 - reserve) - peak) // per_sample), 0)
    room = memory_bytes * (1 - reserve) - model["fixed_bytes"]
    return int(room // per_sample) if room > 0 else 0
