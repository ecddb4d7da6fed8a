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

from roofscope.analysis.advice import ROOFSCOPE, Advice, Context, step_speedup
from roofscope.analysis.browse import Filter
from roofscope.present.units import counted, si, time
from roofscope.quantities import BOUND, BYTES, EFFICIENCY, FLOPS, LAUNCHES, LEVELS, TIME_PCT, TIME_S

Row = Mapping[str, Any]

LAYOUT_SHARE = 3.0  # % of the step in NCHW<->NHWC transforms before channels_last pays off
# of those transforms' time, what the step saves in channels_last: the transforms all go, but
# cuDNN's NHWC batch-norm and element-wise kernels are slower. Fitted on one model (ResNet-18
# bf16 b8 on an H100, docs/performance.md "Advice checked by applying it": 0.751 of 1.001 ms)
LAYOUT_SAVES = 0.75
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

MATRIX = ("GEMM", "conv fprop", "conv dgrad", "conv wgrad", "attention")
FUSIBLE = ("element-wise", "batch norm", "layer norm", "reduction", "softmax", "dropout/RNG")


@dataclass(frozen=True)
class Step:
    """What the rules see of one report."""

    groups: Sequence[Row]  # Report.rows("group"), longest first
    roofs: Mapping[str, float]  # ceiling name -> value (FLOP/s or B/s)
    step_s: float  # the step's GPU time
    kernels: Sequence[str] = ()  # every kernel name in the report

    @property
    def compiled(self) -> bool:
        """Inductor generated kernels (torch.compile): it has fused what it could."""
        return any(name.startswith("triton_") for name in self.kernels)

    def share(self, seconds: float) -> float:
        return 100.0 * seconds / self.step_s if self.step_s > 0 else 0.0


def family(group: str) -> str:
    """``GEMM (nvjet)`` -> ``GEMM``: a group's family without its library."""
    return group.split(" (")[0]


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
    """cuDNN runs NHWC convolutions; an NCHW model pays a transform before and after each."""
    rows = [r for r in step.groups if family(str(r["name"])) == "layout transform"]
    spent = sum(r[TIME_S] or 0.0 for r in rows)
    if not rows or step.share(spent) < LAYOUT_SHARE:
        return []
    launches = sum(int(r[LAUNCHES] or 0) for r in rows)
    return [
        _advice(
            step,
            rows,
            spent * LAYOUT_SAVES,
            rule="channels_last",
            title=f"layout transforms take {step.share(spent):.1f}% of the step",
            action="model.to(memory_format=torch.channels_last) and the input likewise",
            evidence=[
                f"{launches:,} layout-transform launches (nchwToNhwc/nhwcToNchw and kin), "
                f"{time(spent)}: {step.share(spent):.1f}% of GPU time (threshold "
                f"{LAYOUT_SHARE:g}%)",
            ],
            assumptions=[
                "in channels_last the convolutions read and write NHWC, so the transforms "
                f"around them go, but NHWC norm and element-wise kernels run slower: "
                f"{LAYOUT_SAVES:.0%} of the group's time is the gain (measured on one model, "
                "ResNet-18 on an H100; an estimate elsewhere)",
            ],
        )
    ]


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
    step = Step(
        tuple(report.rows("group")),
        {c.name: c.value for c in report.ceilings},
        ctx.step_s,
        tuple(report.kernel_names(Filter())),
    )
    return roofscope_advice(step)
