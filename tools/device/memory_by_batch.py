"""On the GPU machine: each bundled model's training step at several batch sizes, without ncu,
and the peak of PyTorch's allocator (``torch.cuda.max_memory_allocated``) over its warm-up
steps, the same reading ``roofscope profile`` prints, beside the analytic memory model's
estimate (issue 33, item 5; docs/performance.md "Memory by batch size").

    python3 tools/device/memory_by_batch.py OUT.json [--budget S]

One process for every run: each run's model and tensors are freed, the allocator's cache
emptied and its peak reset before the next. Runs that do not fit are recorded as such (the
out-of-memory error is caught), so the largest batch that fits is measured too, not only
predicted. Needs the .whl folder carried (tools/device/setup.sh) and this checkout's src on the
path.
"""

from __future__ import annotations

import gc
import json
import sys
import time

import torch

from roofscope.profiling import analytic
from roofscope.profiling.step import Phases, Stepper, set_precision
from roofscope.profiling.zoo.registry import workload

MODELS = ("resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0", "densenet121",
          "convnext_tiny", "vgg11", "vit_b_16", "unet", "bert")  # fmt: skip
BATCHES = (8, 32, 128)
PRECISIONS = ("bf16", "fp32")
WARMUP = 2


def one(name: str, precision: str, batch: int, device: torch.device) -> dict:
    set_precision(precision)
    torch.manual_seed(0)
    row: dict = {"model": name, "precision": precision, "batch": batch}
    try:
        work = workload(name, batch, device)
        stepper = Stepper(work, precision, "train", "sgd", device)
        torch.cuda.reset_peak_memory_stats(device)
        for _ in range(WARMUP):
            stepper.step(Phases(device, announce=False))
        torch.cuda.synchronize(device)
        row["peak_bytes"] = torch.cuda.max_memory_allocated(device)
        row["reserved_bytes"] = torch.cuda.max_memory_reserved(device)
    except torch.OutOfMemoryError:
        row["peak_bytes"] = None
        row["error"] = "out of memory"
    finally:
        work = stepper = None  # freed before the next run
        gc.collect()
        torch.cuda.empty_cache()
    model = analytic.memory_model(name, precision, "sgd")
    row["estimate_bytes"] = analytic.estimate_at(model, batch)
    row["model"] = name
    row["memory_model"] = model
    return row


def main() -> int:
    out = sys.argv[1]
    budget = float(sys.argv[sys.argv.index("--budget") + 1]) if "--budget" in sys.argv else 300
    device = torch.device("cuda")
    begin = time.perf_counter()
    rows = []
    for precision in PRECISIONS:
        for name in MODELS:
            for batch in BATCHES:
                if time.perf_counter() - begin > budget:
                    break
                start = time.perf_counter()
                row = one(name, precision, batch, device)
                row["seconds"] = round(time.perf_counter() - start, 2)
                rows.append(row)
                print(json.dumps({k: v for k, v in row.items() if k != "memory_model"}),
                      flush=True)  # fmt: skip
    result = {
        "device": torch.cuda.get_device_name(device),
        "total_memory_bytes": torch.cuda.get_device_properties(device).total_memory,
        "torch": torch.__version__,
        "cudnn": torch.backends.cudnn.version(),
        "runs": rows,
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
