"""How large a batch fits: the memory model of a bundled model's run, anchored on the peak the
run measured (issue 33, item 5; the NERSC study's model: weights, gradients, optimizer state,
activations per sample).

``roofscope profile`` leaves ``analytic.json`` (the analytic memory model: fixed bytes and
bytes per sample, from a shapes-only pass) and ``run.json`` (the step's measured facts: the
peak of PyTorch's allocator over the warm-up steps and, since issue 33, the GPU's memory)
beside the export. The largest batch is the one whose estimate, the measured peak plus the
model's per-sample bytes for each added sample, leaves ``MEMORY_RESERVE`` of the GPU free
(``profiling/analytic.py``: the model's error measured on ten bundled models).
"""

from __future__ import annotations

import math
from typing import Any

from roofscope.analysis.advice import ROOFSCOPE, Advice, Context
from roofscope.analysis.advice.run_files import analytic_beside, run_beside
from roofscope.hardware.specs import match_device_name
from roofscope.present.units import si


def _number(value: object) -> float | None:
    """A positive, finite number, or None (a run file's facts are text: "inf" is no peak)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number > 0 else None


def _same_run(analytic: dict[str, Any], run: dict[str, Any]) -> bool:
    """Whether run.json's settings are analytic.json's (a folder may hold another run's)."""
    spec = run.get("spec")
    if not isinstance(spec, dict):
        return True  # an older run file without settings: nothing to contradict
    return all(spec.get(k) == analytic.get(k) for k in ("model", "batch", "precision", "mode"))


def batch_memory(
    analytic: dict[str, Any], run: dict[str, Any] | None, gpu_name: str | None
) -> list[Advice]:
    """One item: the largest batch that fits, against the batch the run used."""
    from roofscope.analysis.batch_memory import (
        MEMORY_RESERVE,
        SLOPE_MARGIN,
        estimate_at,
        largest_batch,
    )

    model = analytic.get("memory")
    batch = analytic.get("batch")
    if analytic.get("mode") != "train" or not isinstance(model, dict) or not isinstance(batch, int):
        return []
    if not all(_number(model.get(k)) for k in ("per_sample_bytes", "fixed_bytes")):
        return []
    facts = run.get("facts", {}) if run and _same_run(analytic, run) else {}
    peak = _number(facts.get("peak_memory_bytes"))
    total = _number(facts.get("device_memory_bytes"))
    said = "the GPU's memory (measured by the run)"
    if total is None:
        spec = match_device_name(gpu_name)
        if spec is None or not spec.mem_gb:
            return []  # no memory size to fit into: nothing to say
        total = spec.mem_gb * spec.mem_fraction * 1e9  # the datasheet's GB
        said = f"the GPU's memory ({spec.label}'s datasheet)"
    start = peak if peak is not None else estimate_at(model, batch)
    per_sample = model["per_sample_bytes"]
    fits = largest_batch(model, total, MEMORY_RESERVE, (batch, start), SLOPE_MARGIN)
    at_fits = start + SLOPE_MARGIN * per_sample * (fits - batch)
    anchor = (
        f"measured peak at batch {batch}: {si(peak, 'B')} (torch.cuda.max_memory_allocated "
        "over the warm-up steps)"
        if peak is not None
        else f"no measured peak beside the export: the analytic estimate at batch {batch}, "
        f"{si(start, 'B')}"
    )
    if fits > batch:
        title = f"batch {fits:,} fits this GPU's memory (the run used {batch:,})"
        action = (
            f"raise the batch toward {fits:,} (and the learning rate with it), or use the "
            "memory for a larger model"
        )
        at = (
            f"at batch {fits:,} the estimate is {si(at_fits, 'B')}, "
            f"{100 * at_fits / total:.0f}% of it"
        )
    else:
        title = f"the run's batch {batch:,} leaves under {MEMORY_RESERVE:.0%} of the memory free"
        action = "keep the batch; gradient accumulation for a larger effective one"
        at = f"at batch {batch:,}: {100 * start / total:.0f}% of it"
    return [
        Advice(
            rule="batch_memory",
            source=ROOFSCOPE,
            title=title,
            action=action,
            evidence=[
                anchor,
                f"per sample: {si(per_sample, 'B')} (activations saved for backward, counted "
                f"×{SLOPE_MARGIN:g}); weights {si(model.get('parameter_bytes') or 0.0, 'B')}, "
                f"gradients {si(model.get('gradient_bytes') or 0.0, 'B')}, optimizer state "
                f"{si(model.get('optimizer_bytes') or 0.0, 'B')}",
                f"{said}: {si(total, 'B')}; {at} ({MEMORY_RESERVE:.0%} left free)",
            ],
            groups=[],
            launches=0,
            time_s=0.0,
            time_pct=0.0,
            est_gain_s=None,
            est_step_speedup=None,
            assumptions=[
                "peak(batch) = the measured peak + the analytic bytes per sample "
                f"(profiling/analytic.py memory_model) × {SLOPE_MARGIN:g} for each sample "
                f"more: the peak grew up to {SLOPE_MARGIN:g}× that from batch 32 to 128 on "
                "ten bundled models (docs/performance.md, 'Memory by batch size'); far from "
                "the run's batch this is an extrapolation",
                f"{MEMORY_RESERVE:.0%} of the memory left free for what the model does not "
                "count; PyTorch's caching allocator reserved 1.1-1.7× the allocated peak at "
                "batch 128 (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lowers that)",
                "no time estimate: a larger batch changes the work, not only the memory",
            ],
        )
    ]


def advise(ctx: Context) -> list[Advice]:
    """The producer ``Report.advice()`` runs (analysis/advice/sources.py): ncu reports of
    bundled models' runs, with analytic.json (and run.json) beside them."""
    report = ctx.report
    if report is None or report.is_nsys or report.is_recording:
        return []
    analytic = analytic_beside(report.path)
    if not analytic:
        return []
    return batch_memory(analytic, run_beside(report.path), report.gpu_name)
