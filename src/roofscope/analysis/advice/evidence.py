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

from roofscope.analysis.advice import ROOFSCOPE, Advice, Context, layout, step_speedup
from roofscope.analysis.advice.layout import KernelTime, family
from roofscope.present.units import counted, si, time
from roofscope.quantities import BOUND, BYTES, EFFICIENCY, FLOPS, LAUNCHES, LEVELS, TIME_PCT, TIME_S

Row = Mapping[str, Any]

# % of the step that channels_last must be predicted to save before it is advised
LAYOUT_GAIN_SHARE = 2.0
FP32_PIPE_SHARE = 0.5  # of a matrix group's FLOPs on the FP32 pipe (not tensor cores)
MATRIX_SHARE = 5.0  # % of the step in such matrix groups
# a convolution group under this fraction of its attainable gets no gain counted: on the H100
# cuDNN kept its FP32 algorithms for SimpleCNN's small convolutions (4-8% of attainable) with
# TF32 allowed, and moved VGG11's (45-49%) to tensor cores (docs/performance.md; two models)
CONV_MIN_EFFICIENCY = 0.2
FUSIBLE_SHARE = 10.0  # % of the step in memory-bound element-wise/normalisation groups
# of those groups' time, what fusing them saves: 0.28 measured on ResNet-18 bf16 b8, eager against
# --compile on an H100 (1.407 -> 1.018 ms; docs/performance.md); the first guess, 0.5, was 81% high
FUSION_SAVES = 0.28

MATRIX = ("GEMM", "conv fprop", "conv dgrad", "conv wgrad", "conv FFT", "attention")
FUSIBLE = ("element-wise", "batch norm", "layer norm", "reduction", "softmax", "dropout/RNG")


@dataclass(frozen=True)
class Step:
    """What the rules see of one report."""

    groups: Sequence[Row]  # Report.rows("group"), longest first
    roofs: Mapping[str, float]  # ceiling name -> value (FLOP/s or B/s)
    step_s: float  # the step's GPU time
    kernel_times: Sequence[KernelTime] = ()  # layout.KernelTime of every kernel

    @classmethod
    def of(cls, report: Any, step_s: float | None = None) -> Step:
        """A report's step (``step_s``: the step's time when the caller has it already)."""
        return cls(
            tuple(report.rows("group")),
            {c.name: c.value for c in report.ceilings},
            step_s if step_s is not None else report.head()[TIME_S],
            tuple(report.kernel_times()),
        )

    @property
    def compiled(self) -> bool:
        """Inductor generated kernels (torch.compile): it has fused what it could."""
        return any(name.startswith("triton_") for _, name, *_ in self.kernel_times)

    def share(self, seconds: float) -> float:
        return 100.0 * seconds / self.step_s if self.step_s > 0 else 0.0


def _advice(step: Step, rows: Sequence[Row], gain: float | None, **fields: Any) -> Advice:
    spent = sum(r[TIME_S] or 0.0 for r in rows)
    return Advice(
        source=ROOFSCOPE,
        groups=[str(r["name"]) for r in rows],
        launches=sum(int(r[LAUNCHES] or 0) for r in rows),
        time_s=spent,
        time_pct=step.share(spent),
        est_gain_s=gain,
        est_step_speedup=step_speedup(step.step_s, gain),
        **fields,
    )


def channels_last(step: Step) -> list[Advice]:
    """What channels_last would change, class by class of the NCHW step's kernels
    (analysis/advice/layout.py): the transforms around cuDNN's NHWC convolutions go, ATen's
    NCHW depthwise convolutions, batch norms and pools are swapped for NHWC ones. The item
    covers the classes predicted to change by more than 5% (an element-wise group's kernels,
    ×1.04, are in the model but not in the item's share of the step)."""
    prediction = layout.predict(step.kernel_times)
    gain = prediction.gain_s
    if step.share(gain) < LAYOUT_GAIN_SHARE:
        return []
    # the largest changes first, either way: what the gain is made of
    changed = sorted(
        prediction.changed(), key=lambda k: -abs(prediction.before[k] - prediction.after[k])
    )
    covered = sum(prediction.before[k] for k in changed)
    unfitted = [layout.title(k) for k in changed if k not in layout.CHANGES]
    saved = prediction.saved
    return [
        Advice(
            rule="channels_last",
            source=ROOFSCOPE,
            title=f"channels_last would save {step.share(gain):.1f}% of the step",
            action="model.to(memory_format=torch.channels_last) and the input likewise",
            evidence=[
                f"predicted {time(gain)} saved: {step.share(gain):.1f}% of GPU time (advised "
                f"from {LAYOUT_GAIN_SHARE:g}%); by kernel class, the largest changes first:"
            ]
            + [_layout_line(k, prediction) for k in changed],
            groups=sorted((g for g, t in saved.items() if t), key=lambda g: (-saved[g], g)),
            launches=sum(prediction.launches[k] for k in changed),
            time_s=covered,
            time_pct=step.share(covered),
            est_gain_s=gain,
            est_step_speedup=step_speedup(step.step_s, gain),
            assumptions=[
                "each class's time changes as it did on the fitting pairs "
                f"({', '.join(layout.FITTED_ON)}; {layout.FITTED_WITH}); on the held-out "
                "pairs (six other models) every gain worth 5% of the step or more was "
                "predicted within ±25% (docs/performance.md); kernels of no class are taken "
                "as unchanged",
                "ATen's channels_last batch norm costs about the same per launch on small "
                "planes: fitted at batch 8, its time at other batches is an estimate",
                *([f"not fitted, taken as unchanged: {', '.join(unfitted)}"] if unfitted else []),
            ],
        )
    ]


def _layout_line(key: str, prediction: layout.Prediction) -> str:
    before, after = prediction.before[key], prediction.after[key]
    change = layout.CHANGES.get(key)
    said = f"{change.text()} on the fitting pairs" if change is not None else "not fitted"
    launches = counted(prediction.launches[key], "launch")
    return f"{layout.title(key)}: {launches}, {time(before)} → {time(after)} ({said})"


def tensor_cores(step: Step) -> list[Advice]:
    """GEMMs and convolutions on the FP32 pipe of a GPU whose tensor cores do TF32/bf16."""
    fp32, tf32 = step.roofs.get("fp32"), step.roofs.get("tensor_tf32")
    if not fp32 or not tf32 or tf32 <= fp32:
        return []
    rows = []
    for r in step.groups:
        flops = r[FLOPS] or {}
        total = sum(v or 0.0 for v in flops.values())
        if (
            family(str(r["name"])) in MATRIX
            and total
            and (flops.get("fp32") or 0.0) / total >= (FP32_PIPE_SHARE)
        ):
            rows.append(r)
    spent = sum(r[TIME_S] or 0.0 for r in rows)
    if not rows or step.share(spent) < MATRIX_SHARE:
        return []
    counted = [r for r in rows if _moves(r)]
    gain = sum(_tensor_gain(r, fp32, tf32, step.roofs) for r in counted)
    left_out = [str(r["name"]) for r in rows if not _moves(r)]
    return [
        _advice(
            step,
            rows,
            gain,
            rule="tensor_cores",
            title=f"matrix work on the FP32 pipe: {step.share(spent):.1f}% of the step",
            action=(
                "torch.backends.cuda.matmul.allow_tf32 = True (and cudnn.allow_tf32), or "
                "torch.autocast('cuda', dtype=torch.bfloat16)"
            ),
            evidence=[
                f"{r['name']}: {_fp32_share(r):.0%} of its FLOPs on the FP32 pipe, "
                f"{time(r[TIME_S] or 0.0)}, bound {r[BOUND]}"
                for r in rows
            ]
            + [
                f"roofs: FP32 {si(fp32, 'FLOP/s')}, TF32 tensor {si(tf32, 'FLOP/s')} "
                f"({tf32 / fp32:.1f}×)"
            ],
            assumptions=[
                "the FP32 part of each group runs at the same fraction of the TF32 tensor "
                "roof as it now reaches of the FP32 roof, never faster than its bytes at "
                "the memory roofs allow (an upper bound for kernels that are memory-bound)",
                "bf16 autocast would gain more (twice TF32's roof) and halve the bytes",
                f"convolution groups under {CONV_MIN_EFFICIENCY:.0%} of their attainable count "
                "no gain: cuDNN kept FP32 algorithms for such small convolutions with TF32 "
                "allowed (H100, SimpleCNN)"
                + (f"; not counted here: {', '.join(left_out)}" if left_out else ""),
                "checked on two models (docs/performance.md): VGG11 +10%, SimpleCNN +30% "
                "(predicted over measured gain)",
            ],
        )
    ]


def _moves(row: Row) -> bool:
    """Whether the group's FP32 work is expected on tensor cores once TF32 is allowed."""
    if not family(str(row["name"])).startswith("conv"):
        return True
    return (row.get(EFFICIENCY) or 0.0) >= CONV_MIN_EFFICIENCY


def _fp32_share(row: Row) -> float:
    flops = row[FLOPS] or {}
    total = sum(v or 0.0 for v in flops.values())
    return (flops.get("fp32") or 0.0) / total if total else 0.0


def _tensor_gain(row: Row, fp32: float, tf32: float, roofs: Mapping[str, float]) -> float:
    spent = row[TIME_S] or 0.0
    share = _fp32_share(row)
    moved = spent * share  # the FP32 part's time, scaled by the roofs' ratio
    bytes_by_level = row[BYTES] or {}
    memory_floor = max(
        ((bytes_by_level.get(level) or 0.0) / roofs[level] for level in LEVELS if roofs.get(level)),
        default=0.0,
    )
    after = max(spent - moved + moved * fp32 / tf32, memory_floor)
    return max(spent - after, 0.0)


def fusion(step: Step) -> list[Advice]:
    """Memory-bound element-wise and normalisation kernels: each reads and writes whole
    tensors that the next one reads again; fused, the intermediates stay on chip."""
    if step.compiled:  # what is left unfused after Inductor is not this rule's to advise
        return []
    rows = [
        r
        for r in step.groups
        if family(str(r["name"])) in FUSIBLE and str(r[BOUND] or "").startswith("memory")
    ]
    spent = sum(r[TIME_S] or 0.0 for r in rows)
    if not rows or step.share(spent) < FUSIBLE_SHARE:
        return []
    return [
        _advice(
            step,
            rows,
            spent * FUSION_SAVES,
            rule="fusion",
            title=f"memory-bound element-wise and norm kernels: {step.share(spent):.1f}% of step",
            action="torch.compile the model (roofscope profile --compile), or use fused ops",
            evidence=[
                f"{r['name']}: {counted(int(r[LAUNCHES] or 0), 'launch')}, "
                f"{time(r[TIME_S] or 0.0)} "
                f"({r[TIME_PCT] or 0.0:.1f}%), bound {r[BOUND]}"
                for r in rows
            ]
            + [f"together {step.share(spent):.1f}% of GPU time (threshold {FUSIBLE_SHARE:g}%)"],
            assumptions=[
                f"fusing saves {FUSION_SAVES:.0%} of their time: a chain's intermediate "
                "tensors are written and read once less; fitted on one model (ResNet-18 "
                "bf16 b8, eager against torch.compile on an H100), an estimate elsewhere",
            ],
        )
    ]


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
