"""The largest batch that fits (issue 33, item 5): the memory model checked against the peaks
PyTorch's allocator measured on an H200 (ten bundled models, bf16 and fp32, batches 8, 32,
128), and the ``batch_memory`` advice on a real run's export with its run files beside it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import roofscope
from roofscope.analysis.advice.memory import batch_memory
from roofscope.analysis.batch_memory import MEMORY_RESERVE, SLOPE_MARGIN, largest_batch
from tests.conftest import REPO, SAMPLES

MEASURED = REPO / "tests" / "data" / "device" / "memory_by_batch_h200.json"
SAMPLE = "resnet50_bf16_b8_h200"
GIB = 1 << 30


def _runs() -> dict[tuple[str, str, int], dict]:
    data = json.loads(MEASURED.read_text())
    return {(r["model"], r["precision"], r["batch"]): r for r in data["runs"]}


def test_the_model_anchored_at_batch_8_is_within_the_reserve_at_batch_128():
    """Each model's peak at batch 128 predicted from its measured peak at batch 8 and the
    analytic bytes per sample: within -17%..+19% (MEMORY_RESERVE's comment), so the reserve
    covers the worst under-estimate; the unanchored model is off by up to -20%."""
    runs = _runs()
    errors, plain = {}, {}
    for (name, precision, batch), row in runs.items():
        if batch != 128:
            continue
        small = runs[(name, precision, 8)]
        per = row["memory_model"]["per_sample_bytes"]
        anchored = small["peak_bytes"] + per * (128 - 8)
        errors[(name, precision)] = anchored / row["peak_bytes"] - 1
        plain[(name, precision)] = row["estimate_bytes"] / row["peak_bytes"] - 1
    assert len(errors) == 20 and len({n for n, _ in errors}) == 10
    assert min(errors.values()) == pytest.approx(-0.17, abs=0.01)  # VGG11 fp32: workspaces
    assert max(errors.values()) == pytest.approx(0.19, abs=0.01)  # ViT-B/16 fp32: attention
    assert -min(errors.values()) < MEMORY_RESERVE
    assert min(plain.values()) == pytest.approx(-0.20, abs=0.01)
    # the anchor is the better model: a smaller error on 18 of the 20
    assert sum(abs(errors[k]) <= abs(plain[k]) for k in errors) == 18


def _item(export: Path):
    session = roofscope.load(export)
    try:
        return next(a for a in session.reports[0].advice() if a.rule == "batch_memory")
    finally:
        session.close()


def test_the_slope_margin_is_the_largest_measured_growth():
    """Beyond the measured batches the bytes per sample decide: SLOPE_MARGIN is the largest
    ratio of the peak's growth from batch 32 to 128 to the model's bytes per sample."""
    runs = _runs()
    ratios = [
        (row["peak_bytes"] - runs[(name, precision, 32)]["peak_bytes"])
        / 96
        / row["memory_model"]["per_sample_bytes"]
        for (name, precision, batch), row in runs.items()
        if batch == 128
    ]
    assert max(ratios) == pytest.approx(SLOPE_MARGIN, abs=0.005)
    assert min(ratios) == pytest.approx(0.83, abs=0.005)


@pytest.mark.slow
@pytest.mark.usefixtures("shared_sample_cache")
def test_batch_memory_on_a_real_run_read_apart():
    """ResNet-50 bf16 b8 on an H200: the run's measured peak (run.json) plus the analytic bytes
    per sample (analytic.json) × SLOPE_MARGIN for each sample more; its run.json predates the
    GPU-memory fact, so the H200's datasheet 141 GB stands in (said so)."""
    analytic = json.loads((SAMPLES / f"{SAMPLE}.analytic.json").read_text())
    run = json.loads((SAMPLES / f"{SAMPLE}.run.json").read_text())
    peak = float(run["facts"]["peak_memory_bytes"])
    per = analytic["memory"]["per_sample_bytes"] * SLOPE_MARGIN
    expected = 8 + int((0.8 * 141e9 - peak) // per)
    item = _item(SAMPLES / f"{SAMPLE}.ncu-raw.csv.gz")
    assert item.title == f"batch {expected:,} fits this GPU's memory (the run used 8)"
    assert "datasheet): 141 GB" in item.evidence[2] and item.est_gain_s is None
    assert expected == largest_batch(
        analytic["memory"], 141e9, MEMORY_RESERVE, (8, peak), SLOPE_MARGIN
    )


@pytest.mark.slow
def test_measured_memory_no_run_file_a_full_gpu_and_odd_facts(tmp_path):
    analytic = json.loads((SAMPLES / f"{SAMPLE}.analytic.json").read_text())
    run = json.loads((SAMPLES / f"{SAMPLE}.run.json").read_text())
    model = analytic["memory"]
    peak = float(run["facts"]["peak_memory_bytes"])
    measured = {**run, "facts": {**run["facts"], "device_memory_bytes": str(80 * GIB)}}
    [item] = batch_memory(analytic, measured, "NVIDIA H200")
    fits = largest_batch(model, 80 * GIB, MEMORY_RESERVE, (8, peak), SLOPE_MARGIN)
    assert (
        item.title.startswith(f"batch {fits:,} fits")
        and "(measured by the run)" in item.evidence[2]
    )
    [plain] = batch_memory(analytic, None, "NVIDIA H200")
    assert plain.evidence[0].startswith("no measured peak beside the export")
    # a peak already past 80% of the memory: no batch to raise to, said as such
    full = {**run, "facts": {**run["facts"], "peak_memory_bytes": str(130e9)}}
    [over] = batch_memory(analytic, full, "NVIDIA H200")
    assert over.title == "the run's batch 8 leaves under 20% of the memory free"
    # a peak that is no number is no peak: the analytic estimate instead
    odd = {**run, "facts": {**run["facts"], "peak_memory_bytes": "inf"}}
    assert batch_memory(analytic, odd, "NVIDIA H200")[0].evidence[0].startswith("no measured")
    # another run's run.json (another batch) is not this run's peak
    other = {**run, "spec": {**run["spec"], "batch": 64}}
    assert batch_memory(analytic, other, "NVIDIA H200")[0].evidence[0].startswith("no measured")
    # an unknown GPU without a measured size: nothing to fit into, no item
    assert batch_memory(analytic, None, "Some Future GPU") == []
    assert batch_memory({**analytic, "mode": "infer"}, run, "NVIDIA H200") == []
    # the run files found beside a copy of the export, named after it
    for suffix in (".ncu-raw.csv.gz", ".analytic.json", ".run.json"):
        shutil.copy(SAMPLES / f"{SAMPLE}{suffix}", tmp_path / f"{SAMPLE}{suffix}")
    assert (
        _item(tmp_path / f"{SAMPLE}.ncu-raw.csv.gz").title
        == _item(SAMPLES / f"{SAMPLE}.ncu-raw.csv.gz").title
    )
