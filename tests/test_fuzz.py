"""Fuzz every reader: whatever the input, it loads or raises one RoofscopeError naming the file.

Readers covered: the sniffer, ncu raw and details pages, nsys SQLite exports (values and bytes),
nsys parquetdirs, nsys stats CSV and JSON, and GPU recordings. ``ROOFSCOPE_DEBUG`` is set, so
an exception a reader did not foresee fails here instead of becoming the store's generic
"could not be loaded" line.

The budget is bounded for CI (the ``ci`` profile, derandomized: the same examples every run,
the file in about 10 s on 2 cores). ``ROOFSCOPE_FUZZ=deep`` runs 20 times as many examples
from a random seed, for hunting locally.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roofscope.errors import RoofscopeError
from roofscope.ingest.sniff import sniff
from roofscope.store import open_store
from tests.conftest import SAMPLES
from tests.ncu_builder import details_page, raw_page
from tests.nsys_builder import DDL

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

DEEP = os.environ.get("ROOFSCOPE_FUZZ") == "deep"
settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "deep", parent=settings.get_profile("ci"), derandomize=False, print_blob=True
)
PROFILE = settings.get_profile("deep" if DEEP else "ci")


def budget(n: int) -> settings:
    """Examples of one test: small in CI, 20× when hunting."""
    return settings(PROFILE, max_examples=n * 20 if DEEP else n)


@pytest.fixture(autouse=True, scope="module")
def _unforeseen_errors_escape():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROOFSCOPE_DEBUG", "1")
        yield


@contextmanager
def _scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="roofscope-fuzz-") as tmp:
        yield Path(tmp)


# Errors that are RoofscopeErrors but betray a reader bug: a query of a column it did not check.
READER_BUGS = ("no such column", "Binder Error", "could not be loaded")


def _outcome(path: Path) -> str:
    """Whether ``path`` loaded ("load") or was refused ("error"); any other exception, or a
    refusal that betrays a reader bug, fails the test."""
    try:
        store = open_store([path], use_cache=False)
    except RoofscopeError as exc:
        assert exc.path, f"the error does not name the file: {exc}"
        assert "\n" not in exc.one_line()
        assert not any(bug in exc.message for bug in READER_BUGS), exc.one_line()
        return "error"
    store.con.close()
    return "load"


def _load_bytes(data: bytes, name: str = "x.csv") -> str:
    with _scratch() as tmp:
        path = tmp / name
        path.write_bytes(data)
        return _outcome(path)


# --- text inputs: the sniffer, ncu pages, nsys stats CSV -------------------------------------

VALID = raw_page(
    [
        ("k(int)", {"gpu__time_duration.sum": "1,234", "dram__bytes.sum": "5.5"}),
        ("void g<1, 2>(float *, int)", {"gpu__time_duration.sum": "n/a", "dram__bytes.sum": "7"}),
    ],
    {"gpu__time_duration.sum": "ns", "dram__bytes.sum": "Kbyte"},
)
DETAILS = details_page(
    [
        ("k(int)", {"gpu__time_duration.sum": ("us", "1.5"), "dram__bytes.sum": ("Mbyte", "2")}),
        ("g(float *)", {"gpu__time_duration.sum": ("ns", "1,234"), "dram__bytes.sum": ("", "")}),
    ]
)
KERN_SUM = (
    "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
    '90.0,1012071,2,506035.5,506035.5,502420,509651,5113.1,"vectorAdd(const float *, int)"\n'
    '10.0,112450,1,112450.0,112450.0,112450,112450,0.0,"relu(float *)"\n'
)
TRACE = (
    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),"
    "DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n"
    "905972338,27319553,121,,,,,,,,,,268.435,9663.676,Pageable,Device,"
    "NVIDIA A100 80GB PCIe (0),1,,7,[CUDA memcpy Host-to-Device]\n"
    "960452567,509651,123,262144,1,1,256,1,1,16,0.000,0.000,,,,,NVIDIA A100 80GB PCIe (0),1,,7,"
    '"vectorAdd(const float *, float *, int)"\n'
)

pieces = st.sampled_from(
    [
        '"',
        ",",
        "\n",
        "\r\n",
        "\r",
        "\x00",
        "==PROF== x\n",
        "==ERROR== LaunchFailed\n",
        '"ID","Process ID"',
        '"","",""',
        "n/a",
        "nan",
        "-inf",
        "1e999",
        "-1",
        "99999999999999999999999",
        "1,234.5",
        "1.234,5",
        "Kbyte",
        "furlong",
        "",
        "(",
        ")",
        '""',
        "\ufeff",
        "ü",
        "\udcff",
        "\t",
        ";",
        "Processing [x]\n",
        "Time (%),",
        "Start (ns),Duration (ns),Name\n",
        "[{",
    ]
)


def _mutated(text: str, cut: int, at: int, inserts: list[str]) -> bytes:
    text = text[: max(cut, 1)] if cut < len(text) // 2 else text
    at = min(at, len(text))
    return (text[:at] + "".join(inserts) + text[at:]).encode("utf-8", errors="surrogateescape")


def _mutations(text: str):
    return st.tuples(
        st.integers(0, len(text)), st.integers(0, len(text)), st.lists(pieces, max_size=6)
    )


@budget(30)
@given(st.binary(max_size=400))
def test_random_bytes(data):
    _load_bytes(data)


@budget(60)
@given(st.lists(st.one_of(pieces, st.text(max_size=12)), max_size=12))
def test_sniffer(parts):
    with _scratch() as tmp:
        path = tmp / "s.csv"
        path.write_bytes("".join(parts).encode("utf-8", errors="surrogateescape"))
        try:
            found = sniff(path)
        except RoofscopeError as exc:
            assert exc.path
            return
        assert "Kernel Name" in found.header
        assert found.decimal in ".,"


@budget(25)
@given(_mutations(VALID))
def test_mutated_raw_page(mutation):
    _load_bytes(_mutated(VALID, *mutation))


@budget(18)
@given(_mutations(DETAILS))
def test_mutated_details_page(mutation):
    _load_bytes(_mutated(DETAILS, *mutation))


@budget(20)
@given(st.sampled_from([KERN_SUM, TRACE]), st.data())
def test_mutated_nsys_stats_csv(text, data):
    name = "r_cuda_gpu_kern_sum.csv" if text is KERN_SUM else "r_cuda_gpu_trace.csv"
    _load_bytes(_mutated(text, *data.draw(_mutations(text))), name)


STATS_KEYS = [
    "Start (ns)",
    "Duration (ns)",
    "Name",
    "Total Time (ns)",
    "Instances",
    "Avg (ns)",
    "Min (ns)",
    "Max (ns)",
    "Med (ns)",
    "Time (%)",
    "Device",
    "Strm",
    "GrdX",
    "Category",
    "Operation",
    "Bytes (MB)",
]
json_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
)


@budget(20)
@given(
    st.one_of(
        st.lists(st.dictionaries(st.sampled_from(STATS_KEYS), json_values), max_size=4),
        json_values,
        st.dictionaries(st.text(max_size=4), json_values, max_size=3),
    ),
    st.sampled_from(["r_cuda_gpu_kern_sum.json", "r_cuda_gpu_trace.json", "r.json"]),
)
def test_nsys_stats_json(doc, name):
    _load_bytes(json.dumps(doc).encode(), name)


# --- nsys SQLite exports ---------------------------------------------------------------------

# SQLite stores any value in any column: the readers must survive text, blobs, floats, NULLs
# and 64-bit extremes wherever nsys writes integers.
sqlite_values = st.one_of(
    st.integers(-5, 3_000_000),
    st.sampled_from([-1, 2**31, -(2**31) - 1, 2**62 + 1, 2**63 - 1, -(2**63)]),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=6),
    st.binary(max_size=4),
    st.none(),
)
KERNEL_COLUMNS = [
    "start",
    "end",
    "deviceId",
    "streamId",
    "correlationId",
    "globalPid",
    "demangledName",
    "shortName",
    "gridX",
    "gridY",
    "gridZ",
    "blockX",
    "blockY",
    "blockZ",
]
# 2020-era exports name their GPUs here, in other units
OLD_GPU_TABLE = (
    "CREATE TABLE TARGET_INFO_CUDA_GPU (deviceId INTEGER, name TEXT, numMultiprocessors INTEGER, "
    "coreClockRate INTEGER, globalMemoryBandwidth INTEGER, l2CacheSize INTEGER, "
    "computeCapabilityMajor INTEGER, computeCapabilityMinor INTEGER);"
)
RELAXED_DDL = DDL.replace(" NOT NULL", "").replace(" PRIMARY KEY", "") + OLD_GPU_TABLE
MEMCPY_COLUMNS = ("start", "end", "deviceId", "streamId", "bytes", "copyKind", "srcKind", "dstKind")
# the columns each table gets values in; any of them may be dropped from the table first
TABLES = {
    "CUPTI_ACTIVITY_KIND_KERNEL": tuple(KERNEL_COLUMNS),
    "StringIds": ("id", "value"),
    "CUPTI_ACTIVITY_KIND_RUNTIME": ("start", "end", "globalTid", "correlationId", "nameId"),
    "NVTX_EVENTS": ("start", "end", "eventType", "text", "globalTid", "textId"),
    "CUPTI_ACTIVITY_KIND_MEMCPY": MEMCPY_COLUMNS,
    "ENUM_CUDA_MEMCPY_OPER": ("id", "name", "label"),
    "TARGET_INFO_GPU": ("id", "name", "smCount", "clockRate", "computeMajor", "computeMinor"),
    "TARGET_INFO_CUDA_GPU": (
        "deviceId",
        "name",
        "numMultiprocessors",
        "coreClockRate",
        "computeCapabilityMajor",
    ),
    "TARGET_INFO_GPU_METRICS": ("typeId", "metricId", "metricName", "typeName"),
    "GPU_METRICS": ("timestamp", "typeId", "metricId", "value"),
}
# values that make rows meet: kernel 1 named by string 1, launched by runtime call 7
LIKELY = {"start": 1000, "end": 2000, "demangledName": 1, "shortName": 1, "id": 1, "value": "k"}


def _sqlite_export(path: Path, data: st.DataObject) -> None:
    con = sqlite3.connect(path)
    con.executescript(RELAXED_DDL)
    pairs = [(t, c) for t, columns in TABLES.items() for c in columns]
    dropped = set()
    for table, column in sorted(data.draw(st.sets(st.sampled_from(pairs), max_size=3), "drop")):
        try:
            con.execute(f'ALTER TABLE {table} DROP COLUMN "{column}"')
        except sqlite3.OperationalError:
            continue  # a table's last column stays
        dropped.add((table, column))
    for table, columns in TABLES.items():
        kept = [c for c in columns if (table, c) not in dropped]
        for _ in range(data.draw(st.integers(0, 3), table)):
            row = [data.draw(st.just(LIKELY.get(c, 7)) | sqlite_values, c) for c in kept]
            con.execute(
                f"INSERT INTO {table} ({', '.join(f'{c!r}' for c in kept)}) "
                f"VALUES ({', '.join('?' for _ in kept)})",
                row,
            )
    if data.draw(st.booleans(), "drop the kernel table"):
        con.execute("DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL")
    con.commit()
    con.close()


@budget(18)
@given(st.data())
def test_nsys_sqlite_values(data):
    with _scratch() as tmp:
        path = tmp / "r.sqlite"
        _sqlite_export(path, data)
        _outcome(path)


def _good_sqlite() -> bytes:
    from tests.nsys_builder import Export, Kernel

    with _scratch() as tmp:
        path = tmp / "good.sqlite"
        Export(kernels=[Kernel("k(int)", 1000, 2000), Kernel("g(float *)", 3000, 5000)]).write(path)
        return path.read_bytes()


GOOD_SQLITE = _good_sqlite()


@budget(12)
@given(
    st.lists(
        st.tuples(st.integers(0, len(GOOD_SQLITE) - 1), st.binary(min_size=1, max_size=64)),
        max_size=4,
    ),
    st.integers(16, len(GOOD_SQLITE)),
)
def test_damaged_nsys_sqlite(patches, keep):
    data = bytearray(GOOD_SQLITE)
    for at, chunk in patches:
        data[at : at + len(chunk)] = chunk
    _load_bytes(bytes(data[:keep]), "r.sqlite")


# --- Parquet: nsys parquetdirs and GPU recordings --------------------------------------------

arrow_columns = st.sampled_from(["int64", "float64", "string", "bool", "null", "uint64"])


def _arrow(kind: str, n: int, data: st.DataObject) -> pa.Array:
    values = {
        "int64": st.integers(-(2**63), 2**63 - 1) | st.integers(0, 5000),
        "uint64": st.integers(0, 2**64 - 1),
        "float64": st.floats(allow_nan=True, allow_infinity=True),
        "string": st.text(max_size=5),
        "bool": st.booleans(),
        "null": st.none(),
    }[kind]
    items = [data.draw(st.none() | values) for _ in range(n)]
    return pa.array(items, type=getattr(pa, kind if kind != "bool" else "bool_")())


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


@budget(12)
@given(st.data())
def test_nsys_parquetdir(data):
    n = data.draw(st.integers(0, 3), "rows")
    with _scratch() as tmp:
        folder = tmp / "r_parquetdir"
        folder.mkdir()
        strings = pa.table(
            {"id": _arrow(data.draw(arrow_columns), 2, data), "value": pa.array(["k", None])}
        )
        (folder / "StringIds.parquet").write_bytes(_parquet(strings))
        columns = data.draw(st.lists(st.sampled_from(KERNEL_COLUMNS), unique=True, max_size=8))
        kernels = pa.table({c: _arrow(data.draw(arrow_columns), n, data) for c in columns})
        blob = _parquet(kernels)
        if data.draw(st.booleans(), "cut the kernel table"):
            blob = blob[: data.draw(st.integers(0, len(blob)))]
        (folder / "CUPTI_ACTIVITY_KIND_KERNEL.parquet").write_bytes(blob)
        _outcome(folder)


RECORDING = pq.read_table(SAMPLES / "h100_matmul.parquet" / "part-000001.parquet").slice(0, 3)


@budget(15)
@given(st.data())
def test_recording(data):
    table = RECORDING
    for name in data.draw(st.lists(st.sampled_from(table.column_names), unique=True, max_size=4)):
        i = table.schema.get_field_index(name)
        if data.draw(st.booleans(), f"drop {name}"):
            table = table.remove_column(i)
        else:
            kind = data.draw(arrow_columns)
            table = table.set_column(i, name, _arrow(kind, table.num_rows, data))
    marked = data.draw(st.booleans(), "marker")
    table = table.replace_schema_metadata(RECORDING.schema.metadata if marked else None)
    blob = _parquet(table)
    if data.draw(st.booleans(), "cut"):
        blob = blob[: data.draw(st.integers(0, len(blob)))]
    if _load_bytes(blob, "rec.parquet") == "load":
        assert marked, "only a Parquet file with the recording marker loads"


SEEDS: dict[str, Callable[[], bytes]] = {
    "x.csv": VALID.encode,
    "x.ncu-details.csv": DETAILS.encode,
    "twice.csv": lambda: (VALID * 2).encode(),
    "crlf.csv": lambda: DETAILS.replace("\n", "\r\n").encode(),
    "r_cuda_gpu_kern_sum.csv": KERN_SUM.encode,
    "r_cuda_gpu_trace.csv": TRACE.encode,
    "r.sqlite": lambda: GOOD_SQLITE,
    "rec.parquet": lambda: _parquet(RECORDING),
}


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_seeds_load(name):
    """The fuzzers' seeds themselves load: fuzzing inputs that are all refused would test
    only the refusal."""
    assert _load_bytes(SEEDS[name](), name) == "load"
