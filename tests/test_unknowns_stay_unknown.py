"""Unknown is never silently 0 or 100%: efficiency, FLOPs, NaN spellings, clocks, IDs."""

from __future__ import annotations

import pytest

import roofscope
from tests.conftest import SAMPLES, run_cli
from tests.ncu_builder import details_page, raw_page, write


@pytest.mark.usefixtures("shared_sample_cache")  # the bundled sample, ingested once
def test_no_utilisation_and_no_ceilings_means_unknown_efficiency(in_tmp_cwd):
    session = roofscope.load(SAMPLES / "mobilenetv2_fp32_h100.ncu-details.csv")
    hist = session.reports[0].histogram()
    assert hist["potential_speedup"] is None
    assert sum(b["launches"] for b in hist["bins"]) == 0
    assert hist["unknown"]["launches"] == 459
    assert all(g["efficiency"] is None for g in session.reports[0].rows("group"))


@pytest.mark.usefixtures("shared_sample_cache")  # the bundled sample, ingested once
def test_tensor_pipe_used_but_tensor_unknown_leaves_efficiency_unknown(in_tmp_cwd):
    session = roofscope.load(SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv")
    frame = session.launches()
    used = frame[frame["tensor_inst"] > 0]
    assert len(used) > 0
    assert used["efficiency"].isna().all()
    assert frame[frame["tensor_inst"] == 0]["efficiency"].notna().all()
    assert session.reports[0].histogram()["unknown"]["launches"] == len(used)


def test_partial_counters_and_nan_spellings(tmp_path, in_tmp_cwd):
    units = {
        "gpu__time_duration.sum": "ns",
        "dram__bytes.sum": "byte",
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "inst",
    }
    launches = [
        (
            "a",
            {
                "gpu__time_duration.sum": "10",
                "dram__bytes.sum": "NaN",
                "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "n/a",
            },
        ),
        (
            "b",
            {
                "gpu__time_duration.sum": "Infinity",
                "dram__bytes.sum": "1e999",
                "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "5",
            },
        ),
    ]
    path = write(tmp_path / "nan.csv", raw_page(launches, units))
    frame = roofscope.load(path, use_cache=False).launches().set_index("kernel")
    assert frame.loc["a", "fp32"] != frame.loc["a", "fp32"]  # unknown, not 0
    assert frame.loc["b", "fp32"] == 10
    assert frame["dram"].isna().all()
    assert frame.loc["b", "time_s"] != frame.loc["b", "time_s"]
    out = run_cli("report", str(path), "--no-cache", cwd=tmp_path)
    assert out.returncode == 0, out.stderr


def test_rates_use_the_clock_of_their_own_unit(tmp_path, in_tmp_cwd):
    units = {
        "gpu__time_duration.sum": "ns",
        "dram__bytes.sum.per_cycle_elapsed": "byte/cycle",
        "dram__cycles_elapsed.avg.per_second": "hz",
        "sm__cycles_elapsed.avg.per_second": "hz",
    }
    values = {
        "gpu__time_duration.sum": "1,000",
        "dram__bytes.sum.per_cycle_elapsed": "100",
        "dram__cycles_elapsed.avg.per_second": "1,600,000,000",
        "sm__cycles_elapsed.avg.per_second": "1,980,000,000",
    }
    path = write(tmp_path / "r.csv", raw_page([("k", values)], units))
    session = roofscope.load(path, use_cache=False)
    assert session.reports[0].totals()["bytes"]["dram"] == pytest.approx(100 * 1.6e9 * 1e-6)
    assert "dram__cycles_elapsed" in session.reports[0].plan.provenance["dram"]


def test_dram_read_alone_is_a_labelled_lower_bound(tmp_path, in_tmp_cwd):
    page = details_page(
        [
            (
                "k",
                {
                    "gpu__time_duration.sum": ("ns", "7"),
                    "dram__bytes_read.sum": ("byte", "2,481,024"),
                },
            )
        ]
    )
    session = roofscope.load(write(tmp_path / "d.csv", page), use_cache=False)
    assert session.reports[0].totals()["bytes"]["dram"] == 2_481_024
    assert "lower bound" in session.reports[0].plan.provenance["dram"]
    assert any("lower bound" in w for w in session.warnings)


def test_repeated_ids_are_renumbered_not_multiplied(tmp_path, in_tmp_cwd):
    one = raw_page(
        [("a", {"gpu__time_duration.sum": "1"}), ("b", {"gpu__time_duration.sum": "2"})],
        {"gpu__time_duration.sum": "ns"},
    )
    twice = one + one  # `ncu … >> f.csv` twice: header, units and IDs 0, 1 again
    session = roofscope.load(write(tmp_path / "dup.csv", twice), use_cache=False)
    assert session.reports[0].totals()["launches"] == 4
    assert session.reports[0].totals()["time_s"] == pytest.approx(6e-9)
    assert any("repeat" in w for w in session.warnings)


@pytest.mark.parametrize(
    "content",
    [
        '[ceilings]\nfp32 = "1.2.3 TFLOP/s"\n',
        "[ceilings]\nfp32 = 0\n",
        "[ceilings]\nfp32 = -5\n",
        "ceilings = 5\n",
        "[ceilings]\nwarp_speed = 1\n",
    ],
)
def test_bad_ceilings_files_are_one_line_errors(content, tmp_path):
    toml = write(tmp_path / "c.toml", content)
    gemm = SAMPLES / "gemm4096_bf16_h100.ncu-raw.csv"
    out = run_cli("report", str(gemm), "--ceilings", str(toml), cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr


@pytest.mark.parametrize(
    "text",
    [
        # details page without a Section Name column
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Metric Name","Metric Unit",'
        '"Metric Value"\n"0","1","a","h","k","gpu__time_duration.sum","ns","5"\n',
        # an ID too long for a 64-bit integer
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Metric Name","Metric Unit",'
        '"Metric Value"\n"99999999999999999999","1","a","h","k",'
        '"gpu__time_duration.sum","ns","5"\n',
        # a summary page without Minimum/Maximum
        '"Process ID","Process Name","Host Name","Kernel Name","Invocations","Metric Name",'
        '"Metric Unit","Average"\n"1","a","h","k","2","gpu__time_duration.sum","ns","5"\n',
    ],
)
def test_odd_headers_load_or_fail_with_one_line(text, tmp_path):
    path = write(tmp_path / "odd.csv", text)
    out = run_cli("report", str(path), "--no-cache", cwd=tmp_path)  # a traceback escapes
    assert "Traceback" not in out.stderr
    assert out.returncode in (0, 2)
    if out.returncode == 2:
        assert out.stderr.startswith("roofscope: ") and out.stderr.count("\n") == 1


def test_launch_table_without_flop_counters_shows_unknown_not_zero(tmp_path, in_tmp_cwd):
    from roofscope.analysis.browse import Filter

    page = details_page(
        [("k", {"gpu__time_duration.sum": ("ns", "7"), "dram__bytes.sum": ("byte", "4,096")})]
    )
    session = roofscope.load(write(tmp_path / "d.csv", page), use_cache=False)
    pager = session.reports[0].pager(Filter())
    (row,) = session.reports[0].page(pager, 0, 10)
    flop_per_s, ai_dram = row[3], row[4]
    assert flop_per_s is None and ai_dram is None
