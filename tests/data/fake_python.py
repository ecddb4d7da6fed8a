#!/usr/bin/env python3
"""A stand-in for the Python that counts kernels: there is no GPU in CI, so ``--count-kernels``
answers what torch.profiler counted for a ResNet-18 step on the H100 (361); anything else runs
the real interpreter."""

import os
import sys

if "--count-kernels" in sys.argv:
    print("==ROOFSCOPE== step_time_s 0.0123", flush=True)
    print("==ROOFSCOPE== kernels 361", flush=True)
    sys.exit(0)
os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
