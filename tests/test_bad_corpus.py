"""Every entry of tests/corpus/bad/ through the real CLI (``roofscope report FILE --format
json``, in-process): exit 2 with one line naming the file and the problem, or exit 0 with
warnings that say what was wrong and numbers that are still right.

The files are made by tools/make_bad_corpus.py (its README says what is wrong with each); the
table below is kept here, apart from the generator, so that a change of behaviour fails.
``ROOFSCOPE_DEBUG`` is set: an exception the readers did not foresee then escapes as itself
instead of becoming the store's generic "could not be loaded" line, and fails the test.
"""

from __future__ import annotations

import json
import re
import time
import zlib
from pathlib import Path

import pytest

from roofscope.cli import main
from tests.conftest import REPO, SAMPLES

CORPUS = REPO / "tests" / "corpus" / "bad"
RAW = SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv"
ERROR, WARN = "error", "load with warnings"
SLOW_S = 3.0  # rejecting or loading any of these small files takes well under a second

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
    "recording_missing_columns.parquet": (WARN, "the recording lacks 27 column(s)"),
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
}


def _report(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str, float]:
    capsys.readouterr()
    start = time.perf_counter()
    code = main(["report", str(path), "--format", "json"])
    elapsed = time.perf_counter() - start
    out, err = capsys.readouterr()
    return code, out, err, elapsed


@pytest.fixture
def run(capsys, monkeypatch, in_tmp_cwd):
    monkeypatch.setenv("ROOFSCOPE_DEBUG", "1")
    monkeypatch.setenv("PATH", str(in_tmp_cwd))  # no ncu/nsys: nothing is converted

    def report(path: Path) -> tuple[int, str, str, float]:
        return _report(path, capsys)

    return report


def test_the_table_names_every_corpus_entry():
    on_disk = {p.name for p in CORPUS.iterdir()} - {"README.md"}
    assert on_disk == set(EXPECTED)
    assert len(on_disk) >= 30
    readme = (CORPUS / "README.md").read_text("utf-8")
    documented = dict(re.findall(rf"^\| `([^`]+)` \| .* \| ({ERROR}|{WARN}) \|$", readme, re.M))
    assert documented == {name: outcome for name, (outcome, _) in EXPECTED.items()}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_input(name, run):
    outcome, says = EXPECTED[name]
    path = CORPUS / name
    code, out, err, elapsed = run(path)
    assert "Traceback" not in err
    assert elapsed < SLOW_S, f"{name} took {elapsed:.1f} s"
    if outcome == ERROR:
        assert code == 2, out[:500]
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith(f"roofscope: {path}: "), lines[0]
        assert says in lines[0]
        assert lines[0].endswith(")"), "a hint in parentheses ends the line"
    else:
        assert code == 0, err
        assert err.strip() == ""
        doc = json.loads(out)
        (report,) = doc["reports"]
        assert doc["warnings"] and report["warnings"]
        assert any(says in w for w in report["warnings"]), report["warnings"]


# --- the numbers that survive are right --------------------------------------------------


def _doc(path: Path, run) -> dict:
    code, out, err, _ = run(path)
    assert code == 0, err
    (report,) = json.loads(out)["reports"]
    return report


def _raw_prefix(n: int) -> str:
    """Header, units row and the first ``n`` launches of the mobilenet raw sample."""
    return "".join(RAW.read_text("utf-8").splitlines(keepends=True)[: n + 2])


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
    ],
)
def test_loads_equal_the_original_sample(name, launches, run, tmp_path):
    got = _doc(CORPUS / name, run)
    want = _doc(_write(tmp_path, "want.csv", _raw_prefix(launches)), run)
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
    want = _doc(_write(tmp_path, "six.csv", _raw_prefix(6)), run)
    assert got["launches"] == 12
    assert got["time_s"] == pytest.approx(2 * want["time_s"])
    assert got["bytes"]["dram"] == pytest.approx(2 * want["bytes"]["dram"])


def test_bad_durations_are_left_out_not_summed(run, tmp_path):
    # ncu: launches 1-5 have -1, nan, inf, -inf and 1e999 ns; only launch 0 has a time
    got = _doc(CORPUS / "negative_nan_inf.ncu-raw.csv", run)
    first = _doc(_write(tmp_path, "one.csv", _raw_prefix(1)), run)
    assert got["launches"] == 6
    assert got["time_s"] == pytest.approx(first["time_s"])
    # a failed launch (nan values) after an ==ERROR== line counts, without a time
    got = _doc(CORPUS / "error_line.ncu-raw.csv", run)
    three = _doc(_write(tmp_path, "three.csv", _raw_prefix(3)), run)
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
