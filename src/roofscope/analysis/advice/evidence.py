"""roofscope's own rules: each reads the step's groups against the report's roofs, states its
evidence and thresholds, and estimates a gain with the model it says.

A rule fires only on what it can see in the report; each model is written out in the item's
``assumptions`` and is an estimate to be checked by applying the advice (docs/performance.md
holds the before/after runs). The rules take plain rows (``Report.rows("group")``), so they are
tested on real exports without a session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from roofscope.analysis.advice import (
    ROOFSCOPE,
    Advice,
    Context,
    compiled,
    layout,
    step_speedup,
    tensor_math,
)
from roofscope.analysis.advice.kernel_classes import Change, KernelTime, Prediction
from roofscope.analysis.advice.run_files import analytic_beside
from roofscope.present.units import counted, si, time
from roofscope.quantities import TIME_S

Row = Mapping[str, Any]

# % of the step an item's change must be predicted to save before it is advised
GAIN_SHARE = 2.0


@dataclass(frozen=True)
class Step:
    """What the rules see of one report."""

    groups: Sequence[Row]  # Report.rows("group"), longest first
    roofs: Mapping[str, float]  # ceiling name -> value (FLOP/s or B/s)
    step_s: float  # the step's GPU time
    kernel_times: Sequence[KernelTime] = ()  # (group, kernel, block, launches, s) of each kernel
    # the run's analytic.json beside the report (roofscope profile writes it), if any: the
    # convolutions' shapes decide Inductor's layout (compiled.py)
    analytic: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, report: Any, step_s: float | None = None) -> Step:
        """A report's step (``step_s``: the step's time when the caller has it already)."""
        return cls(
            tuple(report.rows("group")),
            {c.name: c.value for c in report.ceilings},
            step_s if step_s is not None else report.head()[TIME_S],
            tuple(report.kernel_times()),
            analytic_beside(report.path) if getattr(report, "path", None) else None,
        )

    @property
    def compiled(self) -> bool:
        """Inductor generated kernels (torch.compile): it has fused what it could."""
        return any(name.startswith("triton_") for _, name, *_ in self.kernel_times)

    def share(self, seconds: float) -> float:
        return 100.0 * seconds / self.step_s if self.step_s > 0 else 0.0


def _predicted(
    step: Step,
    rule: str,
    prediction: Prediction,
    model: Any,
    changes: Mapping[str, Change],
    title: str,
    action: str,
    assumptions: list[str],
    evidence: Sequence[str] = (),
    lead: Sequence[str] = (),
) -> list[Advice]:
    """The item of a kernel-class model's prediction (layout.py, tensor_math.py, compiled.py)
    when it saves GAIN_SHARE of the step or more: the classes predicted to change by more than
    5% are its evidence (after the ``lead`` lines, which plain ``advise`` shows first), its
    groups where the gain is, largest first."""
    gain = prediction.gain_s
    if step.share(gain) < GAIN_SHARE:
        return []
    # the largest changes first, either way: what the gain is made of
    changed = sorted(
        prediction.changed(), key=lambda k: -abs(prediction.before[k] - prediction.after[k])
    )
    covered = sum(prediction.before[k] for k in changed)
    unfitted = [model.title(k) for k in changed if k not in changes]
    saved = prediction.saved
    return [
        Advice(
            rule=rule,
            source=ROOFSCOPE,
            title=title.format(share=step.share(gain)),
            action=action,
            evidence=[
                f"predicted {time(gain)} saved: {step.share(gain):.1f}% of GPU time (advised "
                f"from {GAIN_SHARE:g}%); by kernel class, the largest changes first"
                + (" (after the next line):" if lead else ":")
            ]
            + list(lead)
            + [_class_line(model, changes, k, prediction) for k in changed]
            + list(evidence),
            groups=sorted((g for g, t in saved.items() if t), key=lambda g: (-saved[g], g)),
            launches=sum(prediction.launches[k] for k in changed),
            time_s=covered,
            time_pct=step.share(covered),
            est_gain_s=gain,
            est_step_speedup=step_speedup(step.step_s, gain),
            assumptions=[
                *assumptions,
                *([f"not fitted, taken as unchanged: {', '.join(unfitted)}"] if unfitted else []),
            ],
        )
    ]


def _class_line(model: Any, changes: Mapping[str, Change], key: str, prediction: Prediction) -> str:
    before, after = prediction.before[key], prediction.after[key]
    change = changes.get(key)
    said = f"{change.text()} on the fitting pairs" if change is not None else "not fitted"
    launches = counted(prediction.launches[key], "launch")
    return f"{model.title(key)}: {launches}, {time(before)} → {time(after)} ({said})"


def _fitted(model: Any) -> str:
    return (
        f"each class's time changes as it did on the fitting pairs ({', '.join(model.FITTED_ON)}"
        f"; {model.FITTED_WITH}); on the held-out pairs ({len(model.HELD_OUT)} other models: "
        f"{', '.join(model.HELD_OUT)}) every gain worth 5% of "
        "the step or more was predicted within ±25% (docs/performance.md); kernels of no "
        "class are taken as unchanged"
    )


def channels_last(step: Step) -> list[Advice]:
    """What channels_last would change, class by class of the NCHW step's kernels
    (analysis/advice/layout.py): the transforms around cuDNN's NHWC convolutions go, ATen's
    NCHW depthwise convolutions, batch norms and pools are swapped for NHWC ones. The item
    covers the classes predicted to change by more than 5% (an element-wise group's kernels,
    ×1.04, are in the model but not in the item's share of the step)."""
    return _predicted(
        step,
        "channels_last",
        layout.predict(step.kernel_times),
        layout,
        layout.CHANGES,
        title="channels_last would save {share:.1f}% of the step",
        action="model.to(memory_format=torch.channels_last) and the input likewise",
        assumptions=[
            _fitted(layout),
            "ATen's channels_last batch norm costs about the same per launch on small "
            "planes: fitted at batch 8, its time at other batches is an estimate",
        ],
    )


def tensor_cores(step: Step) -> list[Advice]:
    """FP32 GEMMs and convolutions on a GPU whose tensor cores do TF32, class by class of the
    FP32 step's kernels (analysis/advice/tensor_math.py): what allowing TF32 would save."""
    fp32, tf32 = step.roofs.get("fp32"), step.roofs.get("tensor_tf32")
    if not fp32 or not tf32 or tf32 <= fp32:
        return []
    switches = tensor_math.Switches.of(step.kernel_times)
    on = [
        *(["torch.backends.cuda.matmul.allow_tf32 = True"] if switches.cublas else []),
        *(["torch.backends.cudnn.allow_tf32 = True"] if switches.cudnn else []),
    ]
    already = (
        "" if switches.cudnn and switches.cublas
        else f" ({'cuDNN' if not switches.cudnn else 'cuBLAS'}'s kernels use TF32 already)"
    )  # fmt: skip
    return _predicted(
        step,
        "tensor_cores",
        tensor_math.predict(step.kernel_times),
        tensor_math,
        tensor_math.CHANGES,
        title="TF32 tensor cores would save {share:.1f}% of the step",
        action=(
            f"{' and '.join(on)}{already}; or torch.autocast('cuda', dtype=torch.bfloat16), "
            "which gains more"
        ),
        evidence=[
            f"roofs: FP32 {si(fp32, 'FLOP/s')}, TF32 tensor {si(tf32, 'FLOP/s')} "
            f"({tf32 / fp32:.1f}×)"
        ],
        assumptions=[
            _fitted(tensor_math),
            "TF32 rounds the inputs of matrix products to 10 bits of mantissa: check the "
            "model's accuracy",
            "FP32 attention (memory-efficient fmha), depthwise convolutions and split-K "
            "reductions are taken as unchanged",
            "cuBLAS may keep small GEMMs on the FP32 pipe with TF32 allowed (ResNet-18's "
            "classifier at batch 8 did): their part of the gain may not be there",
        ],
    )


def fusion(step: Step) -> list[Advice]:
    """What torch.compile would save, class by class of the eager step's kernels
    (analysis/advice/compiled.py): Inductor fuses the memory-bound kernels between the matrix
    ones, and takes channels_last for the convolutions when its heuristic says so (decided on
    the run's convolutions when analytic.json is beside the report). Its second evidence line
    (the one plain ``advise`` shows) says what Inductor is taken to do with the layout."""
    inductor, prediction = compiled.predict_run(step.kernel_times, step.analytic)
    lead = []
    if compiled.has_convolutions(step.kernel_times):
        said = [f"the convolutions under Inductor: {inductor.said}"]
        layout_part = sum(
            prediction.before[k] - prediction.after[k]
            for k in compiled.LAYOUT_KEYS
            if k in prediction.before
        )
        if inductor.channels_last and layout_part:
            said.append(
                f"{time(layout_part)} of this gain is channels_last's change to them, which "
                "the channels_last item's gain holds too: the two overlap"
            )
        if not inductor.known:
            nchw = compiled.predict(step.kernel_times, channels_last=False).gain_s
            said.append(
                f"if Inductor keeps NCHW (few convolutions in a large graph, a grouped one of "
                f"more than one channel a group, one with at most half as many outputs as "
                f"inputs, or all of 64 channels or fewer): {time(nchw)} saved "
                f"({step.share(nchw):.1f}%)"
            )
        lead = ["; ".join(said)]
    changes = {**compiled.CHANGES, **compiled.layout_changes(inductor.channels_last)}
    return _predicted(
        step,
        "fusion",
        prediction,
        compiled,
        changes,
        title="torch.compile would save {share:.1f}% of the step",
        action="torch.compile the model (roofscope profile --compile), or use fused ops",
        lead=lead,
        assumptions=[
            _fitted(compiled),
            "fitted on bf16 steps: on an FP32 step the fused kernels' change is an extrapolation",
            "the convolutions, when Inductor takes channels_last, change as channels_last "
            "changes them (the channels_last item's fitted changes)",
            "GEMMs, attention and the optimizer are taken as unchanged (not compiled here)",
        ],
    )


RULES: tuple[Callable[[Step], list[Advice]], ...] = (channels_last, tensor_cores, fusion)


def roofscope_advice(step: Step) -> list[Advice]:
    """Every roofscope rule that fires on the step."""
    return [item for rule in RULES for item in rule(step)]


def advise(ctx: Context) -> list[Advice]:
    """The producer ``Report.advice()`` runs (analysis/advice/sources.py)."""
    report = ctx.report
    if report is None or not ctx.step_s or report.is_nsys or report.is_recording:
        return []
    return roofscope_advice(Step.of(report, ctx.step_s))
