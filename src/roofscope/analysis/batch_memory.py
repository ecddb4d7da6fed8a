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


def largest_batch(
    model: dict[str, float],
    memory_bytes: float,
    reserve: float = MEMORY_RESERVE,
    measured: tuple[int, float] | None = None,
) -> int:
    """The largest batch whose estimate fits in ``memory_bytes`` less a reserve fraction. With
    ``measured`` (a batch and the peak measured at it), the estimate's fixed part is that peak
    less the model's per-sample bytes at that batch: the workspaces and the allocator's
    rounding, which the model does not count, are in it."""
    fixed = (
        measured[1] - model["per_sample_bytes"] * measured[0]
        if measured is not None
        else model["fixed_bytes"]
    )
    room = memory_bytes * (1 - reserve) - fixed
    if room <= 0 or model["per_sample_bytes"] <= 0:
        return 0
    return int(room // model["per_sample_bytes"])
