"""The tensor trap (DESIGN.md §4): never multiply a tensor-pipe instruction count off CC 7.0."""

from __future__ import annotations

import pytest

import roofscope
from tests.conftest import DATA, SAMPLES
from tests.ncu_builder import raw_page, write

N = 4096


def _inst_only(tmp_path, cc: str, name: str):
    values = {
        "gpu__time_duration.sum": "100,000",
        "sm__inst_executed_pipe_tensor.sum": "2,097,152",
        "device__attribute_display_name": name,
    }
    units = {"gpu__time_duration.sum": "ns", "sm__inst_executed_pipe_tensor.sum": "inst"}
    return write(tmp_path / f"t{cc}.csv", raw_page([("nvjet_sm90_tst", values)], units, cc=cc))


def test_h100_with_only_pipe_tensor_gives_unknown_tensor_and_a_warning(tmp_path, in_tmp_cwd):
    session = roofscope.load(_inst_only(tmp_path, "9.0", "NVIDIA H100 80GB HBM3"), use_cache=False)
    doc = session.report_dict()
    report = doc["reports"][0]
    assert report["flops"]["tensor"] is None
    assert report["groups"][0]["flops"]["tensor"] is None
    warning = next(w for w in doc["warnings"] if "tensor FLOPs unknown" in w)
    assert "sm__ops_path_tensor_src_" in warning
    assert "unknown" in report["provenance"]["tensor"]


def test_v100_instruction_count_times_512(tmp_path, in_tmp_cwd):
    session = roofscope.load(_inst_only(tmp_path, "7.0", "Tesla V100-SXM2-16GB"), use_cache=False)
    report = session.report_dict()["reports"][0]
    assert report["flops"]["tensor"] == 512 * 2_097_152
    assert report["provenance"]["tensor"].startswith("512 ×")


@pytest.mark.usefixtures("shared_sample_cache")  # the bundled sample, ingested once
def test_mobilenet_h100_sample_has_unknown_tensor(in_tmp_cwd):
    session = roofscope.load(SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv")
    doc = session.report_dict()
    assert doc["reports"][0]["flops"]["tensor"] is None
    assert any("tensor FLOPs unknown" in w and "CC 9.0" in w for w in doc["warnings"])


@pytest.mark.usefixtures("shared_sample_cache")  # the bundled sample, ingested once
@pytest.mark.parametrize(
    ("dtype", "family"), [("bf16", "bf16"), ("fp16", "fp16"), ("tf32", "tf32")]
)
@pytest.mark.slow
def test_h100_gemm_counts_two_flops_per_fma(dtype, family, in_tmp_cwd):
    """Measured on the H100: one N³ GEMM → ops_path sum = 2·N³ exactly, while 512 ×
    tensor-pipe instructions would give 128× less."""
    session = roofscope.load(DATA / "h100_gemm" / f"gemm_{dtype}_{N}.raw.csv")
    report = session.report_dict()["reports"][0]
    assert report["flops"]["tensor"] == 2 * N**3
    launch = session.launches().iloc[0]
    assert 2 * N**3 == 512 * 2_097_152 * 128  # what the x512 rule would have missed
    # Dense roof = ½ ncu's aggregate peak: the measured pipe utilisation equals achieved/roof.
    tensor_roof = next(c for c in report["ceilings"] if c["name"] == f"tensor_{family}")
    achieved = report["flops"]["tensor"] / report["time_s"]
    assert achieved / tensor_roof["value"] == pytest.approx(launch["util_tensor"], abs=0.02)
    assert report["groups"][0]["bound"] == "compute (tensor)"


@pytest.mark.usefixtures("shared_sample_cache")  # the bundled sample, ingested once
def test_fp32_gemm_counts_ffma(in_tmp_cwd):
    session = roofscope.load(DATA / "h100_gemm" / f"gemm_fp32_{N}.raw.csv")
    report = session.report_dict()["reports"][0]
    assert report["flops"]["fp32"] == pytest.approx(2 * N**3, rel=1e-3)
    assert report["flops"]["tensor"] == 0
