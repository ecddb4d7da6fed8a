"""Which precision did the work (issue 18): per report, the share of FLOPs per precision, the
tensor FLOPs split by data type from the counters, in JSON and the Kernels header."""

from __future__ import annotations

import json

import pytest
from textual.widgets import Static

import roofscope
from roofscope.jsonout import dumps
from roofscope.present.units import shares
from roofscope.session.report import precision_shares
from roofscope.tui.app import RoofscopeApp
from tests.conftest import SAMPLES
from tests.test_tui import opened

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("shared_sample_cache")]

FP32 = str(SAMPLES / "resnet18_fp32_h100.ncu-raw.csv")
BF16 = str(SAMPLES / "resnet18_bf16_h100.ncu-raw.csv")


def test_shares_split_tensor_by_data_type_and_say_tensor_when_unknown():
    flops = {"fp64": 0.0, "fp32": 5.0, "fp16": None, "tensor": 95.0}
    split = precision_shares(flops, {"tf32": 3.0, "bf16": 1.0, "fp8": 0.0})
    assert [(p["precision"], p["title"]) for p in split] == [
        ("tensor_tf32", "TF32 tensor"),
        ("tensor_bf16", "BF16 tensor"),
        ("fp32", "FP32"),
    ]
    assert [p["share"] for p in split] == pytest.approx([0.7125, 0.2375, 0.05])
    plain = precision_shares(flops, {})
    assert shares(plain) == "tensor 95%, FP32 5%"
    assert precision_shares({"fp32": None, "tensor": None}, {}) == []
    assert shares([]) == "—"


def test_json_says_the_fp32_sample_ran_tf32_and_the_bf16_one_bf16():
    doc = json.loads(dumps(roofscope.load(FP32, BF16).report_dict()))
    fp32, bf16 = (r["precision"] for r in doc["reports"])
    assert fp32[0]["precision"] == "tensor_tf32" and fp32[0]["share"] > 0.9
    assert bf16[0]["precision"] == "tensor_bf16" and bf16[0]["share"] > 0.9
    for parts in (fp32, bf16):
        assert sum(p["share"] for p in parts) == pytest.approx(1.0)
        assert {"precision", "title", "flops", "share"} == set(parts[0])


@pytest.mark.parametrize(("path", "says"), [(FP32, "TF32 tensor 95%"), (BF16, "BF16 tensor 99%")])
async def test_kernels_header_says_the_precision(path, says, in_tmp_cwd):
    app = RoofscopeApp([path])
    async with app.run_test(size=(200, 60)) as pilot:
        await opened(app, pilot)
        status = str(app.query_one("#kernels-status", Static).render())
        assert f"FLOPs {says}" in status, status
