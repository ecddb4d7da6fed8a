"""(Re)generate tests/corpus/bad/: broken and hostile inputs every reader must survive.

Each entry is made deterministically from the real samples in sample_reports/ and the tests'
builders (tests/ncu_builder.py, tests/nsys_builder.py); README.md in the corpus lists what is
wrong with each file and what roofscope must do with it. tests/test_bad_corpus.py holds its
own table of expected outcomes, so a change of behaviour fails there.

    python tools/make_bad_corpus.py            # rewrite the corpus
    python tools/make_bad_corpus.py --check    # exit 1 if the corpus on disk differs
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import os
import random
import shutil
import sqlite3
import struct
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.ncu_builder import details_page, raw_page  # noqa: E402
from tests.nsys_builder import Export, Kernel  # noqa: E402

OUT = ROOT / "tests" / "corpus" / "bad"
SAMPLES = ROOT / "sample_reports"
RAW = SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv"  # auto units (ncu --import), 337 columns
RAW_BASE = SAMPLES / "mobilenetv2_fp32_h100.ncu-raw-base.csv"  # the same report, base units
DETAILS = SAMPLES / "mobilenetv2_fp32_h100.ncu-details.csv"
RECORDING = SAMPLES / "h100_matmul.parquet" / "part-000001.parquet"

ERROR, WARN = "error", "load with warnings"
OK = "load cleanly"  # exit 0, no warning beyond those of the sample it was cut from
LOADS = "load"  # exit 0; warnings allowed, none required
EITHER = "error or warning"  # refused, or loaded with a warning: either names the problem


@dataclass
class Entry:
    name: str
    outcome: str
    what: str
    make: Callable[[Path], None]
    companions: tuple[str, ...] = ()  # files ``make`` writes beside the entry (an -wal file)


CORPUS: list[Entry] = []


def entry(name: str, outcome: str, what: str, companions: tuple[str, ...] = ()) -> Callable:
    def register(make: Callable[[Path], None]) -> Callable[[Path], None]:
        CORPUS.append(Entry(name, outcome, what, make, companions))
        return make

    return register


# --- sources ---------------------------------------------------------------------------------


def raw_lines(n: int, source: Path = RAW) -> list[str]:
    """Header, units row and the first ``n`` launches of a raw page (one physical line each)."""
    return source.read_text("utf-8").splitlines(keepends=True)[: n + 2]


def details_lines(launches: int) -> list[str]:
    """Header and every row of the first ``launches`` launches of the details page."""
    lines = DETAILS.read_text("utf-8").splitlines(keepends=True)
    keep = [str(i) for i in range(launches)]
    return [lines[0]] + [x for x in lines[1:] if next(csv.reader([x]))[0] in keep]


def rows_of(lines: list[str]) -> list[list[str]]:
    return list(csv.reader(lines))


def to_csv(rows: list[list[str]], delimiter: str = ",") -> str:
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, delimiter=delimiter, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def text(path: Path, data: str) -> None:
    path.write_bytes(data.encode("utf-8"))


def small_export(**kw) -> Export:
    """Three kernels of known durations on one H100, through the real 2025 schema."""
    kernels = [
        Kernel("void gemm<128>(float *, float const *, int)", 1_000_000, 1_250_000),
        Kernel("relu_kernel(float *, int)", 1_300_000, 1_310_000),
        Kernel("void gemm<128>(float *, float const *, int)", 1_400_000, 1_650_000),
    ]
    return Export(kernels=kernels, **kw)


def sqlite_bytes(export: Export, tweak: str = "", page_size: int | None = 512) -> bytes:
    """The export's bytes after ``tweak``; 512-byte pages keep the corpus small (a 45 KB export
    with nsys's default 4,096-byte pages is ~12 KB)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.sqlite"
        export.write(path)
        if tweak or page_size:
            con = sqlite3.connect(path)
            con.executescript(tweak)
            con.commit()
            if page_size:
                con.execute(f"PRAGMA page_size = {int(page_size)}")
            con.execute("VACUUM")
            con.close()
        return path.read_bytes()


def parquet_bytes(table: pa.Table) -> bytes:
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf)
    return buf.getvalue().to_pybytes()


# --- Nsight Compute CSV ----------------------------------------------------------------------


@entry("empty.csv", ERROR, "0 bytes")
def _(p: Path) -> None:
    p.write_bytes(b"")


@entry("bom_and_blank_lines.csv", ERROR, "a UTF-8 byte-order mark and blank lines, nothing else")
def _(p: Path) -> None:
    p.write_bytes(b"\xef\xbb\xbf\n\r\n  \n\n")


@entry("binary_noise.csv", ERROR, "64 KiB of random bytes with a .csv name")
def _(p: Path) -> None:
    p.write_bytes(random.Random(1).randbytes(64 << 10))


@entry("github_page.ncu-raw.csv", ERROR, "the HTML page GitHub shows for a CSV, saved as .csv")
def _(p: Path) -> None:
    text(
        p,
        '<!DOCTYPE html>\n<html lang="en">\n<head><title>mobilenet.ncu-raw.csv</title></head>\n'
        '<body><table><tr><td>"ID","Process ID","Kernel Name"</td></tr></table></body></html>\n',
    )


@entry("tab_separated.ncu-raw.tsv", ERROR, "a raw page (5 launches) with tabs for commas")
def _(p: Path) -> None:
    text(p, to_csv(rows_of(raw_lines(5)), delimiter="\t"))


@entry("header_only.ncu-raw.csv", ERROR, "only the raw page's header line")
def _(p: Path) -> None:
    text(p, raw_lines(0)[0])


@entry("units_row_only.ncu-raw.csv", ERROR, "header and units row, no launch")
def _(p: Path) -> None:
    text(p, "".join(raw_lines(0)))


@entry("header_only.ncu-details.csv", ERROR, "only the details page's header line")
def _(p: Path) -> None:
    text(p, details_lines(0)[0])


@entry("truncated_in_header.ncu-raw.csv", ERROR, "cut in the middle of the header line")
def _(p: Path) -> None:
    text(p, raw_lines(0)[0][:1500])


@entry(
    "truncated_mid_row.ncu-raw.csv",
    WARN,
    "12 launches, cut in the middle of the 12th row: the 11 complete rows load",
)
def _(p: Path) -> None:
    data = "".join(raw_lines(12))
    text(p, data[: data.rindex("\n", 0, len(data) - 1) + 700])


@entry(
    "truncated_mid_row.ncu-details.csv",
    WARN,
    "the details rows of 3 launches, cut inside the last row: launches 0-2 load",
)
def _(p: Path) -> None:
    data = "".join(details_lines(3))
    text(p, data[: data.rindex("\n", 0, len(data) - 1) + 60])


@entry(
    "gzip_truncated.ncu-raw.csv.gz",
    WARN,
    "a gzip of 12 launches cut at 2/3 of its bytes: the rows before the cut load",
)
def _(p: Path) -> None:
    packed = gzip.compress("".join(raw_lines(12)).encode(), mtime=0)
    p.write_bytes(packed[: len(packed) * 2 // 3])


@entry("gzip_garbage.csv.gz", ERROR, "the gzip magic followed by bytes that are not deflate data")
def _(p: Path) -> None:
    p.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + random.Random(2).randbytes(4000))


@entry(
    "duplicated_header.ncu-raw.csv",
    WARN,
    "two exports appended to one file (ncu ... >> f.csv): header, units and IDs 0-5 twice",
)
def _(p: Path) -> None:
    text(p, "".join(raw_lines(6)) + "".join(raw_lines(6)))


@entry(
    "mixed_units.ncu-raw.csv",
    ERROR,
    "a base-units export and an auto-units export of the same report appended: the second "
    "units row says Mbyte where the first said byte, so one units row cannot convert both",
)
def _(p: Path) -> None:
    text(p, "".join(raw_lines(4, RAW_BASE)) + "".join(raw_lines(4)))


@entry(
    "kernel_names_10kb.ncu-raw.csv",
    WARN,
    "3 launches whose kernel names are 10 KB of template arguments each",
)
def _(p: Path) -> None:
    rows = rows_of(raw_lines(3))
    for i, row in enumerate(rows[2:]):
        args = ", ".join(f"cute::C<{j}>" for j in range(10240 // 12))
        row[4] = f"void k{i}<{args}>(float *)"[:10240]
    text(p, to_csv(rows))


@entry(
    "non_utf8.ncu-raw.csv",
    WARN,
    "Latin-1 bytes (é, µ, ß) in the process and kernel names: not UTF-8",
)
def _(p: Path) -> None:
    data = "".join(raw_lines(5)).encode()
    data = data.replace(b'"python3"', b'"pyth\xe9n3"', 2)
    data = data.replace(b"ncu", b"nc\xb5", 3).replace(b"void ", b"void \xdf", 2)
    p.write_bytes(data)


@entry(
    "nul_bytes.ncu-raw.csv",
    WARN,
    "NUL bytes in the preamble and inside quoted values of two rows (seen in real T4 exports)",
)
def _(p: Path) -> None:
    lines = [x.encode() for x in raw_lines(5)]
    lines[3] = lines[3].replace(b'","', b'",\x00"', 3)
    lines[5] = lines[5].replace(b"(", b"(\x00", 1)
    p.write_bytes(b"==PROF== Connected to process 1\n\x00\x00\n" + b"".join(lines))


@entry("utf16.ncu-raw.csv", ERROR, "a raw page saved as UTF-16 (PowerShell's > redirect)")
def _(p: Path) -> None:
    p.write_bytes("".join(raw_lines(3)).encode("utf-16"))


@entry("only_prof_lines.csv", ERROR, "ncu's ==PROF== log lines and nothing else (no --csv table)")
def _(p: Path) -> None:
    text(
        p,
        "==PROF== Connected to process 4242 (/usr/bin/python3.12)\n"
        '==PROF== Profiling "vectorAdd" - 0: 0%....50%....100% - 9 passes\n'
        "==PROF== Disconnected from process 4242\n",
    )


@entry(
    "error_line.ncu-raw.csv",
    WARN,
    "an ==ERROR== LaunchFailed line among the rows and a failed launch whose values are nan",
)
def _(p: Path) -> None:
    lines = raw_lines(4)
    failed = rows_of(lines[-1:])[0]
    failed = failed[:7] + ["(0, 0, 0)", "(0, 0, 0)", *failed[9:11]] + ["nan"] * (len(failed) - 11)
    text(
        p,
        "".join(lines[:-1])
        + "==ERROR== LaunchFailed\n"
        + to_csv([failed])
        + "==ERROR== The application returned an error code (1).\n",
    )


def _decimal_comma(value: str) -> str:
    if value and all(c in "0123456789,.-" for c in value) and any(c.isdigit() for c in value):
        return value.replace(",", "\0").replace(".", ",").replace("\0", ".")
    return value


@entry(
    "decimal_comma.ncu-raw.csv",
    WARN,
    "12 launches written in a European locale: '.' groups digits, ',' is the decimal mark; "
    "totals must equal those of the same 12 launches of the original sample",
)
def _(p: Path) -> None:
    rows = rows_of(raw_lines(12))
    for row in rows[2:]:
        row[11:] = [_decimal_comma(v) for v in row[11:]]
    text(p, to_csv(rows))


@entry(
    "csv_bomb_100k_columns.ncu-raw.csv",
    ERROR,
    "an ncu raw header with 100,000 metric columns (3-character names) and one launch row",
)
def _(p: Path) -> None:
    ids = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream"]
    digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    names = [digits[i // 3844] + digits[i // 62 % 62] + digits[i % 62] for i in range(100_000)]
    text(p, ",".join(ids + names) + "\n0,1,a,h,k,1,7,1\n")


@entry("ids_not_integers.ncu-raw.csv", ERROR, "every launch ID is a word or a fraction")
def _(p: Path) -> None:
    rows = rows_of(raw_lines(4))
    for row, bad in zip(rows[2:], ["zero", "1.5", "-2", "0x3"], strict=True):
        row[0] = bad
    text(p, to_csv(rows))


@entry(
    "negative_nan_inf.ncu-raw.csv",
    WARN,
    "durations of -1 ns, nan, inf, -inf and 1e999: not one is a kernel time",
)
def _(p: Path) -> None:
    rows = rows_of(raw_lines(6))
    col = rows[0].index("gpu__time_duration.sum")
    for row, bad in zip(rows[3:], ["-1", "nan", "inf", "-inf", "1e999"], strict=True):
        row[col] = bad
    text(p, to_csv(rows))


@entry(
    "unbalanced_quote.ncu-raw.csv",
    WARN,
    'application output with an unterminated quote ("loss = 0.5) between two rows',
)
def _(p: Path) -> None:
    lines = raw_lines(6)
    text(p, "".join(lines[:4]) + '"loss = 0.5\n' + "".join(lines[4:]))


@entry("session_page.ncu.csv", ERROR, "the ncu session page (device attributes, no kernels)")
def _(p: Path) -> None:
    text(
        p,
        '"Session Attribute","Value"\n"Process ID","1337"\n"Device Name","NVIDIA H100"\n',
    )


@entry(
    "unknown_unit.ncu-details.csv",
    ERROR,
    "gpu__time_duration.sum in 'furlong' on one row of a details page",
)
def _(p: Path) -> None:
    page = details_page(
        [
            ("k(float *)", {"gpu__time_duration.sum": ("ns", "1,000")}),
            ("k(float *)", {"gpu__time_duration.sum": ("furlong", "3")}),
        ]
    )
    text(p, page)


@entry(
    "csv_named.sqlite",
    WARN,
    "an ncu raw page (3 launches) with a .sqlite name: read by content, the name is wrong",
)
def _(p: Path) -> None:
    text(p, "".join(raw_lines(3)))


@entry("json_not_stats.json", ERROR, "a JSON document that is no profiler export")
def _(p: Path) -> None:
    text(p, json.dumps({"name": "resnet", "kernels": [1, 2, 3]}) + "\n")


# --- Nsight Systems SQLite -------------------------------------------------------------------


@entry("sqlite_named.csv", WARN, "an nsys SQLite export (3 kernels) with a .csv name")
def _(p: Path) -> None:
    p.write_bytes(sqlite_bytes(small_export()))


@entry("not_nsys.sqlite", ERROR, "an SQLite database with none of the nsys tables")
def _(p: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "x.sqlite"
        con = sqlite3.connect(db)
        con.execute("CREATE TABLE todo (id INTEGER, text TEXT)")
        con.execute("INSERT INTO todo VALUES (1, 'profile the model')")
        con.commit()
        con.close()
        p.write_bytes(db.read_bytes())


@entry(
    "missing_tables.sqlite",
    WARN,
    "an nsys export without CUPTI_ACTIVITY_KIND_KERNEL (as nsys writes when no kernel ran)",
)
def _(p: Path) -> None:
    p.write_bytes(sqlite_bytes(small_export(), "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;"))


@entry(
    "kernel_table_lacks_columns.sqlite",
    ERROR,
    "CUPTI_ACTIVITY_KIND_KERNEL without its end, demangledName and shortName columns",
)
def _(p: Path) -> None:
    p.write_bytes(
        sqlite_bytes(
            small_export(),
            'ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN "end";'
            "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN demangledName;"
            "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN shortName;",
        )
    )


@entry(
    "stringids_missing_ids.sqlite",
    WARN,
    "kernel name ids that StringIds does not hold (two of three kernels lose their names)",
)
def _(p: Path) -> None:
    p.write_bytes(
        sqlite_bytes(
            small_export(),
            "DELETE FROM StringIds WHERE id IN (SELECT demangledName FROM "
            "CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = 1);",
        )
    )


@entry(
    "negative_durations.sqlite",
    WARN,
    "one kernel ends before it starts, one has no end: only the third has a duration",
)
def _(p: Path) -> None:
    p.write_bytes(
        sqlite_bytes(
            small_export(),
            'UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start - 5000 WHERE rowid = 1;'
            # a NOT NULL column in the DDL; a damaged export can still hold a NULL
            "PRAGMA writable_schema = ON;"
            "UPDATE sqlite_master SET sql = replace(sql, 'end INTEGER NOT NULL', 'end INTEGER') "
            "WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL';",
        )
    )
    # NULL can only be written once the NOT NULL is gone, in a fresh connection
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "x.sqlite"
        db.write_bytes(p.read_bytes())
        con = sqlite3.connect(db)
        con.execute('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = NULL WHERE rowid = 2')
        con.commit()
        con.execute("VACUUM")
        con.close()
        p.write_bytes(db.read_bytes())


@entry(
    "text_in_integer_columns.sqlite",
    ERROR,
    "start and deviceId of a kernel hold text ('soon', 'gpu0'), which SQLite allows",
)
def _(p: Path) -> None:
    p.write_bytes(
        sqlite_bytes(
            small_export(),
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon', deviceId = 'gpu0' "
            "WHERE rowid = 2;",
        )
    )


@entry("corrupt.sqlite", ERROR, "an nsys export whose pages after the first are overwritten")
def _(p: Path) -> None:
    data = bytearray(sqlite_bytes(small_export(), page_size=None))
    page = int.from_bytes(data[16:18], "big")
    noise = random.Random(3).randbytes(len(data) - page)
    data[page:] = noise
    p.write_bytes(bytes(data))


@entry("truncated.sqlite", ERROR, "the first 40% of an nsys export")
def _(p: Path) -> None:
    data = sqlite_bytes(small_export(), page_size=None)
    p.write_bytes(data[: len(data) * 2 // 5])


@entry("header_only.sqlite", ERROR, "the 16-byte SQLite magic and nothing else")
def _(p: Path) -> None:
    p.write_bytes(b"SQLite format 3\x00")


@entry("directory.sqlite", ERROR, "a directory named like an export (holding one empty file)")
def _(p: Path) -> None:
    p.mkdir()
    (p / "keep").write_bytes(b"")


# --- nsys parquetdir -------------------------------------------------------------------------


@entry(
    "parquetdir_without_cupti",
    ERROR,
    "a folder with StringIds.parquet and no kernel, GPU or NVTX table",
)
def _(p: Path) -> None:
    p.mkdir()
    table = pa.table({"id": pa.array([1], pa.int64()), "value": ["k"]})
    (p / "StringIds.parquet").write_bytes(parquet_bytes(table))


@entry(
    "parquetdir_damaged_table",
    ERROR,
    "a parquetdir whose CUPTI_ACTIVITY_KIND_KERNEL.parquet is random bytes",
)
def _(p: Path) -> None:
    p.mkdir()
    table = pa.table({"id": pa.array([1], pa.int64()), "value": ["k"]})
    (p / "StringIds.parquet").write_bytes(parquet_bytes(table))
    (p / "CUPTI_ACTIVITY_KIND_KERNEL.parquet").write_bytes(
        b"PAR1" + random.Random(4).randbytes(2000) + b"PAR1"
    )


# --- GPU recordings (Parquet) ----------------------------------------------------------------


@entry("zero_length.parquet", ERROR, "an empty file named .parquet")
def _(p: Path) -> None:
    p.write_bytes(b"")


@entry("not_a_recording.parquet", ERROR, "a valid Parquet table that roofscope did not write")
def _(p: Path) -> None:
    table = pa.table({"epoch": [1, 2, 3], "loss": [0.9, 0.5, 0.3]})
    p.write_bytes(parquet_bytes(table))


@entry("truncated_recording.parquet", ERROR, "a recording part cut to its first half")
def _(p: Path) -> None:
    data = RECORDING.read_bytes()
    p.write_bytes(data[: len(data) // 2])


@entry(
    "recording_wrong_types.parquet",
    ERROR,
    "a recording (marker and all) whose ts, gpu and util_gpu columns are strings",
)
def _(p: Path) -> None:
    table = pq.read_table(RECORDING)
    for name in ("ts", "gpu", "util_gpu"):
        i = table.schema.get_field_index(name)
        table = table.set_column(i, name, table.column(name).cast(pa.string()))
    p.write_bytes(parquet_bytes(table.replace_schema_metadata(pq.read_schema(RECORDING).metadata)))


@entry(
    "recording_missing_columns.parquet",
    WARN,
    "a recording (marker and all) holding only its ts and gpu columns: 76 samples, no values",
)
def _(p: Path) -> None:
    table = pq.read_table(RECORDING).select(["ts", "gpu"])
    p.write_bytes(parquet_bytes(table.replace_schema_metadata(pq.read_schema(RECORDING).metadata)))


@entry(
    "recording_bad_part.parquet",
    ERROR,
    "a recording folder: a good part-000001.parquet and a part-000002.parquet of random bytes",
)
def _(p: Path) -> None:
    p.mkdir()
    (p / "part-000001.parquet").write_bytes(RECORDING.read_bytes())
    (p / "part-000002.parquet").write_bytes(random.Random(5).randbytes(3000))


# --- nsys stats ------------------------------------------------------------------------------

TRACE_HEADER = (
    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),"
    "DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n"
)


def _trace_row(start: str, duration: str, name: str = "vectorAdd(const float *, float *, int)"):
    return (
        f"{start},{duration},123,262144,1,1,256,1,1,16,0.000,0.000,,,,,"
        f'NVIDIA A100 80GB PCIe (0),1,,7,"{name}"\n'
    )


@entry(
    "nan_inf_durations_cuda_gpu_trace.csv",
    WARN,
    "an nsys GPU trace with durations nan, inf, -500 and 1e400 besides two good kernels",
)
def _(p: Path) -> None:
    rows = [
        _trace_row("960452567", "509651"),
        _trace_row("960976554", "nan"),
        _trace_row("961000000", "inf"),
        _trace_row("962000000", "-500"),
        _trace_row("inf", "100"),
        _trace_row("963000000", "1e400"),
        _trace_row("964000000", "502420"),
    ]
    text(p, TRACE_HEADER + "".join(rows))


@entry(
    "truncated_cuda_gpu_kern_sum.csv",
    WARN,
    "an nsys kernel summary cut in the middle of its second row",
)
def _(p: Path) -> None:
    text(
        p,
        "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
        '90.0,1012071,2,506035.5,506035.5,502420,509651,5113.1,"vectorAdd(const float *, int)"\n'
        "10.0,112450,1,112450.0,112450.0,112450,1124",
    )


@entry(
    "text_in_numbers_cuda_gpu_kern_sum.csv",
    WARN,
    "an nsys kernel summary whose Instances and Total Time are words on one row",
)
def _(p: Path) -> None:
    text(
        p,
        "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
        '90.0,1012071,2,506035.5,506035.5,502420,509651,5113.1,"vectorAdd(const float *, int)"\n'
        '10.0,n/a,many,n/a,n/a,n/a,n/a,n/a,"relu(float *)"\n',
    )


@entry(
    "chrome_trace_cuda_gpu_kern_sum.json",
    ERROR,
    "a Chrome trace (a JSON object) named like an nsys stats JSON file",
)
def _(p: Path) -> None:
    text(p, json.dumps({"traceEvents": [{"name": "k", "ph": "X", "ts": 1, "dur": 2}]}))


@entry(
    "nsys_console_table.txt",
    ERROR,
    "nsys stats console output in its human-readable table format",
)
def _(p: Path) -> None:
    text(
        p,
        "Processing [report.sqlite] with [cuda_gpu_kern_sum.py]... \n\n"
        " ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):\n\n"
        " Time (%)  Total Time (ns)  Instances  Avg (ns)  Name\n"
        " --------  ---------------  ---------  --------  ----\n"
        "    100.0          1012071          2  506035.5  vectorAdd(const float *, int)\n",
    )


# --- issue 16: silent wrong numbers on real exports ------------------------------------------
# Each entry below is a class of file on which a reader used to give a wrong number, or crash,
# without saying so; its outcome is the one a correct reader must give.


def _no_final_newline(lines: list[str]) -> str:
    return "".join(lines).removesuffix("\n")


@entry(
    "no_final_newline.ncu-raw.csv",
    OK,
    "10 launches, the last row complete but without the final newline (a file saved by an "
    "editor or cut by head -c at the end): all 10 load, totals equal the original's",
)
def _(p: Path) -> None:
    text(p, _no_final_newline(raw_lines(10)))


@entry(
    "no_final_newline_one_launch.ncu-raw.csv",
    OK,
    "a single launch whose row ends without a newline: it loads",
)
def _(p: Path) -> None:
    text(p, _no_final_newline(raw_lines(1)))


@entry(
    "no_final_newline.ncu-details.csv",
    OK,
    "the details rows of 3 launches, no newline after the last: launch 2 loads with every metric",
)
def _(p: Path) -> None:
    text(p, _no_final_newline(details_lines(3)))


@entry(
    "glob[12]*?.ncu-raw.csv",
    OK,
    "a name holding the glob characters [ ] * ? (3 launches); the decoy beside it, which the "
    "name matches as a glob, has 2: this file loads its own 3",
)
def _(p: Path) -> None:
    text(p, "".join(raw_lines(3)))


@entry(
    "glob1-decoy.ncu-raw.csv",
    OK,
    "the decoy that glob[12]*?.ncu-raw.csv matches as a pattern: 2 launches",
)
def _(p: Path) -> None:
    text(p, "".join(raw_lines(2)))


def _wal_checksum(data: bytes, s0: int, s1: int, big: bool) -> tuple[int, int]:
    """SQLite's WAL checksum (wal.c walChecksumBytes) over 8-byte steps of ``data``."""
    words = struct.unpack(f"{'>' if big else '<'}{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1


def _fixed_salts(wal: bytes, page_size: int) -> bytes:
    """The WAL with SQLite's random salts replaced by fixed ones and every checksum redone, so
    the generator writes the same bytes each time."""
    out = bytearray(wal)
    big = struct.unpack(">I", wal[:4])[0] & 1 == 1
    out[16:24] = struct.pack(">II", 0x526F6F66, 0x53636F70)  # "RoofScop"
    s = _wal_checksum(bytes(out[:24]), 0, 0, big)
    out[24:32] = struct.pack(">II", *s)
    for at in range(32, len(out), 24 + page_size):
        out[at + 8 : at + 16] = out[16:24]
        s = _wal_checksum(bytes(out[at : at + 8]), *s, big)
        s = _wal_checksum(bytes(out[at + 24 : at + 24 + page_size]), *s, big)
        out[at + 16 : at + 24] = struct.pack(">II", *s)
    return bytes(out)


def _count_kernels(db: Path) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    finally:
        con.close()


@entry(
    "wal_uncheckpointed.sqlite",
    OK,
    "an nsys export in WAL mode whose -wal file (kept beside it) holds 2 of its 5 kernels, not "
    "yet checkpointed (copied while nsys or sqlite3 still had it open): sqlite3 sees 5 kernels "
    "of 770 µs in all, so must roofscope",
    companions=("wal_uncheckpointed.sqlite-wal",),
)
def _(p: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "x.sqlite"
        db.write_bytes(sqlite_bytes(small_export()))
        con = sqlite3.connect(db, isolation_level=None)
        con.execute("PRAGMA journal_mode = WAL")
        con.execute("PRAGMA wal_autocheckpoint = 0")
        page_size = con.execute("PRAGMA page_size").fetchone()[0]
        con.executescript(
            "BEGIN;"
            "CREATE TEMP TABLE k AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid <= 2;"
            'UPDATE k SET start = start + 1000000, "end" = "end" + 1000000, '
            "correlationId = correlationId + 10, gridId = gridId + 10;"
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM k;"
            "COMMIT;"
        )
        # copied while the connection is open: closing it would checkpoint the WAL away
        main, wal = db.read_bytes(), Path(f"{db}-wal").read_bytes()
        con.close()
    p.write_bytes(main)
    Path(f"{p}-wal").write_bytes(_fixed_salts(wal, page_size))
    with tempfile.TemporaryDirectory() as tmp:  # the pair must read as 5 kernels
        copy = Path(tmp) / p.name
        copy.write_bytes(main)
        Path(f"{copy}-wal").write_bytes(Path(f"{p}-wal").read_bytes())
        if _count_kernels(copy) != 5:
            raise SystemExit(f"{p.name}: the WAL does not replay to 5 kernels")


@entry(
    "no_units_row.ncu-raw.csv",
    EITHER,
    "a raw page (auto units: Mbyte, us, Ghz) whose units row was deleted: the values cannot be "
    "read as base SI units without saying so",
)
def _(p: Path) -> None:
    lines = raw_lines(4)
    text(p, lines[0] + "".join(lines[2:]))


@entry(
    "duplicate_metric_column.ncu-raw.csv",
    EITHER,
    "gpu__time_duration.sum twice in the header, the second column holding other values "
    "(twice the first): which is the duration cannot be known",
)
def _(p: Path) -> None:
    rows = rows_of(raw_lines(3))
    col = rows[0].index("gpu__time_duration.sum")
    rows[0].append("gpu__time_duration.sum")
    rows[1].append(rows[1][col])
    for row in rows[2:]:
        row.append(f"{2 * float(row[col].replace(',', '')):.6f}")
    text(p, to_csv(rows))


@entry(
    "min_unit_cuda_gpu_kern_sum.csv",
    ERROR,
    "an nsys kernel summary whose time columns are in (min), a unit nsys --timeunit never writes",
)
def _(p: Path) -> None:
    text(
        p,
        "Time (%),Total Time (min),Instances,Avg (min),Med (min),Min (min),Max (min),"
        "StdDev (min),Name\n"
        '100.0,2.5,3,0.833,0.8,0.7,1.0,0.15,"vectorAdd(const float *, int)"\n',
    )


@entry(
    "duplicate_stringids.sqlite",
    WARN,
    "a StringIds table without its primary key listing every kernel-name id twice (same text) "
    "and the launch API's name id twice with two texts: 3 kernels (510 µs) stay 3, and the "
    "ambiguous id is reported",
)
def _(p: Path) -> None:
    p.write_bytes(
        sqlite_bytes(
            small_export(),
            "CREATE TABLE s2 (id INTEGER NOT NULL, value TEXT NOT NULL);"
            "INSERT INTO s2 SELECT id, value FROM StringIds;"
            "INSERT INTO s2 SELECT id, value FROM StringIds WHERE id IN "
            "(SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL UNION "
            "SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL);"
            "INSERT INTO s2 SELECT id, 'cudaLaunchKernelExC_v11060' FROM StringIds WHERE id IN "
            "(SELECT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME);"
            "DROP TABLE StringIds;"
            "ALTER TABLE s2 RENAME TO StringIds;",
        )
    )


@entry(
    "duplicate_stringids_kernel_names.sqlite",
    EITHER,
    "a StringIds table without its primary key listing a kernel-name id twice with two texts: "
    "which name 2 of the 3 kernels have cannot be known",
)
def _(p: Path) -> None:
    p.write_bytes(
        sqlite_bytes(
            small_export(),
            "CREATE TABLE s2 (id INTEGER NOT NULL, value TEXT NOT NULL);"
            "INSERT INTO s2 SELECT id, value FROM StringIds;"
            "INSERT INTO s2 SELECT id, 'other_' || value FROM StringIds WHERE id IN "
            "(SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = 1);"
            "DROP TABLE StringIds;"
            "ALTER TABLE s2 RENAME TO StringIds;",
        )
    )


def _recording_part(table: pa.Table) -> bytes:
    """A part as ``roofscope record`` writes it: its schema, marker included."""
    from roofscope.telemetry.recording import SCHEMA

    return parquet_bytes(table.select(SCHEMA.names).cast(SCHEMA))


@entry(
    "recording_clock_jump.parquet",
    WARN,
    "a recording folder (one part) of 76 samples 1 s apart whose clock jumps 6e9 s forward "
    "after sample 38: the GPU was not recorded for 190 years",
)
def _(p: Path) -> None:
    table = pq.read_table(RECORDING)
    ts = table.column("ts").cast(pa.int64()).to_pylist()
    jumped = [t + (6_000_000_000 * 1_000_000 if i >= 38 else 0) for i, t in enumerate(ts)]
    i = table.schema.get_field_index("ts")
    table = table.set_column(i, "ts", pa.array(jumped, pa.int64()).cast(table.schema.field(i).type))
    p.mkdir()
    (p / "part-000001.parquet").write_bytes(_recording_part(table))


@entry(
    "cycles_no_duration.ncu-details.csv",
    LOADS,
    "a details page of 3 launches (NERSC metric set, smsp__ spelling) with "
    "smsp__cycles_elapsed.avg and .avg.per_second but no gpu__time_duration: durations are "
    "cycles / rate",
)
def _(p: Path) -> None:
    rows = rows_of(details_lines(3))
    metric = rows[0].index("Metric Name")
    keep = [rows[0]]
    for row in rows[1:]:
        if row[metric].startswith("gpu__time_duration"):
            continue
        row[metric] = row[metric].replace("sm__cycles_elapsed", "smsp__cycles_elapsed")
        keep.append(row)
    text(p, to_csv(keep))


@entry(
    "dram_op_only.ncu-raw.csv",
    LOADS,
    "a raw page of 4 launches spelling DRAM traffic dram__bytes_op_read/op_write (Blackwell "
    "counters) with no dram__bytes_read/write/dram__bytes: DRAM bytes equal the original's",
)
def _(p: Path) -> None:
    rows = rows_of(raw_lines(4))
    rows[0] = [
        c.replace("dram__bytes_read.", "dram__bytes_op_read.").replace(
            "dram__bytes_write.", "dram__bytes_op_write."
        )
        for c in rows[0]
    ]
    drop = {i for i, c in enumerate(rows[0]) if c.startswith("dram__bytes.")}
    text(p, to_csv([[v for i, v in enumerate(row) if i not in drop] for row in rows]))


@entry(
    "device_name.ncu-details.csv",
    OK,
    "a details page of 3 launches with a device__attribute_display_name row per launch "
    "(--metrics device__attribute_display_name): the GPU is NVIDIA H100 80GB HBM3",
)
def _(p: Path) -> None:
    rows = rows_of(details_lines(3))
    head = rows[0]
    metric, unit, value = (head.index(c) for c in ("Metric Name", "Metric Unit", "Metric Value"))
    out, seen = [head], set()
    for row in rows[1:]:
        out.append(row)
        if row[0] not in seen:
            seen.add(row[0])
            named = list(row)
            named[metric], named[unit], named[value] = (
                "device__attribute_display_name",
                "",
                "NVIDIA H100 80GB HBM3",
            )
            out.append(named)
    text(p, to_csv(out))


HOSTILE_NAMES = [
    "[/]",
    "[link=x]click_me(float *)",
    "void gemm<[fp32]>(float *, [bold]int[/bold])",
    "\x1b[2Jclear_screen(float *)",
    "\x1b]0;owned\x07set_title(float *)",
    "bell\x07kernel(float *)",
]


@entry(
    "rich_markup_names.ncu-raw.csv",
    LOADS,
    "6 launches whose kernel names hold Rich markup ([/], [link=x], [fp32]) and terminal "
    "escapes (ESC[2J, an OSC title, BEL): they load, the names verbatim in JSON",
)
def _(p: Path) -> None:
    rows = rows_of(raw_lines(6))
    for row, name in zip(rows[2:], HOSTILE_NAMES, strict=True):
        row[4] = name
    text(p, to_csv(rows))


@entry(
    "field_over_128kb.ncu-raw.csv",
    WARN,
    "3 launches, one kernel name of 133,000 characters, and a NUL byte that sends the file to "
    "the Python CSV pass (whose default field limit is 131,072): 3 launches load",
)
def _(p: Path) -> None:
    rows = rows_of(raw_lines(3))
    args = ", ".join(f"cute::C<{j}>" for j in range(133_000 // 12))
    rows[2][4] = f"void huge<{args}>(float *)"[:133_000]
    lines = to_csv(rows).encode().split(b"\n")
    lines[4] = lines[4].replace(b'","', b'",\x00"', 1)
    p.write_bytes(b"\n".join(lines))


def _ceilings(body: str) -> Callable[[Path], None]:
    def make(p: Path) -> None:
        text(p, f'# roofscope --ceilings file\n[ceilings]\ndram = "3.0 TB/s"\n{body}\n')

    return make


entry(
    "ceilings_401_digit_integer.toml",
    ERROR,
    "a --ceilings file whose fp32 is an integer of 401 digits (no float holds it)",
)(_ceilings("fp32 = 1" + "0" * 400))
entry(
    "ceilings_fp32_in_tb_per_s.toml",
    ERROR,
    'a --ceilings file giving fp32 = "60 TB/s", a bandwidth for a FLOP/s roof',
)(_ceilings('fp32 = "60 TB/s"'))


def _prices(value: str) -> Callable[[Path], None]:
    def make(p: Path) -> None:
        text(
            p,
            '[[price]]\ngpu = "h100-sxm5-80gb"\noffer = "ours"\n'
            f'usd_per_gpu_hour = {value}\ndate = "2026-01"\nsource = "invoice"\n'
            "example = false\n",
        )

    return make


entry(
    "prices_401_digit_integer.toml",
    ERROR,
    "a --prices file whose usd_per_gpu_hour is an integer of 401 digits",
)(_prices("1" + "0" * 400))
entry(
    "prices_usd_in_tb_per_s.toml",
    ERROR,
    'a --prices file giving usd_per_gpu_hour = "60 TB/s"',
)(_prices('"60 TB/s"'))


@entry(
    "blank_lines_bomb.csv.gz",
    ERROR,
    "a 24 KB gzip of 24 MiB of newlines and nothing else: refused within seconds",
)
def _(p: Path) -> None:
    p.write_bytes(gzip.compress(b"\n" * (24 << 20), compresslevel=9, mtime=0))


@entry(
    "recording_nan_summary.parquet",
    LOADS,
    "a recording folder whose power, energy and utilisation columns are all NaN: roofscope "
    "record --summary --format json must still print strict JSON (no NaN token)",
)
def _(p: Path) -> None:
    table = pq.read_table(RECORDING)
    for name in ("util_gpu", "util_mem", "power_w", "energy_j", "temp_c", "sm_active"):
        i = table.schema.get_field_index(name)
        table = table.set_column(i, name, pa.array([float("nan")] * table.num_rows, pa.float64()))
    p.mkdir()
    (p / "part-000001.parquet").write_bytes(_recording_part(table))


@entry("utf32.ncu-raw.csv", ERROR, "a small raw page saved as UTF-32 with its byte-order mark")
def _(p: Path) -> None:
    page = raw_page(
        [("k(float *)", {"gpu__time_duration.sum": "1000", "dram__bytes.sum": "4096"})],
        {"gpu__time_duration.sum": "ns", "dram__bytes.sum": "byte"},
    )
    p.write_bytes(page.encode("utf-32"))


@entry(
    "bom_cuda_gpu_kern_sum.csv",
    OK,
    "an nsys kernel summary with a UTF-8 byte-order mark (as Excel saves it): 3 launches of "
    "1,124,521 ns in all",
)
def _(p: Path) -> None:
    text(
        p,
        "\ufeffTime (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),"
        "StdDev (ns),Name\n"
        '90.0,1012071,2,506035.5,506035.5,502420,509651,5113.1,"vectorAdd(const float *, int)"\n'
        '10.0,112450,1,112450.0,112450.0,112450,112450,0.0,"relu(float *)"\n',
    )


@entry(
    "weird_table_name.sqlite",
    OK,
    'an nsys export (3 kernels, 510 µs) with an extra table named we"ird (a quote in its name)',
)
def _(p: Path) -> None:
    p.write_bytes(
        sqlite_bytes(
            small_export(),
            'CREATE TABLE "we""ird" (x INTEGER); INSERT INTO "we""ird" VALUES (1);',
        )
    )


@entry(
    "recording_empty_first_part.parquet",
    EITHER,
    "a recording folder whose part-000001.parquet is 0 bytes, part-000002.parquet complete",
)
def _(p: Path) -> None:
    p.mkdir()
    (p / "part-000001.parquet").write_bytes(b"")
    (p / "part-000002.parquet").write_bytes(RECORDING.read_bytes())


@entry("symlink_loop.ncu-raw.csv", ERROR, "a symbolic link to itself")
def _(p: Path) -> None:
    os.symlink(p.name, p)


EVENTS = [  # name, start, duration as the GUI prints them
    ("ampere_sgemm_128x64_tn", "1.20345s", "296.991 μs"),
    (
        "void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, "
        "at::detail::Array<char *, (int)1>>(int, T2, T3)",
        "1.20376s",
        "45.600 μs",
    ),
    ("ampere_sgemm_128x64_tn", "1.20381s", "1.204 ms"),
    ("void cudnn::winograd::generateWinogradTilesKernel<0, float, float>(float *)", "1.2051s",
     "12.345 μs"),
]  # fmt: skip


@entry(
    "gui_events_view.csv",
    LOADS,
    "an Nsight Systems GUI Events View saved as CSV (Name,Start,Duration,GPU,Context; times "
    "like 1.20345s and 296.991 μs): 4 kernels of 1,558.936 µs in all",
)
def _(p: Path) -> None:
    rows = [["Name", "Start", "Duration", "GPU", "Context"]]
    rows += [[name, start, duration, "GPU 0", "Stream 7"] for name, start, duration in EVENTS]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    text(p, "\ufeff" + buf.getvalue())


# --- found by a review after the fixes: numbers ncu never writes, gaps, stats rows ---------------


@entry(
    "stray_comma_number.ncu-raw.csv",
    WARN,
    "4 launches; launch 1's duration is written 20,992000 (a comma that groups no thousands, "
    "as an edit or a spreadsheet leaves it): that value is left out, never read as 20,992,000",
)
def _(p: Path) -> None:
    rows = rows_of(raw_lines(4))
    col = rows[0].index("gpu__time_duration.sum")
    rows[3][col] = "20,992000"
    text(p, to_csv(rows))


@entry(
    "partial_counter.ncu-raw.csv",
    WARN,
    "4 launches; launch 2 has n/a for dram__bytes_read.sum, which the others have: DRAM totals "
    "are a lower bound, and the report names the metric and the launch",
)
def _(p: Path) -> None:
    rows = rows_of(raw_lines(4))
    rows[4][rows[0].index("dram__bytes_read.sum")] = "n/a"
    text(p, to_csv(rows))


_STATS_HEAD = (
    "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
)


@entry(
    "unreadable_total_cuda_gpu_kern_sum.csv",
    WARN,
    "an nsys kernel summary whose second row has Total Time 'nan': that row's time is left out, "
    "not rebuilt from the rounded Avg × Instances",
)
def _(p: Path) -> None:
    text(
        p,
        _STATS_HEAD + "60.0,3000,3,1000.0,1000.0,900,1100,100.0,kern_a\n"
        "40.0,nan,2,1000.5,1000.5,1000,1001,0.7,kern_b\n",
    )


@entry(
    "repeated_rows_cuda_gpu_kern_sum.csv",
    WARN,
    "an nsys kernel summary joined to itself (cat a a: header and rows twice): each row is "
    "counted once, 5 launches and 5,000 ns, not 10",
)
def _(p: Path) -> None:
    once = (
        _STATS_HEAD + "60.0,3000,3,1000.0,1000.0,900,1100,100.0,kern_a\n"
        "40.0,2000,2,1000.0,1000.0,1000,1000,0.0,kern_b\n"
    )
    text(p, once + once)


# --- README ----------------------------------------------------------------------------------

README_HEAD = """# Broken and hostile inputs

Generated by `python tools/make_bad_corpus.py` from `sample_reports/` and the tests' builders;
do not edit by hand. `tests/test_bad_corpus.py` runs `roofscope report FILE --format json` on
every entry (a few with options: `--ceilings`, `cost --prices`, `record --summary`) and checks
the outcome below: **error** = exit code 2 and one line on stderr that names the file and the
problem; **load with warnings** = exit code 0, the numbers that survive are right, and the report
says what was wrong; **load cleanly** = exit code 0, right numbers and no warning beyond those the
sample it was cut from has; **load** = exit code 0 and right numbers, warnings allowed;
**error or warning** = either of the first two, naming the problem. JSON output must be strict
(no NaN or Infinity tokens). The test holds its own table of outcomes and of the words each
error or warning must contain. Files named in an entry's description as kept beside it (an
SQLite `-wal`) belong to that entry.

Regenerate with `python tools/make_bad_corpus.py` (`--check` compares instead of writing; the
SQLite and Parquet bytes depend on the SQLite and pyarrow versions that wrote them).

| file | what is wrong | expected |
|---|---|---|
"""


def readme() -> str:
    rows = [
        f"| `{e.name}` | {e.what.replace('|', '/')} | {e.outcome} |"
        for e in sorted(CORPUS, key=lambda e: e.name)
    ]
    return README_HEAD + "\n".join(rows) + "\n"


def build(out: Path) -> None:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for e in CORPUS:
        e.make(out / e.name)
    (out / "README.md").write_text(readme(), encoding="utf-8")


def _tree(root: Path) -> dict[str, bytes]:
    """Every file's bytes; a symbolic link (never followed: one is a loop) as its target."""
    tree = {}
    for p in sorted(root.rglob("*")):
        if p.is_symlink():
            tree[str(p.relative_to(root))] = b"-> " + os.readlink(p).encode()
        elif p.is_file():
            tree[str(p.relative_to(root))] = p.read_bytes()
    return tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    if len({e.name for e in CORPUS}) != len(CORPUS):
        raise SystemExit("duplicate corpus names")
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            build(Path(tmp) / "bad")
            fresh = _tree(Path(tmp) / "bad")
        differ = sorted(set(fresh.items()) ^ set(_tree(OUT).items()))
        for name in sorted({n for n, _ in differ}):
            print(f"differs: {name}")
        return 1 if differ else 0
    build(OUT)
    size = sum(len(v) for v in _tree(OUT).values())
    print(f"{len(CORPUS)} entries, {size / 1e6:.2f} MB in {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
