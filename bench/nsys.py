"""Benchmark: first open of an nsys SQLite export against SQLite's own GROUP BY, side by side.

    python3 bench/nsys.py [--kernels N [N ...]] [--repeats R] [--plain] [--keep DIR]

Builds synthetic exports in the real 2025 schema (tests/nsys_builder.py ``write_many``; reused
from ``--keep DIR``), then, for each size and repeat, each step in a fresh process and the steps
interleaved so that a noisy machine slows them alike:

* ``roofscope first open``: cold ingest (SQLite → DuckDB cache, the Arrow reader) + grouped
  summary, the cache removed before each run;
* ``roofscope report --format json, cold``: the same, as the command a user runs: the ingest
  and the whole report (groups, timeline, advice, efficiency histogram);
* ``sqlite3 GROUP BY``: the same per-name summary as one SQLite query (what ``nsys stats``
  does) — the baseline of issue 20 (target: first open ≤ 2.5× it, peak < 1.5 GB);
* with ``--plain``, once per size (in the first repeat), ``roofscope first open, sqlite3
  reader`` (``ROOFSCOPE_NSYS_READER=sqlite3``: every value through Python's ``sqlite3`` and the
  staged writer, as before issue 20).

Then two cached re-opens (DESIGN.md §7: < 3 s for 10 M kernels on 2 cores) and, up to 2 M
kernels, pandas ``read_sql`` + ``groupby``. "process s" is the whole process (imports
included), "cpu s" its user + system time (all threads); "× GROUP BY" is the median of each run's
ratio to the GROUP BY of its own repeat (to every GROUP BY for the cached and pandas rows), and
"cpu ×" the same for CPU time, which a busy machine distorts less.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import shutil
import statistics
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
ru = resource.getrusage(resource.RUSAGE_SELF)
warnings = [w for r in s.reports for w in r.warnings]
print(json.dumps({"open_s": t_open, "summary_s": t_summary, "total_s": t_all, "groups": len(rows),
                  "launches": sum(r["launches"] for r in rows), "peak_mib": ru.ru_maxrss / 1024,
                  "cpu_s": ru.ru_utime + ru.ru_stime, "warnings": warnings}))
"""
# What a user's first ``roofscope report FILE --format json`` does: the ingest, then every part
# of the report (groups, timeline, advice, histogram); its output kept (12 kB) to count.
REPORT = """
import contextlib, io, json, resource, sys, time
t = time.perf_counter()
from roofscope.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(["report", sys.argv[1], "--format", "json"])
total = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_SELF)
assert code == 0, code
doc = json.loads(out.getvalue())
print(json.dumps({"total_s": total, "launches": doc["reports"][0]["launches"], "warnings": [],
                  "peak_mib": ru.ru_maxrss / 1024, "cpu_s": ru.ru_utime + ru.ru_stime}))
"""
SQLITE = """
import json, resource, sqlite3, sys, time
t = time.perf_counter()
con = sqlite3.connect(sys.argv[1])
rows = con.execute("SELECT s.value, count(*), sum(k.end - k.start), avg(k.end - k.start), "
    "min(k.end - k.start), max(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
    "JOIN StringIds s ON s.id = k.demangledName GROUP BY s.value").fetchall()
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"total_s": time.perf_counter() - t, "groups": len(rows),
                  "launches": sum(r[1] for r in rows), "peak_mib": ru.ru_maxrss / 1024,
                  "cpu_s": ru.ru_utime + ru.ru_stime}))
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
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"total_s": time.perf_counter() - t, "groups": len(g),
                  "launches": int(g["count"].sum()), "peak_mib": ru.ru_maxrss / 1024,
                  "cpu_s": ru.ru_utime + ru.ru_stime}))
"""

FIRST = "roofscope first open (Arrow reader)"
REPORT_COLD = "roofscope report --format json, cold"
PLAIN = "roofscope first open, sqlite3 reader"
GROUP_BY = "sqlite3 GROUP BY (nsys stats approach)"


def run(code: str, path: Path, env: dict[str, str]) -> dict:
    """One step in a fresh process; its JSON line."""
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env
    )
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def cold(path: Path, env: dict[str, str], code: str = ROOFSCOPE) -> dict:
    """A first open: the cache removed before it."""
    shutil.rmtree(env["ROOFSCOPE_CACHE_DIR"], ignore_errors=True)
    return run(code, path, env)


def export(work: Path, kernels: int) -> Path:
    from tests.nsys_builder import write_many

    path = work / f"kernels_{kernels}.sqlite"
    if not path.exists():
        t = time.perf_counter()
        write_many(path, kernels)
        size = path.stat().st_size / 1e6
        print(f"built {path} ({size:.0f} MB) in {time.perf_counter() - t:.1f} s")
    return path


def measure(path: Path, kernels: int, work: Path, repeats: int, plain: bool) -> list[tuple]:
    """Rows of the table for one size: (label, runs) with every repeat's results."""
    base = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    base.pop("ROOFSCOPE_NSYS_READER", None)
    fast_env = dict(base, ROOFSCOPE_CACHE_DIR=str(work / "cache-arrow"))
    plain_env = dict(
        base, ROOFSCOPE_CACHE_DIR=str(work / "cache-sqlite3"), ROOFSCOPE_NSYS_READER="sqlite3"
    )
    runs: dict[str, list[dict]] = {FIRST: [], REPORT_COLD: [], GROUP_BY: []}
    if plain:
        runs[PLAIN] = []
    for repeat in range(repeats):
        runs[FIRST].append(cold(path, fast_env))
        runs[REPORT_COLD].append(cold(path, fast_env, REPORT))
        runs[GROUP_BY].append(run(SQLITE, path, base))
        if plain and repeat == 0:  # the reader before issue 20: once, it is slow
            runs[PLAIN].append(cold(path, plain_env))
    runs["roofscope cached: re-open + grouped summary"] = [
        run(ROOFSCOPE, path, fast_env) for _ in range(2)
    ]
    if kernels <= 2_000_000:
        runs["pandas read_sql + groupby"] = [run(PANDAS, path, base)]
    for label in (FIRST, PLAIN):
        for r in runs.get(label, []):
            if r["warnings"]:
                print(f"  {label}: warnings {r['warnings']}")
    return list(runs.items())


def table(kernels: int, rows: list[tuple]) -> None:
    base = dict(rows)[GROUP_BY]
    print(
        f"\n{kernels:,} kernels\n{'step':44} {'process s':>9} {'in-proc s':>9} {'cpu s':>6} "
        f"{'peak MiB':>8} {'× GROUP BY':>10} {'cpu ×':>6}  {'launches':>10}  runs (process s)"
    )
    for label, runs in rows:
        total = statistics.median(r["total_s"] for r in runs)
        inproc = (
            f"{statistics.median(r['summary_s'] for r in runs):9.2f}"
            if "summary_s" in runs[0]
            else " " * 9
        )
        cpu = statistics.median(r["cpu_s"] for r in runs)
        peak = max(r["peak_mib"] for r in runs)
        # each run against the GROUP BY of its own repeat where it has one
        pairs = list(zip(runs, base, strict=False))
        if label.startswith("roofscope cached") or label.startswith("pandas"):
            pairs = [(r, b) for r in runs for b in base]
        ratio = statistics.median(r["total_s"] / b["total_s"] for r, b in pairs)
        cpu_ratio = statistics.median(r["cpu_s"] / b["cpu_s"] for r, b in pairs)
        shown = ", ".join(f"{r['total_s']:.2f}" for r in runs)
        print(
            f"{label:44} {total:9.2f} {inproc} {cpu:6.2f} {peak:8.0f} {ratio:10.2f} "
            f"{cpu_ratio:6.2f}  {runs[0]['launches']:10,}  {shown}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeats", type=int, default=3, help="interleaved first opens")
    parser.add_argument("--plain", action="store_true", help="also the sqlite3 reader")
    parser.add_argument("--keep", type=Path, default=None, help="reuse/keep the exports here")
    args = parser.parse_args()
    # byte-compile once, so that no step pays for it (PYTHONDONTWRITEBYTECODE, a fresh clone)
    compileall.compile_dir(ROOT / "src", quiet=1)
    work = args.keep or Path(tempfile.mkdtemp(prefix="roofscope-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.2f}"
    )
    for kernels in args.kernels:
        path = export(work, kernels)
        rows = measure(path, kernels, work, args.repeats, args.plain)
        table(kernels, rows)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
