"""How long each entry of tests/corpus/bad/ takes through the CLI, in-process, as
tests/test_bad_corpus.py runs it (which checks what happens, not how long it takes).

The corpus holds hostile inputs whose point is bounded time (a gzip of blank lines, a regex
that backtracks, a billion-row claim): this is where a regression in that shows. Each entry
gets a fresh cache folder and no ncu/nsys on PATH; the slowest are printed, with the machine.

Usage: python3 bench/bad_corpus.py [--top N] [--limit S]
  --limit S: list the entries slower than S seconds (default 3, the old test's limit) and
  exit 1 when there is one.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=10, help="the N slowest (default 10)")
    parser.add_argument("--limit", type=float, default=3.0, help="flag entries slower than S")
    args = parser.parse_args()
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
