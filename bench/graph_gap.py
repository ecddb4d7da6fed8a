"""The constants behind the nsys advice rules (analysis/advice/timeline.py), measured on a GPU
without nsys: the gap between consecutive tiny kernels launched eagerly and replayed from a CUDA
graph (PyTorch's profiler, CUPTI timestamps), and the host-to-device rate from pinned and from
pageable memory (CUDA events).

    python3 bench/graph_gap.py [--kernels 200] [--mib 64]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile


def kernel_gaps(run: Callable[[], None]) -> dict[str, float]:
    """Median, 10th and 90th percentile gap between consecutive kernels, and the median kernel,
    in µs, of one call of ``run`` as the profiler records it."""
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(trace))
        events = json.loads(trace.read_text())["traceEvents"]
    kernels = sorted((e["ts"], e["dur"]) for e in events if e.get("cat") == "kernel")
    gaps = sorted(b[0] - (a[0] + a[1]) for a, b in itertools.pairwise(kernels))
    return {
        "kernels": len(kernels),
        "kernel_med_us": statistics.median(d for _, d in kernels),
        "gap_med_us": statistics.median(gaps),
        "gap_p10_us": gaps[len(gaps) // 10],
        "gap_p90_us": gaps[9 * len(gaps) // 10],
    }


def h2d_rate(host: torch.Tensor, repeats: int = 10) -> float:
    """Bytes per second copying ``host`` to the GPU, after two warm-up copies."""
    device = torch.empty_like(host, device="cuda")
    for _ in range(2):
        device.copy_(host)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        device.copy_(host)
    end.record()
    torch.cuda.synchronize()
    return repeats * host.numel() * host.element_size() / (start.elapsed_time(end) / 1e3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=200, help="tiny kernels in the chain")
    parser.add_argument("--mib", type=int, default=64, help="size of each host-to-device copy")
    args = parser.parse_args()
    x = torch.zeros(1, device="cuda")

    def chain() -> None:
        for _ in range(args.kernels):
            x.add_(1)  # one ~1 µs kernel each

    for _ in range(3):
        chain()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        chain()  # warm-up on a side stream before capture, as torch.cuda.graphs asks
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        chain()
    graph.replay()
    torch.cuda.synchronize()
    out = {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "eager": kernel_gaps(chain),
        "graph": kernel_gaps(graph.replay),
    }
    n = args.mib * (1 << 20) // 4
    out["h2d_pinned_Bps"] = h2d_rate(torch.zeros(n).pin_memory())
    out["h2d_pageable_Bps"] = h2d_rate(torch.zeros(n))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
