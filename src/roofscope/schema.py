"""The cache database's tables, defined once: the writers create them from here and
docs/schema.md mirrors them (``tests/test_schema_doc.py`` keeps the two equal).

A low layer: it imports no reader, store or analysis module, so each of those can name the
tables without importing another. Changing a table's name, a column's name, type or place is a
change of the cache format: bump ``SCHEMA_VERSION`` (``schema_version.py``) with it. Derived
tables and views (facts, groups) and temporary tables of one query stay with the code that
computes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from roofscope import schema_version
from roofscope.sqlutil import quote_ident
from roofscope.telemetry.recording import COLUMNS as RECORDING
from roofscope.telemetry.recording import PROCESS_FIELDS

# In every cache's key and ``meta`` (defined in schema_version.py, read before this is imported)
SCHEMA_VERSION = schema_version.SCHEMA_VERSION

Columns = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Table:
    """A table every cache holds, whatever its reports."""

    name: str
    columns: Columns
    primary_key: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.columns)

    def ddl(self) -> str:
        cols = ", ".join(
            f"{quote_ident(n)} {t}" + (" PRIMARY KEY" if n == self.primary_key else "")
            for n, t in self.columns
        )
        return f"CREATE TABLE {self.name} ({cols});\n"


@dataclass(frozen=True)
class PerReport:
    """A table each report ``N`` gets, ``{prefix}{N}``: ``columns`` come first; when ``more``,
    columns that depend on the report follow (its metrics, or its export's columns)."""

    prefix: str
    columns: Columns
    more: bool

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.columns)

    def name(self, report_id: int) -> str:
        return f"{self.prefix}{int(report_id)}"


# A recording column's kind (telemetry/recording.py) → its type in the store. Times are seconds
# since the epoch, like every time in the store; integers of any width are INTEGER.
_SQL_TYPES = {
    "timestamp": "DOUBLE",
    "float64": "DOUBLE",
    "int16": "INTEGER",
    "int64": "BIGINT",
    "bool": "BOOLEAN",
    "string": "VARCHAR",
}
_PROCESS_SQL = (
    "STRUCT(" + ", ".join(f"{name} {_SQL_TYPES[kind]}" for name, kind in PROCESS_FIELDS) + ")[]"
)


def _sql_type(kind: str) -> str:
    """A recording column's type in the store (the Parquet types are the recorder's)."""
    return _PROCESS_SQL if kind == "processes" else _SQL_TYPES[kind]


# The columns of a GPU recording (telemetry/recording.py), as gpu_samples stores them.
RECORDING_COLUMNS: Columns = tuple((name, _sql_type(kind)) for name, kind in RECORDING)

META = Table("meta", (("key", "VARCHAR"), ("value", "VARCHAR")), primary_key="key")
REPORTS = Table(
    "reports",
    (
        ("report_id", "INTEGER"),
        ("path", "VARCHAR"),
        ("layout", "VARCHAR"),
        ("decimal", "VARCHAR"),
        ("gpu_name", "VARCHAR"),
        ("cc", "VARCHAR"),
        ("sm_count", "INTEGER"),
        ("launches", "BIGINT"),
        ("raw_values", "VARCHAR"),
    ),
)
LAUNCHES = Table(
    "launches",
    (
        ("report_id", "INTEGER"),
        ("launch_id", "BIGINT"),
        ("process_id", "VARCHAR"),
        ("process_name", "VARCHAR"),
        ("host", "VARCHAR"),
        ("kernel", "VARCHAR"),
        ("kernel_time", "VARCHAR"),
        ("context", "VARCHAR"),
        ("stream", "VARCHAR"),
        ("block_size", "VARCHAR"),
        ("grid_size", "VARCHAR"),
        ("device", "VARCHAR"),
        ("cc", "VARCHAR"),
        ("nvtx", "VARCHAR"),
        ("invocations", "BIGINT"),
    ),
)
CATALOGUE = Table(
    "catalogue",
    (
        ("report_id", "INTEGER"),
        ("metric", "VARCHAR"),
        ("label", "VARCHAR"),
        ("section", "VARCHAR"),
        ("unit", "VARCHAR"),
        ("base_unit", "VARCHAR"),
        ("scale", "DOUBLE"),
        ("source", "VARCHAR"),
        ("wanted", "BOOLEAN"),
        ("known_unit", "BOOLEAN"),
    ),
)
WARNINGS = Table("warnings", (("report_id", "INTEGER"), ("message", "VARCHAR")))
QUERY_MEMO = Table("query_memo", (("query", "VARCHAR"), ("result", "VARCHAR")))
SPANS = Table(
    "spans",
    (
        ("report_id", "INTEGER"),
        ("launch_id", "BIGINT"),
        ("start_ns", "BIGINT"),
        ("end_ns", "BIGINT"),
        ("device", "INTEGER"),
        ("stream", "BIGINT"),
        ("source_row", "BIGINT"),
    ),
)
MEMOPS = Table(
    "memops",
    (
        ("report_id", "INTEGER"),
        ("start_ns", "BIGINT"),
        ("end_ns", "BIGINT"),
        ("device", "INTEGER"),
        ("stream", "BIGINT"),
        ("bytes", "DOUBLE"),
        ("kind", "VARCHAR"),
        ("count", "BIGINT"),
        ("time_s", "DOUBLE"),
        ("host_kind", "VARCHAR"),  # a copy's host memory: 'pageable' | 'pinned' | NULL unknown
    ),
)
# the host's synchronising CUDA API calls of an nsys trace (cudaDeviceSynchronize,
# cuStreamSynchronize, …; not every API call): what the host_syncs advice reads
HOST_SYNCS = Table(
    "host_syncs",
    (
        ("report_id", "INTEGER"),
        ("name", "VARCHAR"),  # without the version suffix nsys adds (_v3020)
        ("start_ns", "BIGINT"),
        ("end_ns", "BIGINT"),
    ),
)
GPU_METRICS = Table(
    "gpu_metrics",
    (
        ("report_id", "INTEGER"),
        ("source", "VARCHAR"),
        ("metric", "VARCHAR"),
        ("ts_ns", "BIGINT"),
        ("value", "DOUBLE"),
    ),
)
NVTX_RANGES = Table(
    "nvtx_ranges",
    (
        ("report_id", "INTEGER"),
        ("tid", "BIGINT"),
        ("start_ns", "BIGINT"),
        ("end_ns", "BIGINT"),
        ("name", "VARCHAR"),
    ),
)
ISLANDS = Table(
    "islands",
    (
        ("report_id", "INTEGER"),
        ("device", "INTEGER"),
        ("start_ns", "BIGINT"),
        ("end_ns", "BIGINT"),
    ),
)
LAUNCH_NVTX = Table(
    "launch_nvtx",
    (
        ("report_id", "INTEGER"),
        ("launch_id", "BIGINT"),
        ("innermost", "VARCHAR"),
        ("outermost", "VARCHAR"),
    ),
)
GPUS = Table(
    "gpus",
    (
        ("report_id", "INTEGER"),
        ("device", "INTEGER"),
        ("name", "VARCHAR"),
        ("sm_count", "INTEGER"),
        ("clock_hz", "DOUBLE"),
        ("mem_bandwidth", "DOUBLE"),
        ("l2_bytes", "DOUBLE"),
        ("memory_bytes", "DOUBLE"),
        ("cc", "VARCHAR"),
    ),
)
# ncu's rule results (details pages collected with sections): one row per rule row of a launch,
# text as exported; ``speedup_pct`` is ncu's Estimated Speedup (0..100, NULL when the export has
# none: older ncu, or a rule that gives no estimate), ``speedup_type`` local | global.
NCU_RULES = Table(
    "ncu_rules",
    (
        ("report_id", "INTEGER"),
        ("launch_id", "BIGINT"),
        ("section", "VARCHAR"),
        ("rule", "VARCHAR"),
        ("type", "VARCHAR"),
        ("description", "VARCHAR"),
        ("speedup_type", "VARCHAR"),
        ("speedup_pct", "DOUBLE"),
    ),
)
# A binary report's hottest SASS instructions per launch, by ncu's sampled warp stalls
# (source counters: ``--set full``): ``share`` of the launch's samples, 0..1 (schema 13).
NCU_HOT = Table(
    "ncu_hot",
    (
        ("report_id", "INTEGER"),
        ("launch_id", "BIGINT"),
        ("address", "VARCHAR"),
        ("instruction", "VARCHAR"),
        ("samples", "BIGINT"),
        ("share", "DOUBLE"),
    ),
)
# ``seq``: the sample's place in the recording as written (part by part, row by row). The
# recorder stamps samples with the wall clock, which NTP or a wrong RTC can step back or years
# ahead; intervals are taken in ``seq`` order, never in ``ts`` order.
GPU_SAMPLES = Table(
    "gpu_samples", (("report_id", "INTEGER"), *RECORDING_COLUMNS, ("seq", "BIGINT"))
)

# In the order they are created.
TABLES: tuple[Table, ...] = (
    META,
    REPORTS,
    LAUNCHES,
    CATALOGUE,
    WARNINGS,
    QUERY_MEMO,
    SPANS,
    MEMOPS,
    HOST_SYNCS,
    GPU_METRICS,
    NVTX_RANGES,
    ISLANDS,
    LAUNCH_NVTX,
    GPUS,
    GPU_SAMPLES,
    NCU_RULES,
    NCU_HOT,
)
DDL = "".join(table.ddl() for table in TABLES)

# Base SI values of the metrics roofscope computes with, one DOUBLE column per metric (raw pages
# are scanned straight into it, so it also keeps their identification columns as text).
VALUES_R = PerReport("values_r", (("launch_id", "BIGINT"),), more=True)
# A raw page's other columns as text (pages up to 64 MB; ``reports.raw_values = 'table'``): one
# list per launch, its values named in order by ``raw_columns_r{N}``'s one row.
RAW_R = PerReport("raw_r", (("launch_id", "BIGINT"), ("texts", "VARCHAR[]")), more=False)
RAW_COLUMNS_R = PerReport("raw_columns_r", (("names", "VARCHAR[]"),), more=False)
# A details or summary page, every row as exported.
DET_R = PerReport(
    "det_r",
    (
        ("launch_id", "BIGINT"),
        ("section", "VARCHAR"),
        ("metric", "VARCHAR"),
        ("label", "VARCHAR"),
        ("unit", "VARCHAR"),
        ("value", "VARCHAR"),
    ),
    more=False,
)
PER_REPORT: tuple[PerReport, ...] = (VALUES_R, RAW_R, RAW_COLUMNS_R, DET_R)


def create_values(report_id: int, select: str, *, replace: bool = False) -> str:
    """``values_r{N}`` from ``select``, whose first column is ``launch_id``."""
    verb = "CREATE OR REPLACE TABLE" if replace else "CREATE TABLE"
    return f"{verb} {VALUES_R.name(report_id)} AS {select}"


def create_empty_values(report_id: int) -> str:
    """``values_r{N}`` of a report without kernels: every kernel query stays valid (and empty)."""
    return f"CREATE TABLE {VALUES_R.name(report_id)} (launch_id BIGINT)"


def create_raw(report_id: int, select: str) -> str:
    """``raw_r{N}`` from ``select``, whose columns are ``launch_id`` and ``texts``."""
    return f"CREATE TABLE {RAW_R.name(report_id)} AS {select}"


def create_det(report_id: int, exprs: Mapping[str, str], source: str) -> str:
    """``det_r{N}`` with one SQL expression per column (``exprs``, keyed by the columns of
    :data:`DET_R`), selected ``FROM source`` — ``source`` may carry joins and a WHERE."""
    if set(exprs) != set(DET_R.names):
        raise ValueError(f"det_r needs exactly the columns {DET_R.names}")
    select = ", ".join(f"{exprs[name]} AS {name}" for name in DET_R.names)
    return f"CREATE TABLE {DET_R.name(report_id)} AS SELECT {select} FROM {source}"
