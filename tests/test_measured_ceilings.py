"""Ceilings measured by ``roofscope ceilings`` rank between the datasheet and the report's own
peaks (DESIGN.md §4), for reports of the same GPU model only."""

from __future__ import annotations

import json

import pytest

from roofscope.hardware.measured import gpu_file_key, load_measured, measured_dir, save_measured
from roofscope.hardware.specs import match_device_name
from roofscope.session import load
from tests.conftest import SAMPLES

MEASURED = {
    "device": "NVIDIA H100 80GB HBM3",
    "ceilings": {
        "fp32": {"value": 51.0e12, "method": "fp32 GEMM, TF32 off (FMA pipe), N=8192"},
        "tensor_bf16": {"value": 700e12, "method": "bf16 GEMM (tensor cores), N=8192"},
        "dram": {"value": 2.9e12, "method": "device-to-device copy"},
        "l2": {"value": "broken"},
    },
}


def _ceilings(path: str) -> dict[str, object]:
    session = load(path)
    try:
        return {c.name: c for c in session.reports[0].ceilings}
    finally:
        session.close()


@pytest.mark.slow
def test_measured_ceilings_replace_the_datasheet_for_the_same_gpu():
    saved = save_measured("NVIDIA H100 80GB HBM3", MEASURED)
    assert saved == measured_dir() / "h100-sxm5-80gb.json"
    assert json.loads(saved.read_text())["measured_at"]
    # a metrics-only export has no peaks of its own: measured beats the datasheet
    roofs = _ceilings(str(SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv"))
    assert roofs["fp32"].value == 51.0e12
    assert roofs["fp32"].source.startswith("measured on this machine by roofscope ceilings")
    assert roofs["dram"].value == 2.9e12 and roofs["tensor_bf16"].value == 700e12
    assert roofs["fp64"].source.startswith("datasheet")  # not measured: datasheet stays
    assert "l2" not in roofs  # an unreadable value is ignored, not used


@pytest.mark.slow
def test_the_report_own_peaks_still_win():
    save_measured("NVIDIA H100 80GB HBM3", MEASURED)
    roofs = _ceilings(str(SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"))
    assert roofs["dram"].source.startswith("report:")
    assert roofs["fp32"].source.startswith("report:")


def test_other_gpus_and_mig_slices_ignore_the_measurement():
    save_measured("NVIDIA H100 80GB HBM3", MEASURED)
    assert load_measured(match_device_name("NVIDIA A100-SXM4-80GB")) is None
    assert load_measured(match_device_name("NVIDIA H100 80GB HBM3 MIG 3g.40gb")) is None
    assert load_measured(match_device_name("NVIDIA H100 80GB HBM3"))["ceilings"]["fp32"]


def test_unknown_gpus_get_a_file_named_after_them(tmp_path):
    assert gpu_file_key("NVIDIA Future GPU 99") == "nvidia-future-gpu-99"
    path = save_measured("NVIDIA Future GPU 99", {"ceilings": {}}, tmp_path)
    assert path.name == "nvidia-future-gpu-99.json"


def test_ceilings_command_keeps_only_roofs_near_the_datasheet(monkeypatch, capsys):
    """The measurement itself runs on the GPU machine (tools/device/doctor_ceilings.sh); here
    its result, as measured on the H100, goes through the command's compare-and-save step."""
    pytest.importorskip("torch")
    from roofscope.cli import main
    from roofscope.profiling import ceilings_bench

    h100 = {
        "device": "NVIDIA H100 80GB HBM3",
        "torch": "2.11.0+cu130",
        "cuda": "13.0",
        "ceilings": {
            "tensor_bf16": {"value": 7.8662e14, "method": "bf16 GEMM (tensor cores), N=8192"},
            "tensor_int8": {"value": 1.3183e14, "method": "int8 GEMM (_int_mm), N=8192"},
            "dram": {"value": 3.0234e12, "method": "device-to-device copy"},
            "l2": {"value": 4.1895e12, "method": "L2-resident device copy"},
        },
    }
    monkeypatch.setattr(ceilings_bench, "measure", lambda gemm_n: h100)
    assert main(["ceilings", "--format", "json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["ceilings"]}
    assert rows["tensor_int8"]["saved"] is False and rows["tensor_int8"]["of_spec"] < 0.1
    assert rows["tensor_bf16"]["of_spec"] == pytest.approx(0.795, abs=0.001)
    assert rows["l2"]["of_spec"] is None and rows["l2"]["saved"] is True
    saved = load_measured(match_device_name("NVIDIA H100 80GB HBM3"))["ceilings"]
    assert set(saved) == {"tensor_bf16", "dram", "l2"}


@pytest.mark.slow
def test_a_broken_measurement_file_is_ignored():
    folder = measured_dir()
    folder.mkdir(parents=True, exist_ok=True)
    spec = match_device_name("NVIDIA H100 80GB HBM3")
    for text in ("[1]", '{"ceilings": {"fp32": {"value": true}, "dram": {"value": Infinity}}}'):
        (folder / f"{spec.key}.json").write_text(text)
        doc = load_measured(spec)
        assert doc is None or doc["ceilings"] == {}
    roofs = _ceilings(str(SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv"))
    assert roofs["fp32"].source.startswith("datasheet")
