"""N tiny element-wise kernels (after a warm-up), for a report with many launches:
``python3 tools/device/launches.py N``; ncu profiles them (``--launch-count N``)."""

import sys

import torch

n = int(sys.argv[1])
x = torch.rand(4096, device="cuda")
for _ in range(10):  # warm-up: module loads, allocator
    x = x + 1.0
torch.cuda.synchronize()
for i in range(n):
    x = x * 1.0001 if i % 2 else x + 0.5
torch.cuda.synchronize()
print("launched", n, float(x.sum()))
