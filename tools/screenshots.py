"""Render the screenshots of README.md and docs/guide/ (docs/screenshots/*.svg), headless from
the bundled samples.

    python3 tools/screenshots.py [--out docs/screenshots] [--size 110x34] [--only roofline …]

Each pane is opened the way tests/test_tui_snapshots.py opens it (Textual's ``run_test`` at a
fixed size, workers settled, two captures that agree), checked for what must be on it (a blank
chart stops the script) and written with ``App.export_screenshot()``. The cache and runs folder
are temporary, so the start screen lists the bundled samples and nothing of yours.

No nsys export ships in sample_reports/, so the Timeline shot uses one built with the tests'
nsys builder from the ResNet-18 sample's kernel names and durations, in launch order, with
launch gaps added: the shape of a real step, not a measurement. The Runs shot lists run records
made here for the five reports ``roofscope profile`` made (sample_reports/*_h100.ncu-raw.csv of
the bundled models, one of them torch.compile'd and gzipped), without the runs' timings, which
were not kept.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_reports"
RESNET = SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"
RESNET_BF16 = SAMPLES / "resnet18_bf16_h100.ncu-raw.csv"
# ResNet-18 bf16 b8 with per-layer NVTX and its analytic.json: every ncu-report rule that fires
RESNET_LAYERS = SAMPLES / "resnet18_bf16_b8_layers_h100.ncu-raw.csv.gz"
BUNDLED = (  # reports `roofscope profile` made: (file, model, precision, batch, mode, compile)
    ("mlp_fp32_b128_h100.ncu-raw.csv", "mlp", "fp32", 128, "train", False),
    ("cnn_fp32_b128_h100.ncu-raw.csv", "cnn", "fp32", 128, "train", False),
    ("unet_bf16_b16_h100.ncu-raw.csv.gz", "unet", "bf16", 16, "train", False),
    ("bert_bf16_b8_compile_h100.ncu-raw.csv.gz", "bert", "bf16", 8, "train", True),
    ("bert_bf16_b8_infer_h100.ncu-raw.csv.gz", "bert", "bf16", 8, "infer", False),
)
# What must be on each screen: a shot without it is wrong, not merely different.
MUST_SHOW = {
    "start": ["choose a report", "resnet18_fp32_h100.ncu-raw.csv"],
    "kernels": ["conv fprop", "GEMM", "layout transform", "? Help"],
    "roofline": ["┤", "roofs (report): FLOP/s", "▶ ", "◉", "DRAM 3.34"],
    "levels": ["┤", "■ DRAM ▲ L2 ● L1", "■", "▲", "▶ "],
    "efficiency": ["potential speedup", "90%–100%"],
    "detail": ["time_s", "fp32", "metrics"],
    "timeline": ["GPU busy", "idle gaps", "█"],
    "compare": ["Δtime", "% of roof", "┤", "■"],
    "runs": ["Runs", "mlp", "bert", "done", "b8 compile"],
    "advice": ["channels_last", "model_flops", "est. gain", "do: "],
}


def _prepare_environment(scratch: Path) -> None:
    """Before roofscope is imported: a private cache and runs folder, a wide 'terminal' for
    plotext (it clamps charts to the size it believes it has), UTF-8 and colour."""
    os.environ["ROOFSCOPE_CACHE_DIR"] = str(scratch / "cache")
    os.environ["ROOFSCOPE_NCU"] = str(scratch / "no-ncu")  # the same line on every machine
    os.environ["COLUMNS"], os.environ["LINES"] = "300", "100"
    os.environ.setdefault("LANG", "C.UTF-8")
    os.environ.pop("NO_COLOR", None)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))  # tests.nsys_builder
    sys.path.insert(0, str(ROOT / "src"))


def _synthetic_nsys(path: Path) -> Path:
    """An nsys export of one ResNet-18 training step: the sample's launches in order, each
    as long as ncu measured it, 2–6 µs apart, a host-to-device copy first, NVTX ranges per
    phase and an SM-active series."""
    from roofscope.session import load
    from tests.nsys_builder import Export, Kernel

    session = load(str(RESNET))
    try:
        # in launch order
        launches = sorted(session.reports[0].rows("launch"), key=lambda r: r["name"])
    finally:
        session.close()
    rows = [(str(r["kernel"]), r["time_s"]) for r in launches]
    us = 1000
    t = 60 * us
    kernels, busy = [], []
    for i, (name, seconds) in enumerate(rows):
        length = max(int((seconds or 1e-6) * 1e9), 1000)
        t += (2 + i % 5) * us
        if i in (len(rows) // 3, 2 * len(rows) // 3):
            t += 120 * us  # the host between phases: the idle gaps the timeline shows
        kernels.append(Kernel(name, t, t + length, launched_at=t - 8 * us))
        busy.append((t, 60 + (i * 37) % 40))
        t += length
    third = kernels[len(kernels) // 3].start - 60 * us
    two_thirds = kernels[2 * len(kernels) // 3].start - 60 * us
    export = Export(
        kernels=kernels,
        ranges=[
            (0, t, "step"),
            (50 * us, third, "forward"),
            (third, two_thirds, "backward"),
            (two_thirds, t, "optimizer"),
        ],
        memcpy=[(0, 50 * us, 19_267_584, 1)],  # a batch of 8×3×224×224 fp32 images
        metrics={"SM Active": busy[::3]},
    )
    return export.write(path)


def _past_runs(root: Path) -> None:
    """Run records for the reports ``roofscope profile`` made; how long those runs took is
    not known here, so the records say nothing about it."""
    from roofscope.profiling import runs
    from roofscope.profiling.command import RunSpec
    from roofscope.session import load

    for i, (name, model, precision, batch, mode, compiled) in enumerate(BUNDLED):
        spec = RunSpec(model, batch=batch, precision=precision, mode=mode, compile=compiled)
        run = runs.new_run(spec, root)
        session = load(str(SAMPLES / name))
        try:
            run.kernels = sum(r["launches"] for r in session.reports[0].rows())
        finally:
            session.close()
        run.status, run.started = runs.DONE, time.time() - 3600 * (len(BUNDLED) - i)
        target = run.folder / name
        shutil.copyfile(SAMPLES / name, target)
        run.report = target.name
        run.save()


async def _stable(app, pilot) -> str:
    from tests.test_tui_snapshots import stable_screen

    return await stable_screen(app, pilot)


async def _settle(app, pilot, rounds: int = 4) -> None:
    from tests.test_tui import settle

    await settle(app, pilot, rounds)


async def _until(pilot, condition: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("screenshots: timed out waiting for the app")
        await pilot.pause(0.05)


async def _shoot(
    name: str,
    paths: list[str],
    keys: Callable[[object, object], Awaitable[None]],
    size: tuple[int, int],
    out: Path,
    **options: object,
) -> Path:
    from roofscope.tui.app import RoofscopeApp

    app = RoofscopeApp(paths, ascii_only=False, **options)
    async with app.run_test(size=size) as pilot:
        await keys(app, pilot)
        text = ""
        for _ in range(10):  # a resize may start one more load after the screen looked done
            await _settle(app, pilot)
            await pilot.pause(0.2)
            current = await _stable(app, pilot)
            if current == text:
                break
            text = current
        missing = [needle for needle in MUST_SHOW[name] if needle not in text]
        if missing:
            print(text, file=sys.stderr)
            raise SystemExit(f"screenshots: {name}: {missing} not on the screen")
        svg = app.export_screenshot(title=f"roofscope — {name}")
    target = out / f"{name}.svg"
    target.write_text(svg, encoding="utf-8")
    return target


def _opened(app) -> bool:
    from textual.widgets import DataTable

    return bool(app.query("#groups")) and app.query_one("#groups", DataTable).row_count > 0


def _press(*keys: str, opened: bool = True):
    async def run(app, pilot) -> None:
        if opened:
            await _until(pilot, lambda: _opened(app))
            await _settle(app, pilot)
        for key in keys:
            await pilot.press(key)
            await _settle(app, pilot)

    return run


async def _start(app, pilot) -> None:
    from roofscope.tui.app import StartScreen

    await _until(pilot, lambda: isinstance(app.screen, StartScreen))


async def _runs(app, pilot) -> None:
    await _until(pilot, lambda: bool(app.query("#runs-table")))
    await _settle(app, pilot)
    await pilot.press("down")  # the torch.compile'd BERT run: its report and settings below
    await _settle(app, pilot)


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"), metavar="DIR")
    parser.add_argument("--size", default="110x34", metavar="WxH", help="terminal cells")
    parser.add_argument("--only", nargs="+", choices=sorted(MUST_SHOW), metavar="NAME")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.lower().split("x"))
    size = (width, height)
    with tempfile.TemporaryDirectory(prefix="roofscope-shots-") as tmp:
        scratch = Path(tmp)
        _prepare_environment(scratch)
        out = Path(args.out).resolve()
        out.mkdir(parents=True, exist_ok=True)
        nsys = str(_synthetic_nsys(scratch / "resnet18_step.sqlite"))
        _past_runs(scratch / "runs")  # shown as "runs", relative to the scratch folder
        shots = {  # name: (files, keys, options); the start screen first, before any report
            "start": ([], _start, {}),
            "kernels": ([str(RESNET)], _press("down", "down"), {}),
            "roofline": ([str(RESNET)], _press("down", "down", "2"), {}),
            "levels": ([str(RESNET_BF16)], _press("down", "down", "2", "h"), {}),
            "efficiency": ([str(RESNET)], _press("3"), {}),
            "detail": ([str(RESNET)], _press("down", "down", "enter", "enter"), {}),
            "timeline": ([nsys], _press("8"), {}),
            "compare": ([str(RESNET), str(RESNET_BF16)], _press("7", "down", "down"), {}),
            "runs": ([], _runs, {"start_pane": "runs", "runs_dir": "runs"}),
            "advice": ([str(RESNET_LAYERS)], _press("9", "down", "down", "down"), {}),
        }
        total = 0
        for name, (paths, keys, options) in shots.items():
            if args.only and name not in args.only:
                continue
            os.chdir(scratch if name == "runs" else ROOT)  # the start screen lists ./sample_reports
            target = await _shoot(name, paths, keys, size, out, **options)
            total += target.stat().st_size
            print(f"{target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}: "
                  f"{target.stat().st_size / 1024:.0f} KiB")  # fmt: skip
        print(f"{total / 1024:.0f} KiB in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
