"""TUI benchmark: first usable screen for the bundled sample, and key → repaint latency with
1,000,000 launches (headless Textual, Pilot), printed as a Markdown table.

"First screen" is from creating the app to the groups table holding rows (cold: the cache is
built; cached: it is reused). Each key is timed three ways: "repainted" from posting the key
event to the end of the first screen refresh after its handler ran (what the targets of issue
20 item 3 are about: cursor moves < 50 ms, pane switch, opening a group and a filter keystroke
< 100 ms at p95; rows still being fetched show "…"; a worker that finishes inside that wait is
counted in), "workers done" when the work it started in threads has finished too and the
screen shows the result, and "UI thread busy": the CPU time of the event loop's thread over
the whole key (``time.thread_time``): while it is busy no other key is handled, whatever the
workers do, and it moves less than wall time when other processes share the CPUs.

``--against SRC`` times another tree's ``src`` (e.g. the main branch's) side by side with this
one: each round runs the key script once per tree, each in its own process (``PYTHONPATH``),
alternating which goes first, on the same cache; the samples of all rounds are pooled.

Usage: python bench/tui.py [--csv FILE] [--against SRC] [--rounds N]
   FILE: e.g. the 1,000,000-launch CSV that ``bench/ingest.py 1000000 --narrow --keep DIR``
   leaves in DIR (set ROOFSCOPE_CACHE_DIR to the cache it built, or the first run builds one);
   default: the bundled sample's first screen and the synthetic 1,000,000-launch store.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # tests.synthetic builds the 1M-launch store

SAMPLE = REPO / "sample_reports" / "resnet18_fp32_h100.ncu-raw.csv"
FILTER_TYPED = "red"  # matches one group of the synthetic store and of the replicated sample
Samples = dict[str, dict[str, list[float]]]  # key name → measure → seconds


async def first_screen(path: Path = SAMPLE) -> float:
    from textual.widgets import DataTable

    from roofscope.tui.app import RoofscopeApp

    start = time.perf_counter()
    app = RoofscopeApp([str(path)])
    async with app.run_test(size=(160, 50)) as pilot:
        while not (app.query("#groups") and app.query_one("#groups", DataTable).row_count):
            await pilot.pause(0.005)
        return time.perf_counter() - start


async def settle(app: Any, pilot: Any) -> None:
    from textual.worker import WorkerCancelled

    for _ in range(3):
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:
            continue
    await pilot.pause(0)


async def key_latencies(csv_path: Path | None = None, n: int = 1_000_000) -> tuple[Samples, int]:
    """The key script: the same keys in the same order for every tree timed."""
    from textual import events

    import roofscope
    from roofscope.tui.app import RoofscopeApp
    from roofscope.tui.panes import kernels as kernels_module
    from roofscope.tui.panes.kernels import KernelsPane
    from tests.synthetic import synthetic_session

    session = roofscope.load(csv_path) if csv_path else synthetic_session(n)
    groups = session.reports[0].rows("group")
    biggest = max(groups, key=lambda r: r["launches"])
    launches = sum(r["launches"] for r in groups)
    app = RoofscopeApp([], session=session)
    out: Samples = {}
    async with app.run_test(size=(160, 50)) as pilot:
        while not app.query("#groups"):
            await pilot.pause(0.01)
        await settle(app, pilot)
        kernels = app.query_one(KernelsPane)

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
                seen = time.perf_counter() - t
                await settle(app, pilot)  # the workers it started are done too
                row = out.setdefault(name, {"repainted": [], "done": [], "busy": []})
                row["repainted"].append(seen)
                row["done"].append(time.perf_counter() - t)
                # what the event loop's own thread spent: while it is busy, no key is handled
                row["busy"].append(time.thread_time() - cpu)

        await timed("x: unbound key (the measurement's own cost)", "x", repeat=20)
        await timed("down (groups)", "down", repeat=20)
        await timed("2: roofline, first time (loads its points)", "2")
        await timed("1: kernels", "1")
        for _ in range(8):
            await timed("2: roofline", "2")
            await timed("1: kernels", "1")
        kernels.jump_to(biggest["name"])
        await settle(app, pilot)
        for i in range(3):
            await timed(f"enter: open {biggest['launches']:,} launches", "enter")
            if i == 0:
                await timed("down (launches)", "down", repeat=20)
                await timed("pagedown (launches)", "pagedown", repeat=10)
            await timed("escape: launches → groups", "escape")
        for _ in range(3):
            await timed("/: open the filter box", "slash")
            for ch in FILTER_TYPED:
                await timed("filter keystroke", ch)
            await timed("enter: apply the filter", "enter")
            await timed("escape: clear the filter", "escape")
        if hasattr(kernels_module, "FILTER_DEBOUNCE_S"):  # a tree that filters as you type
            for _ in range(3):
                await repainted("slash")
                await settle(app, pilot)
                t = time.perf_counter()
                for ch in FILTER_TYPED:
                    await repainted(ch)
                while len(kernels.rows) == len(groups) and time.perf_counter() - t < 10:
                    await pilot.pause(0.005)  # the debounce, then the query in a worker
                await settle(app, pilot)
                row = out.setdefault(
                    f"typed /{FILTER_TYPED}/ → filtered groups on screen (debounced)",
                    {"repainted": [], "done": [], "busy": []},
                )
                row["done"].append(time.perf_counter() - t)
                await repainted("enter")
                await repainted("escape")
                await settle(app, pilot)
    return out, launches


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def cell(values: list[float]) -> str:
    if not values:
        return "—"
    if len(values) == 1:
        return f"{1000 * values[0]:,.0f}"
    return f"{1000 * statistics.median(values):,.0f} / {1000 * p95(values):,.0f}"


def run_child(src: Path, csv_path: Path | None) -> tuple[Samples, int]:
    """The key script in its own process, with ``src`` first on the path."""
    env = dict(os.environ, PYTHONPATH=str(src))
    cmd = [sys.executable, __file__, "--child"] + (["--csv", str(csv_path)] if csv_path else [])
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the key script failed under {src}:\n{done.stderr[-3000:]}")
    doc = json.loads(done.stdout.strip().splitlines()[-1])
    return doc["samples"], doc["launches"]


def compare(base: Path, csv_path: Path | None, rounds: int) -> None:
    """Rounds of (base, this tree) in alternating order; samples pooled per tree."""
    trees = {"before": base, "after": REPO / "src"}
    pooled: dict[str, Samples] = {"before": {}, "after": {}}
    launches = 0
    for r in range(rounds):
        order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
        for label in order:
            t = time.perf_counter()
            samples, launches = run_child(trees[label], csv_path)
            print(f"round {r + 1}/{rounds}: {label} in {time.perf_counter() - t:.0f} s", flush=True)
            for name, measures in samples.items():
                row = pooled[label].setdefault(name, {"repainted": [], "done": [], "busy": []})
                for measure, values in measures.items():
                    row[measure] += values
    print(
        f"\nbefore: {trees['before']} · after: {trees['after']} · {rounds} rounds, each tree "
        f"in its own process, alternating · {launches:,} launches"
        f" ({csv_path.name if csv_path else 'synthetic store'})\n"
    )
    print(
        "| key | n | repainted p50 / p95 ms, before → after | UI thread busy, before → after "
        "| workers done, before → after |\n|---|---:|---:|---:|---:|"
    )
    names = list(pooled["after"]) + [n for n in pooled["before"] if n not in pooled["after"]]
    for name in names:
        b, a = pooled["before"].get(name, {}), pooled["after"].get(name, {})
        n = len(a.get("done", b.get("done", [])))
        print(
            f"| {name} | {n} | {cell(b.get('repainted', []))} → {cell(a.get('repainted', []))} "
            f"| {cell(b.get('busy', []))} → {cell(a.get('busy', []))} "
            f"| {cell(b.get('done', []))} → {cell(a.get('done', []))} |"
        )


def main() -> None:
    args = sys.argv[1:]
    csv_path = Path(args[args.index("--csv") + 1]) if "--csv" in args else None
    if "--child" in args:
        samples, launches = asyncio.run(key_latencies(csv_path))
        print(json.dumps({"samples": samples, "launches": launches}))
        return
    os.environ.setdefault("ROOFSCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="rs-bench-"))
    print(
        f"machine: {platform.node()} · {os.cpu_count()} cores · Python "
        f"{platform.python_version()} · {platform.platform()} · load "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}\n"
    )
    if "--against" in args:
        if csv_path is not None:  # build the cache once, outside the timed processes
            import roofscope

            roofscope.load(csv_path).close()
        rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 3
        compare(Path(args[args.index("--against") + 1]).resolve(), csv_path, rounds)
        return
    subject = csv_path or SAMPLE
    cold = asyncio.run(first_screen(subject))
    cached = [asyncio.run(first_screen(subject)) for _ in range(3)]
    print(f"| {subject.name} | seconds |\n|---|---:|")
    print(f"| first screen, cold (builds the cache) | {cold:.2f} |")
    print(f"| first screen, cached (median of 3) | {statistics.median(cached):.2f} |\n")
    samples, launches = asyncio.run(key_latencies(csv_path))
    print(
        f"| key, {launches:,} launches ({'export' if csv_path else 'synthetic store'}) | n | "
        "repainted p50 / p95 ms | workers done p50 / p95 ms | UI thread busy p50 / p95 ms |\n"
        "|---|---:|---:|---:|---:|"
    )
    for name, row in samples.items():
        print(
            f"| {name} | {len(row['done'])} | {cell(row['repainted'])} | {cell(row['done'])} "
            f"| {cell(row['busy'])} |"
        )


if __name__ == "__main__":
    main()
