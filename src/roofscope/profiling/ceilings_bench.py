"""``roofscope ceilings``: measure this GPU's roofs with torch, like ERT did for the studies.

GEMM throughput per data type the GPU supports (2·N³ FLOPs per multiply), device-to-device copy
bandwidth (read + write bytes) for DRAM, and the same copy on a buffer that fits in L2 for an
L2-resident bandwidth. Each is the best of several timed repeats (CUDA events) after a warm-up,
at whatever clocks the GPU runs (boost, power-capped) — not ncu's locked base clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from roofscope.errors import RoofscopeError

# ceiling name, torch dtype, what the GEMM runs on
_GEMMS = (
    ("tensor_fp16", torch.float16, "fp16 GEMM (tensor cores)"),
    ("tensor_bf16", torch.bfloat16, "bf16 GEMM (tensor cores)"),
    ("tensor_tf32", "tf32", "fp32 GEMM with TF32 allowed (tensor cores)"),
    ("fp32", torch.float32, "fp32 GEMM, TF32 off (FMA pipe)"),
    ("fp64", torch.float64, "fp64 GEMM"),
)
_FP64_TENSOR_CC = {(8, 0), (9, 0), (10, 0)}  # A100, H100, B200: DGEMM runs on DMMA tensor cores


@dataclass
class Measurement:
    name: str
    value: float
    method: str


def _best_seconds(fn: Callable[[], object], repeats: int, inner: int) -> float:
    """Best time of one call over ``repeats`` CUDA-event-timed batches of ``inner`` calls."""
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3 / inner)
    return best


def _gemm(name: str, dtype: Any, method: str, n: int, cc: tuple[int, int], repeats: int):
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    real = torch.float32 if dtype == "tf32" else dtype
    if real == torch.float64:
        n = min(n, 4096)
        if cc in _FP64_TENSOR_CC:
            name, method = "tensor_fp64", "fp64 GEMM (DMMA tensor cores)"
    a = torch.randn(n, n, device="cuda", dtype=real)
    b = torch.randn(n, n, device="cuda", dtype=real)
    seconds = _best_seconds(lambda: torch.mm(a, b), repeats, 5)
    torch.backends.cuda.matmul.allow_tf32 = False
    return Measurement(name, 2 * n**3 / seconds, f"{method}, N={n}, 2·N³ FLOPs")


def _fp8_gemm(n: int, repeats: int) -> Measurement | None:
    if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
        return None
    a = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn).t()
    one = torch.ones((), device="cuda")
    try:
        seconds = _best_seconds(
            lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
            repeats,
            5,
        )
    except RuntimeError:
        return None
    return Measurement("tensor_fp8", 2 * n**3 / seconds, f"fp8 e4m3 GEMM (_scaled_mm), N={n}")


def _int8_gemm(n: int, repeats: int) -> Measurement | None:
    if not hasattr(torch, "_int_mm"):
        return None
    a = torch.randint(-8, 8, (n, n), device="cuda", dtype=torch.int8)
    b = torch.randint(-8, 8, (n, n), device="cuda", dtype=torch.int8)
    try:
        seconds = _best_seconds(lambda: torch._int_mm(a, b), repeats, 5)
    except RuntimeError:
        return None
    return Measurement("tensor_int8", 2 * n**3 / seconds, f"int8 GEMM (_int_mm), N={n}, OP/s")


def _copy(name: str, nbytes: int, method: str, repeats: int, inner: int) -> Measurement:
    src = torch.empty(nbytes // 4, device="cuda", dtype=torch.float32).fill_(1.0)
    dst = torch.empty_like(src)
    seconds = _best_seconds(lambda: dst.copy_(src), repeats, inner)
    size = src.numel() * 4
    return Measurement(name, 2 * size / seconds, f"{method}, {size / 1e6:.0f} MB read + written")


def measure(gemm_n: int = 8192, copy_bytes: int = 2 << 30, repeats: int = 10) -> dict[str, Any]:
    """Every roof this GPU can show; needs a CUDA GPU (RoofscopeError otherwise)."""
    if not torch.cuda.is_available():
        raise RoofscopeError(
            "torch sees no CUDA GPU",
            hint="run roofscope ceilings on a GPU node; roofscope doctor checks the setup",
        )
    props = torch.cuda.get_device_properties(0)
    cc = (props.major, props.minor)
    out: list[Measurement] = []
    for name, dtype, method in _GEMMS:
        if dtype == torch.bfloat16 and cc < (8, 0):
            continue
        if dtype == "tf32" and cc < (8, 0):
            continue
        out.append(_gemm(name, dtype, method, gemm_n, cc, repeats))
    if cc >= (8, 9):
        out.append(_fp8_gemm(gemm_n, repeats))
    if cc >= (7, 5):
        out.append(_int8_gemm(gemm_n, repeats))
    out.append(_copy("dram", copy_bytes, "device-to-device copy", repeats, 5))
    l2 = int(getattr(props, "L2_cache_size", 0) or 0)
    if l2:
        # source + destination together take 60% of L2, so both stay resident between copies
        out.append(_copy("l2", int(0.3 * l2), "L2-resident device copy", repeats, 200))
    return {
        "device": props.name,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "ceilings": {m.name: {"value": m.value, "method": m.method} for m in out if m},
    }
