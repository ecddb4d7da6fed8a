"""What ``torch.compile`` changes, kernel by kernel: the model behind the ``fusion`` item.

Inductor does two things to an eager step's kernels that a report shows:

- it fuses the memory-bound kernels between the matrix ones: batch and layer norm, element-wise
  chains, pooling, reductions, the copies of ``torch.cat`` and ``contiguous()``, into Triton
  kernels that keep the intermediates on chip. Each such class's time after is
  ``scale × its eager time`` (:data:`CHANGES`), the scales fitted on whole steps of the
  fitting pairs (Inductor moves work between families: pooling into element-wise kernels,
  element-wise into layer-norm ones);
- it chooses channels_last for the convolutions when its heuristic says it pays
  (``GraphLowering.decide_layout_opt``: in training, not when the graph has 300 nodes or more
  per convolution, any convolution is grouped with more than one channel a group, one with a
  kernel taller than 1 has at most half as many outputs as inputs, or all are of 64 channels
  or fewer). Then the convolution classes change as channels_last changes them
  (``layout.py``'s fitted changes); otherwise they stay.

Which one Inductor chooses needs the convolutions' shapes and the graph's size, which an ncu
report does not hold: ``roofscope profile`` writes them in ``analytic.json``
(``convolutions``, ``forward_ops``: the forward pass's operations, for the graph's nodes), and
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
    MATRIX,
    NONE,
    Change,
    ClassTable,
    KernelClass,
    KernelTime,
    Pair,
    Prediction,
    family,
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
                families=FUSIBLE_FAMILIES, not_pattern=r"scalePackedTensor"),
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
    if not any(family(group) in MATRIX for group, *_ in kernels):
        return replace(NONE, why_not="no GEMM, convolution or attention: not a model's step")
    if not has_convolutions(kernels):  # a transformer's CUTLASS GEMMs are no convolution's
        channels_last = False
    return predict_classes(kernels, TABLE, {**changes, **layout_changes(channels_last)})


def has_convolutions(kernels: Iterable[KernelTime]) -> bool:
    """Whether the step has kernels of the channels_last model's convolution classes: without
    one, no layout change applies (as layout.predict says)."""
    return any(
        layout.layout_class(group, kernel, block) in layout.CONVOLUTIONS
        for group, kernel, block, *_ in kernels
    )


# -- Inductor's layout choice ---------------------------------------------------------------


# Inductor skips channels_last when the graph has this many nodes or more per convolution
# (a ViT's one patch-embedding convolution in a graph of hundreds of operations)
NODES_PER_CONVOLUTION = 300


def _dims(value: Any, least: int) -> list[int]:
    """A list of at least ``least`` positive ints (a weight's shape), else ValueError: a
    hand-made analytic.json's strings, floats, booleans or negatives are not shapes."""
    if not isinstance(value, list) or len(value) < least:
        raise ValueError("not a shape")
    if not all(type(x) is int and 0 < x < 2**31 for x in value):
        raise ValueError("not a shape")
    return value


def inductor_keeps_nchw(
    convolutions: Sequence[Mapping[str, Any]], forward_ops: int | None = None
) -> str | None:
    """Why Inductor's training heuristic (``GraphLowering.decide_layout_opt``) keeps NCHW for
    these convolutions, or None when it takes channels_last. Each convolution: ``weight``
    (its weight's shape as PyTorch holds it and Inductor reads it: out, in per group,
    kernel…; a transposed one's in, out per group, …) and ``groups``, as ``analytic.json``
    holds them; ``forward_ops``: the operations of the forward pass, for Inductor's check on
    the graph's size. ValueError when a shape is not one."""
    shapes = [(_dims(c["weight"], 3), _dims([c.get("groups", 1)], 1)[0]) for c in convolutions]
    if not shapes:
        return "the model has no convolution"
    if forward_ops is not None and forward_ops >= NODES_PER_CONVOLUTION * len(shapes):
        return (
            f"{forward_ops} operations in the forward pass for {len(shapes)} "
            f"convolution{'s' if len(shapes) > 1 else ''}: Inductor leaves a graph with few "
            "convolutions as it is"
        )
    for weight, groups in shapes:
        if groups > 1 and weight[1] > 1:
            return "a grouped convolution has more than one channel a group"
    for weight, _ in shapes:
        if weight[0] * 2 <= weight[1] and weight[2] > 1:
            kernel = "×".join(str(k) for k in weight[2:])
            return (
                f"a {kernel} convolution's weight is {weight[0]}×{weight[1]} (outputs × "
                "inputs, as Inductor reads it): at most half as many outputs as inputs"
            )
    if all(w[0] <= 64 and w[1] <= 64 for w, _ in shapes):
        return "every convolution has 64 channels or fewer"
    return None


@dataclass(frozen=True)
class InductorLayout:
    channels_last: bool  # whether Inductor is predicted to change the convolutions' layout
    said: str  # what the item says of it
    known: bool  # decided on the run's convolutions or kernels (else assumed)


def inductor_layout(
    analytic: Mapping[str, Any] | None, kernels: Iterable[KernelTime] = ()
) -> InductorLayout:
    """Inductor's layout choice for the run whose ``analytic.json`` this is (None: no such
    file): decided on its convolutions when it has them, else assumed channels_last (what
    Inductor chose for 8 of the 11 CNNs of the compile pairs). A step already in
    channels_last (its ``kernels`` say so) has nothing left to change there."""
    if any(layout.ALREADY.search(kernel) for _, kernel, *_ in kernels):
        return InductorLayout(False, "in channels_last already (the step's kernels say so)", True)
    analytic = analytic if isinstance(analytic, Mapping) else {}
    convolutions = analytic.get("convolutions")
    if not isinstance(convolutions, list) or not convolutions:
        return InductorLayout(
            True, "channels_last, assumed: the convolutions' shapes are not known", False
        )
    if analytic.get("mode") == "infer":
        return InductorLayout(
            True, "channels_last, assumed: in inference Inductor weighs their FLOPs", False
        )
    ops = analytic.get("forward_ops")
    try:
        why = inductor_keeps_nchw(convolutions, ops if type(ops) is int and ops > 0 else None)
    except (TypeError, ValueError, KeyError, AttributeError):
        return InductorLayout(
            True, "channels_last, assumed: the convolutions' shapes are not readable", False
        )
    if why is None:
        return InductorLayout(True, "channels_last (the run's convolutions pass its checks)", True)
    return InductorLayout(False, f"NCHW kept ({why})", True)


def predict_run(
    kernels: Iterable[KernelTime],
    analytic: Mapping[str, Any] | None,
    changes: Mapping[str, Change] = CHANGES,
) -> tuple[InductorLayout, Prediction]:
    """A run's prediction as ``advise`` makes it (and bench/fit_advice.py scores it): Inductor's
    layout decided on the run's analytic.json and the step's kernels, then each class's time."""
    kernels = list(kernels)
    inductor = inductor_layout(analytic, kernels)
    return inductor, predict(kernels, changes, channels_last=inductor.channels_last)


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
