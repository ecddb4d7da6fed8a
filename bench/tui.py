"""TUI benchmark: first usable screen for the bundled sample, and key → repaint latency with
1,000,000 launches (headless Textual, Pilot), printed as a Markdown table.

"First screen" is from creating the app to the groups table holding rows (cold: the cache is
built; cached: it is reused). A key's latency is from sending it to the app being idle again
with its workers done and the screen refreshed, which is what a user waits for.

Usage: python bench/tui.py
"""

from __future__ import annotations

import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # tests.synthetic builds the 1M-launch store

SAMPLE = REPO / "sample_reports" / "resnet18_fp32_h100.ncu-raw.csv"


async def first_screen() -> float:
    from textual.widgets import DataTable

    from roofscope.tui.app import RoofscopeApp

    start = time.perf_counter()
    app = RoofscopeApp([str(SAMPLE)])
    async with app.run_test(size=(160, 50)) as pilot:
        while not (app.query("#groups") and app.query_one("#groups", DataTable).row_count):
            await pilot.pause(0.005)
        return time.perf_counter() - start


async def settle(app, pilot) -> None:
    from textual.worker import WorkerCancelled

    for _ in range(3):
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:
            continue
    await pilot.pause(0)


async def key_latencies(n: int) -> dict[str, list[float]]:
    from roofscope.tui.app import RoofscopeApp
    from tests.synthetic import synthetic_session

    session = synthetic_session(n)
    app = RoofscopeApp([], session=session)
    out: dict[str, list[float]] = {}
    async with app.run_test(size=(160, 50)) as pilot:
        while not app.query("#groups"):
            await pilot.pause(0.01)
        await settle(app, pilot)

        async def timed(name: str, *keys: str, repeat: int = 1) -> None:
            for _ in range(repeat):
                t = time.perf_counter()
                await pilot.press(*keys)
                await settle(app, pilot)
                out.setdefault(name, []).append(time.perf_counter() - t)

        await timed("x: unbound key (Pilot's own overhead)", "x", repeat=30)
        await timed("down (groups)", "down", repeat=30)
        await timed("2 roofline / 1 kernels", "2", repeat=1)
        await timed("2 roofline / 1 kernels", "1", repeat=1)
        app.jump_to_group("GEMM")
        await settle(app, pilot)
        await timed("enter: open 166,667 launches", "enter")
        await timed("down (launches)", "down", repeat=50)
        await timed("pagedown (launches)", "pagedown", repeat=30)
        await timed("end (launches)", "end", repeat=1)
        await timed("s: re-sort launches", "s", repeat=5)
        await timed("r: reverse launches", "r", repeat=5)
        await timed("escape + / filter", "escape", "slash", "r", "e", "d", "enter", repeat=1)
    return out


def main() -> None:
    os.environ.setdefault("ROOFSCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="rs-bench-"))
    print(
        f"machine: {platform.node()} · {os.cpu_count()} cores · Python "
        f"{platform.python_version()} · {platform.platform()}\n"
    )
    cold = asyncio.run(first_screen())
    cached = [asyncio.run(first_screen()) for _ in range(3)]
    print("| bundled sample (361 launches) | seconds |\n|---|---:|")
    print(f"| first screen, cold (builds the cache) | {cold:.2f} |")
    print(f"| first screen, cached (median of 3) | {statistics.median(cached):.2f} |\n")
    lat = asyncio.run(key_latencies(1_000_000))
    print("| key, 1,000,000 launches | n | p50 ms | p95 ms | max ms |\n|---|---:|---:|---:|---:|")
    for name, values in lat.items():
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        print(
            f"| {name} | {len(values)} | {1000 * statistics.median(values):.0f} | "
            f"{1000 * p95:.0f} | {1000 * max(values):.0f} |"
        )


if __name__ == "__main__":
    main()
