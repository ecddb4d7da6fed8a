"""Roofline redraw benchmark: ``charts.roofline.render`` of the ResNet-18 bf16 sample's groups
(one level and all three levels, with the roofs the pane shows by default) at 80×20, 120×36 and
200×55, against plotext drawing the same lines and markers with no labels, measured side by side
in one run. The difference is roofscope's own work per redraw: geometry, label placement (a cell
model of the plot area) and the check that each label came out whole. A redraw runs on the UI
thread at every key that changes the chart. Prints a Markdown table.

Usage: python bench/roofline_render.py
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BF16 = REPO / "sample_reports" / "resnet18_bf16_h100.ncu-raw.csv"
SIZES = ((80, 20), (120, 36), (200, 55))


def timed(fn, n: int = 15) -> tuple[float, float]:
    fn()  # warm: plotext imported, caches filled
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times) * 1e3, statistics.median(times) * 1e3


def main() -> None:
    os.environ["ROOFSCOPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="rs-bench-")
    import roofscope
    from roofscope.charts import plotext_backend, roofline
    from roofscope.quantities import AI, FLOP_PER_S, FLOPS, LEVELS_OUTERMOST_FIRST, TIME_PCT

    session = roofscope.load(BF16)
    report = session.reports[0]
    rows = report.rows("group")
    used = {p for p, v in report.totals()[FLOPS].items() if v}
    ceilings = [c for c in report.ceilings if c.name in (*used, "fp32", "dram", "l2", "l1")]

    def chart(hierarchical: bool):
        levels = LEVELS_OUTERMOST_FIRST if hierarchical else ("dram",)
        points = [
            roofline.Point(
                r["name"],
                r[AI][lv] or 0,
                r[FLOP_PER_S] or 0,
                r[TIME_PCT] / 100,
                i == 2,
                tag=str(i + 1) if i < 5 else "",
                level=lv,
            )
            for i, r in enumerate(rows)
            for lv in levels
        ]
        roofs = [
            roofline.Roof(c.name, c.kind, c.value, c.source)
            for c in ceilings
            if hierarchical or c.kind != "memory" or c.name == "dram"
        ]
        return points, roofs

    out = [
        "| chart | size | render (ms, best / median) | plotext alone, no labels | ratio |",
        "|---|---|---:|---:|---:|",
    ]
    captured: dict[str, object] = {}
    real = plotext_backend.decade_chart

    def capture(*args, **kwargs):
        captured["args"], captured["kwargs"] = args, kwargs
        return real(*args, **kwargs)

    for hierarchical in (False, True):
        points, roofs = chart(hierarchical)
        for width, height in SIZES:
            ours = partial(roofline.render, points, roofs, width, height, hierarchical=hierarchical)
            roofline.decade_chart = capture
            ours()
            roofline.decade_chart = real
            kwargs = {**captured["kwargs"], "labels": []}  # type: ignore[dict-item]
            baseline = partial(real, *captured["args"], **kwargs)  # type: ignore[misc]
            best, median = timed(ours)
            base_best, base_median = timed(baseline)
            name = "all levels" if hierarchical else "one level (DRAM)"
            out.append(
                f"| {name}, {len(points)} points | {width}×{height} | {best:.1f} / {median:.1f} "
                f"| {base_best:.1f} / {base_median:.1f} | {median / base_median:.2f}× |"
            )
    print(f"{platform.node()} · {os.cpu_count()} CPUs · Python {sys.version.split()[0]}")
    print("\n".join(out))
    session.close()


if __name__ == "__main__":
    main()
