"""roofscope's own advice rules on the bundled real exports: each fires where its evidence is
and stays quiet where it is not, and its numbers match an independent reading of the file."""

from __future__ import annotations

import csv
import re
from functools import cache

import pytest

import roofscope
from roofscope.analysis.advice import ROOFSCOPE, Advice, layout, ranked, step_speedup, tensor_math
from roofscope.analysis.advice.evidence import Step, roofscope_advice
from roofscope.analysis.advice.kernel_classes import family
from tests.conftest import SAMPLES

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("shared_sample_cache")]


@cache  # one load per sample in a worker (the rules are pure functions of it)
def _step(name: str) -> Step:
    session = roofscope.load(SAMPLES / name)
    try:
        report = session.reports[0]
        return Step.of(report)
    finally:
        session.close()


def _rules(name: str) -> dict[str, Advice]:
    return {a.rule: a for a in roofscope_advice(_step(name))}


@pytest.mark.parametrize(
    ("sample", "fires", "quiet"),
    [
        ("resnet18_fp32_h100.ncu-raw.csv", {"channels_last", "fusion"}, set()),
        ("resnet18_bf16_h100.ncu-raw.csv", {"channels_last", "fusion"}, {"tensor_cores"}),
        ("mlp_fp32_b128_h100.ncu-raw.csv", {"tensor_cores"}, {"channels_last"}),
        ("cnn_fp32_b128_h100.ncu-raw.csv", {"tensor_cores"}, set()),
        ("gemm4096_bf16_h100.ncu-raw.csv", set(), {"channels_last", "tensor_cores", "fusion"}),
        ("bert_bf16_b8_infer_h100.ncu-raw.csv.gz", {"fusion"}, {"channels_last", "tensor_cores"}),
        # already torch.compile'd: Inductor fused what it could, fusion is not advised again
        ("bert_bf16_b8_compile_h100.ncu-raw.csv.gz", set(), {"fusion", "tensor_cores"}),
    ],
)
def test_each_rule_fires_where_its_evidence_is(sample, fires, quiet):
    rules = _rules(sample)
    assert fires <= set(rules), f"{sample}: expected {fires}, got {set(rules)}"
    assert not quiet & set(rules), f"{sample}: {quiet & set(rules)} should not fire"
    for item in rules.values():
        assert item.source == ROOFSCOPE and item.evidence and item.assumptions and item.action
        assert 0 < item.time_pct <= 100 and item.launches > 0
        if item.est_gain_s is not None:
            assert 0 <= item.est_gain_s <= item.time_s
            assert item.est_step_speedup == pytest.approx(
                step_speedup(_step_s(sample), item.est_gain_s)
            )


def _step_s(sample: str) -> float:
    return _step(sample).step_s


def test_channels_last_transforms_match_the_kernels_read_with_csv():
    """The transforms' class time is the NCHW<->NHWC kernels' time, summed here from the file
    itself, and the gain counts them at their fitted change."""
    total_us, launches = 0.0, 0
    with open(SAMPLES / "resnet18_fp32_h100.ncu-raw.csv", newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header, units = next(reader), next(reader)
        name, duration = header.index("Kernel Name"), header.index("gpu__time_duration.sum")
        assert units[duration] == "us"
        for row in reader:
            if "nchwToNhwc" in row[name] or "nhwcToNchw" in row[name]:
                total_us += float(row[duration].replace(",", ""))
                launches += 1
    step = _step("resnet18_fp32_h100.ncu-raw.csv")
    prediction = layout.predict(step.kernel_times)
    assert prediction.before["transform"] == pytest.approx(total_us * 1e-6)
    assert prediction.launches["transform"] == launches == 139
    item = _rules("resnet18_fp32_h100.ncu-raw.csv")["channels_last"]
    assert item.est_gain_s == pytest.approx(prediction.gain_s)
    assert "layout transform" in item.groups
    assert any(line.startswith("NCHW↔NHWC transforms") for line in item.evidence)


def test_tensor_core_gain_is_the_fp32_gemms_scaled_by_the_fitted_change():
    """SimpleMLP fp32 on the H100: its FP32 GEMMs (cuBLAS ffma, CUTLASS simt_sgemm, cuBLAS's
    sgemm_largek; not the split-K reductions and epilogues) are the only class TF32 changes;
    the gain is their time × (1 - the fitted scale) less the per-launch floor, and never more
    than the roofs' ratio allows."""
    step = _step("mlp_fp32_b128_h100.ncu-raw.csv")
    item = _rules("mlp_fp32_b128_h100.ncu-raw.csv")["tensor_cores"]
    fp32 = [
        (n, t) for g, k, _, n, t in step.kernel_times if g == "GEMM" and re.search("ffma|sgemm", k)
    ]
    gemms, launches = sum(t for _, t in fp32), sum(n for n, _ in fp32)
    assert item.groups == ["GEMM"]
    assert item.time_s == pytest.approx(gemms)
    change = tensor_math.CHANGES["gemm_fp32"]
    assert item.launches == launches == 8
    assert item.est_gain_s == pytest.approx(gemms * (1 - change.scale) - change.per_launch_s * 8)
    ratio = step.roofs["tensor_tf32"] / step.roofs["fp32"]
    assert item.est_gain_s <= item.time_s * (1 - 1 / ratio) + 1e-12
    assert any("TF32 tensor" in line for line in item.evidence)


def test_amdahl_and_ranking():
    assert step_speedup(10.0, 5.0) == 2.0
    assert step_speedup(10.0, None) is None and step_speedup(0.0, 1.0) is None
    a = Advice("a", ROOFSCOPE, "", "", [], [], 1, 1.0, 10.0, None, None)
    b = Advice("b", ROOFSCOPE, "", "", [], [], 1, 1.0, 10.0, 0.2, 1.02)
    c = Advice("c", ROOFSCOPE, "", "", [], [], 1, 1.0, 10.0, 0.5, 1.05)
    assert [x.rule for x in ranked([a, b, c])] == ["c", "b", "a"]  # unknown gain last
    assert family("GEMM (nvjet)") == "GEMM" and family("conv fprop") == "conv fprop"
