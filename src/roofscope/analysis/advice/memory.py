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

from typing import Any

from roofscope.analysis.advice import ROOFSCOPE, Advice, Context
from roofscope.analysis.advice.run_files import analytic_beside, run_beside
from roofscope.hardware.specs import match_device_name
from roofscope.present.units import si

GIB = 1 << 30


def _number(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def batch_memory(
    analytic: dict[str, Any], run: dict[str, Any] | None, gpu_name: str | None
) -> list[Advice]:
    """One item: the largest batch that fits, against the batch the run used."""
    from roofscope.analysis.batch_memory import MEMORY_RESERVE, estimate_at, largest_batch

    model = analytic.get("memory")
    batch = analytic.get("batch")
    if analytic.get("mode") != "train" or not isinstance(model, dict) or not isinstance(batch, int):
        return []
    if not all(_number(model.get(k)) for k in ("per_sample_bytes", "fixed_bytes")):
        return []
    facts = run.get("facts", {}) if run else {}
    peak = _number(facts.get("peak_memory_bytes"))
    total = _number(facts.get("device_memory_bytes"))
    said = "the GPU's memory (measured)"
    if total is None:
        spec = match_device_name(gpu_name)
        if spec is None or not spec.mem_gb:
            return []  # no memory size to fit into: nothing to say
        # the datasheet's "80 GB" is what the driver reports in GiB, less ~0.5%
        total = spec.mem_gb * spec.mem_fraction * GIB
        said = f"the GPU's memory ({spec.label}'s datasheet)"
    measured = (batch, peak) if peak is not None else None
    fits = largest_batch(model, total, MEMORY_RESERVE, measured)
    fixed = peak - model["per_sample_bytes"] * batch if peak is not None else model["fixed_bytes"]
    at_fits = fixed + model["per_sample_bytes"] * fits
    anchor = (
        f"measured peak at batch {batch}: {si(peak, 'B')} (torch.cuda.max_memory_allocated "
        "over the warm-up steps)"
        if peak is not None
        else f"no measured peak beside the export: the analytic estimate at batch {batch}, "
        f"{si(estimate_at(model, batch), 'B')}"
    )
    return [
        Advice(
            rule="batch_memory",
            source=ROOFSCOPE,
            title=f"batch {fits:,} fits this GPU's memory (the run used {batch:,})",
            action=(
                f"raise the batch toward {fits:,} (and the learning rate with it), or keep the "
                "memory for a larger model"
                if fits > batch
                else "the batch is at what fits: gradient accumulation for a larger one"
            ),
            evidence=[
                anchor,
                f"per sample: {si(model['per_sample_bytes'], 'B')} (activations saved for "
                f"backward); weights {si(model.get('parameter_bytes') or 0.0, 'B')}, gradients "
                f"{si(model.get('gradient_bytes') or 0.0, 'B')}, optimizer state "
                f"{si(model.get('optimizer_bytes') or 0.0, 'B')}",
                f"{said}: {si(total, 'B')}; at batch {fits:,} the estimate is "
                f"{si(at_fits, 'B')}, {100 * at_fits / total:.0f}% of it "
                f"({MEMORY_RESERVE:.0%} left free)",
            ],
            groups=[],
            launches=0,
            time_s=0.0,
            time_pct=0.0,
            est_gain_s=None,
            est_step_speedup=None,
            assumptions=[
                "peak(batch) = the measured peak + the analytic bytes per sample × the added "
                "samples (profiling/analytic.py memory_model: autograd's saved tensors from a "
                "shapes-only pass, halved under 16-bit autocast)",
                f"{MEMORY_RESERVE:.0%} of the memory left free: at batch 128 this model came "
                "within -17%..+19% of the measured peak on ten bundled models "
                "(docs/performance.md, 'Memory by batch size')",
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
