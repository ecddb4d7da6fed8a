"""Reproduce published numbers from CSVs built with the published metric values (DESIGN.md §4)."""

from __future__ import annotations

import pytest

import roofscope
from tests.ncu_builder import details_page, raw_page, write


def test_single_kernel_of_design_section_4(tmp_path, in_tmp_cwd):
    """72,581 cycles at 10,083,762,361 cycle/s; 32,504,064 FLOP; 2,481,024 DRAM bytes."""
    page = details_page(
        [
            (
                "volta_sgemm_128x64_nn",
                {
                    "sm__cycles_elapsed.avg": ("cycle", "72,581"),
                    "sm__cycles_elapsed.avg.per_second": ("cycle/second", "10,083,762,361"),
                    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": ("inst", "15,484,032"),
                    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": ("inst", "763,904"),
                    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": ("inst", "772,096"),
                    "dram__bytes.sum": ("byte", "2,481,024"),
                },
            )
        ],
        kernel_time=True,
    )
    session = roofscope.load(write(tmp_path / "k.csv", page), use_cache=False)
    (row,) = session.reports[0].rows("launch")
    assert row["time_s"] == pytest.approx(72_581 / 10_083_762_361)
    assert row["time_s"] == pytest.approx(7.2e-6, rel=0.01)
    assert row["flops"]["fp32"] == 32_504_064
    assert row["flop_per_s"] == pytest.approx(4.5e12, rel=0.01)
    assert row["ai"]["dram"] == pytest.approx(13.1, abs=0.01)
    assert row["flops"]["tensor"] is None  # no tensor metrics: not measured, not zero


def test_v100_vgg11_row(tmp_path, in_tmp_cwd):
    """221,705,941,507 FLOP, 16,568,700,000 B, 163,316,785 ns → AI 13.38, 1,357.5 GFLOP/s."""
    units = {
        "gpu__time_duration.sum": "nsecond",
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "inst",
        "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": "inst",
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": "inst",
        "dram__bytes.sum": "Gbyte",
    }
    values = {
        "gpu__time_duration.sum": "163,316,785",
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "110,000,000,000",
        "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": "1,705,941,507",
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": "0",
        "dram__bytes.sum": "16.568700",
        "device__attribute_display_name": "Tesla V100-SXM2-16GB",
    }
    path = write(tmp_path / "vgg11.csv", raw_page([("vgg11_step", values)], units, cc="7.0"))
    session = roofscope.load(path, use_cache=False)
    report = session.report_dict()["reports"][0]
    assert report["flops"]["fp32"] == 221_705_941_507
    assert report["bytes"]["dram"] == pytest.approx(16_568_700_000)
    assert report["time_s"] == pytest.approx(0.163316785)
    (group,) = report["groups"]
    assert group["ai"]["dram"] == pytest.approx(13.38, abs=0.005)
    assert group["flop_per_s"] / 1e9 == pytest.approx(1357.5, abs=0.1)
    assert report["gpu"]["spec"] == "v100-sxm2-16gb"
    fp32 = next(c for c in report["ceilings"] if c["name"] == "fp32")
    assert fp32["value"] == pytest.approx(15.7e12)
    assert "datasheet" in fp32["source"]
