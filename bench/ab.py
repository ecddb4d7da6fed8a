"""A/B: ``roofscope report FILE --format json`` cold (empty cache), an older tree against this one.

Each run is its own process with its own empty cache; the two trees alternate so that the
machine's drift falls on both. Prints a Markdown table of medians.

Usage: python3 bench/ab.py BASE_SRC FILE [FILE ...] [--runs N]
  BASE_SRC: the ``src`` folder of the other checkout (``git worktree add /tmp/base REV``, then
  ``/tmp/base/src``). Files: e.g. those ``bench/ingest.py --keep DIR`` builds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "src"


def once(src: str, path: str) -> float:
    env = {**os.environ, "PYTHONPATH": src, "ROOFSCOPE_CACHE_DIR": tempfile.mkdtemp()}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "roofscope", "report", path, "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{src}: {path}: {done.stderr.strip()[-300:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base_src")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print("| file | size | before s | after s | after ÷ before |")
    print("|---|---|---|---|---|")
    for path in args.files:
        times: dict[str, list[float]] = {"base": [], "now": []}
        for _ in range(args.runs):
            times["base"].append(once(args.base_src, path))
            times["now"].append(once(str(HERE), path))
        base, now = (statistics.median(times[k]) for k in ("base", "now"))
        size = os.path.getsize(path) / 1e6
        print(f"| {Path(path).name} | {size:,.0f} MB | {base:.2f} | {now:.2f} | {now / base:.2f} |")


if __name__ == "__main__":
    main()
