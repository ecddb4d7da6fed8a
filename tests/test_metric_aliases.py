"""Every documented spelling of a metric gives the exact quantity, and says which it used.

Real exports spell the same counter differently across GPUs and ncu versions (``smsp__`` vs
``sm__``, ``dram__bytes_op_read`` on GeForce Blackwell, sectors instead of bytes). Each case
builds a tiny real export holding only that spelling and checks the value and its provenance
(docs/metrics.md, "Metric spellings (aliases)").
"""

from __future__ import annotations

import csv
from collections import defaultdict

import pytest

import roofscope
from roofscope import metric_names as mn
from tests.conftest import shared
from tests.ncu_builder import raw_page, write

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

NS = ("gpu__time_duration.sum", "ns", "2,000")  # 2 µs, for the rate forms
SM_HZ = ("sm__cycles_elapsed.avg.per_second", "hz", "1,000,000,000")


def _report(tmp_path, metrics, cc: str = "9.0") -> dict:
    """Load a one-launch raw page holding exactly ``metrics`` [(name, unit, value)]."""
    values = {m: v for m, _, v in metrics}
    units = {m: u for m, u, _ in metrics}
    path = write(tmp_path / "k.csv", raw_page([("k", values)], units, cc=cc))
    return roofscope.load(path, use_cache=False).report_dict()


# --- time ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("cycles", "clock", "_src"), mn.TIME_PAIRS)
def test_duration_from_each_cycles_spelling(cycles, clock, _src, tmp_path, in_tmp_cwd):
    """Without gpu__time_duration, X / X.per_second is the duration for every spelling."""
    doc = _report(tmp_path, [(cycles, "cycle", "3,000"), (clock, "hz", "1,500,000,000")])
    report = doc["reports"][0]
    assert report["time_s"] == pytest.approx(2e-6, rel=1e-12)
    assert report["provenance"]["time_s"] == f"{cycles} / {clock}"
    assert not any("no kernel duration" in w for w in doc["warnings"])


def test_exact_duration_wins_over_cycles(tmp_path, in_tmp_cwd):
    doc = _report(
        tmp_path,
        [NS, ("smsp__cycles_elapsed.avg", "cycle", "9,000"), (mn.SMSP_CLOCK, "hz", "1,000")],
    )
    assert doc["reports"][0]["time_s"] == pytest.approx(2e-6, rel=1e-12)
    assert doc["reports"][0]["provenance"]["time_s"] == "gpu__time_duration.sum"


def test_sm_cycles_win_over_smsp_cycles(tmp_path, in_tmp_cwd):
    """Table order decides between two aliases, so one export always gets one formula."""
    doc = _report(
        tmp_path,
        [
            ("sm__cycles_elapsed.avg", "cycle", "3,000"),
            (mn.SM_CLOCK, "hz", "1,500,000,000"),
            ("smsp__cycles_elapsed.avg", "cycle", "9,000"),
            (mn.SMSP_CLOCK, "hz", "1,500,000,000"),
        ],
    )
    assert doc["reports"][0]["time_s"] == pytest.approx(2e-6, rel=1e-12)
    assert doc["reports"][0]["provenance"]["time_s"].startswith("sm__cycles_elapsed.avg /")


def test_half_a_cycles_pair_warns_what_to_collect(tmp_path, in_tmp_cwd):
    doc = _report(tmp_path, [("smsp__cycles_elapsed.avg", "cycle", "3,000")])
    assert doc["reports"][0]["time_s"] is None
    warning = next(w for w in doc["warnings"] if "no kernel duration" in w)
    assert "collect gpu__time_duration.sum" in warning
    assert "smsp__cycles_elapsed.avg without smsp__cycles_elapsed.avg.per_second" in warning


# --- FLOPs --------------------------------------------------------------------------------

_PRECISION = {"d": "fp64", "f": "fp32", "h": "fp16"}
_WEIGHT = {"add": 1, "mul": 1, "fma": 2}  # fp16: ncu convention doubles (half2)


@pytest.mark.parametrize("unit", ["smsp", "sm"])
@pytest.mark.parametrize("op", mn.FLOP_OPS)
def test_flop_counter_each_prefix(unit, op, tmp_path, in_tmp_cwd):
    metric = mn.sass_op(op, unit)
    doc = _report(tmp_path, [NS, (metric, "inst", "1,000")])
    report = doc["reports"][0]
    precision = _PRECISION[op[0]]
    weight = _WEIGHT[op[1:]] * (2 if precision == "fp16" else 1)
    assert report["flops"][precision] == 1_000 * weight
    assert metric in report["provenance"][precision]


@pytest.mark.parametrize("unit", ["smsp", "sm"])
def test_flop_rate_per_second(unit, tmp_path, in_tmp_cwd):
    metric = mn.sass_op("ffma", unit) + ".per_second"
    doc = _report(tmp_path, [NS, (metric, "inst/s", "500,000,000,000")])
    report = doc["reports"][0]
    assert report["flops"]["fp32"] == pytest.approx(2 * 5e11 * 2e-6, rel=1e-12)
    assert f"{metric} × time" in report["provenance"]["fp32"]


@pytest.mark.parametrize("unit", ["smsp", "sm"])
def test_flop_rate_per_cycle_elapsed(unit, tmp_path, in_tmp_cwd):
    metric = mn.sass_op("ffma", unit) + ".per_cycle_elapsed"
    doc = _report(tmp_path, [NS, SM_HZ, (metric, "inst/cycle", "500")])
    report = doc["reports"][0]
    assert report["flops"]["fp32"] == pytest.approx(2 * 500 * 1e9 * 2e-6, rel=1e-12)
    assert f"{metric} × {mn.SM_CLOCK} × time" in report["provenance"]["fp32"]


def test_smsp_flop_counter_wins_over_sm(tmp_path, in_tmp_cwd):
    doc = _report(
        tmp_path,
        [NS, (mn.sass_op("fadd", "smsp"), "inst", "7"), (mn.sass_op("fadd", "sm"), "inst", "9")],
    )
    report = doc["reports"][0]
    assert report["flops"]["fp32"] == 7
    assert report["provenance"]["fp32"] == mn.sass_op("fadd", "smsp")


# --- bytes --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metrics", "expected", "names"),
    [
        ([("dram__bytes.sum", "byte", "4,096")], 4096, ["dram__bytes.sum"]),
        ([("dram__bytes.sum.per_second", "byte/s", "1,000,000,000")], 2000, ["per_second"]),
        (
            [("dram__bytes_read.sum", "byte", "1,000"), ("dram__bytes_write.sum", "byte", "24")],
            1024,
            ["dram__bytes_read.sum", "dram__bytes_write.sum"],
        ),
        (
            [
                ("dram__bytes_op_read.sum", "byte", "1,000"),
                ("dram__bytes_op_write.sum", "byte", "24"),
            ],
            1024,
            ["dram__bytes_op_read.sum", "dram__bytes_op_write.sum"],
        ),
        (
            [
                ("dram__bytes_op_read.sum", "Mbyte", "1.5"),
                ("dram__bytes_op_write.sum", "Kbyte", "2"),
            ],
            1_502_000,
            ["dram__bytes_op_read.sum"],
        ),
        (
            [
                ("dram__sectors_read.sum", "sector", "10"),
                ("dram__sectors_write.sum", "sector", "3"),
            ],
            13 * 32,
            ["32 × dram__sectors_read.sum", "32 × dram__sectors_write.sum"],
        ),
        (
            [
                ("dram__sectors_op_read.sum", "sector", "10"),
                ("dram__sectors_op_write.sum", "sector", "3"),
            ],
            13 * 32,
            ["32 × dram__sectors_op_read.sum", "32 × dram__sectors_op_write.sum"],
        ),
    ],
    ids=["bytes", "bytes-rate", "read-write", "op-read-write", "op-scaled", "sectors", "op-sec"],
)
def test_dram_spellings(metrics, expected, names, tmp_path, in_tmp_cwd):
    doc = _report(tmp_path, [NS, *metrics])
    report = doc["reports"][0]
    assert report["bytes"]["dram"] == pytest.approx(expected, rel=1e-12)
    for name in names:
        assert name in report["provenance"]["dram"]
    assert not any("DRAM" in w for w in doc["warnings"])


def test_geforce_blackwell_read_alone_is_a_labelled_lower_bound(tmp_path, in_tmp_cwd):
    doc = _report(tmp_path, [NS, ("dram__bytes_op_read.sum", "byte", "640")], cc="12.0")
    report = doc["reports"][0]
    assert report["bytes"]["dram"] == 640
    assert "lower bound" in report["provenance"]["dram"]
    assert any("dram__bytes_op_read.sum alone" in w for w in doc["warnings"])


def test_exact_dram_bytes_win_over_directions(tmp_path, in_tmp_cwd):
    doc = _report(
        tmp_path,
        [
            NS,
            ("dram__bytes.sum", "byte", "100"),
            ("dram__bytes_op_read.sum", "byte", "70"),
            ("dram__bytes_op_write.sum", "byte", "70"),
        ],
    )
    assert doc["reports"][0]["bytes"]["dram"] == 100
    assert doc["reports"][0]["provenance"]["dram"] == "dram__bytes.sum"


def test_counted_directions_win_over_a_rebuilt_total(tmp_path, in_tmp_cwd):
    """A rate × time rebuilds a count with two roundings; counted read + write are exact
    (seen on a real export: dram__bytes.sum.per_second beside integer read/write counts)."""
    doc = _report(
        tmp_path,
        [
            NS,
            ("dram__bytes.sum.per_second", "byte/s", "33,333,333"),
            ("dram__bytes_read.sum", "byte", "50"),
            ("dram__bytes_write.sum", "byte", "16"),
        ],
    )
    assert doc["reports"][0]["bytes"]["dram"] == 66
    assert doc["reports"][0]["provenance"]["dram"] == "dram__bytes_read.sum + dram__bytes_write.sum"


def test_counted_sectors_win_over_a_byte_rate(tmp_path, in_tmp_cwd):
    doc = _report(
        tmp_path,
        [NS, ("lts__t_bytes.sum.per_second", "byte/s", "1,000"), ("lts__t_sectors.sum", "", "4")],
    )
    assert doc["reports"][0]["bytes"]["l2"] == 128


def test_sector_counted_traffic_gets_the_sector_roof(tmp_path, in_tmp_cwd):
    """The L2 roof measures the same bytes as the points: 32 × sectors peak × L2 clock."""
    doc = _report(
        tmp_path,
        [
            NS,
            ("lts__t_sectors.sum", "sector", "128"),
            ("lts__t_sectors.sum.peak_sustained", "sector/cycle", "96"),
            (mn.LTS_CLOCK, "hz", "1,000,000,000"),
        ],
    )
    roof = next(c for c in doc["reports"][0]["ceilings"] if c["name"] == "l2")
    assert roof["value"] == pytest.approx(32 * 96 * 1e9, rel=1e-12)
    assert "32 × lts__t_sectors.sum.peak_sustained" in roof["source"]


@pytest.mark.parametrize(
    ("level", "metric", "unit", "value", "expected", "text"),
    [
        ("l2", "lts__t_bytes.sum", "byte", "4,096", 4096, "lts__t_bytes.sum"),
        ("l2", "lts__t_sectors.sum", "sector", "128", 4096, "32 × lts__t_sectors.sum"),
        ("l1", "l1tex__t_bytes.sum", "byte", "4,096", 4096, "l1tex__t_bytes.sum"),
        ("l1", "l1tex__t_sectors.sum", "sector", "128", 4096, "32 × l1tex__t_sectors.sum"),
    ],
)
def test_cache_traffic_spellings(level, metric, unit, value, expected, text, tmp_path, in_tmp_cwd):
    doc = _report(tmp_path, [NS, (metric, unit, value)])
    report = doc["reports"][0]
    assert report["bytes"][level] == expected
    assert report["provenance"][level] == f"{text} (NERSC traffic convention)"


def test_unread_dram_spelling_warns_instead_of_silent_unknown(tmp_path, in_tmp_cwd):
    """A DRAM counter under a spelling no table lists: unknown, with a warning naming it."""
    doc = _report(tmp_path, [NS, ("fbpa__dram_read_bytes.sum", "byte", "640")])
    assert doc["reports"][0]["bytes"]["dram"] is None
    warning = next(w for w in doc["warnings"] if "DRAM bytes unknown" in w)
    assert "fbpa__dram_read_bytes.sum" in warning
    assert "collect dram__bytes.sum" in warning


def test_unread_l2_spelling_warns(tmp_path, in_tmp_cwd):
    doc = _report(tmp_path, [NS, ("lts__t_sectors_op_read.sum", "sector", "4")])
    assert doc["reports"][0]["bytes"]["l2"] is None
    warning = next(w for w in doc["warnings"] if "L2 bytes unknown" in w)
    assert "lts__t_sectors_op_read.sum" in warning and "collect lts__t_bytes.sum" in warning


def test_nothing_of_a_unit_measured_gives_no_byte_warning(tmp_path, in_tmp_cwd):
    """An export that never tried to measure DRAM is not flagged for it (nsys, time-only)."""
    doc = _report(tmp_path, [NS])
    assert doc["reports"][0]["bytes"]["dram"] is None
    assert not any("bytes unknown" in w for w in doc["warnings"])


# --- tensor instructions ------------------------------------------------------------------


@pytest.mark.parametrize(
    "metric", ["sm__inst_executed_pipe_tensor.sum", "smsp__inst_executed_pipe_tensor.sum"]
)
def test_tensor_instruction_spellings_on_v100(metric, tmp_path, in_tmp_cwd):
    doc = _report(tmp_path, [NS, (metric, "inst", "1,000")], cc="7.0")
    report = doc["reports"][0]
    assert report["flops"]["tensor"] == 512_000
    assert report["provenance"]["tensor"] == f"512 × {metric} (V100 HMMA.884, FP32 accumulate)"
    assert report["provenance"]["tensor_inst"] == metric


def test_smsp_tensor_instructions_off_v100_are_unknown_and_named(tmp_path, in_tmp_cwd):
    doc = _report(tmp_path, [NS, ("smsp__inst_executed_pipe_tensor.sum", "inst", "9")], cc="8.0")
    assert doc["reports"][0]["flops"]["tensor"] is None
    warning = next(w for w in doc["warnings"] if "tensor FLOPs unknown" in w)
    assert "smsp__inst_executed_pipe_tensor.sum" in warning


# --- real exports -------------------------------------------------------------------------


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def test_gardenia_tian_smsp_durations_match_an_independent_reading(in_tmp_cwd):
    """NERSC smsp__ metric set, no gpu__time_duration: each launch's duration is
    smsp__cycles_elapsed.avg / smsp__cycles_elapsed.avg.per_second, read here with csv."""
    path = shared("wild", "Gardenia-Tian__LearningNote4Dev__CUDA_gemm_output_gemm.csv")
    per_launch: dict[str, dict[str, float]] = defaultdict(dict)
    kernel_of: dict[str, str] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            per_launch[row["ID"]][row["Metric Name"]] = _num(row["Metric Value"])
            kernel_of[row["ID"]] = row["Kernel Name"]
    expected = sorted(
        (kernel_of[i], m["smsp__cycles_elapsed.avg"] / m["smsp__cycles_elapsed.avg.per_second"])
        for i, m in per_launch.items()
    )
    session = roofscope.load(path)
    frame = session.launches()
    got = sorted(zip(frame["kernel"], frame["time_s"], strict=True))
    assert [k for k, _ in got] == [k for k, _ in expected]
    for (_, t_got), (_, t_exp) in zip(got, expected, strict=True):
        assert t_got == pytest.approx(t_exp, rel=1e-12)
    report = session.report_dict()["reports"][0]
    assert report["provenance"]["time_s"] == (
        "smsp__cycles_elapsed.avg / smsp__cycles_elapsed.avg.per_second"
    )
    assert report["time_s"] == pytest.approx(sum(t for _, t in expected), rel=1e-12)
    assert not any("no kernel duration" in w for w in session.warnings)


def test_wangzy_v100_sm_durations_match_an_independent_reading(in_tmp_cwd):
    """The sm__ spelling of the same set (V100, 10 lines of app output before the header)."""
    path = shared("wild", "wangzy0327__cuda-roofline__src_output.csv")
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    per_launch: dict[str, dict[str, float]] = defaultdict(dict)
    for row in csv.DictReader(lines[start:]):
        per_launch[row["ID"]][row["Metric Name"]] = _num(row["Metric Value"])
    expected = sum(
        m["sm__cycles_elapsed.avg"] / m["sm__cycles_elapsed.avg.per_second"]
        for m in per_launch.values()
    )
    report = roofscope.load(path).report_dict()["reports"][0]
    assert report["time_s"] == pytest.approx(expected, rel=1e-12)
    assert report["provenance"]["time_s"].startswith("sm__cycles_elapsed.avg /")
