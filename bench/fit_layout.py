"""Fit the channels_last model's ratios on the fitting pairs, and score it on the held-out ones.

Reads ``bench/channels_last_pairs.csv`` (model, precision, batch, set, GPU, before,
after: each pair an NCHW and a ``--channels-last`` run of one model by ``roofscope profile`` on
one GPU), fits ``analysis/advice/layout.py``'s changes on the rows whose set is ``fitting``
only, and prints them with every pair's predicted and measured gain (Markdown, for
docs/performance.md). The ``held-out`` rows are models no fitting row has; ``other GPU`` rows
repeat a fitting model on another GPU.
``--check`` exits 1 when the fit differs from the committed ``CHANGES``.

Usage: python bench/fit_layout.py [--check]
"""

from __future__ import annotations

import csv
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_reports"
PAIRS = REPO / "bench" / "channels_last_pairs.csv"


def read_pairs(path: Path = PAIRS) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def label(row: dict[str, str]) -> str:
    return f"{row['model']} {row['precision']} b{row['batch']}"


def kernel_times(path: Path) -> list[tuple[str, str, str, int, float]]:
    import roofscope

    session = roofscope.load(path)
    try:
        return session.reports[0].kernel_times(per_launch=True)
    finally:
        session.close()


def load(rows: list[dict[str, str]]):
    from roofscope.analysis.advice.layout import Pair

    return [
        (row, Pair(label(row), kernel_times(SAMPLES / row["before"]),
                   kernel_times(SAMPLES / row["after"])))
        for row in rows
    ]  # fmt: skip


def main() -> int:
    os.environ.setdefault("ROOFSCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="rs-fit-"))
    from roofscope.analysis.advice import layout

    pairs = load(read_pairs())
    changes = layout.fit([p for row, p in pairs if row["set"] == "fitting"])
    print("| class | in channels_last |\n|---|---:|")
    for key in layout.KEYS:
        value = changes.get(key)
        print(f"| {layout.title(key)} | {'not fitted' if value is None else value.text()} |")
    print("\n| set | model | GPU | before | after | measured gain | predicted gain | error |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for row, pair in pairs:
        before = pair.step(pair.before)
        measured = pair.measured_gain_s
        predicted = layout.predict(pair.before, changes).gain_s
        error = (predicted - measured) / measured if measured else float("nan")
        print(
            f"| {row['set']} | {label(row)} | {row['gpu']} | {before * 1e3:.3f} ms | "
            f"{pair.step(pair.after) * 1e3:.3f} ms | {measured * 1e3:.3f} ms "
            f"({100 * measured / before:.1f}%) | {predicted * 1e3:.3f} ms "
            f"({100 * predicted / before:.1f}%) | {error:+.0%} |"
        )
    if "--check" in sys.argv[1:] and changes != layout.CHANGES:
        print(f"\nthe fit {changes} differs from layout.CHANGES", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
