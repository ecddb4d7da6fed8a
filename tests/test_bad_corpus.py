"""Every entry of tests/corpus/bad/ through the real CLI (``roofscope report FILE --format
json``, in-process; option files through the command that reads them): exit 2 with one line
naming the file and the problem, or exit 0 with strict JSON, warnings that say what was wrong
and numbers that are still right (checked against the sample each file was cut from).

The files are made by tools/make_bad_corpus.py (its README says what is wrong with each); the
table below is kept here, apart from the generator, so that a change of behaviour fails.
``ROOFSCOPE_DEBUG`` is set: an exception the readers did not foresee then escapes as itself
instead of becoming the store's generic "could not be loaded" line, and fails the test.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import sqlite3
import zlib
from pathlib import Path

import pytest

from roofscope.cli import main
from tests.conftest import REPO, SAMPLES

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

CORPUS = REPO / "tests" / "corpus" / "bad"
RAW = SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv"
DETAILS = SAMPLES / "mobilenetv2_fp32_h100.ncu-details.csv"
GEMM = SAMPLES / "gemm4096_bf16_h100.ncu-raw.csv"  # a small export for option files
ERROR, WARN = "error", "load with warnings"
OK = "load cleanly"  # exit 0 and no warning beyond INHERENT
LOADS = "load"  # exit 0, warnings allowed (the numbers are checked below)
EITHER = "error or warning"  # refused, or loaded with a warning; either contains the words
OUTCOMES = (ERROR, WARN, OK, LOADS, EITHER)
# warnings every cut of the mobilenet sample has (it lacks the tensor counters; a details page
# does not name its GPU): a file made from it "loads cleanly" when it has no other
INHERENT = ("tensor FLOPs unknown", "the export does not name its GPU")

# entry: (outcome, text that the error line, or one of the report's warnings, must contain)
EXPECTED: dict[str, tuple[str, str]] = {
    "binary_noise.csv": (ERROR, "is a binary file, not a CSV export"),
    "bom_and_blank_lines.csv": (ERROR, "is not an Nsight Compute CSV export"),
    "chrome_trace_cuda_gpu_kern_sum.json": (ERROR, "is a JSON object, not an nsys stats table"),
    "corrupt.sqlite": (ERROR, "database disk image is malformed"),
    "csv_bomb_100k_columns.ncu-raw.csv": (ERROR, "has a header of 100,007 columns"),
    "csv_named.sqlite": (WARN, "the name ends in .sqlite but the file holds text (ncu-raw)"),
    "decimal_comma.ncu-raw.csv": (WARN, "numbers use ',' as the decimal mark"),
    "directory.sqlite": (ERROR, "is a directory, not an export"),
    "duplicated_header.ncu-raw.csv": (WARN, "6 launch ID(s) repeat"),
    "empty.csv": (ERROR, "file is empty (0 bytes)"),
    "error_line.ncu-raw.csv": (WARN, "ncu reported 2 error(s) in the export"),
    "github_page.ncu-raw.csv": (ERROR, "is an HTML/XML page"),
    "gzip_garbage.csv.gz": (ERROR, "gzip data is damaged"),
    "gzip_truncated.ncu-raw.csv.gz": (WARN, "ends in the middle of a row (truncated export)"),
    "header_only.ncu-details.csv": (ERROR, "has an ncu header but no kernel rows"),
    "header_only.ncu-raw.csv": (ERROR, "has an ncu header but no kernel rows"),
    "header_only.sqlite": (ERROR, "is not a readable SQLite database"),
    "ids_not_integers.ncu-raw.csv": (ERROR, "none of the rows under it starts with an integer"),
    "json_not_stats.json": (ERROR, "is a JSON document, not an ncu CSV or an nsys stats"),
    "kernel_names_10kb.ncu-raw.csv": (WARN, "3 launch(es) have kernel names over 8,192"),
    "kernel_table_lacks_columns.sqlite": (
        ERROR,
        "CUPTI_ACTIVITY_KIND_KERNEL table lacks the column(s) end, demangledName/shortName",
    ),
    "missing_tables.sqlite": (WARN, "no CUDA kernels in this export"),
    "mixed_units.ncu-raw.csv": (
        ERROR,
        "line 8 gives dram__bytes_read.avg in 'Mbyte', the first units row in 'byte'",
    ),
    "nan_inf_durations_cuda_gpu_trace.csv": (WARN, "1 kernel(s) have no valid duration"),
    "negative_durations.sqlite": (WARN, "2 kernel(s) have no valid duration"),
    "negative_nan_inf.ncu-raw.csv": (WARN, "5 of 6 launches have no duration"),
    "non_utf8.ncu-raw.csv": (WARN, "that are not UTF-8"),
    "not_a_recording.parquet": (ERROR, "is a Parquet file, but not a GPU recording"),
    "not_nsys.sqlite": (ERROR, "is an SQLite database but not an Nsight Systems export"),
    "nsys_console_table.txt": (ERROR, "is nsys stats output in a human-readable format"),
    "nul_bytes.ncu-raw.csv": (WARN, "dropped 4 NUL byte(s) inside the table"),
    "only_prof_lines.csv": (ERROR, "holds only ncu's ==PROF== log lines"),
    "parquetdir_damaged_table": (
        ERROR,
        "its table CUPTI_ACTIVITY_KIND_KERNEL.parquet is not a readable Parquet file",
    ),
    "parquetdir_without_cupti": (ERROR, "is a folder of Parquet files but not an Nsight Systems"),
    "recording_bad_part.parquet": (ERROR, "unreadable recording part part-000002.parquet"),
    "recording_missing_columns.parquet": (WARN, "the recording lacks 33 column(s)"),
    "recording_wrong_types.parquet": (ERROR, "recording column ts is string"),
    "session_page.ncu.csv": (ERROR, "is the ncu session page"),
    "sqlite_named.csv": (WARN, "the name ends in .csv but the file holds an SQLite database"),
    "stringids_missing_ids.sqlite": (WARN, "2 kernel(s) name a string id that StringIds"),
    "tab_separated.ncu-raw.tsv": (ERROR, "uses tab as the delimiter"),
    "text_in_integer_columns.sqlite": (ERROR, "start_ns holds 'soon' where a int64 is expected"),
    "text_in_numbers_cuda_gpu_kern_sum.csv": (WARN, "skipped 1 row(s) of its tables"),
    "truncated.sqlite": (ERROR, "is not a readable SQLite database"),
    "truncated_cuda_gpu_kern_sum.csv": (WARN, "ends in the middle of a row (truncated export)"),
    "truncated_in_header.ncu-raw.csv": (ERROR, "has an ncu header but no kernel rows"),
    "truncated_mid_row.ncu-details.csv": (WARN, "ends in the middle of a row (truncated export)"),
    "truncated_mid_row.ncu-raw.csv": (WARN, "ends in the middle of a row (truncated export)"),
    "truncated_recording.parquet": (ERROR, "is a damaged Parquet file"),
    "unbalanced_quote.ncu-raw.csv": (WARN, "skipped 1 line(s) inside the table"),
    "units_row_only.ncu-raw.csv": (ERROR, "has an ncu header but no kernel rows"),
    "unknown_unit.ncu-details.csv": (
        ERROR,
        "gpu__time_duration.sum has the unknown unit 'furlong'",
    ),
    "utf16.ncu-raw.csv": (ERROR, "is UTF-16 text"),
    "zero_length.parquet": (ERROR, "file is empty (0 bytes)"),
    # issue 16: outcomes a correct reader must give (several fail until the readers are fixed)
    "no_final_newline.ncu-raw.csv": (OK, ""),
    "no_final_newline_one_launch.ncu-raw.csv": (OK, ""),
    "no_final_newline.ncu-details.csv": (OK, ""),
    "glob[12]*?.ncu-raw.csv": (OK, ""),
    "glob1-decoy.ncu-raw.csv": (OK, ""),
    "wal_uncheckpointed.sqlite": (OK, ""),
    "no_units_row.ncu-raw.csv": (EITHER, "units row"),
    "duplicate_metric_column.ncu-raw.csv": (EITHER, "gpu__time_duration.sum"),
    "min_unit_cuda_gpu_kern_sum.csv": (ERROR, "'min'"),
    "duplicate_stringids.sqlite": (WARN, "StringIds"),
    "duplicate_stringids_kernel_names.sqlite": (EITHER, "StringIds"),
    "recording_clock_jump.parquet": (WARN, "jump"),
    "cycles_no_duration.ncu-details.csv": (LOADS, ""),
    "dram_op_only.ncu-raw.csv": (LOADS, ""),
    "device_name.ncu-details.csv": (OK, ""),
    "rich_markup_names.ncu-raw.csv": (LOADS, ""),
    "field_over_128kb.ncu-raw.csv": (WARN, "have kernel names over 8,192"),
    "ceilings_401_digit_integer.toml": (ERROR, "fp32"),
    "ceilings_fp32_in_tb_per_s.toml": (ERROR, "fp32"),
    "prices_401_digit_integer.toml": (ERROR, "usd_per_gpu_hour"),
    "prices_usd_in_tb_per_s.toml": (ERROR, "usd_per_gpu_hour"),
    "blank_lines_bomb.csv.gz": (ERROR, "is not an Nsight Compute CSV export"),
    "recording_nan_summary.parquet": (LOADS, ""),
    "utf32.ncu-raw.csv": (ERROR, "UTF-32"),
    "bom_cuda_gpu_kern_sum.csv": (OK, ""),
    "weird_table_name.sqlite": (OK, ""),
    "recording_empty_first_part.parquet": (EITHER, "part-000001.parquet"),
    "symlink_loop.ncu-raw.csv": (ERROR, "loop"),
    "gui_events_view.csv": (LOADS, ""),
    "stray_comma_number.ncu-raw.csv": (WARN, "not numbers as ncu writes them"),
    "partial_counter.ncu-raw.csv": (WARN, "dram__bytes_read.sum (1 of 4)"),
    "unreadable_total_cuda_gpu_kern_sum.csv": (WARN, "line 3, column Total Time (ns): 'nan'"),
    "repeated_rows_cuda_gpu_kern_sum.csv": (WARN, "each is counted once"),
}
# entries that are options of another command ({} is the entry's path); default: report FILE
COMMAND: dict[str, tuple[str, ...]] = {
    "ceilings_401_digit_integer.toml": ("report", str(GEMM), "--ceilings", "{}"),
    "ceilings_fp32_in_tb_per_s.toml": ("report", str(GEMM), "--ceilings", "{}"),
    "prices_401_digit_integer.toml": ("cost", str(GEMM), "--run-steps", "1000", "--prices", "{}"),
    "prices_usd_in_tb_per_s.toml": ("cost", str(GEMM), "--run-steps", "1000", "--prices", "{}"),
    "recording_nan_summary.parquet": ("record", "--summary", "{}"),
}
# files that belong to an entry and travel with it; such an entry is run from a copy, as an
# SQLite reader may checkpoint (and delete) the -wal file of the database it opened
COMPANIONS: dict[str, tuple[str, ...]] = {
    "wal_uncheckpointed.sqlite": ("wal_uncheckpointed.sqlite-wal",),
}


def _report(path: Path, capsys: pytest.CaptureFixture[str], *options: str) -> tuple[int, str, str]:
    return _main(["report", str(path), "--format", "json", *options], capsys)


def _main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """How long each entry takes is bench/bad_corpus.py's to say: a test asserts no time."""
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def run(capsys, monkeypatch, in_tmp_cwd):
    """``run(path, *options)``: ``roofscope report PATH --format json OPTIONS`` in-process."""
    monkeypatch.setenv("ROOFSCOPE_DEBUG", "1")
    monkeypatch.setenv("PATH", str(in_tmp_cwd))  # no ncu/nsys: nothing is converted

    def report(path: Path, *options: str) -> tuple[int, str, str]:
        return _report(path, capsys, *options)

    report.main = lambda argv: _main(argv, capsys)  # type: ignore[attr-defined]
    return report


def _strict_json(text: str) -> dict:
    """JSON as RFC 8259 has it: NaN and Infinity are no JSON tokens (jq and browsers refuse)."""

    def refuse(token: str) -> None:
        raise AssertionError(f"{token} in the JSON output")

    return json.loads(text, parse_constant=refuse)


def _copy_with_companions(name: str, tmp: Path) -> Path:
    for each in (name, *COMPANIONS.get(name, ())):
        shutil.copyfile(CORPUS / each, tmp / each)
    return tmp / name


def test_the_table_names_every_corpus_entry():
    on_disk = {p.name for p in CORPUS.iterdir()} - {"README.md"}
    companions = {c for names in COMPANIONS.values() for c in names}
    assert on_disk == set(EXPECTED) | companions
    assert len(on_disk) >= 30
    readme = (CORPUS / "README.md").read_text("utf-8")
    kinds = "|".join(re.escape(o) for o in sorted(OUTCOMES, key=len, reverse=True))
    documented = dict(re.findall(rf"^\| `([^`]+)` \| .* \| ({kinds}) \|$", readme, re.M))
    assert documented == {name: outcome for name, (outcome, _) in EXPECTED.items()}


def _check_error(path: Path, says: str, code: int, out: str, err: str) -> None:
    assert code == 2, out[:500]
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    prefix = f"roofscope: {path}: "
    assert lines[0].startswith(prefix), lines[0]
    assert says in lines[0][len(prefix) :], "the words are in the message, not in the path"
    assert lines[0].endswith(")"), "a hint in parentheses ends the line"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_input(name, run, tmp_path):
    outcome, says = EXPECTED[name]
    path = _copy_with_companions(name, tmp_path) if name in COMPANIONS else CORPUS / name
    command = [a.replace("{}", str(path)) for a in COMMAND.get(name, ("report", "{}"))]
    code, out, err = run.main([*command, "--format", "json"])
    assert "Traceback" not in err
    if outcome == ERROR or (outcome == EITHER and code != 0):
        _check_error(path, says, code, out, err)
        return
    assert code == 0, err
    assert err.strip() == ""
    doc = _strict_json(out)
    if command[0] != "report":
        return
    (report,) = doc["reports"]
    warnings = report["warnings"]
    if outcome in (WARN, EITHER):
        assert doc["warnings"] and warnings
        assert any(says in w for w in warnings), warnings
    elif outcome == OK:
        assert [w for w in warnings if not any(x in w for x in INHERENT)] == []


# --- the numbers that survive are right --------------------------------------------------


def _doc(path: Path, run) -> dict:
    code, out, err = run(path)
    assert code == 0, err
    (report,) = json.loads(out)["reports"]
    return report


def _raw_prefix(n: int) -> str:
    """Header, units row and the first ``n`` launches of the mobilenet raw sample."""
    return "".join(RAW.read_text("utf-8").splitlines(keepends=True)[: n + 2])


_PREFIX_DOCS: dict[int, dict] = {}  # n → the report of _raw_prefix(n), read once per run


def _prefix_doc(n: int, run, tmp_path: Path) -> dict:
    """The report of the first ``n`` launches of the mobilenet raw sample: the numbers the
    corpus files cut from it must give (several tests compare with the same prefix)."""
    if n not in _PREFIX_DOCS:
        _PREFIX_DOCS[n] = _doc(_write(tmp_path, f"first{n}.csv", _raw_prefix(n)), run)
    return _PREFIX_DOCS[n]


def _same_numbers(got: dict, want: dict, launches: int | None = None) -> None:
    assert got["launches"] == (want["launches"] if launches is None else launches)
    assert got["time_s"] == pytest.approx(want["time_s"], rel=1e-9)
    for family in ("flops", "bytes"):
        for key, value in want[family].items():
            if value is None:
                assert got[family][key] is None, (family, key)
            else:
                assert got[family][key] == pytest.approx(value, rel=1e-9), (family, key)


def _write(tmp: Path, name: str, data: str | bytes) -> Path:
    path = tmp / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


@pytest.mark.parametrize(
    ("name", "launches"),
    [
        ("decimal_comma.ncu-raw.csv", 12),  # the European file reads as the C-locale original
        ("non_utf8.ncu-raw.csv", 5),  # the bytes are in names only
        ("unbalanced_quote.ncu-raw.csv", 6),  # the noise line costs no row
        ("kernel_names_10kb.ncu-raw.csv", 3),  # names only
        ("csv_named.sqlite", 3),
        ("nul_bytes.ncu-raw.csv", 5),  # no row lost around the NUL bytes
        ("no_final_newline.ncu-raw.csv", 10),  # the last row is whole, only its newline is gone
        ("no_final_newline_one_launch.ncu-raw.csv", 1),
        ("glob[12]*?.ncu-raw.csv", 3),  # its own rows, not those of the decoy it matches
        ("glob1-decoy.ncu-raw.csv", 2),
        ("dram_op_only.ncu-raw.csv", 4),  # DRAM bytes from the op_read/op_write spelling
        ("rich_markup_names.ncu-raw.csv", 6),  # names only
        ("field_over_128kb.ncu-raw.csv", 3),  # a name over the csv module's field limit
    ],
)
def test_loads_equal_the_original_sample(name, launches, run, tmp_path):
    got = _doc(CORPUS / name, run)
    want = _prefix_doc(launches, run, tmp_path)
    _same_numbers(got, want)


def test_truncated_files_keep_every_complete_row(run, tmp_path):
    for name, launches in (
        ("truncated_mid_row.ncu-raw.csv", 11),
        ("truncated_mid_row.ncu-details.csv", 3),
        ("gzip_truncated.ncu-raw.csv.gz", None),
    ):
        data = (CORPUS / name).read_bytes()
        if name.endswith(".gz"):
            data = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data)
        complete = data[: data.rindex(b"\n") + 1]
        want = _doc(_write(tmp_path, name.removesuffix(".gz"), complete), run)
        got = _doc(CORPUS / name, run)
        _same_numbers(got, want, launches)
        assert got["launches"] >= 2


def test_appended_exports_count_both(run, tmp_path):
    got = _doc(CORPUS / "duplicated_header.ncu-raw.csv", run)
    want = _prefix_doc(6, run, tmp_path)
    assert got["launches"] == 12
    assert got["time_s"] == pytest.approx(2 * want["time_s"])
    assert got["bytes"]["dram"] == pytest.approx(2 * want["bytes"]["dram"])


def test_bad_durations_are_left_out_not_summed(run, tmp_path):
    # ncu: launches 1-5 have -1, nan, inf, -inf and 1e999 ns; only launch 0 has a time
    got = _doc(CORPUS / "negative_nan_inf.ncu-raw.csv", run)
    first = _prefix_doc(1, run, tmp_path)
    assert got["launches"] == 6
    assert got["time_s"] == pytest.approx(first["time_s"])
    # a failed launch (nan values) after an ==ERROR== line counts, without a time
    got = _doc(CORPUS / "error_line.ncu-raw.csv", run)
    three = _prefix_doc(3, run, tmp_path)
    assert got["launches"] == 4
    assert got["time_s"] == pytest.approx(three["time_s"])
    # nsys: kernels of 250 µs, 10 µs and 250 µs; the first ends before it starts, the
    # second has no end
    assert _doc(CORPUS / "negative_durations.sqlite", run)["time_s"] == pytest.approx(250e-6)
    # nsys trace: 509,651 and 502,420 ns are the good kernels; nan/inf rows are skipped and
    # the -500 ns kernel counts without a time
    trace = _doc(CORPUS / "nan_inf_durations_cuda_gpu_trace.csv", run)
    assert trace["launches"] == 3
    assert trace["time_s"] == pytest.approx(1_012_071e-9)


@pytest.mark.parametrize(
    ("name", "launches", "time_s"),
    [
        ("sqlite_named.csv", 3, 510e-6),
        ("stringids_missing_ids.sqlite", 3, 510e-6),
        ("missing_tables.sqlite", 0, None),
        ("truncated_cuda_gpu_kern_sum.csv", 2, 1_012_071e-9),
        ("text_in_numbers_cuda_gpu_kern_sum.csv", 2, 1_012_071e-9),
        ("duplicate_stringids.sqlite", 3, 510e-6),  # a doubled id does not double a kernel
        ("weird_table_name.sqlite", 3, 510e-6),
        ("bom_cuda_gpu_kern_sum.csv", 3, 1_124_521e-9),  # 1,012,071 + 112,450 ns
        # 296.991 µs + 45.600 µs + 1.204 ms + 12.345 µs, as the GUI's Events View prints them
        ("gui_events_view.csv", 4, 1_558.936e-6),
        ("unreadable_total_cuda_gpu_kern_sum.csv", 5, 3_000e-9),  # kern_b's time left out
        ("repeated_rows_cuda_gpu_kern_sum.csv", 5, 5_000e-9),  # cat a a counts once
    ],
)
def test_nsys_numbers_that_survive(name, launches, time_s, run):
    got = _doc(CORPUS / name, run)
    assert got["launches"] == launches
    assert got["time_s"] == (None if time_s is None else pytest.approx(time_s))


def test_a_recording_without_values_keeps_its_samples(run):
    got = _doc(CORPUS / "recording_missing_columns.parquet", run)
    (gpu,) = got["recording"]
    assert gpu["samples"] == 76 and gpu["duration_s"] == pytest.approx(75.0, abs=0.01)
    assert gpu["util_gpu"] is None and gpu["power_w"] is None


# --- issue 16: the numbers a correct reader gives ----------------------------------------


def _details_prefix(launches: int) -> str:
    """Header and every row of the first ``launches`` launches of the mobilenet details page."""
    lines = DETAILS.read_text("utf-8").splitlines(keepends=True)
    keep = {str(i) for i in range(launches)}
    return lines[0] + "".join(x for x in lines[1:] if next(csv.reader([x]))[0] in keep)


def test_a_details_page_without_final_newline_keeps_its_last_launch(run, tmp_path):
    got = _doc(CORPUS / "no_final_newline.ncu-details.csv", run)
    want = _doc(_write(tmp_path, "three.csv", _details_prefix(3)), run)
    _same_numbers(got, want, 3)


def test_an_uncheckpointed_wal_is_read(run, tmp_path):
    """sqlite3 replays the -wal file: the export holds 5 kernels, and reading it changes
    neither file (closing a read-write connection would checkpoint the WAL away)."""
    check = tmp_path / "check"
    check.mkdir()
    con = sqlite3.connect(_copy_with_companions("wal_uncheckpointed.sqlite", check))
    assert con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone() == (5,)
    con.close()
    path = _copy_with_companions("wal_uncheckpointed.sqlite", tmp_path)
    got = _doc(path, run)
    assert got["launches"] == 5
    # 250 + 10 + 250 µs in the database, a second 250 + 10 µs in the WAL
    assert got["time_s"] == pytest.approx(770e-6)
    for name in ("wal_uncheckpointed.sqlite", "wal_uncheckpointed.sqlite-wal"):
        assert (tmp_path / name).read_bytes() == (CORPUS / name).read_bytes(), name


_HZ = {"hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9, "cycle/second": 1.0, "cycle/nsecond": 1e9}


def test_durations_from_cycles_and_clock(run):
    """No gpu__time_duration: each launch lasts smsp__cycles_elapsed.avg / .avg.per_second."""
    rows = list(csv.reader((CORPUS / "cycles_no_duration.ncu-details.csv").open(encoding="utf-8")))
    head = rows[0]
    launch, metric, unit, value = (
        head.index(c) for c in ("ID", "Metric Name", "Metric Unit", "Metric Value")
    )
    cycles: dict[str, float] = {}
    rate: dict[str, float] = {}
    for row in rows[1:]:
        number = float(row[value].replace(",", ""))
        if row[metric] == "smsp__cycles_elapsed.avg":
            assert row[unit] == "cycle"
            cycles[row[launch]] = number
        elif row[metric] == "smsp__cycles_elapsed.avg.per_second":
            rate[row[launch]] = number * _HZ[row[unit].lower()]
    assert cycles.keys() == rate.keys() and len(cycles) == 3
    got = _doc(CORPUS / "cycles_no_duration.ncu-details.csv", run)
    assert got["launches"] == 3
    assert got["time_s"] == pytest.approx(sum(cycles[k] / rate[k] for k in cycles), rel=1e-9)


def test_a_details_page_that_names_its_device(run):
    got = _doc(CORPUS / "device_name.ncu-details.csv", run)
    assert got["gpu"]["name"] == "NVIDIA H100 80GB HBM3"
    assert not any("does not name its GPU" in w for w in got["warnings"])


def test_hostile_kernel_names_are_kept_verbatim(run):
    """Rich markup and terminal escapes in names: JSON has them as written; the table shows
    them without letting the terminal act on them."""
    path = CORPUS / "rich_markup_names.ncu-raw.csv"
    rows = list(csv.reader(path.open(encoding="utf-8", newline="")))
    names = {row[4] for row in rows[2:]}
    assert len(names) == 6 and any("\x1b" in n for n in names)
    code, out, err = run(path, "--by", "kernel")
    assert code == 0, err
    (report,) = _strict_json(out)["reports"]
    assert {row["name"] for row in report["rows"]} == names
    code, out, err = run.main(["report", str(path), "--format", "table"])
    assert code == 0, err
    assert "\x1b[2J" not in out and "\x07" not in out and "\x1b]0;" not in out


def test_a_clock_jump_is_no_duration(run):
    got = _doc(CORPUS / "recording_clock_jump.parquet", run)
    (gpu,) = got["recording"]
    assert gpu["duration_s"] < 100, gpu["duration_s"]  # 76 samples 1 s apart, not 6e9 s


def test_a_symlink_loop_is_refused_as_one(run, tmp_path):
    """Made here too, in case a checkout turned the committed link into a file."""
    loop = tmp_path / "a.ncu-raw.csv"
    loop.symlink_to(tmp_path / "b.ncu-raw.csv")
    (tmp_path / "b.ncu-raw.csv").symlink_to(loop)
    code, out, err = run(loop)
    _check_error(loop, "loop", code, out, err)


def test_a_number_ncu_never_writes_is_left_out_not_misread(run):
    """20,992000 µs left out: the total is that of the other three launches, not 21 s."""
    got = _doc(CORPUS / "stray_comma_number.ncu-raw.csv", run)
    rows = list(csv.reader(RAW.open(encoding="utf-8")))[:6]
    col = rows[0].index("gpu__time_duration.sum")
    scale = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3}[rows[1][col]]
    others = sum(float(r[col].replace(",", "")) * scale for i, r in enumerate(rows[2:]) if i != 1)
    assert got["launches"] == 4
    assert got["time_s"] == pytest.approx(others, rel=1e-9)
