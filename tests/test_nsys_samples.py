"""Every nsys export in the shared samples loads, with counts checked against independent SQL
run on the export itself (sqlite3 on the file, DuckDB on the parquetdir, csv on stats files)."""

from __future__ import annotations

import csv
import os
import shutil
import sqlite3
from pathlib import Path

import duckdb
import pytest

from roofscope.cli import main
from roofscope.errors import RoofscopeError
from roofscope.session import load
from tests.conftest import SHARED, shared

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

GEN = "generated/nsys_2025.3.1_from_ayush-os_a100"
SQLITES = [
    "public/LeiWang1999__memfusion_artifact__report1.sqlite",  # 2023, EXPORT_META_DATA, NVTX
    "public/lockfuehrer__beast_ressoruces__report1.sqlite",  # 2020, TARGET_INFO_CUDA_GPU
    "public/martisu1631998__kmeans-parallel__report2.sqlite",  # 2021, minimal TARGET_INFO_GPU
    "public/Jorgedavyd__cuda__profiling_report1.sqlite",  # 2024.6, META_DATA_EXPORT
    "public/p4arth__cuda-perf-sandbox__report1.sqlite",  # 2025.5
    f"{GEN}/ayush_vector_add_profile_v3.sqlite",  # 2025.3, GPU_METRICS, NVTX
]


def _independent(path: Path) -> dict[str, object]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    kernels = con.execute(
        "SELECT count(*), sum(end - start), count(DISTINCT demangledName) "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL"
    ).fetchone()
    per_name = dict(
        con.execute(
            "SELECT s.value, sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.demangledName GROUP BY s.value"
        ).fetchall()
    )
    memcpy = con.execute("SELECT count(*), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY").fetchone()
    con.close()
    return {"kernels": kernels, "per_name": per_name, "memcpy": memcpy}


@pytest.mark.parametrize("name", SQLITES, ids=lambda n: Path(n).name[:40])
def test_sqlite_of_every_era_matches_independent_sql(name: str) -> None:
    path = shared(*name.split("/"))
    truth = _independent(path)
    session = load(path)
    report = session.reports[0]
    assert report.layout == "nsys-sqlite"
    launches, total_ns, _distinct = truth["kernels"]  # type: ignore[misc]
    totals = session.reports[0].totals()
    assert totals["launches"] == launches
    assert totals["time_s"] == pytest.approx(total_ns / 1e9, rel=1e-9)
    by_kernel = {r["name"]: r["time_s"] for r in session.reports[0].rows("kernel")}
    assert by_kernel == pytest.approx({k: v / 1e9 for k, v in truth["per_name"].items()})
    count, size = truth["memcpy"]  # type: ignore[misc]
    memops = session.con.execute(
        "SELECT count(*), sum(bytes) FROM memops WHERE report_id = 0 AND kind <> 'memset'"
    ).fetchall()[0]
    assert memops[0] == count and (memops[1] or 0) == (size or 0)
    assert report.gpu_name and report.sm_count
    assert session.reports[0].rows("group")  # grouping rules apply to nsys kernels too


def test_2020_gpu_info_and_two_devices() -> None:
    session = load(shared("public", "lockfuehrer__beast_ressoruces__report1.sqlite"))
    gpus = session.con.execute("SELECT device, name, sm_count, cc FROM gpus ORDER BY 1").fetchall()
    assert gpus == [(0, "Tesla V100-PCIE-32GB", 80, "7.0"), (1, "Tesla V100-PCIE-32GB", 80, "7.0")]


def test_gpu_metrics_drop_the_invalid_first_sample() -> None:
    path = shared(*f"{GEN}/ayush_vector_add_profile_v3.sqlite".split("/"))
    con = sqlite3.connect(path)
    raw = con.execute("SELECT count(*), count(DISTINCT metricId) FROM GPU_METRICS").fetchone()
    negative = con.execute("SELECT count(*) FROM GPU_METRICS WHERE timestamp <= 0").fetchone()[0]
    con.close()
    session = load(path)
    kept = session.con.execute("SELECT count(*), min(ts_ns) FROM gpu_metrics").fetchall()[0]
    assert negative == raw[1]  # exactly the first sample of each of the 14 metrics
    assert kept[0] == raw[0] - raw[1] and kept[1] > 0
    garbage = session.con.execute(
        "SELECT count(*) FROM gpu_metrics WHERE metric = 'GPC Clock Frequency' AND value < 0"
    ).fetchall()[0][0]
    assert garbage == 0


def test_nvtx_attribution_matches_the_ranges() -> None:
    """v3 pushes 'Warmup' (10 launches) then 'Profile_Loop' (1,000), as nvtx_sum says."""
    session = load(
        shared(*f"{GEN}/ayush_vector_add_profile_v3.sqlite".split("/")), axis="nvtx-inner"
    )
    assert {r["name"]: r["launches"] for r in session.reports[0].rows("group")} == {
        "Profile_Loop": 1000,
        "Warmup": 10,
    }


def test_nvtx_innermost_and_outermost_differ_on_nested_ranges() -> None:
    path = shared("public", "LeiWang1999__memfusion_artifact__report1.sqlite")
    inner = load(path, axis="nvtx-inner").reports[0].rows("group")
    outer = load(path, axis="nvtx-outer").reports[0].rows("group")
    assert [r["name"] for r in outer] == ["ExecutionContext::execute"]
    assert len(inner) > 20 and "/fc/Gemm" in {r["name"] for r in inner}
    assert sum(r["launches"] for r in inner) == sum(r["launches"] for r in outer) == 36


def test_parquetdir_equals_independent_duckdb() -> None:
    folder = shared(*f"{GEN}/ayush_vector_add_N10_parquetdir".split("/"))
    k = f"read_parquet('{folder}/CUPTI_ACTIVITY_KIND_KERNEL.parquet')"
    count, total = duckdb.sql(f'SELECT count(*), sum("end" - start) FROM {k}').fetchall()[0]
    session = load(folder)
    assert session.reports[0].layout == "nsys-parquetdir"
    totals = session.reports[0].totals()
    assert (totals["launches"], totals["time_s"]) == (count, pytest.approx(total / 1e9))
    assert session.reports[0].gpu_name == "NVIDIA A100 80GB PCIe"


def _stats_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize(
    "name",
    [
        "ayush_vector_add_N10_cuda_gpu_kern_sum.csv",
        "ayush_vector_add_N10_usec_cuda_gpu_kern_sum.csv",
        "ayush_vector_add_N10_cuda_gpu_kern_gb_sum.csv",
        "ayush_vector_add_N10_base_cuda_gpu_kern_sum_base.csv",
        "ayush_vector_add_profile_v3_cuda_gpu_kern_sum.csv",
        "ayush_vector_add_profile_streamed_cuda_gpu_kern_sum.csv",
    ],
)
def test_kern_sum_files(name: str) -> None:
    path = shared(GEN, name)
    rows = _stats_rows(path)
    unit = 1e-6 if "(us)" in ",".join(rows[0]) else 1e-9
    time_col = next(c for c in rows[0] if c.startswith("Total Time"))
    session = load(path)
    got = session.reports[0].rows("group")
    assert sum(r["launches"] for r in got) == sum(int(r["Instances"]) for r in rows)
    assert session.reports[0].totals()["time_s"] == pytest.approx(
        sum(float(r[time_col]) for r in rows) * unit, rel=1e-4
    )
    one = got[0]
    med = next(c for c in rows[0] if c.startswith("Med"))
    assert one["time_med_s"] == pytest.approx(float(rows[0][med]) * unit)
    assert one["time_min_s"] == pytest.approx(float(rows[0][med.replace("Med", "Min")]) * unit)


def test_public_kern_sum_with_million_instances() -> None:
    path = shared("public", "CodeGandee__llm-perf-opt__summary_cuda_gpu_kern_sum.csv")
    rows = _stats_rows(path)
    session = load(path)
    kernels = session.reports[0].rows("kernel")
    assert len(kernels) == len({r["Name"] for r in rows}) == 113
    assert sum(r["launches"] for r in kernels) == 1_695_983
    total = sum(float(r["Total Time (ns)"]) for r in rows) / 1e9
    assert session.reports[0].totals()["time_s"] == pytest.approx(total, rel=1e-6)


def test_gpu_trace_csv_is_a_timeline_in_any_time_unit() -> None:
    ns = load(shared(GEN, "ayush_vector_add_N10_cuda_gpu_trace.csv"))
    us = load(shared(GEN, "ayush_vector_add_N10_usec_cuda_gpu_trace.csv"))
    spans_ns = ns.con.execute("SELECT start_ns, end_ns FROM spans ORDER BY 1").fetchall()
    spans_us = us.con.execute("SELECT start_ns, end_ns FROM spans ORDER BY 1").fetchall()
    assert spans_ns == spans_us == [(960452567, 960962218), (960976554, 961478974)]
    memops = ns.con.execute(
        "SELECT kind, count(*), sum(bytes) FROM memops GROUP BY kind ORDER BY kind"
    ).fetchall()
    assert memops == [("Device-to-Host", 1, 268435000.0), ("Host-to-Device", 2, 536870000.0)]
    assert ns.reports[0].has_timeline() and ns.reports[0].gpu_name == "NVIDIA A100 80GB PCIe"


def test_console_capture_and_json_load_like_the_csv() -> None:
    csv_rows = (
        load(shared(GEN, "ayush_vector_add_N10_cuda_gpu_kern_sum.csv")).reports[0].rows("kernel")
    )
    for name in (
        "ayush_vector_add_N10_console_csv.txt",
        "ayush_vector_add_N10_json_cuda_gpu_kern_sum.json",
        "ayush_vector_add_N10_tsv_cuda_gpu_kern_sum.tsv",
    ):
        rows = load(shared(GEN, name)).reports[0].rows("kernel")
        assert [(r["name"], r["launches"], r["time_s"]) for r in rows] == [
            (r["name"], r["launches"], pytest.approx(r["time_s"])) for r in csv_rows
        ]


def test_empty_and_kernel_less_stats_files_open_with_a_clear_message(capsys) -> None:
    empty = load(shared(GEN, "ayush_vector_add_N10_nvtx_sum.csv"))
    assert empty.reports[0].totals()["launches"] == 0
    assert any("0-byte" in w for w in empty.warnings)
    osrt = load(shared("public", "chukonu-team__MinerU-merge__nsys_stats.csv"))
    assert osrt.reports[0].totals()["launches"] == 0
    assert any("no kernel table" in w and "API/OS-runtime" in w for w in osrt.warnings)


def test_human_formats_are_refused_with_a_hint(capsys) -> None:
    code = main(["report", str(shared(GEN, "ayush_vector_add_N10_console_column.txt"))])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--format csv" in err


def test_nsys_rep_without_nsys_gives_the_export_command(tmp_path, monkeypatch, capsys) -> None:
    report = tmp_path / "run.nsys-rep"
    report.write_bytes(b"\x00binary")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("ROOFSCOPE_NSYS", raising=False)
    assert main(["report", str(report)]) == 2
    err = capsys.readouterr().err
    assert "nsys is not on PATH" in err and "nsys export --type sqlite" in err


def test_nsys_rep_without_nsys_reads_its_sibling_export_with_a_note(tmp_path, monkeypatch):
    """``run.sqlite`` beside ``run.nsys-rep`` (an export of the same report, made after it) is
    read where nsys is not installed; an older one is not (it may be of another run)."""
    source = shared(*f"{GEN}/ayush_vector_add_profile_v3.sqlite".split("/"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("ROOFSCOPE_NSYS", raising=False)
    report = tmp_path / "run.nsys-rep"
    report.write_bytes(b"binary")
    sibling = tmp_path / "run.sqlite"
    shutil.copyfile(source, sibling)
    os.utime(report, (1_000_000_000, 1_000_000_000))  # the report first, then its export
    session = load(report)
    try:
        assert session.reports[0].totals()["launches"] == 1010
        assert any("read run.sqlite, the export beside the report" in w for w in session.warnings)
    finally:
        session.close()
    os.utime(report, None)
    os.utime(sibling, (1_000_000_000, 1_000_000_000))  # an export older than the report
    with pytest.raises(RoofscopeError, match="nsys export --type sqlite --output"):
        load(report, use_cache=False)


def test_nsys_rep_goes_through_nsys_export(tmp_path, monkeypatch) -> None:
    """A stand-in ``nsys`` that does what ``nsys export --type sqlite`` does: write the file
    named by --output (here, a copy of a real export)."""
    source = shared(*f"{GEN}/ayush_vector_add_profile_v3.sqlite".split("/"))
    fake = tmp_path / "nsys"
    fake.write_text(
        "#!/usr/bin/env python3\nimport shutil, sys\n"
        "a = sys.argv\nassert a[1:5] == ['export', '--type', 'sqlite', '--force-overwrite']\n"
        f"shutil.copy({str(source)!r}, a[a.index('--output') + 1])\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("ROOFSCOPE_NSYS", str(fake))
    report = tmp_path / "run.nsys-rep"
    report.write_bytes(b"binary")
    session = load(report)
    assert (
        session.reports[0].layout == "nsys-rep" and session.reports[0].totals()["launches"] == 1010
    )


def test_sqlite_that_is_not_nsys_is_refused(tmp_path, capsys) -> None:
    path = tmp_path / "other.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    assert main(["report", str(path)]) == 2
    assert "not an Nsight Systems export" in capsys.readouterr().err


def test_report_without_kernel_table_opens_with_a_message(tmp_path) -> None:
    path = tmp_path / "nokernels.sqlite"
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
        "CREATE TABLE TARGET_INFO_GPU (vmId, id, name, smCount);"
        "INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA H100 80GB HBM3', 132);"
    )
    con.commit()
    con.close()
    session = load(path)
    assert session.reports[0].totals()["launches"] == 0
    assert any("no CUDA kernels" in w for w in session.warnings)


def test_shared_folder_is_where_the_samples_are() -> None:
    if not SHARED.exists():
        pytest.skip("shared samples absent")
    assert all((SHARED / n).exists() for n in SQLITES)
