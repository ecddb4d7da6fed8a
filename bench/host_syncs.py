"""What counting host synchronisations adds to nsys advice: a synthetic export of N kernels
(tests/nsys_builder.py ``write_many``: 2 µs apart, 0.5-1.5 µs long, so every kernel follows an
idle gap) with a ``cudaStreamSynchronize`` returning in every k-th gap, called while the GPU
is busy. Times, in one process on a built cache: ``Report.advice()`` with the syncs, and the
same export without the syncs (the event scan then has no sync to search), alternated.

Usage: python bench/host_syncs.py [--kernels N] [--every K] [--repeats R]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.nsys_builder import write_many  # noqa: E402

SYNC_ID = 10_000  # a string id the generated names do not use


def build(path: Path, kernels: int, every: int) -> int:
    write_many(path, kernels)
    con = sqlite3.connect(path)
    con.execute("INSERT INTO StringIds VALUES (?, 'cudaStreamSynchronize_v3020')", (SYNC_ID,))
    # kernel x runs from x*2000 to at most x*2000 + 1500: a sync called at x*2000 + 100 (busy)
    # returns at x*2000 + 1800, in the gap before kernel x + 1
    con.execute(
        f"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
        f"correlationId, nameId, returnValue, callchainId) "
        f"WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + {int(every)} FROM c "
        f"WHERE x + {int(every)} < {int(kernels)}) "
        f"SELECT x * 2000 + 100, x * 2000 + 1800, 1, 1, x, {SYNC_ID}, 0, NULL FROM c"
    )
    con.commit()
    (n,) = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    con.close()
    return int(n)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    os.environ["ROOFSCOPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="rs-syncs-")
    import roofscope

    folder = Path(tempfile.mkdtemp(prefix="rs-syncs-"))
    syncs = build(folder / "with.sqlite", args.kernels, args.every)
    write_many(folder / "without.sqlite", args.kernels)
    start = time.perf_counter()
    with_session = roofscope.load(folder / "with.sqlite")
    opened = time.perf_counter() - start
    without_session = roofscope.load(folder / "without.sqlite")
    print(f"{args.kernels:,} kernels, {syncs:,} syncs; first open {opened:.2f} s")
    timings: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(args.repeats):  # alternated, so a noisy machine slows both alike
        for key, session in (("with", with_session), ("without", without_session)):
            t = time.perf_counter()
            items = session.reports[0].advice()
            timings[key].append(time.perf_counter() - t)
            if key == "with":
                shown = [(a.rule, round(a.time_pct, 1)) for a in items]
    for key, ts in timings.items():
        print(f"advice {key} the syncs: {min(ts):.2f}-{max(ts):.2f} s ({args.repeats} runs)")
    print("items with the syncs:", shown)
    with_session.close()
    without_session.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
