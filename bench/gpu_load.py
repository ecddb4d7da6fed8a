"""A known GPU load for checking the monitor: idle, bf16 matmuls (tensor cores), fp32 matmuls
with TF32 off (no tensor cores), optionally device-to-device copies (DRAM-bound), idle. Prints
the phase boundaries as epoch seconds and the rate each phase achieved (FLOP/s of the matmuls,
B/s of the copies counting bytes read and written).

    python3 bench/gpu_load.py --idle 10 --bf16 25 --fp32 15 [--copy 10]
"""

from __future__ import annotations

import argparse
import json
import time

import torch


def busy(dtype: torch.dtype, seconds: float, n: int = 8192) -> float:
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    end = time.time() + seconds
    count = 0
    while time.time() < end:
        for _ in range(10):
            torch.mm(a, b)
        torch.cuda.synchronize()
        count += 10
    return 2.0 * n**3 * count / seconds


def copies(seconds: float, n_bytes: int = 2**31) -> float:
    """DRAM-bound: copy a 2 GiB buffer (40× the L2) again and again; B/s read + written."""
    a = torch.empty(n_bytes // 4, device="cuda", dtype=torch.float32).fill_(1.0)
    b = torch.empty_like(a)
    end = time.time() + seconds
    count = 0
    while time.time() < end:
        for _ in range(10):
            b.copy_(a)
        torch.cuda.synchronize()
        count += 10
    return 2.0 * n_bytes * count / seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--bf16", type=float, default=25.0)
    parser.add_argument("--fp32", type=float, default=15.0)
    parser.add_argument("--copy", type=float, default=0.0)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.zeros(1, device="cuda")
    phases = {"start": time.time()}
    time.sleep(args.idle)
    phases["bf16_start"] = time.time()
    phases["bf16_flop_per_s"] = busy(torch.bfloat16, args.bf16)
    phases["fp32_start"] = time.time()
    phases["fp32_flop_per_s"] = busy(torch.float32, args.fp32)
    if args.copy > 0:
        phases["copy_start"] = time.time()
        phases["copy_bytes_per_s"] = copies(args.copy)
    phases["idle_start"] = time.time()
    time.sleep(args.idle)
    phases["end"] = time.time()
    print(json.dumps(phases), flush=True)


if __name__ == "__main__":
    main()
