"""Re-open a report the way a user does, beside a peer, in one run: ``roofscope report FILE
--format json`` of a file already in roofscope's cache, (a) answered from the document kept
beside the cache (``report_memo``) and (b) computed from the cache (the kept documents
removed before each run), against ``nsys-tui summary FILE`` (its first and only read: it
keeps nothing).

Each case is a fresh process with its output to a pipe, wall time from start to exit; the
rounds visit the cases in a shuffled order so that a shared machine's drift falls on all
alike. Medians and p90s, with the load average before and after.

Usage: python3 bench/reopen.py FILE [--runs N] [--nsys-tui PATH/TO/nsys-tui]
  nsys-tui: ``python3 -m venv /tmp/peer && /tmp/peer/bin/pip install nsys-tui`` (0.1.5 here).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENTRY = "import sys; from roofscope.cli import main; sys.exit(main())"


def timed(argv: list[str], env: dict[str, str], before=None) -> float:
    if before is not None:
        before()
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--nsys-tui", default="/tmp/peer-nsystui/bin/nsys-tui")
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="roofscope-reopen-"))
    env = {**os.environ, "ROOFSCOPE_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO / "src")}
    report = [sys.executable, "-c", ENTRY, "report", args.file, "--format", "json"]
    subprocess.run(report, env=env, stdout=subprocess.DEVNULL, check=True)  # builds the cache

    def forget() -> None:
        for kept in cache.glob("*.report.json"):
            kept.unlink()

    cases = {
        "roofscope report, kept answer": lambda: timed(report, env),
        "roofscope report, computed from the cache": lambda: timed(report, env, forget),
    }
    if Path(args.nsys_tui).exists():
        peer = [args.nsys_tui, "summary", args.file]
        cases["nsys-tui summary (peer, first read)"] = lambda: timed(peer, dict(os.environ))
    times: dict[str, list[float]] = {name: [] for name in cases}
    load_before = os.getloadavg()[0]
    for _ in range(args.runs):
        order = list(cases)
        random.shuffle(order)
        for name in order:
            if name == "roofscope report, kept answer":
                timed(report, env)  # the previous case may have removed it: keep it again
            times[name].append(cases[name]())
    print(
        f"{args.file}: {args.runs} runs each, load average {load_before:.2f} → "
        f"{os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)"
    )
    peer_median = statistics.median(times[list(cases)[-1]]) if len(cases) > 2 else None
    for name, got in times.items():
        median = statistics.median(got)
        p90 = sorted(got)[max(0, round(0.9 * len(got)) - 1)]
        ratio = f"  {median / peer_median:.2f}× the peer" if peer_median else ""
        print(f"  {name:44s} median {median:.3f} s  p90 {p90:.3f} s{ratio}")


if __name__ == "__main__":
    main()
