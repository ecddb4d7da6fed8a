"""TUI benchmark: first usable screen for the bundled sample, and key → repaint latency with
1,000,000 launches (headless Textual, Pilot), printed as a Markdown table.

"First screen" is from creating the app to the groups table holding rows (cold: the cache is
built; cached: it is reused). Each key is timed twice: "repainted" from posting the key event
to the end of the first screen refresh after its handler ran (what the 50 ms target of
DESIGN.md §7 is about; rows still being fetched show "…"; a worker that finishes inside that
wait is counted in), and "workers done" when the work it started in threads has finished too and
the screen shows the result. "UI thread busy" is the CPU time of the event loop's thread over the
whole key (``time.thread_time``): while it is busy no other key is handled, whatever the
workers do.

Usage: python bench/tui.py [--csv FILE]   (FILE: e.g. the 1,000,000-launch CSV that
``bench/ingest.py 1000000 --narrow --keep DIR`` leaves in DIR; default: the bundled sample
and the synthetic 1,000,000-launch store)
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


async def first_screen(path: Path = SAMPLE) -> float:
    from textual.widgets import DataTable

    from roofscope.tui.app import RoofscopeApp

    start = time.perf_counter()
    app = RoofscopeApp([str(path)])
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


async def key_latencies(
    n: int, csv_path: Path | None = None
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, list[float]], int]:
    from textual import events

    import roofscope
    from roofscope.tui.app import RoofscopeApp
    from tests.synthetic import synthetic_session

    session = roofscope.load(csv_path) if csv_path else synthetic_session(n)
    groups = session.reports[0].rows("group")
    biggest = max(groups, key=lambda r: r["launches"])
    launches = sum(r["launches"] for r in groups)
    app = RoofscopeApp([], session=session)
    out: dict[str, list[float]] = {}
    shown: dict[str, list[float]] = {}
    busy: dict[str, list[float]] = {}
    async with app.run_test(size=(160, 50)) as pilot:
        while not app.query("#groups"):
            await pilot.pause(0.01)
        await settle(app, pilot)

        async def repainted(key: str) -> None:
            """Post one key, wait until every widget of the screen has handled what was queued
            (the key, then what its handler posted), then for the next refresh. Pilot's press
            would also wait for the process to go idle, i.e. for the worker threads."""
            app.post_message(events.Key(key, key if len(key) == 1 else None))
            for _ in range(3):
                await pilot._wait_for_screen()
            done = asyncio.Event()
            app.screen.call_after_refresh(done.set)
            await done.wait()

        async def timed(name: str, *keys: str, repeat: int = 1) -> None:
            for _ in range(repeat):
                t, cpu = time.perf_counter(), time.thread_time()
                for key in keys:
                    await repainted(key)
                shown.setdefault(name, []).append(time.perf_counter() - t)
                await settle(app, pilot)  # the workers it started are done too
                out.setdefault(name, []).append(time.perf_counter() - t)
                # what the event loop's own thread spent: while it is busy, no key is handled
                busy.setdefault(name, []).append(time.thread_time() - cpu)

        await timed("x: unbound key", "x", repeat=30)
        await timed("down (groups)", "down", repeat=30)
        await timed("2 roofline / 1 kernels", "2", repeat=1)
        await timed("2 roofline / 1 kernels", "1", repeat=1)
        app.jump_to_group(biggest["name"])
        await settle(app, pilot)
        await timed(f"enter: open {biggest['launches']:,} launches", "enter")
        await timed("down (launches)", "down", repeat=50)
        await timed("pagedown (launches)", "pagedown", repeat=30)
        await timed("end (launches)", "end", repeat=1)
        await timed("s: re-sort launches", "s", repeat=5)
        await timed("r: reverse launches", "r", repeat=5)
        await timed("escape + / filter", "escape", "slash", "r", "e", "d", "enter", repeat=1)
    return out, shown, busy, launches


def main() -> None:
    os.environ.setdefault("ROOFSCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="rs-bench-"))
    print(
        f"machine: {platform.node()} · {os.cpu_count()} cores · Python "
        f"{platform.python_version()} · {platform.platform()}\n"
    )
    csv_path = Path(sys.argv[sys.argv.index("--csv") + 1]) if "--csv" in sys.argv else None
    subject = csv_path or SAMPLE
    cold = asyncio.run(first_screen(subject))
    cached = [asyncio.run(first_screen(subject)) for _ in range(3)]
    print(f"| {subject.name} | seconds |\n|---|---:|")
    print(f"| first screen, cold (builds the cache) | {cold:.2f} |")
    print(f"| first screen, cached (median of 3) | {statistics.median(cached):.2f} |\n")
    lat, shown, busy, launches = asyncio.run(key_latencies(1_000_000, csv_path))

    def p95(values: list[float]) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]

    print(
        f"| key, {launches:,} launches ({'export' if csv_path else 'synthetic store'}) | n | "
        "repainted p50 / p95 ms | workers done p50 / p95 ms | UI thread busy p50 / p95 ms |\n"
        "|---|---:|---:|---:|---:|"
    )
    for name, values in lat.items():
        seen, cpu = shown[name], busy[name]
        print(
            f"| {name} | {len(values)} | {1000 * statistics.median(seen):.0f} / "
            f"{1000 * p95(seen):.0f} | {1000 * statistics.median(values):.0f} / "
            f"{1000 * p95(values):.0f} | {1000 * statistics.median(cpu):.0f} / "
            f"{1000 * p95(cpu):.0f} |"
        )


if __name__ == "__main__":
    main()
