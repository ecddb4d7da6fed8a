"""Fit an advice item's kernel-class model on its fitting pairs, and score it on the held-out ones.

``MODEL`` is one of :data:`MODELS`: ``layout`` (channels_last, ``bench/channels_last_pairs.csv``),
``tensor_math`` (TF32, ``bench/tf32_pairs.csv``) or ``compiled`` (torch.compile,
``bench/compile_pairs.csv``). Each pairs file lists (model, precision, batch, set, GPU, before,
after): each pair two runs of one model by ``roofscope profile`` on one GPU, before and after
the item is applied. The model's changes are fitted on the rows whose set is ``fitting``
only, and printed with every pair's predicted and measured gain (Markdown, for
docs/performance.md). The ``held-out`` rows are models no fitting row has; ``other GPU`` rows
repeat a fitting model on another GPU.
``--check`` exits 1 when the fit differs from the model's committed ``CHANGES``.

Usage: python bench/fit_advice.py MODEL [--check]
"""

from __future__ import annotations

import csv
import importlib
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_reports"
# model module (roofscope.analysis.advice.<name>) -> its pairs
MODELS = {
    "layout": REPO / "bench" / "channels_last_pairs.csv",
    "tensor_math": REPO / "bench" / "tf32_pairs.csv",
    "compiled": REPO / "bench" / "compile_pairs.csv",
}


def read_pairs(model: str = "layout") -> list[dict[str, str]]:
    with open(MODELS[model], newline="", encoding="utf-8") as f:
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
    from roofscope.analysis.advice.kernel_classes import Pair

    return [
        (row, Pair(label(row), kernel_times(SAMPLES / row["before"]),
                   kernel_times(SAMPLES / row["after"])))
        for row in rows
    ]  # fmt: skip


def predict(model, row: dict[str, str], pair, changes) -> float:  # type: ignore[no-untyped-def]
    """The model's predicted gain for a pair's before step (the compiled model also reads the
    convolutions of the run's analytic.json beside the before export, as ``advise`` does)."""
    if hasattr(model, "predict_run"):  # compiled.py: Inductor's layout from analytic.json
        from roofscope.analysis.advice.run_files import analytic_beside

        analytic = analytic_beside(SAMPLES / row["before"])
        return model.predict_run(pair.before, analytic, changes)[1].gain_s
    return model.predict(pair.before, changes).gain_s


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in MODELS:
        usage = f"usage: python bench/fit_advice.py {{{'|'.join(MODELS)}}} [--check]"
        print(usage, file=sys.stderr)
        return 2
    name = argv[0]
    os.environ.setdefault("ROOFSCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="rs-fit-"))
    model = importlib.import_module(f"roofscope.analysis.advice.{name}")

    pairs = load(read_pairs(name))
    changes = model.fit([p for row, p in pairs if row["set"] == "fitting"])
    print("| class | changed to |\n|---|---:|")
    borrowed = getattr(model, "LAYOUT_KEYS", ())  # compiled.py: the channels_last model's
    for key in model.KEYS:
        value = changes.get(key)
        text = "not fitted" if value is None else value.text()
        if value is None and key in borrowed:
            text = "channels_last's change when Inductor takes it, else ×1"
        print(f"| {model.title(key)} | {text} |")
    print("\n| set | model | GPU | before | after | measured gain | predicted gain | error |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for row, pair in pairs:
        before = pair.step(pair.before)
        measured = pair.measured_gain_s
        predicted = predict(model, row, pair, changes)
        error = (predicted - measured) / measured if measured else float("nan")
        print(
            f"| {row['set']} | {label(row)} | {row['gpu']} | {before * 1e3:.3f} ms | "
            f"{pair.step(pair.after) * 1e3:.3f} ms | {measured * 1e3:.3f} ms "
            f"({100 * measured / before:.1f}%) | {predicted * 1e3:.3f} ms "
            f"({100 * predicted / before:.1f}%) | {error:+.0%} |"
        )
    if "--check" in argv[1:] and changes != model.CHANGES:
        print(f"\nthe fit {changes} differs from {name}.CHANGES", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
