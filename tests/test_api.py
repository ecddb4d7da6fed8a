"""The Python API: roofscope.load(...) and its pandas frames."""

from __future__ import annotations

import subprocess
import sys

import pytest

import roofscope
from tests.conftest import SAMPLES

MOBILENET = SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv"

# the bundled samples are opened read-only: each is ingested once per worker (conftest)
pytestmark = pytest.mark.usefixtures("shared_sample_cache")


def test_frames(in_tmp_cwd):
    session = roofscope.load(MOBILENET)
    groups = session.groups()
    launches = session.launches()
    kernels = session.kernels()
    assert len(launches) == 459
    assert groups["launches"].sum() == 459
    assert kernels["launches"].sum() == 459
    assert groups["time_s"].sum() == pytest.approx(launches["time_s"].sum())
    assert {
        "name",
        "time_pct",
        "flops_fp32",
        "bytes_dram",
        "ai_dram",
        "bound",
        "efficiency",
        "headroom_s",
    } <= set(groups.columns)
    assert {"kernel", "grp", "time_s", "fp32", "dram", "efficiency"} <= set(launches.columns)


def test_report_dict_matches_frames(in_tmp_cwd):
    session = roofscope.load(MOBILENET)
    doc = session.report_dict(by="kernel", top=3)
    rows = doc["reports"][0]["rows"]
    assert len(doc["reports"][0]["groups"]) == 3
    assert len(rows) == 3
    frame = session.kernels().head(3)
    assert [r["name"] for r in rows] == frame["name"].tolist()


@pytest.mark.slow
def test_cli_start_up_does_not_import_pandas_or_textual():
    code = (
        "import sys, roofscope.cli, roofscope.session, roofscope.output; "
        "print(sorted(m for m in ('pandas', 'textual', 'torch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_group_detail_averages_unitless_values_and_sums_counts(in_tmp_cwd):
    session = roofscope.load(SAMPLES / "resnet18_fp32_h100.ncu-raw.csv")
    rows = {r.name: r for r in session.reports[0].group_detail("GEMM")}
    major = rows["device__attribute_compute_capability_major"]
    assert major.value == pytest.approx(9) and major.source == "time-weighted mean"
    launches = sum(r["launches"] for r in session.reports[0].rows("group") if r["name"] == "GEMM")
    assert launches > 1 and rows["time_s"].source  # derived rows still present


def test_missing_gpu_warning_fits_the_kind_of_file(tmp_path, in_tmp_cwd):
    """An nsys stats table is not a details page: the hint says why this file has no GPU."""
    path = tmp_path / "r_cuda_gpu_kern_sum.csv"
    path.write_text(
        "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),"
        "Name\n100.0,3000,3,1000,1000,900,1100,100,kern_a\n"
    )
    warnings = roofscope.load(path, use_cache=False).warnings
    gpu = next(w for w in warnings if "does not name its GPU" in w)
    assert "nsys stats tables never do" in gpu and "details" not in gpu


def _temp_tables(session) -> int:
    return session.con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name LIKE 'rs_perm_%'"
    ).fetchall()[0][0]


@pytest.mark.slow
def test_a_closed_pager_leaves_no_temp_table_and_reads_as_empty(in_tmp_cwd):
    from roofscope.analysis.browse import Filter

    session = roofscope.load(SAMPLES / "resnet18_fp32_h100.ncu-raw.csv")
    before = _temp_tables(session)
    pager = session.reports[0].pager(Filter())
    assert _temp_tables(session) == before + 1
    for sort in ("time_s", "flop_per_s", "ai_dram", "kernel"):
        for regex in (None, "conv", "gemm|elementwise"):
            for descending in (True, False):
                session.reports[0].close_pager(pager)
                pager = session.reports[0].pager(Filter(regex), sort, descending)
    assert _temp_tables(session) == before + 1
    session.reports[0].close_pager(pager)
    session.reports[0].close_pager(pager)  # twice is harmless
    assert _temp_tables(session) == before
    # a view may ask once more for what it replaced
    assert session.reports[0].page(pager, 0, 10) == []
