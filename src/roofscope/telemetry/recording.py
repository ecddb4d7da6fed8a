"""The recording format: a folder of Parquet parts, one row per GPU per sample.

``roofscope record --out node01.parquet`` makes ``node01.parquet/part-000001.parquet`` … (the
layout Spark uses, which DuckDB, pandas and pyarrow read as one table). The part being written is
rewritten whole into a temporary file and renamed over the old one at every flush, so a reader
— a follower on the login node, or anyone after a crash — only ever sees complete files; at most
the samples since the last flush are lost. A part is closed after ``rotate_s`` and the next one
begins, which bounds the rewrite cost. Recording again into the same folder appends parts.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections import Counter
from dataclasses import fields
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from roofscope.errors import RoofscopeError
from roofscope.telemetry.sample import GpuSample, ProcessInfo, Reading

if TYPE_CHECKING:
    import pyarrow as pa

MARKER = b"roofscope.recording"
FORMAT_VERSION = b"1"
PART = re.compile(r"^part-(\d{6})\.parquet$")
# An interval longer than this (or negative) is a clock step, not a pause of the recorder: it is
# left out of a recording's duration (and, like every gap, of its energy), with a warning.
CLOCK_JUMP_S = 86400.0

# The columns of a recording as (name, kind), without pyarrow: the cache's ``gpu_samples``
# (schema.py) is made from these, and so is the Parquet schema (:func:`arrow_schema`), so that a
# process that only reads the cache (``roofscope report``) never imports pyarrow (~0.1 s).
# Kinds: ``float64`` (the default), ``timestamp`` (microseconds, UTC), ``int16``, ``string``,
# ``bool``, and ``processes`` (a list of PROCESS_FIELDS structs).
_KINDS = {
    "ts": "timestamp",
    "host": "string",
    "gpu": "int16",
    "name": "string",
    "uuid": "string",
    "throttle": "string",
    "mig_mode": "bool",
    "mig": "string",
    "gpm_status": "string",
    "est_status": "string",
}
SAMPLE_FIELDS = [f.name for f in fields(GpuSample)]
PROCESS_FIELDS: tuple[tuple[str, str], ...] = (
    ("pid", "int64"),
    ("name", "string"),
    ("mem_bytes", "int64"),
)
COLUMNS: tuple[tuple[str, str], ...] = (
    *((name, _KINDS.get(name, "float64")) for name in SAMPLE_FIELDS),
    ("processes", "processes"),
)


@cache
def arrow_schema() -> pa.Schema:
    """The Parquet schema of a recording part (:data:`COLUMNS` in Arrow types), built on first
    use: only what writes or reads Parquet pays for importing pyarrow."""
    import pyarrow as pa

    types = {
        "timestamp": pa.timestamp("us", tz="UTC"),
        "float64": pa.float64(),
        "int16": pa.int16(),
        "int64": pa.int64(),
        "string": pa.string(),
        "bool": pa.bool_(),
    }
    process = pa.struct([(name, types[kind]) for name, kind in PROCESS_FIELDS])
    return pa.schema(
        [
            (name, pa.list_(process) if kind == "processes" else types[kind])
            for name, kind in COLUMNS
        ],
        metadata={MARKER: FORMAT_VERSION},
    )


def __getattr__(name: str) -> pa.Schema:
    """``SCHEMA``, the Parquet schema, for callers that import the constant: made on first use
    (PEP 562), so importing this module does not import pyarrow."""
    if name == "SCHEMA":
        return arrow_schema()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def to_table(rows: list[tuple[GpuSample, list[ProcessInfo]]]) -> pa.Table:
    import pyarrow as pa

    schema = arrow_schema()
    columns: dict[str, list] = {name: [] for name in schema.names}
    for sample, processes in rows:
        for name in SAMPLE_FIELDS:
            value = getattr(sample, name)
            columns[name].append(int(value * 1e6) if name == "ts" else value)
        columns["processes"].append(
            [{"pid": p.pid, "name": p.name, "mem_bytes": p.mem_bytes} for p in processes]
        )
    arrays = [
        pa.array(columns["ts"], pa.int64()).cast(schema.field("ts").type)
        if name == "ts"
        else pa.array(columns[name], schema.field(name).type)
        for name in schema.names
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def from_table(table: pa.Table) -> Reading:
    """Rows back to samples; the processes are those of each GPU's newest row."""
    import pyarrow as pa

    reading = Reading()
    n = table.num_rows
    names = set(table.column_names)
    # Positional, column by column: a follower turns a thousand nodes' rows into samples.
    columns = [[t / 1e6 for t in table.column("ts").cast(pa.int64()).to_pylist()]] + [
        table.column(name).to_pylist() if name in names else [None] * n
        for name in SAMPLE_FIELDS[1:]
    ]
    reading.samples = samples = [GpuSample(*row) for row in zip(*columns, strict=True)]
    newest: dict[tuple[str, int], int] = {}
    for i, sample in enumerate(samples):
        key = (sample.host, sample.gpu)
        if key not in newest or sample.ts >= samples[newest[key]].ts:
            newest[key] = i
    procs = table.column("processes").to_pylist() if "processes" in names else None
    if procs is not None:
        for i in newest.values():
            s = reading.samples[i]
            for p in procs[i] or []:
                reading.processes.append(
                    ProcessInfo(s.gpu, p["pid"], p["name"], p["mem_bytes"], s.host)
                )
    return reading


def parts(path: Path) -> list[Path]:
    """The complete parts of a recording, oldest first (a single Parquet file is its own)."""
    if path.is_dir():
        return sorted(p for p in path.iterdir() if PART.match(p.name))
    return [path]


def part_problem(part: Path) -> str | None:
    """Why a part cannot be read as a recording part (empty, not Parquet, damaged, unmarked);
    None when it can. pyarrow is imported only for a file that starts like Parquet."""
    problem = _head_problem(part)
    if problem is not None:
        return problem
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        metadata = pq.read_schema(part).metadata
    except (OSError, pa.ArrowException) as exc:
        return _damaged(exc)
    return _marker_problem(metadata)


def _head_problem(part: Path) -> str | None:
    """Empty, or not starting like Parquet: read from the first bytes alone."""
    try:
        if part.stat().st_size == 0:
            return "empty: 0 bytes"
        with part.open("rb") as fh:
            if fh.read(4) != b"PAR1":
                return "not a Parquet file"
    except OSError as exc:
        return _damaged(exc)
    return None


def _marker_problem(metadata: dict[bytes, bytes] | None) -> str | None:
    """No recording marker, or one of another format version, in a part's schema metadata."""
    if not metadata or MARKER not in metadata:
        return "no roofscope.recording marker"
    return _newer(metadata[MARKER])


OTHER_FORMAT = ("recording format", "unknown recording format")  # how _newer's reasons start


def _newer(version: bytes) -> str | None:
    """Why a part of another format version cannot be read (a newer roofscope wrote it, or
    the marker is no version at all); None for the version this one writes."""
    if version == FORMAT_VERSION:
        return None
    text = version.decode("utf-8", "replace")[:20]
    if text.isdigit() and int(text) > int(FORMAT_VERSION):
        return (
            f"recording format {text}, written by a newer roofscope; this one reads format "
            f"{FORMAT_VERSION.decode()} (pip install -U roofscope)"
        )
    return f"unknown recording format {text!r}; this roofscope reads {FORMAT_VERSION.decode()}"


def _damaged(exc: BaseException) -> str:
    return f"damaged: {str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__}"


def is_recording(path: Path) -> bool:
    """A recording folder (``part-*.parquet`` inside) or a Parquet file written by roofscope.

    The first part that can be read decides: an empty or damaged part before it (a copy that
    was cut) leaves the folder a recording, so the load names that part instead of calling
    the folder "a directory"."""
    found = parts(path)
    if not found or not found[0].is_file():
        return False
    for part in found:
        problem = part_problem(part)
        if problem is None or problem.startswith(OTHER_FORMAT):
            return True
        if problem == "no roofscope.recording marker" or not path.is_dir():
            return False
    return False


def broken_parts(path: Path) -> list[str]:
    """``part-NNNNNN.parquet (why)`` for each part of a recording folder that cannot be read."""
    return [f"{p.name} ({why})" for p in parts(path) if (why := part_problem(p)) is not None]


def require_recording(path: Path) -> None:
    """One-line errors for a path that is missing or is not a recording."""
    if not path.exists():
        raise RoofscopeError("no such file", path=str(path), hint="check the path")
    if not is_recording(path):
        raise RoofscopeError(
            "not a roofscope recording",
            path=str(path),
            hint="recordings are written by roofscope record --out FILE.parquet",
        )


def read_recorded(path: Path, warnings: list[str] | None = None) -> pa.Table:
    """All parts as one table in the order the recorder wrote them (part by part, row by row):
    the true order of the samples even where the wall clock stepped back. Raises
    RoofscopeError for what is not a recording, naming an empty or damaged part. A part
    whose bytes repeat an earlier part's (a copy put back beside it) is read once, and said
    in ``warnings``: counted twice, it would double the recording's energy and duration."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    require_recording(path)
    tables = []
    seen: dict[str, str] = {}
    found = parts(path)
    sizes = [_size(part) for part in found]
    shared = {size for size, n in Counter(sizes).items() if n > 1 and size is not None}
    for part, size in zip(found, sizes, strict=True):
        # only a part whose size another shares can repeat it: the rest are not hashed
        digest = _digest(part) if size in shared else None
        if digest is not None and digest in seen:
            if warnings is not None:
                warnings.append(
                    f"recording part {part.name} repeats {seen[digest]} byte for byte: read once"
                )
            continue
        if digest is not None:
            seen[digest] = part.name
        # one ParquetFile per part: its schema says the marker and version, then it reads
        problem = _head_problem(part)
        table = None
        if problem is None:
            try:
                parquet = pq.ParquetFile(part)
                problem = _marker_problem(parquet.schema_arrow.metadata)
                if problem is None or problem == "no roofscope.recording marker":
                    table = parquet.read()
            except (OSError, pa.ArrowException) as exc:
                problem = _damaged(exc)
        if problem is not None and problem.startswith(OTHER_FORMAT):
            reason, _, hint = problem.partition(" (pip")
            raise RoofscopeError(
                f"part {part.name}: {reason}",
                path=str(path),
                hint=f"pip{hint.rstrip(')')}" if hint else "record it again with this roofscope",
            )
        if table is None:
            raise RoofscopeError(
                f"unreadable recording part {part.name} ({problem})",
                path=str(path),
                hint="delete that part (or move it out of the folder); the others are complete",
            )
        tables.append(table)
    return (
        pa.concat_tables(tables, promote_options="default")
        if tables
        else arrow_schema().empty_table()
    )


def _size(part: Path) -> int | None:
    try:
        return part.stat().st_size
    except OSError:
        return None


def _digest(part: Path) -> str | None:
    """SHA-256 of a part's bytes, read in blocks; None where it cannot be read (the reading
    that follows names the problem)."""
    import hashlib

    digest = hashlib.sha256()
    try:
        with part.open("rb") as fh:
            while block := fh.read(1 << 20):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def read_recording(path: Path) -> pa.Table:
    """All parts as one table in time order. Raises RoofscopeError for what is not one."""
    return read_recorded(path).sort_by([("ts", "ascending"), ("gpu", "ascending")])


class RecordingWriter:
    """Appends samples to a recording folder; see the module docstring for the guarantees."""

    def __init__(self, path: Path):
        self.path = path
        if path.exists() and not path.is_dir():
            raise RoofscopeError(
                "exists and is not a recording folder",
                path=str(path),
                hint="choose another --out; recordings are folders of Parquet parts",
            )
        if path.is_dir() and any(path.iterdir()) and not parts(path):
            raise RoofscopeError(
                "is a folder that is not a recording",
                path=str(path),
                hint="choose a new or empty --out",
            )
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RoofscopeError(
                f"cannot create the recording folder ({exc.strerror})",
                path=str(path),
                hint="check the directory exists and is writable",
            ) from exc
        existing = [int(m.group(1)) for p in parts(path) if (m := PART.match(p.name))]
        self.part_number = max(existing, default=0) + 1
        self.pending: list[tuple[GpuSample, list[ProcessInfo]]] = []
        self.flushed: list[pa.Table] = []  # the current part so far, converted once each
        self.unsaved = False  # rows added as a table since the last write
        self.error: str | None = None  # why the last flush could not write (full disk…)
        umask = os.umask(0)
        os.umask(umask)
        self.mode = 0o666 & ~umask

    @property
    def current_part(self) -> Path:
        return self.path / f"part-{self.part_number:06d}.parquet"

    def add(self, reading: Reading) -> None:
        by_gpu: dict[tuple[str, int], list[ProcessInfo]] = {}
        for p in reading.processes:
            by_gpu.setdefault(("", p.gpu), []).append(p)
        for s in reading.samples:
            self.pending.append((s, by_gpu.get(("", s.gpu), [])))

    def add_table(self, table: pa.Table) -> None:
        """Rows already in the recording's schema, written by the next flush: a converter, or
        the fleet benchmark, which makes a thousand nodes' rows without a sample object each."""
        schema = arrow_schema()
        self.flushed.append(table.select(schema.names).cast(schema))
        self.unsaved = True

    def flush(self) -> None:
        """Rewrite the current part with every row it holds: atomically, never half a file."""
        if not self.pending and not self.unsaved:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self.pending:
            self.flushed.append(to_table(self.pending))
        self.pending, self.unsaved = [], False
        table = pa.concat_tables(self.flushed)
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(prefix=".part-", suffix=".tmp", dir=self.path)
            with os.fdopen(fd, "wb") as fh:
                pq.write_table(table, fh, compression="zstd")
                fh.flush()
                os.fsync(fh.fileno())  # the rename below must never expose unwritten blocks
            os.chmod(tmp, self.mode)  # mkstemp makes 0600; a follower may be another account
            os.replace(tmp, self.current_part)
            tmp, self.error = None, None
        except OSError as exc:
            # A full disk or a lost mount: the parts on disk stay whole (the old version of this
            # one included) and the rows stay in memory for the next flush to try again.
            self.error = f"cannot write {self.current_part.name} ({exc.strerror or exc})"
        finally:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)

    def rotate(self) -> None:
        """Close the current part; the next flush starts a new one (not while rows are unsaved)."""
        self.flush()
        if self.flushed and self.error is None:
            self.part_number += 1
            self.flushed = []
