"""What allowing TF32 changes, kernel by kernel: the model behind the ``tensor_cores`` item.

An FP32 step on a GPU with TF32 tensor cores (Ampere and later) runs its GEMMs and
convolutions on the FP32 pipe when PyTorch is told to keep FP32 (``allow_tf32`` off, cuDNN's
too). Their names say so: cuBLAS's ``…_f32f32_f32f32_…ffma…`` and CUTLASS's ``simt_sgemm``,
cuDNN's ``…_f32f32_f32f32_…`` implicit GEMMs, its legacy engines (``implicit_convolve_sgemm``,
``dgrad_engine``, ``wgrad_alg0_engine``, Winograd, FFT). With TF32 allowed, cuBLAS and cuDNN
pick tensor-core kernels for most of them; cuDNN adds the NCHW↔NHWC transforms its NHWC
kernels need and runs some 1×1 convolutions as GEMMs. Depthwise convolutions, FP32 attention
(memory-efficient fmha), normalisation and element-wise kernels do not change.

Each FP32 matrix kernel is put in a class (:data:`CLASSES`, by name and group family) and its
time with TF32 predicted as ``scale × its FP32 time + per_launch × its launches``
(:data:`CHANGES`): a long kernel gains up to what the tensor cores give, a short one keeps a
floor of a few microseconds (one scale alone left VGG's large convolutions 13-22% short and
EfficientNet's small ones over; docs/decisions.md). The changes are fitted on
whole steps (the transforms and GEMMs cuDNN adds land in other families) of the fitting pairs
only: each an ``--precision fp32`` and an ``--precision tf32`` run of one model by
``roofscope profile``. The held-out pairs' errors are in docs/performance.md ("TF32, predicted
from the kernels"); ``bench/fit_advice.py tensor_math`` refits and prints both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

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

CONV = ("conv fprop", "conv dgrad", "conv wgrad", "conv FFT")
# a kernel in 16 bits or on tensor cores already, or one that no precision setting moves
# (ATen's and cuDNN's depthwise kernels: c1_k1 is one channel a group)
_NOT_FP32_MATRIX = (
    r"tf32|bf16|f16|half|BFloat16|tensorop|tensor\d+x|wmma|hmma|s1688|h1688|i8816"
    r"|depthwise|_c1_k1_"
)

CLASSES: tuple[KernelClass, ...] = (
    # cuDNN's grouped direct weight gradient (ConvNeXt's 7×7 depthwise convolutions, with more
    # than one channel a group in its backward): with TF32, cuDNN moves part of it to an
    # implicit GEMM
    KernelClass("conv_grouped", "cuDNN's grouped direct FP32 weight gradients",
                r"grouped_direct", families=CONV, not_pattern=_NOT_FP32_MATRIX),
    KernelClass("conv_fp32", "FP32 convolutions (cuDNN's FP32 implicit GEMMs, legacy, "
                "Winograd and FFT engines, the FFT's complex GEMMs)", per_launch=True,
                families=CONV, not_pattern=_NOT_FP32_MATRIX),
    # the complex GEMMs of cuDNN's FFT convolutions (between its fft2d_r2c and c2r kernels),
    # which ncu's names put among the GEMMs: with TF32, cuDNN picks tensor-core convolutions
    # instead of the FFT ones
    KernelClass("conv_fp32", "", r"gemm_cf32cf32_", families=("GEMM",)),
    # the split-K reduction of a GEMM is its own kernel, grouped as GEMM: not a GEMM's math
    KernelClass("gemm_fp32", "FP32 GEMMs on the FP32 pipe (cuBLAS ffma, CUTLASS simt_sgemm)",
                r"ffma|simt_sgemm|\bsgemm|_f32f32_f32f32_", families=("GEMM",),
                not_pattern=_NOT_FP32_MATRIX + r"|splitKreduce", per_launch=True),
)  # fmt: skip
TABLE = ClassTable(CLASSES)
KEYS = TABLE.keys
# a library whose matrix kernels include TF32 or 16-bit ones has TF32 (or autocast) on
# already; what is left of its kernels on the FP32 pipe is what it chose to keep there
ALREADY = re.compile(r"tf32|s1688(?:gemm|dgrad|wgrad|fprop)|tensorop_s(?!\w*bf16)")
# 16-bit matrix kernels anywhere: autocast or half precision, where TF32 changes nothing
SIXTEEN = re.compile(r"bf16|f16|h1688|hmma|\bhalf\b|__half|BFloat16|c10::Half|__nv_bfloat16|hgemm")

# fitted by :func:`fit` on FITTED_ON (bench/fit_advice.py tensor_math prints them)
CHANGES: dict[str, Change] = {
    "conv_grouped": Change(0.8),
    "conv_fp32": Change(0.275, 7.202e-6),
    "gemm_fp32": Change(0.184, 3.242e-6),
}
FITTED_ON = ("ResNet-18", "VGG11", "EfficientNet-B0", "ConvNeXt-Tiny", "ViT-B/16", "SimpleCNN")
# the held-out pairs' models (docs/performance.md): no constant was fitted on them
HELD_OUT = (
    "ResNet-50",
    "MobileNetV2",
    "DenseNet-121",
    "U-Net",
    "BERT",
    "VGG13",
    "VGG19",
    "SimpleMLP",
)
FITTED_WITH = "batch 8 (SimpleCNN 128), on an H200 with cuDNN 9.19 and cuBLAS of CUDA 13"


def title(key: str) -> str:
    return TABLE.title(key)


# the classes each library's TF32 switch moves: cuDNN's (torch.backends.cudnn.allow_tf32, on
# by default in PyTorch) and cuBLAS's (torch.backends.cuda.matmul.allow_tf32, off by default)
CUDNN_KEYS = ("conv_grouped", "conv_fp32")
CUBLAS_KEYS = ("gemm_fp32",)


@dataclass(frozen=True)
class Switches:
    """Which library's TF32 switch the step's kernels show off (its FP32 kernels are there to
    move): a library whose kernels include TF32 or 16-bit ones has it on already."""

    cudnn: bool
    cublas: bool

    @classmethod
    def of(cls, kernels: Iterable[KernelTime]) -> Switches:
        conv = gemm = False
        for group, kernel, *_ in kernels:
            fam = family(group)
            if fam not in MATRIX:
                continue
            if SIXTEEN.search(kernel):  # autocast: neither switch matters
                return cls(cudnn=False, cublas=False)
            if ALREADY.search(kernel):
                conv = conv or fam in CONV
                gemm = gemm or fam == "GEMM"
        # a TF32 GEMM: cuBLAS's switch is on, and cuDNN's is taken as on too (PyTorch's
        # default; cuDNN keeps small convolutions in FP32 with it on, so FP32 convolutions
        # beside TF32 GEMMs do not show it off: SimpleCNN's tf32 run). TF32 convolutions only
        # (PyTorch's defaults): cuBLAS's FP32 GEMMs are what is left to move.
        return cls(cudnn=not (conv or gemm), cublas=not gemm)

    @property
    def keys(self) -> tuple[str, ...]:
        return (CUDNN_KEYS if self.cudnn else ()) + (CUBLAS_KEYS if self.cublas else ())


def predict(kernels: Iterable[KernelTime], changes: Mapping[str, Change] = CHANGES) -> Prediction:
    """Each class's time with TF32 allowed, and where the time is saved, group by group: the
    classes of the libraries whose switch is off (:class:`Switches`). No prediction
    (``why_not`` says why) when both have TF32 or 16-bit matrix kernels already."""
    kernels = list(kernels)
    switches = Switches.of(kernels)
    if not switches.keys:
        return replace(
            NONE,
            why_not="the step's matrix kernels are 16-bit, or cuBLAS's and cuDNN's both "
            "include TF32 ones already",
        )
    return predict_classes(kernels, TABLE, changes, only=switches.keys)


def fit(pairs: Sequence[Pair]) -> dict[str, Change]:
    """A scale for each class, by non-negative least squares of each pair's whole step."""
    return fit_scales(pairs, TABLE, bucket=whole_step)
