"""What ``torch.compile`` changes, kernel by kernel: the model behind the ``fusion`` item.

Inductor does two things to an eager step's kernels that a report shows:

- it fuses the memory-bound kernels between the matrix ones: batch and layer norm, element-wise
  chains, pooling, reductions, the copies of ``torch.cat`` and ``contiguous()``, into Triton
  kernels that keep the intermediates on chip. Each such class's time after is
  ``scale × its eager time`` (:data:`CHANGES`), the scales fitted on whole steps of the
  fitting pairs (Inductor moves work between families: pooling into element-wise kernels,
  element-wise into layer-norm ones);
- it chooses channels_last for the convolutions when its heuristic says it pays
  (``GraphLowering.decide_layout_opt``: in training, not when any convolution is grouped with
  more than one channel a group, or a 3×3 (or larger) one has at most half as many outputs as
  inputs, or all are of 64 channels or fewer). Then the convolution classes change as
  channels_last changes them (``layout.py``'s fitted changes); otherwise they stay.

Which one Inductor chooses needs the convolutions' shapes, which an ncu report does not hold:
``roofscope profile`` writes them in ``analytic.json`` (``convolutions``), and
:func:`inductor_keeps_nchw` applies the heuristic to them. Without them the item assumes
channels_last and says what the gain would be without it.

The pairs are ``roofscope profile`` runs of one model, eager and ``--compile``. Fitted on the
fitting set only; the held-out errors are in docs/performance.md ("torch.compile, predicted
from the kernels"); ``bench/fit_advice.py compiled`` refits and prints both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from roofscope.analysis.advice import layout
from roofscope.analysis.advice.kernel_classes import (
    NONE,
    Change,
    ClassTable,
    KernelClass,
    KernelTime,
    Pair,
    Prediction,
    fit_scales,
    predict_classes,
    whole_step,
)

FUSIBLE_FAMILIES = (
    "batch norm",
    "layer norm",
    "element-wise",
    "pooling",
    "reduction",
    "softmax",
    "memcpy/memset",
    "dropout/RNG",
    "loss",
)
# layout.py's classes of the convolution side: what Inductor's channels_last changes
LAYOUT_KEYS = ("transform", "depthwise_16", "depthwise", "conv_nchw", "conv_nhwc", "conv_gemm")
CLASSES: tuple[KernelClass, ...] = (
    *(c for c in layout.CLASSES if c.key in LAYOUT_KEYS),
    # one class: fitted per family (norms, element-wise, pooling, copies, reductions) the
    # scales came out unphysical (element-wise ×0.00, reductions ×1.29: Inductor moves work
    # between these families) and the held-out errors larger (docs/decisions.md)
    KernelClass("fusible", "memory-bound kernels between the matrix ones (batch and layer "
                "norm, element-wise, pooling, reductions, softmax, copies, dropout, loss)",
                families=FUSIBLE_FAMILIES),
)  # fmt: skip
TABLE = ClassTable(CLASSES)
KEYS = TABLE.keys
FUSED = tuple(k for k in KEYS if k not in LAYOUT_KEYS)
UNCHANGED = Change(1.0)

# fitted by :func:`fit` on FITTED_ON (bench/fit_advice.py compiled prints them)
CHANGES: dict[str, Change] = {
    "fusible": Change(0.505),
}
FITTED_ON = ("ResNet-18", "EfficientNet-B0", "VGG11", "SimpleCNN", "DenseNet-121", "ViT-B/16")
# the held-out pairs' models (docs/performance.md): no constant was fitted on them
HELD_OUT = ("ResNet-50", "MobileNetV2", "ConvNeXt-Tiny", "VGG13", "VGG19", "U-Net", "BERT")
FITTED_WITH = "bf16, batch 8 (SimpleCNN 128), on an H200 with torch 2.11 and cuDNN 9.19"
# a step Inductor compiled already
COMPILED = re.compile(r"^triton_")


def title(key: str) -> str:
    return TABLE.title(key)


def layout_changes(channels_last: bool) -> dict[str, Change]:
    """The convolution side's changes: channels_last's when Inductor takes it, none when not."""
    if not channels_last:
        return dict.fromkeys(LAYOUT_KEYS, UNCHANGED)
    return {k: layout.CHANGES.get(k, UNCHANGED) for k in LAYOUT_KEYS}


def predict(
    kernels: Iterable[KernelTime],
    changes: Mapping[str, Change] = CHANGES,
    channels_last: bool = True,
) -> Prediction:
    """Each class's time once compiled (``channels_last``: whether Inductor takes it for the
    convolutions), and where the time is saved. No prediction for a step Inductor compiled."""
    kernels = list(kernels)
    for _, kernel, *_ in kernels:
        if COMPILED.search(kernel):
            return replace(NONE, why_not=f"the step is compiled already ({kernel[:60]})")
    return predict_classes(kernels, TABLE, {**changes, **layout_changes(channels_last)})


# -- Inductor's layout choice ---------------------------------------------------------------


def inductor_keeps_nchw(convolutions: Sequence[Mapping[str, Any]]) -> str | None:
    """Why Inductor's training heuristic keeps NCHW for these convolutions, or None when it
    takes channels_last. Each convolution: ``weight`` (its weight's shape as PyTorch holds it:
    out, in per group, kernel…; a transposed one's in, out per group, …, as Inductor reads it
    too) and ``groups``, as ``analytic.json`` holds them. Inductor's check on a graph's size
    (a few convolutions in a large graph, e.g. a ViT's patch embedding) is not made: a
    report does not tell the graph's size."""
    if not convolutions:
        return "the model has no convolution"
    shapes = [([int(x) for x in c["weight"]], int(c.get("groups", 1))) for c in convolutions]
    for weight, groups in shapes:
        if groups > 1 and weight[1] > 1:
            return "a grouped convolution has more than one channel a group"
    for weight, _ in shapes:
        if len(weight) > 2 and weight[0] * 2 <= weight[1] and weight[2] > 1:
            kernel = "×".join(str(k) for k in weight[2:])
            return f"a {kernel} convolution has {weight[0]} outputs for {weight[1]} inputs"
    if all(w[0] <= 64 and w[1] <= 64 for w, _ in shapes):
        return "every convolution has 64 channels or fewer"
    return None


@dataclass(frozen=True)
class InductorLayout:
    channels_last: bool  # what Inductor is predicted to choose for the convolutions
    why: str  # what decided it, for the item
    known: bool  # decided on the run's convolutions (else assumed)


def inductor_layout(
    analytic: Mapping[str, Any] | None, kernels: Iterable[KernelTime] = ()
) -> InductorLayout:
    """Inductor's layout choice for the run whose ``analytic.json`` this is (None: no such
    file): decided on its convolutions when it has them, else assumed channels_last (what
    Inductor chooses for most CNNs: ResNets, VGG, MobileNet, EfficientNet here). A step
    already in channels_last (its ``kernels`` say so) has nothing left to change there."""
    if any(layout.ALREADY.search(kernel) for _, kernel, *_ in kernels):
        return InductorLayout(False, "the step runs channels_last kernels already", True)
    convolutions = (analytic or {}).get("convolutions")
    if not isinstance(convolutions, list):
        return InductorLayout(True, "assumed: the convolutions' shapes are not known", False)
    if (analytic or {}).get("mode") == "infer":
        return InductorLayout(
            True, "assumed: in inference Inductor weighs the convolutions' FLOPs", False
        )
    try:
        why = inductor_keeps_nchw(convolutions)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        return InductorLayout(True, "assumed: the convolutions' shapes are not readable", False)
    if why is None:
        return InductorLayout(True, "the run's convolutions pass Inductor's checks", True)
    return InductorLayout(False, why, True)


def converted(pair: Pair) -> bool:
    """Whether Inductor took channels_last in a pair's compiled step (for fitting): the
    NCHW↔NHWC transforms cuDNN needed around NHWC kernels went."""

    def transforms(kernels: Sequence[KernelTime]) -> float:
        return sum(
            t
            for group, kernel, block, _, t in kernels
            if layout.layout_class(group, kernel, block) == "transform"
        )

    before = transforms(pair.before)
    return before > 0 and transforms(pair.after) < 0.5 * before


def fit(pairs: Sequence[Pair]) -> dict[str, Change]:
    """A scale for each fused class, by non-negative least squares of each pair's whole step,
    the convolution side taken as Inductor changed it in that pair."""
    fitted = fit_scales(
        pairs,
        TABLE,
        bucket=whole_step,
        fixed_for=lambda pair: layout_changes(converted(pair)),
    )
    return {k: v for k, v in fitted.items() if k in FUSED}
