"""One N×N×N matrix product between cudaProfilerStart/Stop: a known FLOP count (2·N³).

Usage: python3 gemm.py DTYPE [N]   (DTYPE: bf16 | fp16 | tf32 | fp32)
Profiled by tools/device/tensor_ops_check.sh to settle how ncu's sm__ops_path_tensor_* counters
relate to FLOPs (specs.md §9).
"""

import sys

import torch

dtype_name = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
dtype = {
    "bf16": torch.bfloat16,
    "fp16": torch.float16,
    "tf32": torch.float32,
    "fp32": torch.float32,
}[dtype_name]
torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"
torch.backends.cudnn.allow_tf32 = dtype_name == "tf32"
a = torch.randn(n, n, device="cuda", dtype=dtype)
b = torch.randn(n, n, device="cuda", dtype=dtype)
torch.matmul(a, b)  # warm-up: cuBLAS heuristics and workspace
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
c = torch.matmul(a, b)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
print(f"gemm {dtype_name} n={n} flop={2 * n**3}")
