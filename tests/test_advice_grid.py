"""The ``launch_grid`` rule (issue 19 item 2): tensor-core groups far below their roof whose
launches leave SMs idle. On the bundled real exports its numbers are checked against the
export's Grid Size, waves and durations read here with the csv module (not ingest/); on exports
built to order it fires where it must and stays quiet where it must not; and it reaches
``roofscope advise --format json``."""

from __future__ import annotations

import csv
import gzip
import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

import roofscope
from roofscope.analysis.advice import ROOFSCOPE, step_speedup
from roofscope.analysis.advice.grid import (
    BELOW_ROOF,
    GRID_SHARE,
    TAIL_IDLE,
    TENSOR_SHARE,
    Config,
    grid_blocks,
    judge,
)
from tests.conftest import SAMPLES, run_cli, shared
from tests.ncu_builder import raw_page, write

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

RULE = "launch_grid"
TIME_UNITS = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "s": 1.0}


# -- an independent reading of a raw page: stdlib csv only --------------------------------------


@dataclass(frozen=True)
class Launch:
    launch_id: int
    blocks: int | None
    waves: float | None
    time_s: float
    tensor_ops: float


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _read_raw(path: Path) -> tuple[int, list[Launch]]:
    """(SM count, launches) of a raw page, from its Grid Size, launch__sm_count,
    launch__waves_per_multiprocessor, duration and tensor-op columns."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        lines = fh.read().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.reader(lines[start:]))
    header, units = rows[0], rows[1]
    col = {name: i for i, name in enumerate(header)}
    duration = col["gpu__time_duration.sum"]
    scale = TIME_UNITS[units[duration]]
    tensor = [
        i
        for name, i in col.items()
        if name.startswith("sm__ops_path_tensor_src_") and name.endswith(".sum")
    ]
    sms: set[int] = set()
    out = []
    for row in rows[2:]:
        if not row or not row[0].strip().isdigit():
            continue
        x, y, z = (int(v) for v in row[col["Grid Size"]].strip("()").split(","))
        waves = row[col["launch__waves_per_multiprocessor"]]
        sms.add(int(_number(row[col["launch__sm_count"]])))
        out.append(
            Launch(
                int(row[0]),
                x * y * z,
                _number(waves) if waves else None,
                _number(row[duration]) * scale,
                sum(_number(row[i]) for i in tensor if row[i]),
            )
        )
    (sm_count,) = sms
    return sm_count, out


@cache  # one load per sample (the rule is a pure function of it)
def _loaded(path: Path) -> tuple[list, dict[int, str], list[dict]]:
    session = roofscope.load(path)
    try:
        report = session.reports[0]
        groups = report.rows("group")
        of_launch = {int(r["name"]): str(r["grp"]) for r in report.rows("launch")}
        return report.advice(), of_launch, groups
    finally:
        session.close()


def _item(path: Path):
    found = [a for a in _loaded(path)[0] if a.rule == RULE]
    return found[0] if found else None


def _qualifies(group: dict) -> bool:
    """Tensor-core work under BELOW_ROOF of its attainable FLOP/s, by this test's arithmetic."""
    flops = {k: v or 0.0 for k, v in group["flops"].items()}
    total = sum(flops.values())
    attainable = group["attainable_flop_per_s"]
    if not total or not attainable or not group["time_s"]:
        return False
    reached = total / group["time_s"]
    return flops["tensor"] / total >= TENSOR_SHARE and reached / attainable < BELOW_ROOF


def _expected(path: Path) -> dict:
    """What the rule should find, from the csv reading and the report's group rows."""
    sm_count, launches = _read_raw(path)
    _, of_launch, groups = _loaded(path)
    step = sum(launch.time_s for launch in launches)
    candidates = {g["name"] for g in groups if _qualifies(g)}
    small = tail = 0
    spent = gain = 0.0
    names: set[str] = set()
    for launch in launches:
        if of_launch[launch.launch_id] not in candidates or launch.tensor_ops <= 0:
            continue
        if launch.blocks < sm_count:
            small += 1
            idle = 1 - launch.blocks / sm_count
        elif launch.waves is not None and launch.waves > 1:
            idle = 1 - launch.waves / math.ceil(launch.waves)
            if idle < TAIL_IDLE:
                continue
            tail += 1
        else:
            continue
        spent += launch.time_s
        gain += launch.time_s * idle
        names.add(of_launch[launch.launch_id])
    return {
        "sm": sm_count,
        "step": step,
        "small": small,
        "tail": tail,
        "time": spent,
        "gain": gain,
        "groups": names,
    }


# The bundled exports with launch grids and waves (ncu 2025.3.1, H100, 132 SMs)
FIRING = [
    "resnet18_bf16_h100.ncu-raw.csv",
    "resnet18_fp32_h100.ncu-raw.csv",
    "resnet18_bf16_b8_h100.ncu-raw.csv.gz",
    "unet_bf16_b16_h100.ncu-raw.csv.gz",
    "bert_bf16_b8_infer_h100.ncu-raw.csv.gz",
]
QUIET = [
    "gemm4096_bf16_h100.ncu-raw.csv",  # one bf16 GEMM at 90% of its tensor roof
    "mlp_fp32_b128_h100.ncu-raw.csv",  # its GEMMs on the FP32 pipe: no tensor-core group
    "mobilenetv2_fp32_h100.ncu-raw.csv",  # likewise (depthwise convolutions, FP32)
    "resnet18_fp32_h100.ncu-details.csv",  # a details page: neither SM count nor waves
]


@pytest.mark.usefixtures("shared_sample_cache")
@pytest.mark.parametrize("sample", FIRING)
def test_fires_on_real_exports_with_the_numbers_of_their_grid_columns(sample: str) -> None:
    path = SAMPLES / sample
    want = _expected(path)
    item = _item(path)
    assert item is not None, f"{sample}: launch_grid should fire"
    assert item.source == ROOFSCOPE
    assert item.launches == want["small"] + want["tail"]
    assert item.time_s == pytest.approx(want["time"], rel=1e-9)
    assert item.est_gain_s == pytest.approx(want["gain"], rel=1e-9)
    assert 0 < item.est_gain_s < item.time_s
    assert item.time_pct == pytest.approx(100 * want["time"] / want["step"], rel=1e-6)
    assert item.est_step_speedup == pytest.approx(step_speedup(want["step"], want["gain"]))
    assert set(item.groups) == want["groups"]
    assert item.time_pct >= GRID_SHARE
    small = [e for e in item.evidence if "fewer blocks than the GPU's" in e]
    tail = [e for e in item.evidence if "partial last one" in e]
    assert (len(small), len(tail)) == (bool(want["small"]), bool(want["tail"]))
    if want["small"]:
        assert small[0].startswith(f"{want['small']} tensor-core launch(es)")
        assert f"{want['sm']} SMs" in small[0]
        assert any("Σ time × (1 − blocks/SMs)" in a for a in item.assumptions)
    if want["tail"]:
        assert tail[0].startswith(f"{want['tail']} tensor-core launch(es)")
        assert "split-K" in item.action
    assert any("launch__waves_per_multiprocessor (LaunchStats section)" in e for e in item.evidence)
    assert any("not checked by applying it" in a for a in item.assumptions)


@pytest.mark.usefixtures("shared_sample_cache")
def test_both_cases_on_the_resnet_step() -> None:
    """ResNet-18 bf16: small-grid convolutions and one 392-block fprop at 1.48 waves."""
    want = _expected(SAMPLES / "resnet18_bf16_h100.ncu-raw.csv")
    assert want["small"] > 0 and want["tail"] == 1
    item = _item(SAMPLES / "resnet18_bf16_h100.ncu-raw.csv")
    assert any("(392, 1, 1) = 392 blocks, 1.48 waves" in e for e in item.evidence)
    assert "larger batch" in item.action and "split-K" in item.action


@pytest.mark.usefixtures("shared_sample_cache")
@pytest.mark.parametrize("sample", QUIET)
def test_quiet_on_real_exports_without_the_evidence(sample: str) -> None:
    assert _item(SAMPLES / sample) is None


@pytest.mark.usefixtures("shared_sample_cache")
def test_the_gemm_at_its_roof_is_not_a_candidate() -> None:
    (group,) = _loaded(SAMPLES / "gemm4096_bf16_h100.ncu-raw.csv")[2]
    assert not _qualifies(group)  # 90% of the tensor roof, and 132 blocks on 132 SMs


@pytest.mark.usefixtures("shared_sample_cache")
def test_on_the_shared_h100_export() -> None:
    path = shared("h100", "resnet18_fp32.raw.csv")
    want = _expected(path)
    item = _item(path)
    assert item is not None
    assert item.launches == want["small"] + want["tail"]
    assert item.est_gain_s == pytest.approx(want["gain"], rel=1e-9)


@pytest.mark.usefixtures("shared_sample_cache")
@pytest.mark.parametrize(
    "where",
    [
        ("generated", "ncu_2025.3.1_h100", "torch_raw.csv"),
        ("generated", "ncu_2025.3.1_h100", "app_full_raw.csv"),
        ("wild", "meinie0826__Roofline-Analysis__decodebench_results_ncu_flashinfer_paged_"
         "decode__gqa_bf16_b128_ctx2k_p64.ncu.csv"),
    ],
    ids=lambda w: w[-1][:40],
)  # fmt: skip
def test_quiet_on_shared_exports_without_tensor_core_groups(where: tuple[str, ...]) -> None:
    path = shared(*where)
    assert _item(path) is None
    assert not any(_qualifies(g) for g in _loaded(path)[2])


# -- exports built to order ---------------------------------------------------------------------

TENSOR = "sm__ops_path_tensor_src_bf16_dst_fp32.sum"
WAVES = "launch__waves_per_multiprocessor"
UNITS = {
    "gpu__time_duration.sum": "us",
    "dram__bytes.sum": "byte",
    TENSOR: "",
    "launch__sm_count": "SM",
    WAVES: "",
}
GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"


def _gemm(us: float, waves: float | None = None, flops: float = 1e10) -> dict[str, str]:
    """One bf16 GEMM launch on an H100 (989 TFLOP/s dense bf16 on the datasheet)."""
    values = {
        "gpu__time_duration.sum": f"{us:g}",
        "dram__bytes.sum": "1000000",
        TENSOR: f"{flops:.0f}",
        "launch__sm_count": "132",
        "device__attribute_display_name": "NVIDIA H100 80GB HBM3",
    }
    if waves is not None:
        values[WAVES] = f"{waves:g}"
    return values


def _built(tmp_path: Path, launches: list[tuple[str, dict]], grids: list[str]):
    path = write(tmp_path / "built.csv", raw_page(launches, UNITS, grids=grids))
    session = roofscope.load(path, use_cache=False)
    try:
        report = session.reports[0]
        items = [a for a in report.advice() if a.rule == RULE]
        return (items[0] if items else None), report.rows("group")
    finally:
        session.close()


def test_a_tensor_kernel_of_40_blocks_on_132_sms_fires(tmp_path: Path) -> None:
    item, (group,) = _built(tmp_path, [(GEMM, _gemm(100, waves=40 / 132))], ["(40, 1, 1)"])
    assert _qualifies(group)  # 100 TFLOP/s of 989
    assert item is not None and item.groups == ["GEMM"] and item.launches == 1
    assert item.time_s == pytest.approx(100e-6)
    assert item.est_gain_s == pytest.approx(100e-6 * (1 - 40 / 132))
    assert item.est_step_speedup == pytest.approx(132 / 40)  # the whole step is this launch
    assert "(40, 1, 1) = 40 blocks" in item.evidence[0]
    assert "larger batch" in item.action and "split-K" not in item.action


def test_the_same_kernel_with_1320_blocks_does_not(tmp_path: Path) -> None:
    item, (group,) = _built(tmp_path, [(GEMM, _gemm(100, waves=10.0))], ["(1320, 1, 1)"])
    assert _qualifies(group)  # still far below its roof: the grid is not why
    assert item is None


def test_a_kernel_at_its_roof_does_not(tmp_path: Path) -> None:
    item, (group,) = _built(tmp_path, [(GEMM, _gemm(12, waves=40 / 132))], ["(40, 1, 1)"])
    assert not _qualifies(group)  # 833 TFLOP/s of 989: 84% of its roof
    assert item is None


def test_a_tail_wave_fires_with_its_model(tmp_path: Path) -> None:
    item, _ = _built(tmp_path, [(GEMM, _gemm(100, waves=1.2))], ["(317, 1, 1)"])
    assert item is not None
    assert item.est_gain_s == pytest.approx(100e-6 * (1 - 1.2 / 2))
    assert "1.2 waves" in item.evidence[0] and "split-K" in item.action
    assert any("(1 − waves/⌈waves⌉)" in a for a in item.assumptions)


@pytest.mark.parametrize(
    ("waves", "grid"),
    [
        (1.8, "(475, 1, 1)"),  # the last wave 80% full: 10% of the slots idle, under TAIL_IDLE
        (3.0, "(792, 1, 1)"),  # whole waves
        (0.6, "(158, 1, 1)"),  # under one wave but a block on every SM: not judged
    ],
)
def test_full_enough_waves_do_not(tmp_path: Path, waves: float, grid: str) -> None:
    item, _ = _built(tmp_path, [(GEMM, _gemm(100, waves=waves))], [grid])
    assert item is None


def test_without_waves_only_blocks_vs_sms_and_the_evidence_says_so(tmp_path: Path) -> None:
    item, _ = _built(tmp_path, [(GEMM, _gemm(100))], ["(40, 1, 1)"])
    assert item is not None
    assert any(
        f"the export has no {WAVES}" in e and "only blocks vs SMs" in e for e in item.evidence
    )
    quiet, _ = _built(tmp_path, [(GEMM, _gemm(100))], ["(317, 1, 1)"])  # a tail it cannot see
    assert quiet is None


def test_launches_without_tensor_work_are_not_judged(tmp_path: Path) -> None:
    """A split-K reduce in a GEMM group: small grid, no tensor ops, not this rule's."""
    reduce = {**_gemm(30, waves=0.1), TENSOR: "0"}
    launches = [(GEMM, _gemm(100, waves=10.0)), ("splitKreduce_kernel", reduce)]
    item, _ = _built(tmp_path, launches, ["(1320, 1, 1)", "(8, 1, 1)"])
    assert item is None


def test_a_small_share_of_the_step_stays_quiet(tmp_path: Path) -> None:
    """Under GRID_SHARE of the step: the small launch is 0.5% of it."""
    big = ("sm90_xmma_gemm_big", _gemm(19_900, waves=10.0, flops=1e12))
    item, _ = _built(tmp_path, [(GEMM, _gemm(100, waves=0.3)), big], ["(40, 1, 1)", "(1320, 1, 1)"])
    assert item is None


def test_judge_and_grid_text() -> None:
    assert grid_blocks("(2, 66, 1)") == 132 and grid_blocks(" ( 4 ,1, 58 ) ") == 232
    assert grid_blocks("(0, 1, 1)") is None and grid_blocks("132") is None
    assert grid_blocks(None) is None and grid_blocks("(1, 2)") is None
    verdict = judge(Config("g", "(66, 1, 1)", None, 1, 1.0), 132)
    assert verdict is not None and verdict.idle == pytest.approx(0.5)
    assert judge(Config("g", "(66, 1, 1)", None, 1, 1.0), None) is None  # no SM count, no waves
    assert judge(Config("g", None, 2.0, 1, 1.0), 132) is None
    tail = judge(Config("g", None, 2.2, 1, 1.0), None)
    assert tail is not None and tail.idle == pytest.approx(1 - 2.2 / 3)


# -- through the entry point -------------------------------------------------------------------


def test_roofscope_advise_json_carries_the_item(tmp_path: Path) -> None:
    path = write(tmp_path / "small.csv", raw_page([(GEMM, _gemm(100, 40 / 132))], UNITS,
                                                  grids=["(40, 1, 1)"]))  # fmt: skip
    out = run_cli("advise", str(path), "--format", "json", "--no-cache", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (report,) = json.loads(out.stdout)["reports"]
    (item,) = [a for a in report["advice"] if a["rule"] == RULE]
    assert item["source"] == "roofscope" and item["groups"] == ["GEMM"]
    assert item["launches"] == 1
    assert item["est_gain_s"] == pytest.approx(100e-6 * (1 - 40 / 132))
    assert item["evidence"] and item["assumptions"] and item["action"]


@pytest.mark.usefixtures("shared_sample_cache")
def test_roofscope_advise_json_on_a_real_export(tmp_path: Path) -> None:
    path = SAMPLES / "unet_bf16_b16_h100.ncu-raw.csv.gz"
    want = _expected(path)
    out = run_cli("advise", str(path), "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    items = json.loads(out.stdout)["reports"][0]["advice"]
    (item,) = [a for a in items if a["rule"] == RULE]
    assert item["launches"] == want["small"] + want["tail"]
    assert item["est_gain_s"] == pytest.approx(want["gain"], rel=1e-9)
    gemm = run_cli("advise", str(SAMPLES / "gemm4096_bf16_h100.ncu-raw.csv"), "--format", "json",
                   cwd=tmp_path)  # fmt: skip
    assert RULE not in {a["rule"] for a in json.loads(gemm.stdout)["reports"][0]["advice"]}
