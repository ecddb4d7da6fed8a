"""How long each entry of tests/corpus/bad/ takes through the CLI, in-process, as
tests/test_bad_corpus.py runs it (which checks what happens, not how long it takes).

The corpus holds hostile inputs whose point is bounded time (a gzip of blank lines, a regex
that backtracks, a billion-row claim): this is where a regression in that shows. Each entry
gets a fresh cache folder and no ncu/nsys on PATH; the slowest are printed, with the machine.

Usage: python3 bench/bad_corpus.py [--top N] [--limit S] [--bombs]
  --limit S: list the entries slower than S seconds (default 3, the old test's limit) and
  exit 1 when there is one.
  --bombs: instead, build issue 30's decompression bombs (too large for the corpus: 256 MB of
  blank lines under two launches, 8 M noise lines) and print each one's time and peak RSS,
  each ``roofscope report`` in a fresh process.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from roofscope.cli import main as roofscope_main  # noqa: E402
from tests.test_bad_corpus import COMMAND, COMPANIONS, CORPUS, EXPECTED  # noqa: E402


def timed(name: str, scratch: Path) -> float:
    """Seconds of ``roofscope COMMAND FILE --format json`` on one entry, output discarded."""
    folder = Path(tempfile.mkdtemp(dir=scratch))
    path = CORPUS / name
    if name in COMPANIONS:  # an SQLite reader may checkpoint its -wal: run from a copy
        for each in (name, *COMPANIONS[name]):
            shutil.copyfile(CORPUS / each, folder / each)
        path = folder / name
    argv = [a.replace("{}", str(path)) for a in COMMAND.get(name, ("report", "{}"))]
    os.environ["ROOFSCOPE_CACHE_DIR"] = str(folder / "cache")
    sink = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        roofscope_main([*argv, "--format", "json"])
    return time.perf_counter() - start


BOMBS = {  # name: (filler, bytes of it)
    "blank_lines_256mb.ncu-raw.csv.gz": (b"\n", 256 << 20),
    "noise_lines_8m.ncu-raw.csv.gz": (b" \n", 16 << 20),
}


def bombs() -> int:
    """Time and peak RSS of ``roofscope report BOMB --format json`` on each of ``BOMBS``."""
    import resource
    import subprocess

    from tests.test_bounded_by_data import _gzip_with_filler, _two_launches

    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "ROOFSCOPE_CACHE_DIR": scratch, "PYTHONPATH": str(REPO / "src")}
        for name, (filler, size) in BOMBS.items():
            path = Path(scratch) / name
            _gzip_with_filler(path, _two_launches(), filler, size)
            command = [sys.executable, "-m", "roofscope", "report", str(path), "--format", "json"]
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, env=env, check=False)
            seconds = time.perf_counter() - start
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            print(f"{name} ({path.stat().st_size / 1024:.0f} KB): exit {done.returncode}, "
                  f"{seconds:.1f} s, peak RSS so far {peak:.0f} MB")  # fmt: skip
    print(f"on {platform.node()} ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=10, help="the N slowest (default 10)")
    parser.add_argument("--limit", type=float, default=3.0, help="flag entries slower than S")
    parser.add_argument("--bombs", action="store_true", help="issue 30's bombs: time, peak RSS")
    args = parser.parse_args()
    if args.bombs:
        return bombs()
    os.environ.pop("ROOFSCOPE_DEBUG", None)
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["PATH"] = scratch  # no ncu or nsys: nothing is converted
        times = {name: timed(name, Path(scratch)) for name in sorted(EXPECTED)}
    slowest = sorted(times.items(), key=lambda kv: -kv[1])
    print(f"{len(times)} entries, {sum(times.values()):.1f} s in all, on {platform.node()} "
          f"({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")  # fmt: skip
    for name, seconds in slowest[: args.top]:
        print(f"{seconds:8.2f} s  {name}")
    over = [name for name, seconds in slowest if seconds > args.limit]
    if over:
        print(f"slower than {args.limit:g} s: {', '.join(over)}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
