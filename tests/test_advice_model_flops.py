"""The model_flops rule: a layer whose kernels count far more FLOPs than its shape needs.

The real case is ResNet-18's 3-channel stem convolution in bf16 on an H100 (profiled by
``roofscope profile resnet18 --precision bf16 --batch 8`` with per-layer NVTX ranges, its
analytic.json beside it): cuDNN's tensor-core kernel counts 10.7× the stem's useful FLOPs. The
numbers are checked against a stdlib reading of the export, apart from ``ingest/``."""

from __future__ import annotations

import csv
import gzip
import io
import json
import shutil

import pytest
from hypothesis import given
from hypothesis import strategies as st

import roofscope
from roofscope.analysis.advice.model_flops import (
    WASTE_RATIO,
    Layer,
    model_flops,
    nvtx_ranges,
)
from roofscope.analysis.advice.run_files import analytic_beside
from roofscope.cli import main
from tests.conftest import SAMPLES

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

EXPORT = SAMPLES / "resnet18_bf16_b8_layers_h100.ncu-raw.csv.gz"
ANALYTIC = SAMPLES / "resnet18_bf16_b8_layers_h100.analytic.json"


def _stem_by_csv() -> tuple[float, float]:
    """(tensor ops, time of the tensor-core launches) inside the ``stem.0`` range, read with
    csv: the NVTX column holds the thread's push/pop stack, quoted ranges two spaces apart."""
    rows = csv.reader(io.StringIO(gzip.decompress(EXPORT.read_bytes()).decode()))
    header = next(rows)
    next(rows)  # units
    nvtx = header.index("thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg")
    ops = header.index("sm__ops_path_tensor_src_bf16_dst_fp32.sum")
    duration = header.index("gpu__time_duration.sum")
    flops = seconds = 0.0
    for row in rows:
        stack = [part.split(":")[1] for part in row[nvtx].split('"')[1::2]]
        if stack[-1:] == ["stem.0"] and stack[0] == "forward":
            n = float(row[ops].replace(",", ""))
            flops += n
            seconds += float(row[duration].replace(",", "")) / 1e9 if n else 0.0
    return flops, seconds


def _advice(path) -> dict:
    session = roofscope.load(str(path))
    try:
        return {a.rule: a for a in session.reports[0].advice()}
    finally:
        session.close()


def test_stem_convolution_counts_ten_times_its_useful_flops():
    item = _advice(EXPORT)["model_flops"]
    useful = next(
        r["forward_flops"] for r in json.loads(ANALYTIC.read_text())["layers"]
        if r["layer"] == "stem.0"
    )  # fmt: skip
    assert useful == 2 * 8 * 64 * 112 * 112 * 3 * 7 * 7  # 7×7 conv, 3 -> 64 channels, 112²
    flops, conv_s = _stem_by_csv()
    assert flops / useful == pytest.approx(10.67, abs=0.01)
    assert item.title == "layer stem.0 computes 10.7× the FLOPs its shape needs"
    assert item.evidence[0].startswith("stem.0: 20.2 GFLOP measured, 1.89 GFLOP analytic (10.7×)")
    # only the stem is past the threshold: every other convolution is within 1.31× of its shape
    assert len(item.evidence) == 2 and item.launches == 1 and item.groups == ["conv fprop"]
    assert item.time_s == pytest.approx(conv_s, rel=1e-6)
    # gain: the conv at the rate it runs, doing the useful FLOPs only (the 0.03 GFLOP of the
    # stem's casts and transforms count as measured, hence the tolerance)
    assert item.est_gain_s == pytest.approx(conv_s * (1 - useful / flops), rel=2e-3)
    assert item.time_pct == pytest.approx(100 * conv_s / 3.805e-3, rel=2e-3)
    assert any("not checked by applying it" in a for a in item.assumptions)


def test_quiet_without_the_analytic_count_or_the_layer_ranges(tmp_path):
    alone = tmp_path / EXPORT.name
    shutil.copy(EXPORT, alone)
    assert "model_flops" not in _advice(alone)  # no analytic.json: nothing to compare with
    (tmp_path / ANALYTIC.name).write_text("{not json")
    assert "model_flops" not in _advice(alone)
    # a run folder's analytic.json counts, but a compiled run has no layer ranges
    compiled = tmp_path / "run" / "resnet18_bf16_b8_compile_h100.ncu-raw.csv.gz"
    compiled.parent.mkdir()
    shutil.copy(SAMPLES / compiled.name, compiled)
    shutil.copy(ANALYTIC, compiled.parent / "analytic.json")
    assert analytic_beside(compiled) is not None
    assert "model_flops" not in _advice(compiled)


def test_run_folder_analytic_json_is_found(tmp_path):
    run = tmp_path / "20261124-021321-resnet18_bf16_b8-roofline"
    run.mkdir()
    shutil.copy(EXPORT, run / "resnet18_bf16_b8_roofline.ncu-raw.csv.gz")
    shutil.copy(ANALYTIC, run / "analytic.json")
    assert _advice(run / "resnet18_bf16_b8_roofline.ncu-raw.csv.gz")["model_flops"].launches == 1


def test_thresholds_decide():
    stem = Layer("stem.0", 1e9, 10e9, 60e-6, 1, ("conv fprop",))
    near = Layer("conv2", 1e9, (WASTE_RATIO - 0.01) * 1e9, 1e-3, 5, ("conv fprop",))
    assert [a.rule for a in model_flops([stem, near], 3e-3, "resnet18")] == ["model_flops"]
    assert model_flops([near], 3e-3, "resnet18") == []
    assert model_flops([stem], 1.0, "resnet18") == []  # 60 µs of a 1 s step: under 1%
    [item] = model_flops([stem], 3e-3, "resnet18")
    assert item.est_gain_s == pytest.approx(60e-6 * 0.9)


def test_advise_json_through_the_cli(capsys):
    assert main(["advise", str(EXPORT), "--format", "json"]) == 0
    items = json.loads(capsys.readouterr().out)["reports"][0]["advice"]
    [item] = [a for a in items if a["rule"] == "model_flops"]
    assert item["source"] == "roofscope" and item["est_gain_s"] > 0


def test_nvtx_ranges_of_ncu_text():
    text = (
        "547  <default domain>:forward:none:none:none:none:none:none  "
        "<default domain>:stages.0.0.conv1:none:none:none:none:none:none | "
    )
    assert nvtx_ranges(text) == ["forward", "stages.0.0.conv1"]
    assert nvtx_ranges(None) == [] and nvtx_ranges("") == []


@given(st.text())
def test_nvtx_ranges_never_raise(text):
    assert isinstance(nvtx_ranges(text), list)
