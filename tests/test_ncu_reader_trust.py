"""Issue 16, ncu reader: no row lost, no other file read, no unit guessed, no input that hangs."""

from __future__ import annotations

import csv
import gzip
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

import roofscope
from roofscope.errors import RoofscopeError
from roofscope.ingest import ingest_file
from roofscope.ingest.ncu.pages import ingest_ncu_csv
from roofscope.schema import DDL
from tests.ncu_builder import ID_NEW, details_page, raw_page

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

UNITS = {"gpu__time_duration.sum": "us", "dram__bytes.sum": "Mbyte"}


def _launches(n: int) -> list[tuple[str, dict[str, str]]]:
    return [
        (f"k{i}(float *)", {"gpu__time_duration.sum": f"{i + 1}.500000", "dram__bytes.sum": "2.5"})
        for i in range(n)
    ]


def _summary_page(n: int) -> str:
    head = ["Process ID", "Process Name", "Host Name", "Kernel Name", "Block Size", "Grid Size"]
    head += ["Device", "CC", "Invocations", "Section Name", "Metric Name", "Metric Unit"]
    head += ["Minimum", "Maximum", "Average"]
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(head)
    for i in range(n):
        ids = ["1", "app", "h", f"k{i}", "(1, 1, 1)", "(1, 1, 1)", "0", "9.0", "2"]
        w.writerow([*ids, "s", "gpu__time_duration.sum", "us", "1", "1", f"{i + 1}.5"])
    return buf.getvalue()


def _totals(path: Path) -> tuple[int, float]:
    t = roofscope.load(path, use_cache=False).reports[0].totals()
    return t["launches"], t["time_s"]


def _ingest(path: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(DDL)
    ingest_file(con, path, 0)
    return con


@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("page", ["raw", "details", "summary"])
def test_last_row_without_a_line_break_is_kept(tmp_path, in_tmp_cwd, page, n):
    """A final row without a newline is whole when its last quote closed: 1 launch must not be
    refused and 3 must not become 2, plain or gzip, LF or CRLF, with or without a BOM."""
    text = {
        "raw": lambda: raw_page(_launches(n), UNITS),
        "details": lambda: details_page(
            [(f"k{i}", {"gpu__time_duration.sum": ("us", f"{i + 1}.5")}) for i in range(n)]
        ),
        "summary": lambda: _summary_page(n),
    }[page]()
    expected = None
    for name, data in (
        ("plain.csv", text),
        ("bare.csv", text.rstrip("\n")),
        ("crlf.csv", text.replace("\n", "\r\n").rstrip("\r\n")),
        ("bom.csv", "\ufeff" + text.rstrip("\n")),
    ):
        for gz in (False, True):
            raw = data.encode()
            path = tmp_path / (name + (".gz" if gz else ""))
            path.write_bytes(gzip.compress(raw) if gz else raw)
            got = _totals(path)
            expected = expected or got
            assert got == expected, (path.name, got, expected)
    launches = n * 2 if page == "summary" else n
    assert expected[0] == launches


def test_cut_last_row_without_a_line_break_is_still_skipped(tmp_path, in_tmp_cwd):
    """The other side of the rule: a row cut inside a quoted value is not taken whole."""
    text = raw_page(_launches(3), UNITS)
    path = tmp_path / "cut.csv"
    path.write_text(text[: text.rindex('"2.5"') + 3])
    session = roofscope.load(path, use_cache=False)
    assert session.reports[0].totals()["launches"] == 2
    assert any("truncated" in w for w in session.warnings)


@pytest.mark.parametrize("name", ["r[1].csv", "r*.csv", "r?.csv"])
def test_a_name_with_glob_characters_reads_only_its_own_file(tmp_path, in_tmp_cwd, name):
    """DuckDB expands [, * and ? in a file name; the decoy r1.csv must never be read."""
    (tmp_path / "r1.csv").write_text(raw_page(_launches(5), UNITS))
    own = tmp_path / name
    own.write_text(raw_page(_launches(2), UNITS))
    assert _totals(own) == (2, pytest.approx(4e-6))
    own.write_text(details_page([("k", {"gpu__time_duration.sum": ("us", "7")})]))
    assert _totals(own)[0] == 1


def _without_units_row(text: str) -> str:
    lines = text.splitlines(keepends=True)
    del lines[1]
    return "".join(lines)


def test_raw_page_without_units_row_reads_ncu_base_units(tmp_path, in_tmp_cwd):
    """ncu writes a value without a unit only in base units: 1500 is ns, not seconds."""
    page = raw_page([("k", {"gpu__time_duration.sum": "1,500", "dram__bytes.sum": "64"})], {})
    path = tmp_path / "nounits.csv"
    path.write_text(_without_units_row(page))
    session = roofscope.load(path, use_cache=False)
    assert session.reports[0].totals()["time_s"] == pytest.approx(1.5e-6)
    assert any("no units row" in w for w in session.warnings)


def test_raw_page_without_units_row_and_scaled_values_is_refused(tmp_path, in_tmp_cwd):
    """Six decimals are ncu's auto-scaled form: the unit is unknowable, so no number."""
    path = tmp_path / "auto.csv"
    path.write_text(_without_units_row(raw_page(_launches(2), UNITS)))
    with pytest.raises(RoofscopeError, match="no units row"):
        roofscope.load(path, use_cache=False)


def _dup_page(second: tuple[str, str]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow([*ID_NEW, "gpu__time_duration.sum", "gpu__time_duration.sum"])
    w.writerow([""] * len(ID_NEW) + ["us", "ms"])
    ids = ["1", "app", "h", "k", "1", "7", "(1, 1, 1)", "(1, 1, 1)", "0", "9.0"]
    w.writerow(["0", *ids, "1000", "1"])
    w.writerow(["1", *ids, second[0], second[1]])
    return buf.getvalue()


def test_a_metric_written_twice_with_different_values_is_flagged(tmp_path, in_tmp_cwd):
    """Equal copies (after units) are fine; a differing copy leaves that launch's value out."""
    same = tmp_path / "same.csv"
    same.write_text(_dup_page(("2000", "2")))
    session = roofscope.load(same, use_cache=False)
    assert session.reports[0].totals()["time_s"] == pytest.approx(3e-3)
    assert not any("appears more than once" in w for w in session.warnings)
    differ = tmp_path / "differ.csv"
    differ.write_text(_dup_page(("2000", "3")))
    session = roofscope.load(differ, use_cache=False)
    assert session.reports[0].totals()["time_s"] == pytest.approx(1e-3)
    warning = next(w for w in session.warnings if "appears more than once" in w)
    assert "gpu__time_duration.sum" in warning and "launch 1" in warning


def test_a_details_metric_listed_twice_with_different_values_is_flagged(tmp_path, in_tmp_cwd):
    """Two sections listing one metric agree in every real export; a disagreement (edited or
    merged file) leaves the launch's value out and says so, instead of taking one silently."""
    page = details_page(
        [
            ("k", {"gpu__time_duration.sum": ("us", "1")}),
            ("k", {"gpu__time_duration.sum": ("us", "2")}),
        ]
    )
    lines = page.splitlines(keepends=True)
    agree = lines[1].replace("Command line profiler metrics", "GPU Speed Of Light Throughput")
    differ = lines[2].replace('"2"', '"5"').replace("Command line", "Other")
    path = tmp_path / "twice.csv"
    path.write_text(lines[0] + lines[1] + agree + lines[2] + differ)
    session = roofscope.load(path, use_cache=False)
    assert session.reports[0].totals()["launches"] == 2
    # launch 1 left out, not 2 or 5 µs
    assert session.reports[0].totals()["time_s"] == pytest.approx(1e-6)
    warning = next(w for w in session.warnings if "listed twice" in w)
    assert "launch 1" in warning and "gpu__time_duration.sum" in warning


def test_details_page_names_its_gpu_when_a_row_holds_it(tmp_path, in_tmp_cwd):
    """device__attribute_display_name in a details page is the GPU's name, not 'GPU ?'."""
    values = {
        "gpu__time_duration.sum": ("us", "1.5"),
        "device__attribute_display_name": ("", "NVIDIA H100 80GB HBM3"),
    }
    path = tmp_path / "det.csv"
    path.write_text(details_page([("k", values), ("k2", values)]))
    con = duckdb.connect()
    con.execute(DDL)
    assert ingest_ncu_csv(con, path, 0).gpu_name == "NVIDIA H100 80GB HBM3"


def test_long_field_on_the_slow_path_loads(tmp_path, in_tmp_cwd):
    """A 200 KB kernel name (over csv's default 128 KB) on the Python pass is no traceback."""
    text = raw_page(
        [("k" * 200_000, {"gpu__time_duration.sum": "1"})], {"gpu__time_duration.sum": "us"}
    )
    path = tmp_path / "long.csv"
    path.write_text(text.replace('"ID"', "ID", 1) + "\x00\n")  # not all-quoted + NUL: slow path
    assert _totals(path)[0] == 1


def test_slow_path_leaves_no_copy_in_tmpdir_even_when_killed(tmp_path):
    """The cleaned copy has no name: TMPDIR stays empty during the load and after kill -9."""
    text = raw_page(_launches(60_000), UNITS)
    path = tmp_path / "big.csv"
    path.write_text(text[:-3])  # a cut last row sends the load to the Python pass
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {**os.environ, "TMPDIR": str(tmpdir), "ROOFSCOPE_CACHE_DIR": str(tmp_path / "c")}
    code = f"import roofscope; roofscope.load({str(path)!r}, use_cache=False)"
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    seen: set[str] = set()
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        seen |= set(os.listdir(tmpdir))
        if time.monotonic() > deadline - 58:  # let it run into the slow path, then kill it
            time.sleep(1.5)
            seen |= set(os.listdir(tmpdir))
            proc.kill()
            break
        time.sleep(0.05)
    proc.wait()
    seen |= set(os.listdir(tmpdir))
    assert not [n for n in seen if n.startswith("roofscope")], seen


def test_fifo_and_devices_are_refused_at_once(tmp_path, in_tmp_cwd):
    """A FIFO would block the first open, /dev/zero never ends: one line each, at once."""
    fifo = tmp_path / "p.csv"
    os.mkfifo(fifo)
    for path, words in ((fifo, "is a pipe"), (Path("/dev/zero"), "character device")):
        start = time.monotonic()
        with pytest.raises(RoofscopeError, match=words):
            _ingest(path)
        assert time.monotonic() - start < 30  # a hang guard (it takes milliseconds)


def test_process_substitution_pipe_is_named_as_such(tmp_path):
    """``roofscope report <(cat f)`` gets a pipe /dev/fd/N: say so and what to do."""
    src = tmp_path / "r.csv"
    src.write_text(raw_page(_launches(1), UNITS))
    env = {**os.environ, "ROOFSCOPE_CACHE_DIR": str(tmp_path / "c")}
    cmd = f"{sys.executable} -m roofscope report <(cat {src}) --format json"
    proc = subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "is a pipe (as <(command) gives)" in proc.stderr and "save it to a file" in proc.stderr


def test_gzip_of_blank_lines_is_refused_quickly(tmp_path, in_tmp_cwd):
    """64 MB of blank lines (67 million lines) is one scan, not minutes of per-line work."""
    path = tmp_path / "blank.csv.gz"
    path.write_bytes(gzip.compress(b"\n" * (96 << 20), compresslevel=1))
    start = time.monotonic()
    with pytest.raises(RoofscopeError, match="no header"):
        _ingest(path)
    assert time.monotonic() - start < 60  # a hang guard: ~1.5 s; per-line work took minutes


def test_control_characters_in_a_name_stay_on_one_line():
    """A newline or ESC in a file name or message is shown escaped, never acted on."""
    line = RoofscopeError("bad\x1b[2J value", path="a\nb\u202e.csv", hint="x").one_line()
    assert "\n" not in line and "\x1b" not in line and "\u202e" not in line
    assert "a\\nb\\u202e.csv" in line and "\\x1b[2J" in line


def test_utf32_is_named_with_the_right_hint(tmp_path, in_tmp_cwd):
    text = raw_page(_launches(1), UNITS)
    for encoding in ("utf-32", "utf-32-le", "utf-32-be"):
        path = tmp_path / f"{encoding}.csv"
        path.write_bytes(text.encode(encoding))
        with pytest.raises(RoofscopeError, match="UTF-32") as info:
            _ingest(path)
        assert "iconv -f UTF-32" in info.value.one_line()


def test_symlink_loop_is_named(tmp_path, in_tmp_cwd):
    """A link that leads back to itself is not 'no such file'."""
    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop)
    with pytest.raises(RoofscopeError, match="symlink loop"):
        _ingest(loop)


# --- number shapes, skipped lines named, NUL in the header ------------------------------------


def _warnings(path: Path) -> tuple[float, list[str]]:
    session = roofscope.load(path, use_cache=False)
    return session.reports[0].totals()["time_s"], session.warnings


@pytest.mark.parametrize("cut", [False, True])
@pytest.mark.parametrize("bad", ["20,992000", "1_000", "1e3", "+5", ".5", "1.234,5"])
def test_value_not_in_ncu_number_shape_is_left_out_and_named(tmp_path, bad, cut):
    """``20,992000`` is no grouping ncu writes: it must not be read as 20,992,000 µs (nor
    ``1_000`` as 1000, which Python and DuckDB casts accept), on the fast path and on the
    Python pass (``cut``: a truncated last row sends the load there)."""
    launches = _launches(3)
    launches[1][1]["gpu__time_duration.sum"] = bad
    text = raw_page(launches, UNITS) + ('"3","1337","app"' if cut else "")
    time_s, warnings = _warnings(_write(tmp_path, text))
    assert time_s == pytest.approx((1.5 + 3.5) * 1e-6)
    hit = [w for w in warnings if "not numbers as ncu writes them" in w]
    assert hit and "gpu__time_duration.sum (1" in hit[0] and repr(bad) in hit[0]
    assert "launch ID 1" in hit[0]


def _write(tmp_path: Path, text: str, name: str = "r.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_details_value_not_in_ncu_number_shape_is_named(tmp_path):
    """The details page parses its values from text too: same grammar, same warning."""
    launches = [
        (f"k{i}", {"gpu__time_duration.sum": ("usecond", v)})
        for i, v in enumerate(["1.5", "2,0000", "3,500.25"])
    ]
    time_s, warnings = _warnings(_write(tmp_path, details_page(launches)))
    assert time_s == pytest.approx((1.5 + 3500.25) * 1e-6)
    hit = [w for w in warnings if "not numbers as ncu writes them" in w]
    assert hit and "'2,0000'" in hit[0] and "launch 1" in hit[0]


def test_every_number_shape_ncu_writes_is_read(tmp_path):
    """Grouped, ungrouped, negative-free fractions, n/a, nan and the instance form: no value
    of a real export's shapes is turned away by the grammar."""
    values = ["1", "1,024", "13,747,513,976.25", "999.000000", "65,536 (0; 0; 65,536)", "n/a"]
    launches = [(f"k{i}", {"gpu__time_duration.sum": v}) for i, v in enumerate(values)]
    page = raw_page(launches, {"gpu__time_duration.sum": "ns"})
    time_s, warnings = _warnings(_write(tmp_path, page))
    assert time_s == pytest.approx((1 + 1024 + 13_747_513_976.25 + 999 + 65_536) * 1e-9)
    assert not [w for w in warnings if "not numbers" in w]


@pytest.mark.parametrize("newline", ["", "\n"])
def test_last_row_cut_at_a_field_boundary_is_a_truncation(tmp_path, newline):
    """A last row with fewer fields whose last field is complete and quoted was cut: it is
    reported as a truncation (with its line), not as a line that is not an ncu row."""
    text = raw_page(_launches(3), UNITS)
    last = text.rstrip("\n")
    text = last[: last.rfind(',"')] + newline
    time_s, warnings = _warnings(_write(tmp_path, text))
    assert time_s == pytest.approx((1.5 + 2.5) * 1e-6)
    assert any("ends in the middle of a row" in w and "line 5" in w for w in warnings), warnings
    assert not [w for w in warnings if "not rows of the ncu table" in w]


def test_skipped_ragged_lines_are_named(tmp_path):
    """A warning that skips lines says which: the first few line numbers, then a count."""
    lines = raw_page(_launches(8), UNITS).splitlines(keepends=True)
    for i in (3, 5, 6, 7, 8):  # 0-based: file lines 4, 6, 7, 8 and 9 (not the last)
        lines[i] = lines[i][: lines[i].rstrip("\n").rfind(',"')] + "\n"
    time_s, warnings = _warnings(_write(tmp_path, "".join(lines)))
    hit = [w for w in warnings if "not rows of the ncu table" in w]
    assert hit and "skipped 5 line(s)" in hit[0] and "lines 4, 6, 7 and 2 more" in hit[0]
    assert time_s == pytest.approx((1.5 + 3.5 + 8.5) * 1e-6)


def test_nul_inside_a_header_name_is_named(tmp_path):
    """A NUL byte inside a column name is dropped with the others, changing the name: say so."""
    text = raw_page(_launches(2), UNITS).replace("gpu__time_duration", "gpu__time\x00_duration", 1)
    _, warnings = _warnings(_write(tmp_path, text))
    hit = [w for w in warnings if "NUL" in w and "header" in w]
    assert hit and "gpu__time_duration.sum" in hit[0] and "line 1" in hit[0]


def test_nul_before_the_header_is_not_a_header_change(tmp_path):
    """Application output without a line break (a NUL) before the header changes no name."""
    text = "\x00" + raw_page(_launches(2), UNITS)
    _, warnings = _warnings(_write(tmp_path, text))
    assert not [w for w in warnings if "NUL" in w and "header" in w]


@pytest.mark.parametrize(
    ("text", "decimal", "value"),
    [
        ("1,580,911,775.91", ".", 1_580_911_775.91),
        ("35232.125000", ".", 35232.125),
        ("65,536 (0; 0; 1)", ".", 65536.0),
        ("1.234,5", ",", 1234.5),
        ("20,992000", ".", None),
        ("1_000", ".", None),
        ("1e3", ".", None),
        ("inf", ".", None),
        ("n/a", ".", None),
    ],
)
def test_detail_reads_a_value_only_in_a_shape_ncu_writes(text, decimal, value):
    """Detail's raw rows (read on demand) follow the ingest grammar: 20,992000 is shown as the
    text it is, never as 20,992,000."""
    from roofscope.ingest.numbers import parse_number

    got = parse_number(text, decimal)
    assert got == (pytest.approx(value) if value is not None else None)


@pytest.mark.parametrize("page", ["details"])  # a summary page is read in order by its rank
def test_launches_are_stored_in_launch_order(tmp_path, in_tmp_cwd, page):
    """Pages read through a GROUP BY store their launches and values in launch order. A hash
    table's order varies from run to run (most with many threads and a file store), and every
    later sum follows the stored order: the same report printed different last digits on two
    reads (CI, the kept report against a fresh one)."""
    path = tmp_path / f"p.{page}.csv"
    launches = [(k, {m: (UNITS[m], v) for m, v in values.items()}) for k, values in _launches(400)]
    text = details_page(launches) if page == "details" else _summary_page(400)
    path.write_text(text)
    for attempt in range(4):
        con = duckdb.connect(str(tmp_path / f"store{attempt}.duckdb"))
        con.execute("SET threads = 8")
        con.execute(DDL)
        ingest_file(con, path, 0)
        for table in ("launches", "values_r0"):
            stored = [r[0] for r in con.execute(f"SELECT launch_id FROM {table}").fetchall()]
            assert stored == sorted(stored), (table, attempt)
        con.close()


@pytest.mark.parametrize("text", ["inf", "-inf", "INF", "nan"])
def test_not_finite_values_ncu_writes_are_no_value_not_unreadable(tmp_path, text):
    """ncu 2025.3.1 writes ``inf`` for ``launch__waves_per_multiprocessor`` of some launches
    (sample_reports/mobilenetv2_fp32_b8_cl_h200): like ``nan``, no value (NULL, counted among
    the launches without one), never "not a number as ncu writes it" nor a number."""
    launches = _launches(3)
    launches[1][1]["gpu__time_duration.sum"] = text
    time_s, warnings = _warnings(_write(tmp_path, raw_page(launches, UNITS)))
    assert time_s == pytest.approx((1.5 + 3.5) * 1e-6)
    assert not [w for w in warnings if "not numbers as ncu writes them" in w]
