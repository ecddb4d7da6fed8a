"""Issue 30: memory and work bounded by the data (the real rows and names), not by what a
hostile file decompresses to or how deeply a name nests.

Memory is measured, never time: each report runs in a child of a small wrapper process,
which prints its children's peak RSS (``RUSAGE_CHILDREN``: only the roofscope process, not
whatever else this test process started). Timeouts are hang guards only (60 s).
Work is counted (characters the bracket scan and the regex passes go over), not timed.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from roofscope import grouping
from roofscope.grouping import MAX_BRACKET_PASSES, base_name
from tests.conftest import REPO, SAMPLES

RAW = SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv"
PEAK_LIMIT_KB = 1 << 20  # 1 GiB, as ru_maxrss counts on Linux
HANG_GUARD_S = 60
_PEAK = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout={guard})\n"
    "sys.stderr.write(done.stderr)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.stdout.write(done.stdout)\n"
)


def _report_peak(path: Path, cache: Path) -> tuple[int, int, dict]:
    """``roofscope report PATH --format json`` through the entry point in a fresh process:
    its exit code, its peak RSS in KB, and its JSON."""
    env = {**os.environ, "ROOFSCOPE_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO / "src")}
    command = [sys.executable, "-m", "roofscope", "report", str(path), "--format", "json"]
    wrapper = [sys.executable, "-c", _PEAK.format(guard=HANG_GUARD_S), *command]
    done = subprocess.run(
        wrapper, capture_output=True, text=True, env=env, timeout=HANG_GUARD_S + 10
    )
    first, _, rest = done.stdout.partition("\n")
    code, peak = (int(x) for x in first.split())
    assert code == 0, done.stderr
    return code, peak, json.loads(rest)


def _gzip_with_filler(path: Path, head: bytes, filler: bytes, total: int) -> None:
    """``head`` then ``total`` bytes of ``filler`` repeated, gzipped as a stream (the test
    never holds the decompressed file)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = filler * ((1 << 20) // len(filler))
    with open(path, "wb") as out:
        out.write(packer.compress(head))
        for _ in range(total // len(block)):
            out.write(packer.compress(block))
        out.write(packer.flush())


def _two_launches() -> bytes:
    """The sample raw page's header, units row and first two launches."""
    return "".join(RAW.read_text("utf-8").splitlines(keepends=True)[:4]).encode()


@pytest.mark.slow
def test_blank_line_bomb_loads_its_two_launches_in_bounded_memory(tmp_path):
    """A 250 KB gzip of two launches and 256 MB of blank lines took 24 GB (a row of nulls per
    blank line, 337 columns wide); blank lines are skipped while parsing, as DuckDB does."""
    bomb = tmp_path / "bomb.ncu-raw.csv.gz"
    _gzip_with_filler(bomb, _two_launches(), b"\n", 256 << 20)
    assert bomb.stat().st_size < 400_000
    _, peak, doc = _report_peak(bomb, tmp_path / "cache")
    (report,) = doc["reports"]
    assert report["launches"] == 2
    assert not any("skipped" in w for w in report["warnings"])  # blank lines are no noise
    assert peak < PEAK_LIMIT_KB, f"peak RSS {peak / 1024:.0f} MB"


@pytest.mark.slow
def test_noise_lines_are_counted_not_stored(tmp_path):
    """Lines of a space each are noise, not blank: pyarrow gives up on them and DuckDB's
    split read counts them without storing a row for each (0.5 million of them took 1.3 GB
    in a table of every column of every line)."""
    bomb = tmp_path / "spaces.ncu-raw.csv.gz"
    lines = 2 << 20
    _gzip_with_filler(bomb, _two_launches(), b" \n", 2 * lines)
    _, peak, doc = _report_peak(bomb, tmp_path / "cache")
    (report,) = doc["reports"]
    assert report["launches"] == 2
    assert f"skipped {lines} line(s) inside the table that are not ncu rows" in report["warnings"]
    assert peak < PEAK_LIMIT_KB, f"peak RSS {peak / 1024:.0f} MB"


@pytest.mark.slow
def test_a_1_mb_nested_template_name_is_grouped_through_the_cli(tmp_path):
    """A kernel named ``f<f<…>>`` 1 MB long did not finish (one regex pass per level)."""
    rows = list(csv.reader(io.StringIO(RAW.read_text("utf-8"))))[:3]
    name = "void f" + "<f" * 250_000 + ">" * 250_000 + "(int)"
    rows[2][rows[0].index("Kernel Name")] = name
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    path = tmp_path / "long.ncu-raw.csv.gz"
    path.write_bytes(gzip.compress(buf.getvalue().encode(), mtime=0))
    _, _, doc = _report_peak(path, tmp_path / "cache")
    (report,) = doc["reports"]
    assert report["launches"] == 1
    assert [g["name"] for g in report["groups"]] == ["f"]


class _Counting:
    """A compiled pattern whose scans count the characters they are handed."""

    def __init__(self, pattern, work: list[int]):
        self.pattern, self.work = pattern, work

    def finditer(self, text: str):
        self.work[0] += len(text)
        return self.pattern.finditer(text)

    def sub(self, repl: str, text: str) -> str:
        self.work[0] += len(text)
        return self.pattern.sub(repl, text)


def _work(name: str, monkeypatch) -> int:
    work = [0]
    monkeypatch.setattr(grouping, "_BRACKET_CHARS", _Counting(grouping._BRACKET_CHARS, work))
    monkeypatch.setattr(grouping, "_BRACKETS", _Counting(grouping._BRACKETS, work))
    base_name(name)
    return work[0]


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda n: "void f" + "<f" * n + ">" * n + "(int)", id="nested templates"),
        pytest.param(lambda n: "f<" + "a<(b[c])>," * n + ">", id="mixed brackets"),
        pytest.param(lambda n: "f<" + ",:" * n + ">", id="commas and colons"),
        pytest.param(lambda n: "operator<" + "<f" * n + ">" * n, id="not well nested"),
        pytest.param(lambda n: "f" + "<" * n, id="left open"),
    ],
)
def test_base_name_work_grows_linearly_with_the_name(make, monkeypatch):
    """The characters scanned for a name ten and a hundred times as long grow ten and a
    hundred times (a pass per nesting level made them grow a hundred and ten thousand)."""
    small, large = make(1_000), make(100_000)
    per_char = [_work(name, monkeypatch) / len(name) for name in (small, large)]
    assert per_char[1] <= per_char[0] * 1.5 + 0.01
    assert per_char[1] <= MAX_BRACKET_PASSES + 1


def test_base_name_of_a_1_mb_name():
    """The 1 MB names of the issue: their base names, at once."""
    assert base_name("f<" * 100_000 + ">" * 100_000) == "f"
    assert base_name("void ns::k" + "<a" * 500_000 + ">" * 500_000 + "(int)") == "ns::k"


def test_totals_of_many_reports_are_one_query(monkeypatch):
    """``record --summary`` of 1,000 recordings spent most of its time on a totals query per
    report while the views were built; all reports' totals are one grouped query."""
    from roofscope.session import load, report

    calls: list[int] = []
    real = report.fill_totals

    def counting(con, reports):  # type: ignore[no-untyped-def]
        calls.append(len(reports))
        real(con, reports)

    monkeypatch.setattr(report, "fill_totals", counting)
    samples = [SAMPLES / f"{name}_h100.ncu-raw.csv" for name in ("gemm4096_bf16", "mlp_fp32_b128")]
    session = load(*samples)
    try:
        assert calls == [2]
        for r in session.reports:
            t = r.totals()
            launches = session.con.execute(
                f"SELECT sum(invocations) FROM launch_facts WHERE report_id = {r.report_id}"
            ).fetchone()[0]
            assert t["launches"] == launches > 0
    finally:
        session.close()
