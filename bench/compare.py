"""Compare benchmark: ``Session.diff`` at group, kernel and launch level, and the scaling table,
on the H100 sample reports (ResNet-18 fp32 vs bf16 and the bf16 batch series), plus the
``report`` of the same pair as the baseline measured in the same run. Prints a Markdown table.

Usage: python bench/compare.py
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
S = REPO / "sample_reports"
FP32 = S / "resnet18_fp32_h100.ncu-raw.csv"
BF16 = S / "resnet18_bf16_h100.ncu-raw.csv"
SERIES = [
    BF16,
    S / "resnet18_bf16_b16_h100.ncu-raw.csv.gz",
    S / "resnet18_bf16_b32_h100.ncu-raw.csv.gz",
]


def best_of(fn, n: int = 5) -> tuple[float, float]:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)


def main() -> None:
    os.environ["ROOFSCOPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="rs-bench-")
    import roofscope

    roofscope.load(FP32, BF16).close()  # build the cache once
    session = roofscope.load(FP32, BF16)
    rows = [("report_dict of both (baseline)", *best_of(lambda: session.report_dict()))]
    for by in ("group", "kernel", "launch"):
        n = len(session.diff(0, 1, by).rows)
        rows.append((f"diff by {by} ({n} rows)", *best_of(lambda by=by: session.diff(0, 1, by))))
    session.close()
    series = roofscope.load(*SERIES)
    rows.append(("scaling of 3 reports", *best_of(series.scaling)))
    series.close()
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {sys.version.split()[0]}"
    )
    print("| what | best | median |\n|---|---:|---:|")
    for name, best, med in rows:
        print(f"| {name} | {best * 1000:.0f} ms | {med * 1000:.0f} ms |")


if __name__ == "__main__":
    main()
