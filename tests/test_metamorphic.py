"""Rewrites of real exports that real pipelines make must not change any total roofscope reports.

DESIGN §8: "the totals of a real export do not change when it is rewritten as real pipelines do
(no final newline, CRLF, BOM, gzip, row or column order, odd file names)". Each test rewrites a
real export in tmp_path and compares launches, time, FLOPs per precision and bytes per level with
those of the untouched file, each load built afresh (no cache) so no cache can hide a change.
The rewrites one by one run on the small real exports (≤ ~0.6 MB); every real export the tests
reach (sample_reports/, tests/data/, ../shared/samples/**) is read once more through all the
format-free rewrites stacked, against the independent reader (tests/oracle.py), so the module
stays under a minute.
"""

from __future__ import annotations

import csv
import gzip
import io
import random
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests import oracle
from tests.conftest import SAMPLES, SHARED
from tests.test_oracle import differences, label, real_exports, roofscope_totals

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

EXACT = 1e-12  # rewrites change no digit; unit rescaling moves a decimal point at most

# (label, path relative to its root, page kind)
CSV_EXPORTS = [
    ("mlp-raw-sections", SAMPLES / "mlp_fp32_b128_h100.ncu-raw.csv", "ncu"),
    ("app-raw-preamble", SHARED / "generated/ncu_2025.3.1_h100/app_metrics_raw.csv", "ncu"),
    ("app-details-rules", SHARED / "generated/ncu_2025.3.1_h100/app_full_details.csv", "ncu"),
    ("app-summary", SHARED / "generated/ncu_2025.3.1_h100/app_metrics_summary_per_kernel.csv",
     "ncu"),
    ("t4-details-nul", SHARED / "public/cissieAB__pinn-heat-equation__Tesla-T4_1run_time.csv",
     "ncu"),
    ("a100-details-multiline", SHARED / "public/leleucas__Actual-Parameter-Collection-for-"
     "Machine-Learning-Operators__gpt2_flashattn_nsight.csv", "ncu"),
    ("v100-details", SHARED / "wild/wangzy0327__cuda-roofline__src_output.csv", "ncu"),
    ("a100-details-smsp", SHARED / "wild/Gardenia-Tian__LearningNote4Dev__CUDA_gemm_output_"
     "gemm.csv", "ncu"),
    ("b200-raw", SHARED / "wild/meinie0826__Roofline-Analysis__decodebench_results_ncu_"
     "flashinfer_paged_decode__gqa_bf16_b128_ctx2k_p64.ncu.csv", "ncu"),
    ("nsys-kern-sum", SHARED / "public/CodeGandee__llm-perf-opt__summary_cuda_gpu_kern_sum.csv",
     "nsys"),
    ("nsys-trace", SHARED / "generated/nsys_2025.3.1_from_ayush-os_a100/"
     "ayush_vector_add_profile_v3_cuda_gpu_trace.csv", "nsys"),
]  # fmt: skip
SQLITE_EXPORTS = [
    ("kmeans", SHARED / "public/martisu1631998__kmeans-parallel__report2.sqlite"),
    ("memfusion", SHARED / "public/LeiWang1999__memfusion_artifact__report1.sqlite"),
]
# The same report exported with auto-scaled and with base units.
UNIT_PAIRS = [
    ("mobilenet-sample", SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv",
     SAMPLES / "mobilenetv2_fp32_h100.ncu-raw-base.csv"),
    ("mobilenet-h100", SHARED / "h100/mobilenet_metrics.raw.csv",
     SHARED / "h100/mobilenet_metrics.raw_base.csv"),
    ("app-subset", SHARED / "generated/ncu_2025.3.1_h100/app_full_raw_subset.csv",
     SHARED / "generated/ncu_2025.3.1_h100/app_full_raw_subset_base.csv"),
]  # fmt: skip


_ORIGINALS: dict[Path, dict] = {}  # totals of the untouched files, each read once per run


@pytest.fixture
def totals():
    """roofscope's totals of a file, built afresh without a cache (an untouched original is
    read once per run, also without one); the in-memory build is the same ingest, faster."""

    def load(path: Path) -> dict:
        original = path.is_relative_to(SAMPLES) or path.is_relative_to(SHARED)
        if original and path in _ORIGINALS:
            return _ORIGINALS[path]
        result = roofscope_totals(path, use_cache=False)
        if original:
            _ORIGINALS[path] = result
        return result

    return load


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} not available (shared samples folder absent)")
    return path


# -- splitting an export into verbatim rows ------------------------------------------------------

_NCU_HEADER = re.compile(r'^\ufeff?"?(ID|Process ID)"?,"?(Process ID|Process Name)"?,')


class Table:
    """An export as preamble text, header/units rows, data rows and trailing text, each row kept
    as its original text (quoted newlines included) next to its parsed fields."""

    def __init__(self, text: str, kind: str):
        lines = re.findall(r"[^\n]*\n|[^\n]+$", text)
        self.kind = kind
        start = next(i for i, line in enumerate(lines) if self._is_header(line))
        self.preamble = "".join(lines[:start])
        self.rows: list[tuple[str, list[str]]] = []  # (text, fields) from the header on
        pos = start
        while pos < len(lines):
            end = pos + 1
            while True:  # a row ends where its quotes balance
                chunk = "".join(lines[pos:end])
                if chunk.count('"') % 2 == 0 or end >= len(lines):
                    break
                end += 1
            self.rows.append((chunk, next(csv.reader([chunk.rstrip("\r\n")]), [])))
            pos = end
        self.header = self.rows[0][1]
        n_head = 2 if kind == "ncu" and self._has_units() else 1
        self.head = self.rows[:n_head]
        data_end = n_head
        while data_end < len(self.rows) and self._is_data(self.rows[data_end]):
            data_end += 1
        self.data = self.rows[n_head:data_end]
        self.tail = self.rows[data_end:]

    def _is_header(self, line: str) -> bool:
        if self.kind == "ncu":
            return bool(_NCU_HEADER.match(line))
        return line.startswith(("Time", "Start"))

    def _has_units(self) -> bool:
        return "Metric Name" not in self.header and self.rows[1][1][:1] == [""]

    def _is_data(self, row: tuple[str, list[str]]) -> bool:
        if self.kind == "ncu":
            return bool(row[1]) and row[1][0].strip().isdigit()
        return bool(row[0].strip())

    def text(self, head=None, data=None) -> str:
        rows = (head if head is not None else self.head) + (data if data is not None else self.data)
        body = "".join(t if t.endswith("\n") else t + "\n" for t, _ in rows)
        return self.preamble + body + "".join(t for t, _ in self.tail)

    def launch_blocks(self) -> list[list[tuple[str, list[str]]]]:
        """Data rows grouped by launch: one row on a raw page or an nsys table, consecutive rows
        with the same identification columns on a details or summary page."""
        if self.kind != "ncu" or "Section Name" not in self.header:
            return [[row] for row in self.data]
        ident = self.header.index("Section Name")
        blocks: list[list[tuple[str, list[str]]]] = []
        for row in self.data:
            if blocks and blocks[-1][0][1][:ident] == row[1][:ident]:
                blocks[-1].append(row)
            else:
                blocks.append([row])
        return blocks


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def _write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def _serialise(fields: list[str], kind: str, newline: str) -> str:
    out = io.StringIO()
    quoting = csv.QUOTE_ALL if kind == "ncu" else csv.QUOTE_MINIMAL
    csv.writer(out, quoting=quoting, lineterminator=newline).writerow(fields)
    return out.getvalue()


# -- rewrites -------------------------------------------------------------------------------------


def no_final_newline(path: Path, kind: str, out: Path) -> Path:
    return _write(out, _read(path).rstrip("\r\n"))


def crlf(path: Path, kind: str, out: Path) -> Path:
    return _write(out, re.sub(r"\r?\n", "\r\n", _read(path)))


def bom(path: Path, kind: str, out: Path) -> Path:
    return _write(out, "\ufeff" + _read(path).removeprefix("\ufeff"))


def gzipped(path: Path, kind: str, out: Path) -> Path:
    gz = out.with_name(out.name + ".gz")
    gz.write_bytes(gzip.compress(path.read_bytes(), compresslevel=1))  # a gzip file all the same
    return gz


def rows_shuffled(path: Path, kind: str, out: Path) -> Path:
    """Data rows in another order; the header (and units row) first, a launch's rows together."""
    table = Table(_read(path), kind)
    blocks = table.launch_blocks()
    assert len(blocks) >= 2, "nothing to shuffle"
    order = list(range(len(blocks)))
    random.Random(16).shuffle(order)
    if order == sorted(order):
        order.reverse()
    return _write(out, table.text(data=[row for i in order for row in blocks[i]]))


def columns_permuted(path: Path, kind: str, out: Path) -> Path:
    """Every column in another order, the identification columns (ID, Kernel Name…) too, as
    a DataFrame selection writes them; short ragged rows padded to full width."""
    table = Table(_read(path), kind)
    width = len(table.header)
    rest = list(range(width))
    rng = random.Random(16)
    perm = rest[:]
    while perm == rest or perm[0] == 0:  # ID moved, whatever else moves
        rng.shuffle(perm)

    def rewrite(row: tuple[str, list[str]]) -> tuple[str, list[str]]:
        text, fields = row
        newline = "\r\n" if text.endswith("\r\n") else "\n"
        fields = fields + [""] * (width - len(fields))
        assert len(fields) == width, f"row wider than the header: {text[:80]!r}"
        moved = [fields[i] for i in perm]
        return _serialise(moved, kind, newline), moved

    return _write(
        out, table.text([rewrite(r) for r in table.head], [rewrite(r) for r in table.data])
    )


def pandas_round_trip(path: Path, kind: str, out: Path) -> Path:
    """``pd.read_csv(f).to_csv(g, index=False)``, types inferred: an ncu page's units row
    leaves its integer columns (ID, Context…) empty, so they come back as ``12.0``; numbers
    lose their quotes. A page pandas cannot read as it is (log lines before the header) is
    not what this rewrite is about."""
    pd = pytest.importorskip("pandas")
    try:
        frame = pd.read_csv(path, low_memory=False)
    except (ValueError, pd.errors.ParserError) as exc:
        pytest.skip(f"pandas reads it differently: {exc}")
    if kind == "ncu" and "ID" not in frame.columns:
        pytest.skip("the header is not on the first line: pandas takes a log line for it")
    frame.to_csv(out, index=False)
    if out.read_bytes() == path.read_bytes():
        pytest.skip("pandas writes this file back byte for byte")
    return out


REWRITES = [
    no_final_newline,
    crlf,
    bom,
    gzipped,
    rows_shuffled,
    columns_permuted,
    pandas_round_trip,
]
# The rewrites that need no knowledge of the format run one by one on one export of each page
# kind; every real export meets them stacked in test_every_real_export_read_through_every_rewrite.
FORMAT_FREE = {no_final_newline, crlf, bom, gzipped}
ONE_OF_EACH_KIND = {"mlp-raw-sections", "app-details-rules", "app-summary", "nsys-kern-sum"}
CASES = [
    pytest.param(path, kind, rewrite, id=f"{name}-{rewrite.__name__}")
    for name, path, kind in CSV_EXPORTS
    for rewrite in REWRITES
    if rewrite not in FORMAT_FREE or name in ONE_OF_EACH_KIND
]


@pytest.mark.parametrize(("path", "kind", "rewrite"), CASES)
def test_rewritten_csv_keeps_its_totals(path: Path, kind: str, rewrite, tmp_path: Path, totals):
    """Each rewrite a real pipeline makes leaves every total as the original file gives it."""
    before = totals(_need(path))
    assert before["launches"] > 0, "a real export with kernels"
    changed = rewrite(path, kind, tmp_path / f"rewritten{''.join(path.suffixes)}")
    assert changed.read_bytes() != path.read_bytes()
    assert differences(before, totals(changed), rel=EXACT) == []


def _decoy_pair(tmp_path: Path, source: Path, decoy_source: Path, suffix: str) -> Path:
    """``my report [1] *?{suffix}`` beside ``my report 1 ab{suffix}``, which its name matches
    as a glob pattern: a reader that expands patterns would open the decoy."""
    odd = tmp_path / f"my report [1] *?{suffix}"
    shutil.copyfile(source, odd)
    decoy = tmp_path / f"my report 1 ab{suffix}"
    shutil.copyfile(decoy_source, decoy)
    assert decoy.match(odd.name)  # the decoy really is what the pattern would find
    return odd


@pytest.mark.parametrize(
    ("path", "kind"), [(p, k) for _, p, k in CSV_EXPORTS], ids=[n for n, _, _ in CSV_EXPORTS]
)
def test_odd_file_name_next_to_a_decoy(path: Path, kind: str, tmp_path: Path, totals):
    """Spaces, brackets, ``*`` and ``?`` in a name are characters, not a pattern."""
    before = totals(_need(path))
    other = SAMPLES / "gemm4096_bf16_h100.ncu-raw.csv"  # one launch: unlike every file here
    decoy_totals = totals(other)
    assert differences(before, decoy_totals) != [], "the decoy must differ to be a decoy"
    odd = _decoy_pair(tmp_path, path, other, "".join(path.suffixes))
    assert differences(before, totals(odd), rel=EXACT) == []


@pytest.mark.parametrize(
    ("auto", "base"), [(a, b) for _, a, b in UNIT_PAIRS], ids=[n for n, _, _ in UNIT_PAIRS]
)
def test_auto_and_base_units_give_the_same_totals(auto: Path, base: Path, totals):
    """`--print-units base` and auto-scaled units of one report: the same totals, the unit
    table moving only the decimal point."""
    assert differences(totals(_need(base)), totals(_need(auto)), rel=EXACT) == []


# -- nsys SQLite ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [p for _, p in SQLITE_EXPORTS], ids=[n for n, _ in SQLITE_EXPORTS])
def test_sqlite_copied_under_an_odd_name(path: Path, tmp_path: Path, totals):
    """A copy under another (odd) name, beside a decoy, reads the same."""
    before = totals(_need(path))
    decoy_source = next(p for _, p in SQLITE_EXPORTS if p != path)
    odd = _decoy_pair(tmp_path, path, _need(decoy_source), ".sqlite")
    assert differences(before, totals(odd), rel=EXACT) == []


@pytest.mark.parametrize("path", [p for _, p in SQLITE_EXPORTS], ids=[n for n, _ in SQLITE_EXPORTS])
def test_sqlite_kernel_rows_in_another_order(path: Path, tmp_path: Path, totals):
    """CUPTI_ACTIVITY_KIND_KERNEL rows re-inserted in shuffled order: same totals."""
    before = totals(_need(path))
    assert before["launches"] > 1
    copy = tmp_path / "shuffled.sqlite"
    shutil.copyfile(path, copy)
    con = sqlite3.connect(copy)
    try:
        rows = con.execute("SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall()
        shuffled = rows[:]
        random.Random(16).shuffle(shuffled)
        if shuffled == rows:
            shuffled.reverse()
        marks = ", ".join("?" * len(rows[0]))
        con.execute("DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL")
        con.executemany(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({marks})", shuffled)
        con.commit()
        assert con.execute("SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall() != rows
    finally:
        con.close()
    assert differences(before, totals(copy), rel=EXACT) == []


# -- every real export, every format-free rewrite at once ------------------------------------------

EXPORTS = real_exports()


def _all_at_once(path: Path, tmp_path: Path) -> Path:
    """The rewrites that need no knowledge of the format, stacked: a UTF-8 BOM, CRLF line ends,
    no final line break, gzip, and a name with spaces, brackets, ``*`` and ``?`` beside a decoy
    the name matches as a pattern. SQLite: kernel rows shuffled, and the odd name."""
    decoy = SAMPLES / "gemm4096_bf16_h100.ncu-raw.csv"
    if path.suffix == ".sqlite":
        copy = tmp_path / "copy.sqlite"
        shutil.copyfile(path, copy)
        con = sqlite3.connect(copy)
        try:
            rows = con.execute("SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall()
            random.Random(16).shuffle(rows)
            con.execute("DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL")
            if rows:
                marks = ", ".join("?" * len(rows[0]))
                con.executemany(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({marks})", rows)
            con.commit()
        except sqlite3.OperationalError:  # no kernel table: the odd name alone
            pass
        finally:
            con.close()
        return _decoy_pair(tmp_path, copy, decoy, ".sqlite")
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    raw = b"\xef\xbb\xbf" + re.sub(rb"\r?\n", b"\r\n", raw.removeprefix(b"\xef\xbb\xbf"))
    rewritten = tmp_path / "rewritten.gz"
    rewritten.write_bytes(gzip.compress(raw.rstrip(b"\r\n"), compresslevel=1))
    suffix = "".join(s for s in path.suffixes if s != ".gz")[-8:] + ".gz"
    return _decoy_pair(tmp_path, rewritten, decoy, suffix)


@pytest.mark.parametrize("path", EXPORTS, ids=[label(p) for p in EXPORTS])
def test_every_real_export_read_through_every_rewrite(path: Path, tmp_path: Path):
    """Each real export the tests reach, rewritten every format-free way at once, gives the
    independent reader's totals of the untouched file (one roofscope load per file, so the
    suite stays fast; the rewrites one by one are the tests above)."""
    try:
        expected = oracle.read(path)
    except oracle.NotAnExport as exc:
        pytest.skip(f"not a kernel export: {exc}")
    if path.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff"):
        pytest.skip("UTF-16: the byte-level rewrites do not apply")
    odd = _all_at_once(path, tmp_path)
    assert differences(expected.as_dict(), roofscope_totals(odd, use_cache=False)) == [], label(
        path
    )


REAL_SQLITE = sorted(SHARED.glob("*/*.sqlite")) or [SHARED / "public" / "absent.sqlite"]


@pytest.mark.parametrize("path", REAL_SQLITE, ids=[p.name[:40] for p in REAL_SQLITE])
def test_sqlite_with_two_runtime_rows_per_launch_counts_each_launch_once(
    path: Path, tmp_path: Path, totals
):
    """nsys 2022 exports (schema 2.x) of MPI runs hold two CUDA runtime rows per kernel
    launch (one correlationId, twice): launches come from the kernel table, and tying kernels
    to their API call (the NVTX attribution) must not multiply them."""
    before = totals(_need(path))
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        tables = {name for (name,) in con.execute("SELECT name FROM sqlite_master")}
    if "CUPTI_ACTIVITY_KIND_RUNTIME" not in tables:
        pytest.skip("no CUDA runtime table")
    copy = tmp_path / "twice.sqlite"
    shutil.copyfile(path, copy)
    con = sqlite3.connect(copy)
    try:
        con.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME"
        )
        con.commit()
    finally:
        con.close()
    assert differences(before, totals(copy), rel=EXACT) == []
