"""Ingest benchmark: roofscope vs the published pandas approach vs a bare DuckDB scan.

Builds a synthetic ncu raw page of N launches by replicating the real H100 resnet18 rows
(sample_reports/, 1,279 columns of the roofline sections), then times, side by side in one run
and each in its own process (so peak memory is its own):

* ``roofscope``  — cold ingest into the cache database, then a grouped report;
* ``cached``     — re-open from that cache and produce the same report;
* ``pandas``     — ``pandas.read_csv(skiprows=[1], thousands=",")`` then per-kernel sums in
  Python, the way the published studies' scripts do it;
* ``duckdb-scan`` — ``read_csv(all_varchar=true)`` materialised into a table: what a DuckDB
  loader that keeps every column does;
* ``duckdb-scan-projected`` — the same scan keeping, as text, only the columns roofscope reads:
  the least a DuckDB loader of these numbers must do.

Usage: python bench/ingest.py [N ...] [--narrow] [--keep DIR] [--methods a,b]
(default: 10000 100000, every method).
``--narrow``: only the columns roofscope reads (~1 KB a launch; the full scan then is the
projected one); ``--keep DIR``: build the file there and reuse it. Prints a Markdown table.
"""

from __future__ import annotations

import csv
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "sample_reports" / "resnet18_fp32_h100.ncu-raw.csv"
METHODS = ("roofscope", "cached", "pandas", "duckdb-scan", "duckdb-scan-projected")


def build(n: int, out: Path, narrow: bool = False) -> None:
    """Replicate the real rows until there are n launches, renumbering the ID column.

    ``narrow`` keeps only the identification columns and the metrics roofscope reads: what
    ``ncu --metrics <the roofline metrics> --page raw --csv`` writes (~1 KB a launch), so a
    million launches make the ~1 GB file of the issue rather than 11 GB.
    """
    with SOURCE.open(encoding="utf-8", newline="") as fh:
        table = list(csv.reader(fh))
    header = table[0]
    keep = range(len(header))
    if narrow:
        from roofscope.metric_names import is_wanted

        keep = [i for i, c in enumerate(header) if i < 11 or is_wanted(c)]
    lines = [",".join(f'"{row[i]}"' for i in keep) + "\n" for row in table]
    header_line, units, rows = lines[0], lines[1], lines[2:]
    with out.open("w", encoding="utf-8") as fh:
        fh.write(header_line)
        fh.write(units)
        for i in range(n):
            row = rows[i % len(rows)]
            fh.write(f'"{i}"' + row[row.index(",") :])


def run_roofscope(path: str, cache: str) -> dict:
    os.environ["ROOFSCOPE_CACHE_DIR"] = cache
    import roofscope

    session = roofscope.load(path)
    doc = session.report_dict()
    return {"launches": doc["reports"][0]["launches"], "from_cache": session.store.from_cache}


def run_pandas(path: str) -> dict:
    """The published approach: read the whole table, then sum per kernel in Python."""
    import pandas as pd

    df = pd.read_csv(path, skiprows=[1], thousands=",", low_memory=False)
    units = next(csv.reader(open(path, encoding="utf-8").readlines()[1:2]))  # noqa: SIM115
    unit_of = dict(zip(df.columns, units, strict=False))
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "inst/cycle": 1.0, "Ghz": 1e9, "hz": 1.0}
    op = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum.per_cycle_elapsed"
    clock = "smsp__cycles_elapsed.avg.per_second"
    per_kernel: dict[str, list[float]] = {}
    for _, row in df.iterrows():
        t = float(row["gpu__time_duration.sum"]) * scale[unit_of["gpu__time_duration.sum"]]
        hz = float(row[clock]) * scale[unit_of[clock]]
        flops = row[op.format("fadd")] + row[op.format("fmul")] + 2 * row[op.format("ffma")]
        acc = per_kernel.setdefault(row["Kernel Name"], [0.0, 0.0])
        acc[0] += t
        acc[1] += float(flops) * hz * t
    return {"launches": len(df), "kernels": len(per_kernel)}


def run_scan(path: str, projected: bool) -> dict:
    import duckdb

    columns = "*"
    if projected:
        from roofscope.metric_names import is_wanted

        with open(path, encoding="utf-8") as fh:
            header = next(csv.reader([fh.readline()]))
        keep = [c for c in header[:11] if c] + [c for c in header[11:] if is_wanted(c)]
        columns = ", ".join(f'"{c}"' for c in keep)
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute(
        f"CREATE TABLE t AS SELECT {columns} FROM read_csv('{path}', header=true, all_varchar=true)"
    )
    return {"rows": con.execute("SELECT count(*) FROM t").fetchall()[0][0] - 1}


def child(method: str, path: str, cache: str) -> None:
    start = time.perf_counter()
    if method in ("roofscope", "cached"):
        info = run_roofscope(path, cache)
    elif method == "pandas":
        info = run_pandas(path)
    else:
        info = run_scan(path, projected=method.endswith("projected"))
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": elapsed, "peak_mib": peak, **info}))


def measure(method: str, path: Path, cache: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", method, str(path), cache],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(
    sizes: list[int],
    narrow: bool = False,
    keep: Path | None = None,
    only: tuple[str, ...] = METHODS,
) -> None:
    print(
        f"machine: {platform.node()} · {os.cpu_count()} cores · Python "
        f"{platform.python_version()} · {platform.platform()}"
    )
    print()
    print("| launches | file | method | seconds | peak MiB | × first |")
    print("|---:|---:|---|---:|---:|---:|")
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = (keep or Path(tmp)) / f"synthetic_{n}{'_narrow' if narrow else ''}.csv"
            if not path.exists():
                build(n, path, narrow)
            size = path.stat().st_size / 1e6
            cache = str(Path(tmp) / "cache")
            methods = [m for m in only if not (narrow and m == "duckdb-scan-projected")]
            results = {m: measure(m, path, cache) for m in methods}
            base = results[methods[0]]["seconds"]
            for m in methods:
                r = results[m]
                print(
                    f"| {n:,} | {size:,.0f} MB | {m} | {r['seconds']:.2f} | "
                    f"{r['peak_mib']:.0f} | {r['seconds'] / base:.2f} |"
                )
            sys.stdout.flush()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*sys.argv[2:5])
    else:
        args = sys.argv[1:]
        narrow = "--narrow" in args
        keep = Path(args[args.index("--keep") + 1]) if "--keep" in args else None
        only = (
            tuple(args[args.index("--methods") + 1].split(",")) if "--methods" in args else METHODS
        )
        numbers = [int(a) for a in args if a.isdigit()]
        main(numbers or [10_000, 100_000], narrow, keep, only)
