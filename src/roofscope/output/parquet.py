"""A fleet's reports as one Hive-partitioned Parquet dataset (``roofscope export --parquet``).

A team's or a CI's thousands of reports outgrow one session; written as one dataset, DuckDB,
pyarrow/pandas and Spark read them as three tables (docs/parquet.md)::

    DIR/_roofscope_dataset.json                          what wrote it, the dataset version
    DIR/reports/gpu=<gpu>/report=<id>/part-0.parquet     one row per report
    DIR/groups/gpu=<gpu>/report=<id>/part-0.parquet      one row per kernel group
    DIR/launches/gpu=<gpu>/report=<id>/part-0.parquet    one row per launch

The numbers are the session's, as ``roofscope report --format json`` gives them, flattened
(``flops_fp32``, ``bytes_dram``, ``ai_l2``) and in the same base units. ``<id>`` is the file
name (made safe) and a hash of the file's bytes, so exporting the same file again replaces
its partition. Each partition is one file, written beside and renamed into place.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from roofscope.errors import RoofscopeError
from roofscope.jsonout import dumps
from roofscope.quantities import (
    AI,
    BOUND,
    BOUND_BASIS,
    BYTES,
    EFFICIENCY,
    EFFICIENCY_COMPLETE,
    FLOP_PER_S,
    FLOPS,
    FLOPS_COMPLETE,
    FLOPS_TOTAL,
    HEADROOM_S,
    LAUNCHES,
    LEVELS,
    PRECISIONS,
    TIME_AVG_S,
    TIME_MAX_S,
    TIME_MED_S,
    TIME_MIN_S,
    TIME_PCT,
    TIME_S,
    ai_key,
    flop_per_s,
    flop_total,
)
from roofscope.version import __version__

if TYPE_CHECKING:
    from roofscope.session import Session
    from roofscope.session.report import Report

DATASET_VERSION = 1
MARKER = "_roofscope_dataset.json"
TABLES = ("launches", "groups", "reports")  # in write order: the reports row comes last
PART = "part-0.parquet"
GPU_KEY, REPORT_KEY = "gpu", "report"  # the Hive partition columns (never in the files)

# Hive partition values every reader would turn into a number, boolean, date or null
_TYPED = re.compile(r"^(inf|infinity|nan|true|false|null|none)$")
_SLUG_MAX = 60
_SAFE = re.compile(r"^[a-z][a-z0-9._-]{0,95}$")  # what the two functions below can make


# -- the columns ---------------------------------------------------------------------------
def _flat(prefix: str, keys: Sequence[str]) -> list[pa.Field]:
    return [pa.field(f"{prefix}_{k}", pa.float64()) for k in keys]


_FLOPS_FIELDS = _flat(FLOPS, PRECISIONS)  # flops_fp64 … flops_tensor, FLOP
_BYTES_FIELDS = _flat(BYTES, LEVELS)  # bytes_l1, bytes_l2, bytes_dram, B

# A group's and a launch's numbers: the row of report --format json, flattened.
_ROW_FIELDS = [
    pa.field("group_name", pa.string()),
    pa.field(LAUNCHES, pa.int64()),
    pa.field(TIME_S, pa.float64()),
    pa.field(TIME_PCT, pa.float64()),
    pa.field(TIME_AVG_S, pa.float64()),
    pa.field(TIME_MED_S, pa.float64()),
    pa.field(TIME_MIN_S, pa.float64()),
    pa.field(TIME_MAX_S, pa.float64()),
    *_FLOPS_FIELDS,
    pa.field(FLOPS_TOTAL, pa.float64()),
    pa.field(FLOPS_COMPLETE, pa.bool_()),
    *_BYTES_FIELDS,
    pa.field(FLOP_PER_S, pa.float64()),
    *(pa.field(ai_key(level), pa.float64()) for level in LEVELS),
    pa.field(BOUND, pa.string()),
    pa.field(BOUND_BASIS, pa.string()),
    pa.field("attainable_flop_per_s", pa.float64()),
    pa.field(EFFICIENCY, pa.float64()),
    pa.field(EFFICIENCY_COMPLETE, pa.bool_()),
    pa.field(HEADROOM_S, pa.float64()),
    pa.field("speedup_if_at_roof", pa.float64()),
]

# report --format json's ``precision`` and ``ceilings`` items, as lists of structs
_PRECISION_SHARE = pa.struct(
    [
        ("precision", pa.string()),
        ("title", pa.string()),
        (FLOPS, pa.float64()),
        ("share", pa.float64()),
    ]
)
_CEILING = pa.struct(
    [
        ("name", pa.string()),
        ("kind", pa.string()),
        ("value", pa.float64()),
        ("unit", pa.string()),
        ("source", pa.string()),
    ]
)
_META = {b"roofscope.dataset": str(DATASET_VERSION).encode()}

GROUPS_SCHEMA = pa.schema(
    [_ROW_FIELDS[0], pa.field("kernels", pa.int64()), *_ROW_FIELDS[1:]], metadata=_META
)
LAUNCHES_SCHEMA = pa.schema(
    [pa.field("launch_id", pa.int64()), pa.field("kernel", pa.string()), *_ROW_FIELDS],
    metadata=_META,
)
REPORTS_SCHEMA = pa.schema(
    [
        pa.field("path", pa.string()),
        pa.field("file_name", pa.string()),
        pa.field("content_sha256", pa.string()),
        pa.field("format", pa.string()),
        pa.field("gpu_name", pa.string()),
        pa.field("gpu_cc", pa.string()),
        pa.field("gpu_sm_count", pa.int64()),
        pa.field("gpu_spec", pa.string()),
        pa.field(LAUNCHES, pa.int64()),
        pa.field("kernels", pa.int64()),
        pa.field("groups", pa.int64()),
        pa.field(TIME_S, pa.float64()),
        *_FLOPS_FIELDS,
        pa.field(FLOPS_TOTAL, pa.float64()),
        pa.field(FLOPS_COMPLETE, pa.bool_()),
        *_BYTES_FIELDS,
        pa.field(FLOP_PER_S, pa.float64()),
        pa.field("potential_speedup", pa.float64()),
        pa.field(EFFICIENCY_COMPLETE, pa.bool_()),
        pa.field("precision", pa.list_(_PRECISION_SHARE)),
        pa.field("ceilings", pa.list_(_CEILING)),
        pa.field("fp16_convention", pa.string()),
        pa.field("axis", pa.string()),
        pa.field("warnings", pa.list_(pa.string())),
        pa.field("roofscope_version", pa.string()),
        pa.field("exported_at", pa.timestamp("us", tz="UTC")),
    ],
    metadata=_META,
)
SCHEMAS = {"reports": REPORTS_SCHEMA, "groups": GROUPS_SCHEMA, "launches": LAUNCHES_SCHEMA}


# -- partition values ----------------------------------------------------------------------
def _slug(text: str, keep: str, fill: str) -> str:
    """Lower-case ASCII letters, digits and ``keep``; every other run of characters one
    ``fill``; no leading or trailing punctuation (no ``.``/``..``, no hidden folder)."""
    out = re.sub(f"[^a-z0-9{re.escape(keep)}]+", fill, text.lower())
    out = re.sub(f"{re.escape(fill)}+", fill, out)
    out = out.strip("._-")[:_SLUG_MAX]
    return out.rstrip("._-")


def gpu_partition(name: str | None, spec: str | None = None) -> str:
    """The ``gpu=`` value: the GPU's name as the export gives it made a safe path component
    (``NVIDIA H100 80GB HBM3`` → ``nvidia-h100-80gb-hbm3``), else the spec-table key, else
    ``unknown``. It starts with a letter and is never a word a reader types as a number,
    boolean or null, so every reader sees a string column."""
    slug = _slug(name or "", ".", "-") or _slug(spec or "", ".", "-") or "unknown"
    if not slug[0].isalpha() or _TYPED.match(slug):
        slug = f"gpu-{slug}"
    return slug


def report_partition(source: str | Path, digest: str) -> str:
    """The ``report=`` value: the file name made safe and 16 hex digits of its content hash
    (``resnet18_fp32_h100.ncu-raw.csv-3f2a…``). The same bytes under the same name are the
    same report; another run under the same name is another report."""
    slug = _slug(Path(source).name, "._-", "_")
    if not slug or not slug[0].isalpha():
        slug = f"report-{slug}" if slug else "report"
    return f"{slug}-{digest[:16]}"


def content_digest(path: Path) -> str:
    """SHA-256 of a file's bytes; of a folder export (nsys parquetdir), of each file's
    relative path and bytes in sorted order. Reading fails as ``OSError``."""
    h = hashlib.sha256()
    if path.is_dir():
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            h.update(file.relative_to(path).as_posix().encode("utf-8", "surrogateescape"))
            h.update(b"\0")
            _hash_file(h, file)
    else:
        _hash_file(h, path)
    return h.hexdigest()


def _hash_file(h: Any, path: Path) -> None:
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)


# -- rows ----------------------------------------------------------------------------------
# Where each column of a row table comes from in a row of ``Report.rows()``: a key, or a key
# and the key inside its dict (``flops_fp32`` ← ``row["flops"]["fp32"]``).
_NESTED = {
    **{f"{FLOPS}_{p}": (FLOPS, p) for p in PRECISIONS},
    **{f"{BYTES}_{level}": (BYTES, level) for level in LEVELS},
    **{ai_key(level): (AI, level) for level in LEVELS},
}
_GROUP_SOURCE = {"group_name": "name"}
_LAUNCH_SOURCE = {"group_name": "grp", "launch_id": "name"}


def _column(rows: Sequence[Mapping[str, Any]], name: str, source: Mapping[str, str]) -> list:
    if name in _NESTED:
        outer, inner = _NESTED[name]
        return [(r.get(outer) or {}).get(inner) for r in rows]
    key = source.get(name, name)
    return [r.get(key) for r in rows]


def _array(values: list, type_: pa.DataType) -> pa.Array:
    """One column; a float that is NaN or ±inf is unknown (null), as in the JSON."""
    if pa.types.is_floating(type_):
        array = pa.array(values, type_, from_pandas=True)  # NaN → null
        return pc.if_else(pc.is_finite(array), array, None)
    if pa.types.is_string(type_):
        values = [None if v is None else str(v) for v in values]
    return pa.array(values, type_)


def row_table(
    rows: Sequence[Mapping[str, Any]], schema: pa.Schema, source: Mapping[str, str]
) -> pa.Table:
    """Rows of ``Report.rows()`` as a table of ``schema``, built a column at a time (a list
    of dicts per launch costs several times the time and memory at 10⁵ launches)."""
    return pa.Table.from_arrays(
        [_array(_column(rows, f.name, source), f.type) for f in schema], schema=schema
    )


def group_table(report: Report) -> pa.Table:
    """Every group of the report, longest first, as ``report --format json`` lists them."""
    return row_table(report.rows("group"), GROUPS_SCHEMA, _GROUP_SOURCE)


def launch_table(report: Report) -> pa.Table:
    """Every launch of the report in launch-ID order (``report --by launch``'s rows)."""
    table = row_table(report.rows("launch"), LAUNCHES_SCHEMA, _LAUNCH_SOURCE)
    return table.sort_by("launch_id")


def _num(value: Any) -> Any:
    """NaN and ±inf are unknown, as in the JSON (``null``)."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _flatten(prefix: str, values: Mapping[str, Any] | None, keys: Sequence[str]) -> dict:
    values = values or {}
    return {f"{prefix}_{k}": _num(values.get(k)) for k in keys}


def report_row(
    session: Session, report: Report, source: Path, digest: str, groups: int
) -> dict[str, Any]:
    """The report's totals and identity: the head of its ``report --format json`` entry."""
    totals = report.totals()
    flops = totals[FLOPS]
    total = flop_total(flops, totals[FLOPS_COMPLETE])
    efficiency = report.histogram()
    return {
        "path": report.path,
        "file_name": source.name,
        "content_sha256": digest,
        "format": report.layout,
        "gpu_name": report.gpu_name,
        "gpu_cc": report.cc,
        "gpu_sm_count": report.sm_count,
        "gpu_spec": report.spec.key if report.spec else None,
        LAUNCHES: totals[LAUNCHES],
        "kernels": totals["kernels"],
        "groups": groups,
        TIME_S: _num(totals[TIME_S]),
        **_flatten(FLOPS, flops, PRECISIONS),
        FLOPS_TOTAL: _num(total),
        FLOPS_COMPLETE: totals[FLOPS_COMPLETE] if total is not None else None,
        **_flatten(BYTES, totals[BYTES], LEVELS),
        FLOP_PER_S: _num(flop_per_s(total, totals[TIME_S])),
        "potential_speedup": _num(efficiency["potential_speedup"]),
        EFFICIENCY_COMPLETE: efficiency[EFFICIENCY_COMPLETE],
        "precision": [{k: _num(v) for k, v in p.items()} for p in report.precision()],
        "ceilings": [{k: _num(v) for k, v in c.to_dict().items()} for c in report.ceilings],
        "fp16_convention": session.options.fp16_convention,
        "axis": session.axis,
        "warnings": [str(w) for w in report.warnings],
        "roofscope_version": __version__,
        "exported_at": datetime.now(UTC),
    }


# -- the dataset ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Written:
    """What one export wrote: its partition values, row counts, whether it replaced one."""

    gpu: str
    report: str
    launches: int
    groups: int
    replaced: bool


class ParquetDataset:
    """A folder holding (or about to hold) the dataset; ``write`` adds or replaces a report.

    Opening it checks the folder and makes nothing: a file, or a folder with other things in
    it and no marker, is refused, so a mistyped path never scatters tables over a home
    directory. The folder and its marker are made at the first write."""

    def __init__(self, root: str | Path):
        self.root = Path(root).expanduser()
        self._check_root()

    def _check_root(self) -> None:
        root = self.root
        where = str(root)
        if root.exists() and not root.is_dir():
            raise RoofscopeError(
                "is a file, not a folder", path=where, hint="give a folder; it is made if missing"
            )
        try:
            # another export's marker on its way in is no stranger's file
            used = root.is_dir() and any(
                not p.name.startswith(f".{MARKER}.") for p in root.iterdir()
            )
        except OSError as exc:
            raise RoofscopeError(
                f"cannot read the folder ({exc.strerror})", path=where, hint="check its permissions"
            ) from exc
        if used:
            version = _marker_version(root / MARKER)
            if version is None:
                raise RoofscopeError(
                    "is not empty and holds no roofscope dataset",
                    path=where,
                    hint="give a new or empty folder, or one roofscope export --parquet wrote",
                )
            if version > DATASET_VERSION:
                raise RoofscopeError(
                    f"was written by a newer roofscope (dataset version {version})",
                    path=where,
                    hint="upgrade roofscope, or export to another folder",
                )

    def _create(self) -> None:
        """Make the folder and its marker at the first write (checking made nothing)."""
        marker = self.root / MARKER
        if marker.exists():
            return
        doc = {
            "dataset": "roofscope-parquet",
            "version": DATASET_VERSION,
            "tables": list(TABLES),
            "partitioning": [GPU_KEY, REPORT_KEY],
            "written_by": f"roofscope {__version__}",
        }
        # a name of its own: exports starting at once into a new folder each write theirs
        tmp = self.root / f".{MARKER}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp.write_text(dumps(doc, indent=1), encoding="utf-8")
            os.replace(tmp, marker)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise _write_error(self.root, exc) from exc

    def write(self, session: Session, source: str | Path) -> Written:
        """Add the session's one report (loaded from ``source``) to the dataset, replacing
        the partition an earlier export of the same file wrote."""
        if len(session.reports) != 1:
            raise ValueError("export one report per session (no ncu/nsys pairing)")
        (report,) = session.reports
        source = Path(source)
        if report.is_recording:
            raise RoofscopeError(
                "is a GPU recording: it has no kernels to export",
                path=str(source),
                hint="export takes ncu and nsys exports; roofscope record --summary "
                "summarises recordings",
            )
        try:
            digest = content_digest(source)
        except OSError as exc:
            raise RoofscopeError(
                f"cannot read ({exc.strerror})", path=str(source), hint="check the permissions"
            ) from exc
        gpu = gpu_partition(report.gpu_name, report.spec.key if report.spec else None)
        rid = report_partition(source, digest)
        groups = group_table(report)
        launches = launch_table(report)
        row = report_row(session, report, source, digest, groups.num_rows)
        tables = {
            "launches": launches,
            "groups": groups,
            "reports": pa.Table.from_pylist([row], schema=REPORTS_SCHEMA),
        }
        self._create()
        replaced = any(any((self.root / t).glob(f"*/{REPORT_KEY}={rid}/{PART}")) for t in TABLES)
        for name in TABLES:  # reports last: a report listed there has its groups and launches
            self._replace(name, gpu, rid, tables[name])
        return Written(gpu, rid, row[LAUNCHES], groups.num_rows, replaced)

    def partition(self, table: str, gpu: str, report: str) -> Path:
        """The folder of one report's rows of ``table``; inside the dataset, always."""
        folder = self.root / table / f"{GPU_KEY}={gpu}" / f"{REPORT_KEY}={report}"
        if not (_SAFE.match(gpu) and _SAFE.match(report)) or table not in SCHEMAS:
            raise ValueError(f"unsafe partition value {gpu!r}/{report!r}")  # a bug, not input
        return folder

    def _replace(self, name: str, gpu: str, rid: str, table: pa.Table) -> None:
        """Write beside, then rename over ``part-0.parquet``: a reader sees the old partition
        or the new one. The same report under another GPU value (an export with another
        ``--gpu``) is removed after, so it is never listed twice for long."""
        folder = self.partition(name, gpu, rid)
        # a dot first: Spark, pyarrow and the *.parquet globs all skip the unfinished file
        tmp = folder / f".{PART}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with tmp.open("wb") as f:
                pq.write_table(table, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, folder / PART)
            for stale in (self.root / name).glob(f"*/{REPORT_KEY}={rid}"):
                if stale != folder:
                    _remove(stale)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise _write_error(folder, exc) from exc


def _marker_version(marker: Path) -> int | None:
    """The dataset version in the marker; None when there is none or it is not ours."""
    try:
        doc = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("dataset") != "roofscope-parquet":
        return None
    version = doc.get("version")
    return version if isinstance(version, int) else None


def _remove(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink()
    else:
        shutil.rmtree(path)


def _write_error(path: Path, exc: OSError) -> RoofscopeError:
    return RoofscopeError(
        f"cannot write ({exc.strerror or exc})",
        path=str(path),
        hint="check the folder's permissions and free space",
    )
