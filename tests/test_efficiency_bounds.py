"""Efficiency from incomplete utilisations is a lower bound, and says so (issue 18 item 5).

The ResNet-18 fp32 details page and raw page are the same run; the details page has no tensor or
FP32 utilisation, so its efficiencies come from DRAM alone: conv fprop 8% against 23%, a
potential speedup of 7.15× against 4.91×. Every front end marks them (≥ efficiency, ≤ speedup)
and JSON carries ``efficiency_complete`` (docs/metrics.md §4, docs/json.md).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

import roofscope
from roofscope.present.units import AT_LEAST, AT_MOST, bounded, cut_middle, incomplete_reason
from tests.conftest import SAMPLES, run_cli
from tests.ncu_builder import raw_page, write

pytestmark = pytest.mark.usefixtures("shared_sample_cache")

DETAILS = SAMPLES / "resnet18_fp32_h100.ncu-details.csv"
RAW = SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"


def report(path, fmt: str, *extra: str) -> str:
    """``roofscope report PATH --format FMT`` through ``main`` in this process."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COLUMNS", "200")  # the reason on one line
        result = run_cli("report", str(path), "--format", fmt, *extra, cwd=Path.cwd())
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.slow
def test_details_page_is_a_lower_bound_and_the_raw_page_is_not():
    details, raw = roofscope.load(str(DETAILS)), roofscope.load(str(RAW))
    d_hist, r_hist = details.reports[0].histogram(), raw.reports[0].histogram()
    assert d_hist["potential_speedup"] == pytest.approx(7.15, abs=0.005)
    assert r_hist["potential_speedup"] == pytest.approx(4.91, abs=0.005)
    assert d_hist["efficiency_complete"] is False and r_hist["efficiency_complete"] is True
    assert d_hist["incomplete"]["missing"] == ["tensor", "fp32"]
    assert d_hist["incomplete"]["launches"] == 361 and r_hist["incomplete"]["launches"] == 0
    d_rows = {r["name"]: r for r in details.reports[0].rows("group")}
    r_rows = {r["name"]: r for r in raw.reports[0].rows("group")}
    fprop_d, fprop_r = d_rows["conv fprop"], r_rows["conv fprop"]
    assert round(100 * fprop_d["efficiency"]) == 8 and round(100 * fprop_r["efficiency"]) == 23
    assert fprop_d["efficiency_complete"] is False and fprop_r["efficiency_complete"] is True
    # a lower bound indeed: never above the complete value of the same run (the details page
    # prints percentages rounded to 0.1)
    for name, row in d_rows.items():
        if row["efficiency"] is not None and r_rows[name]["efficiency"] is not None:
            assert row["efficiency"] <= r_rows[name]["efficiency"] + 5e-4, name


@pytest.mark.slow
def test_json_carries_the_flag_per_row_and_histogram():
    (d,) = json.loads(report(DETAILS, "json"))["reports"]
    (r,) = json.loads(report(RAW, "json"))["reports"]
    assert d["efficiency"]["efficiency_complete"] is False
    assert r["efficiency"]["efficiency_complete"] is True
    assert all(g["efficiency_complete"] is False for g in d["groups"])
    assert all(g["efficiency_complete"] is True for g in r["groups"])
    assert {b["efficiency_complete"] for b in d["efficiency"]["bins"] if b["launches"]} == {False}
    assert d["efficiency"]["incomplete"]["missing"] == ["tensor", "fp32"]


@pytest.mark.slow
def test_report_table_and_markdown_mark_the_bounds():
    for fmt in ("table", "md"):
        details, raw = report(DETAILS, fmt), report(RAW, fmt)
        assert f"{AT_MOST} 7.15×" in details and f"{AT_LEAST} 8%" in details, fmt
        assert "no tensor or FP32 utilisation" in details, fmt
        assert AT_LEAST not in raw and AT_MOST not in raw, fmt
        assert "4.91×" in raw, fmt


def test_csv_keeps_numbers_and_carries_the_flag():
    rows = list(csv.DictReader(io.StringIO(report(DETAILS, "csv"))))
    assert {r["efficiency_complete"] for r in rows} == {"False"}
    assert all(float(r["efficiency"]) < 1 for r in rows if r["efficiency"])
    rows = list(csv.DictReader(io.StringIO(report(RAW, "csv"))))
    assert {r["efficiency_complete"] for r in rows} == {"True"}


def _launch(dram_pct: str) -> dict[str, str]:
    return {
        "gpu__time_duration.sum": "1,000",
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": dram_pct,
    }


def test_a_saturated_component_is_complete_without_the_others(tmp_path, in_tmp_cwd):
    """At 100% the missing components cannot raise the maximum: exact, not a bound."""
    units = {"gpu__time_duration.sum": "ns", _launch("0").popitem()[0]: "%"}
    text = raw_page([("a", _launch("100")), ("b", _launch("50"))], units)
    session = roofscope.load(write(tmp_path / "dram.csv", text), use_cache=False)
    rows = {r["kernel"]: r for r in session.reports[0].rows("launch")}
    assert rows["a"]["efficiency"] == 1.0 and rows["a"]["efficiency_complete"] is True
    assert rows["b"]["efficiency"] == 0.5 and rows["b"]["efficiency_complete"] is False


def test_bound_and_cut_texts():
    assert bounded("8%", AT_LEAST, False) == "≥ 8%"
    assert bounded("8%", AT_LEAST, True) == bounded("8%", AT_LEAST, None) == "8%"
    assert bounded("—", AT_MOST, False) == "—"
    assert incomplete_reason(["tensor", "fp32"]) == (
        "no tensor or FP32 utilisation, so efficiency from DRAM alone"
    )
    a = "derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2"
    b = "derived__smsp__sass_thread_inst_executed_op_dfma_pred_on_x2"
    cut_a, cut_b = cut_middle(a, 38), cut_middle(b, 38)
    assert len(cut_a) == len(cut_b) == 38 and cut_a != cut_b
    assert cut_a.startswith("derived__sm__") and cut_b.startswith("derived__smsp__")
    assert cut_a.endswith("dfma_pred_on_x2") and "…" in cut_a
    rollups = {
        cut_middle(f"gpu__dram_throughput.{r}.pct_of_peak_sustained_elapsed", 36)
        for r in ("avg", "max", "min", "sum")
    }
    assert len(rollups) == 4
    assert cut_middle("short", 38) == "short"
