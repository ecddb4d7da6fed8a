"""What ``channels_last`` changes, kernel by kernel: the model behind the ``channels_last`` item.

In an NCHW model the kernels that care about layout fall into a few classes, told apart by
their names: cuDNN's NHWC convolutions pay a transform before and after
(``nchwToNhwc``/``nhwcToNchw``); ATen's depthwise convolutions, batch norm and pooling have NCHW
kernels that channels_last swaps for NHWC ones (or for cuDNN's) which run at other speeds.
Each kernel launch of the NCHW step is put in one class (:func:`layout_class`: by its name, its
group and, for ATen's batch norm, its block shape, which ATen sizes by the channel plane), and
each class's time in channels_last is predicted as ``scale × its NCHW time + per_launch × its
launches`` (:data:`CHANGES`). The per-launch term is there for ATen's channels_last batch norm,
whose kernels take about the same time whatever the channels when the plane is small. A kernel
of no class is taken as unchanged. The gain is the NCHW classes' time less the predicted time.

The changes are fitted (:func:`fit`) on the fitting pairs only, each an NCHW and a
``--channels-last`` run of one model made by ``roofscope profile`` on one GPU; the held-out
pairs' errors are in docs/performance.md ("channels_last, predicted from the kernels") and
tests/test_advice_layout.py. ``bench/fit_advice.py layout`` refits and prints both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from roofscope.analysis.advice.kernel_classes import (
    NONE,
    Change,
    ClassTable,
    KernelTime,
    Pair,
    Prediction,
    family,
    fit_scales,
    nnls,
    predict_classes,
)
from roofscope.analysis.advice.kernel_classes import KernelClass as LayoutClass

__all__ = ["CHANGES", "Change", "KernelTime", "Pair", "Prediction", "family", "fit", "predict"]

CONV = ("conv fprop", "conv dgrad", "conv wgrad", "conv FFT")
TRANSFORMS = "layout transform"

# First match wins: the named kernels before the families that also hold them.
CLASSES: tuple[LayoutClass, ...] = (
    LayoutClass("transform", "NCHW↔NHWC transforms around cuDNN's NHWC kernels",
                r"nchwToNhwc|nhwcToNchw"),
    # cuDNN's NHWC depthwise kernels that replace them gain more in 16 bits than in FP32
    LayoutClass("depthwise_16", "ATen's NCHW depthwise convolutions, 16-bit",
                r"conv_depthwise2d_\w*kernel<[^>]*"
                r"\b(?:c10::BFloat16|c10::Half|__half|__nv_bfloat16)\b"),
    LayoutClass("depthwise", "ATen's NCHW depthwise convolutions (conv_depthwise2d_*)",
                r"conv_depthwise2d_"),
    # ATen sizes the NCHW statistics and backward kernels' blocks by the channel plane's H×W
    # (x: the next power of two, up to 512; y = 512 / x); their channels_last kernels are fast
    # on large planes and slow on small ones (a grid of C/32 blocks when N·H·W is small)
    *(LayoutClass(f"norm_aten_{size}", f"ATen's NCHW batch norm on {plane} channel planes",
                  r"batch_norm_(?:collect_statistics|backward)_kernel", block=block)
      for size, plane, block in (("large", "large (H×W > 256)", r"\(512, 1, 1\)"),
                                 ("mid", "mid-sized (H×W 65-256)", r"\((?:128|256), [24], 1\)"),
                                 ("small", "small (H×W ≤ 64)", r"\((?:32|64), (?:8|16), 1\)"))),
    LayoutClass("norm_aten_other", "ATen's other NCHW batch norm kernels",
                r"batch_norm_(?:collect_statistics|backward|backward_reduce|backward_elemt"
                r"|transform_input)_kernel", not_pattern="channels_last"),
    LayoutClass("norm_cudnn", "cuDNN's NCHW batch norm kernels (bn_*_1C11)",
                r"bn_(?:fw|bw)\w*_1C11"),
    LayoutClass("conv_nchw", "convolutions cuDNN runs in NCHW (nchw, legacy engines by name)",
                r"nchw|implicit_convolve_sgemm|explicit_convolve_sgemm|fft|winograd"
                r"|(?:wgrad|dgrad)_alg\d_engine(?!_NHWC)|dgrad_engine", families=CONV,
                spills=TRANSFORMS),
    LayoutClass("conv_nhwc", "other convolutions (cuDNN's NHWC and tensor-core kernels)",
                families=CONV),
    # tensor-core ones only: an FP32 model's Linear layers run CUTLASS SIMT GEMMs too
    # (ConvNeXt's MLP), which no layout changes
    LayoutClass("conv_gemm", "tensor-core GEMMs cuDNN runs 1×1 convolutions with on NCHW data "
                "(CUTLASS, xmma)",
                r"cutlass::Kernel2<cutlass_\w*(?:tensorop|wmma)|sm90_xmma_gemm_|ReduceSplitK",
                families=("GEMM",)),
    LayoutClass("pool", "NCHW pooling kernels", families=("pooling",), not_pattern="nhwc"),
    LayoutClass("elementwise", "element-wise kernels", families=("element-wise",)),
)  # fmt: skip
TABLE = ClassTable(CLASSES)
KEYS = TABLE.keys
# the classes that show the step has convolutions: without one, channels_last changes nothing
# (a transformer's CUTLASS GEMMs are no convolution's)
CONVOLUTIONS = ("transform", "depthwise_16", "depthwise", "conv_nchw", "conv_nhwc")
# kernels only a channels_last step runs: ATen's channels_last batch norm, NHWC pooling and
# cuDNN's NHWC batch norm. The model is of an NCHW step; on one already in channels_last it
# would take the transforms cuDNN keeps around its NCHW-only FP32 kernels for removable.
ALREADY = re.compile(r"channels_last|nhwc_semiPersist|max_pool_\w*nhwc")
# ATen's batch norm statistics and backward kernels: their class needs the launch's block
STATS = re.compile(r"batch_norm_(?:collect_statistics|backward)_kernel")


# fitted by :func:`fit` on FITTED_ON (bench/fit_advice.py layout prints them); a class missing
# here had no time in any fitting pair and is taken as unchanged
CHANGES: dict[str, Change] = {
    "transform": Change(0.019),
    "depthwise_16": Change(0.167),
    "depthwise": Change(0.556),
    "norm_aten_large": Change(0.194, 14.108e-6),
    "norm_aten_mid": Change(0.0, 41.996e-6),
    "norm_aten_small": Change(0.101, 15.299e-6),
    "norm_aten_other": Change(0.485, 3.898e-6),
    "norm_cudnn": Change(0.685),
    "conv_nchw": Change(1.165),
    "conv_nhwc": Change(0.993),
    "conv_gemm": Change(0.836),
    "pool": Change(0.77),
    "elementwise": Change(1.036),
}
FITTED_ON = ("ResNet-18", "EfficientNet-B0", "VGG11", "SimpleCNN", "DenseNet-121", "ViT-B/16")
# the held-out pairs' models (docs/performance.md): no constant was fitted on them
HELD_OUT = ("ResNet-50", "MobileNetV2", "ConvNeXt-Tiny", "VGG13", "VGG19", "U-Net")
# the fitting pairs' settings, said in the item's assumptions
FITTED_WITH = "bf16 and fp32, batch 8 (SimpleCNN 128), on an H200 with cuDNN 9.19"


def title(key: str) -> str:
    return TABLE.title(key)


def layout_class(group: str, kernel: str, block: str = "") -> str | None:
    """The class of one kernel launch of an NCHW step, or None: unchanged by channels_last."""
    return TABLE.classify(group, kernel, block)


def predict(kernels: Iterable[KernelTime], changes: Mapping[str, Change] = CHANGES) -> Prediction:
    """Each class's time in channels_last (a class without a fitted change: unchanged), and
    where the time is saved, group by group. No prediction (``why_not`` says why) for a step
    without convolutions, one already in channels_last, or one whose ATen batch norm launches
    have no block shape to class them by."""
    kernels = list(kernels)
    for group, kernel, block, _, _ in kernels:
        if ALREADY.search(kernel):
            return replace(
                NONE, why_not=f"the step already runs channels_last kernels ({kernel[:60]})"
            )
        if STATS.search(kernel) and layout_class(group, kernel, block) == "norm_aten_other":
            return replace(
                NONE,
                why_not="ATen's batch norm launches have no block shape in this "
                "export: their plane size, which decides their change, is unknown",
            )
    prediction = predict_classes(kernels, TABLE, changes)
    if not any(k in prediction.before for k in CONVOLUTIONS):
        return replace(NONE, why_not="no convolution in the step")
    return prediction


# -- fitting --------------------------------------------------------------------------------
# ATen's NCHW batch norm kernels and the channels_last kernels that replace them: the k-th
# launch of one is the k-th (of each) of the other, layer for layer, so a class told apart by
# the NCHW launch's block (a plane size) is fitted on the time its own layers took after
MATCHED: dict[str, tuple[str, ...]] = {
    "batch_norm_collect_statistics_kernel": ("batch_norm_collect_statistics_channels_last_kernel",),
    "batch_norm_transform_input_kernel": ("batch_norm_transform_input_channels_last_kernel",),
    "batch_norm_backward_kernel": ("batch_norm_backward_reduce_channels_last_kernel",
                                   "batch_norm_backward_elemt_channels_last_kernel"),
}  # fmt: skip
_NAMES = sorted({*MATCHED, *(n for names in MATCHED.values() for n in names)})
_NAME = re.compile(r"\b(" + "|".join(_NAMES) + r")\b")


def matched(pair: Pair) -> list[tuple[str, float, float]]:
    """(class, NCHW time, the channels_last time of the launches that replaced it) for every
    MATCHED launch. A kernel whose launch counts differ between the steps is left out."""

    def launches(kernels: Sequence[KernelTime], name: str) -> list[KernelTime]:
        return [x for x in kernels if (m := _NAME.search(x[1])) and m.group(1) == name]

    out = []
    for role, replacements in MATCHED.items():
        ours = launches(pair.before, role)
        theirs = [launches(pair.after, name) for name in replacements]
        if not ours or any(len(t) != len(ours) for t in theirs):
            continue
        for k, (group, kernel, block, _, t) in enumerate(ours):
            key = layout_class(group, kernel, block)
            if key is not None:
                out.append((key, t, sum(x[k][4] for x in theirs)))
    return out


def fit(pairs: Sequence[Pair]) -> dict[str, Change]:
    """The change of each class that has time in some pair. The MATCHED classes: scale and
    per-launch time by non-negative least squares over their launches, each against the
    launches that replaced it. The others: a scale each, by non-negative least squares of
    every pair's per-family equations (kernel_classes.fit_scales)."""
    import numpy as np  # the fit runs in bench/ and tests, never while a report opens

    launches = [m for pair in pairs for m in matched(pair)]
    fixed: dict[str, Change] = {}
    for key in KEYS:
        xs = [(t, after) for k, t, after in launches if k == key]
        if xs:
            scale, per_launch = nnls(np.array([[t, 1.0] for t, _ in xs]),
                                     np.array([after for _, after in xs]))  # fmt: skip
            fixed[key] = Change(round(float(scale), 3), round(float(per_launch), 9))
    return fit_scales(pairs, TABLE, fixed)
