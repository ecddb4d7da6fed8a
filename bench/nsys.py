"""Benchmark: grouped summary of an nsys SQLite export with N kernel rows (default 10 million).

    python3 bench/nsys.py [--kernels N] [--keep DIR]

Builds a synthetic export in the real 2025 schema (tests/nsys_builder.py), then, each in a fresh
process: cold ingest (SQLite → DuckDB cache) with the grouped summary, the cached re-open with
the grouped summary (DESIGN.md §7 target: < 3 s for 10 M rows on 2 cores), and, side by side,
the same per-name summary as one SQLite ``GROUP BY`` (what ``nsys stats`` does) and as the
pandas approach (``read_sql`` + ``groupby``, skipped above 2 M rows: it needs ~10 GB).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ROOFSCOPE = """
import json, resource, sys, time
t = time.perf_counter()
from roofscope.session import load
t0 = time.perf_counter()
s = load(sys.argv[1])
t_open = time.perf_counter() - t0
rows = s.reports[0].rows("group")
t_all = time.perf_counter() - t
t_summary = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"open_s": t_open, "summary_s": t_summary, "total_s": t_all, "groups": len(rows),
                  "launches": sum(r["launches"] for r in rows), "peak_mib": peak}))
"""
SQLITE = """
import json, resource, sqlite3, sys, time
t = time.perf_counter()
con = sqlite3.connect(sys.argv[1])
rows = con.execute("SELECT s.value, count(*), sum(k.end - k.start), avg(k.end - k.start), "
    "min(k.end - k.start), max(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
    "JOIN StringIds s ON s.id = k.demangledName GROUP BY s.value").fetchall()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"total_s": time.perf_counter() - t, "groups": len(rows),
                  "launches": sum(r[1] for r in rows), "peak_mib": peak}))
"""
PANDAS = """
import json, resource, sqlite3, sys, time
t = time.perf_counter()
import pandas as pd
con = sqlite3.connect(sys.argv[1])
k = pd.read_sql("SELECT start, end, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL", con)
names = pd.read_sql("SELECT id, value FROM StringIds", con)
k = k.merge(names, left_on="demangledName", right_on="id")
k["dur"] = k["end"] - k["start"]
g = k.groupby("value")["dur"].agg(["count", "sum", "mean", "median", "min", "max"])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"total_s": time.perf_counter() - t, "groups": len(g),
                  "launches": int(g["count"].sum()), "peak_mib": peak}))
"""


def run(code: str, path: Path, env: dict[str, str]) -> dict:
    import json

    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env
    )
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=10_000_000)
    parser.add_argument("--keep", type=Path, default=None, help="reuse/keep the export here")
    args = parser.parse_args()
    from tests.nsys_builder import write_many

    work = args.keep or Path(tempfile.mkdtemp(prefix="roofscope-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    path = work / f"kernels_{args.kernels}.sqlite"
    if not path.exists():
        t = time.perf_counter()
        write_many(path, args.kernels)
        print(
            f"built {path} ({path.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s"
        )
    env = dict(os.environ, ROOFSCOPE_CACHE_DIR=str(work / "cache"))
    for old in (work / "cache").glob("*"):
        old.unlink()
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}"
    )
    print(
        f"{'step':44} {'process s':>9} {'in-proc s':>9} {'peak MiB':>9} {'groups':>7} "
        f"{'launches':>11}"
    )
    results = [
        ("roofscope cold: ingest + grouped summary", run(ROOFSCOPE, path, env)),
        ("roofscope cached: re-open + grouped summary", run(ROOFSCOPE, path, env)),
        ("roofscope cached (2nd run)", run(ROOFSCOPE, path, env)),
        ("sqlite3 GROUP BY (nsys stats approach)", run(SQLITE, path, env)),
    ]
    if args.kernels <= 2_000_000:
        results.append(("pandas read_sql + groupby", run(PANDAS, path, env)))
    for label, r in results:
        inproc = f"{r['summary_s']:9.2f}" if "summary_s" in r else " " * 9
        print(
            f"{label:44} {r['total_s']:9.2f} {inproc} {r['peak_mib']:9.0f} {r['groups']:7} "
            f"{r['launches']:11,}"
        )


if __name__ == "__main__":
    main()
