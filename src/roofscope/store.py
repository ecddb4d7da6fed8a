"""The DuckDB store: the canonical tables, built into a cache keyed by the input files' identity.

One database holds every report opened together. It is built once into a temporary file under
the user cache directory and moved into place with ``os.replace``, so a reader never sees half a
cache and two roofscope processes can open the same reports at once. Viewing attaches the cache
read-only to an in-memory connection; derived facts (which depend on options such as the FP16
convention and on grouping rules the user edits live) are computed there, never stored.

The tables (and ``SCHEMA_VERSION``, which keys every cache) are defined in
:mod:`roofscope.schema` and documented in docs/schema.md.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import sqlite3
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from roofscope.cache_keys import cache_dir, cache_key, input_identity
from roofscope.errors import DEBUG_ENV, RoofscopeError, debug
from roofscope.ingest.nsys.parquet import is_parquet_dir
from roofscope.ingest.sniff import check_input
from roofscope.interrupts import connect
from roofscope.processes import running
from roofscope.schema import DDL, SCHEMA_VERSION
from roofscope.sqlutil import insert_rows, quote_str
from roofscope.telemetry.recording import broken_parts, is_recording
from roofscope.version import __version__

BUILD_MEMORY_LIMIT = "2GB"
# The report's queries on an open cache (the timeline's window functions sort every kernel)
# spill beyond this rather than take what they like: 2.4 GB at ten million nsys kernels before
# (docs/decisions.md, "Queries spill past 1 GB"). Applied where measured (``memory_capped``):
# a GROUP BY per launch keeps a median per launch, which DuckDB cannot spill.
QUERY_MEMORY_LIMIT = "1GB"
# ``report --by launch``, its document and its rows: the staged rows' table, their sort and
# the document's timeline and advice spill past this, so that the whole process stays under
# 1 GB at ten million launches
ROWS_MEMORY_LIMIT = "512MB"
SPILL = "spill"  # the cache directory's folder of spill folders, 0700
SPILL_FORGOTTEN_S = 86_400.0  # another host's spill folder untouched this long is removed
_HOST = socket.gethostname() or "localhost"
BuildHook = Callable[[duckdb.DuckDBPyConnection], None]


def _connect(database: str = ":memory:", read_only: bool = False) -> duckdb.DuckDBPyConnection:
    con = connect(database, read_only=read_only)
    # DuckDB draws a progress bar on the terminal for queries over ~2 s; never on ours.
    con.execute("SET enable_progress_bar = false")
    return con


def changed_inputs(paths: list[Path], identity: list[dict[str, object]]) -> list[str]:
    """The inputs whose size or modification time differ from ``identity``, or that are gone."""
    out = []
    for path, before in zip(paths, identity, strict=True):
        try:
            now = input_identity([path])[0]
        except OSError:
            now = None
        if now != before:
            out.append(str(path))
    return out


def stored_identity(con: duckdb.DuckDBPyConnection) -> list[dict[str, object]]:
    """The identity of the inputs a store was built from (``meta``)."""
    row = con.execute("SELECT value FROM meta WHERE key = 'inputs'").fetchone()
    return json.loads(row[0]) if row else []


def changed_since_loaded(identity: list[dict[str, object]]) -> list[str]:
    """Inputs of an opened store that changed on disk after it was built (re-open to see)."""
    return changed_inputs([Path(str(i["path"])) for i in identity], identity)


@dataclass
class OpenedStore:
    """A read-only view of a built store, with the connection analysis queries run on."""

    con: duckdb.DuckDBPyConnection
    path: Path | None
    from_cache: bool
    note: str | None = None  # why no cache was written (the store lives in memory)


# Cache files attached in this process: what to remove when DuckDB finds one damaged.
_ATTACHED: set[Path] = set()


def is_damaged(exc: BaseException) -> bool:
    """DuckDB checks every block it reads against its checksum; a mismatch means the file rotted,
    and a block past the end of the file means it was cut (a copy or a disk that filled up)."""
    text = str(exc)
    return isinstance(exc, duckdb.Error) and (
        "Corrupt database file" in text
        or "checksum" in text
        or "not a valid DuckDB" in text
        or "Could not read enough bytes" in text
    )


def discard_damaged() -> list[Path]:
    """Remove the caches this process attached (after ``is_damaged``): the next open rebuilds."""
    removed = []
    for path in sorted(_ATTACHED):
        try:
            path.unlink()
            removed.append(path)
        except OSError:
            continue
    _ATTACHED.clear()
    return removed


def damaged_error() -> RoofscopeError:
    """The one line for a cache that failed its checksums mid-session, after removing it."""
    removed = discard_damaged()
    where = ", ".join(str(p) for p in removed) or str(cache_dir())
    return RoofscopeError(
        "the cache database is damaged (a block failed its checksum) and was removed",
        path=where,
        hint="run the same command again: the cache is rebuilt from the report",
    )


def _check_inputs(paths: list[Path]) -> None:
    for p in paths:
        check_input(p)  # missing, a symlink loop, a FIFO or device: one line, nothing read
        if p.is_dir() and not is_parquet_dir(p) and not is_recording(p):
            if broken := broken_parts(p):
                raise RoofscopeError(
                    "is a recording folder with no readable part ("
                    + "; ".join(broken[:3])
                    + (f"; {len(broken) - 3} more" if len(broken) > 3 else "")
                    + ")",
                    path=str(p),
                    hint="the parts were cut while copied or written; copy or record it again",
                )
            raise RoofscopeError(
                "is a directory, not an export",
                path=str(p),
                hint="a directory must be an nsys parquetdir export (*.parquet tables) or a "
                "recording of roofscope record",
            )


def build(
    con: duckdb.DuckDBPyConnection,
    paths: list[Path],
    identity: list[dict],
    on_build: BuildHook | None = None,
) -> None:
    """Create the schema in ``con``, ingest every input as one report each, then let the
    caller add derived tables (``on_build``) before the cache is sealed."""
    from roofscope.ingest import ingest_file

    con.execute(DDL)
    for report_id, path in enumerate(paths):
        try:
            info = ingest_file(con, path, report_id)
        except _reader_errors() as exc:
            # Input we did not foresee: one line for the user, the traceback only on request.
            if debug():
                raise
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise RoofscopeError(
                f"could not be loaded ({type(exc).__name__}: {first[:160]})",
                path=str(path),
                hint=f"roofscope --debug … (or {DEBUG_ENV}=1) gives details; report it with "
                "the file",
            ) from exc
        con.execute(
            "INSERT INTO reports VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                report_id,
                str(path),
                info.layout,
                info.decimal,
                info.gpu_name,
                info.cc,
                info.sm_count,
                info.launches,
                info.raw_values,
            ],
        )
        for message in info.warnings:
            con.execute("INSERT INTO warnings VALUES (?, ?)", [report_id, message])
    meta = {
        "schema_version": str(SCHEMA_VERSION),
        "roofscope_version": __version__,
        "duckdb_version": duckdb.__version__,
        "inputs": json.dumps(identity, sort_keys=True),
    }
    insert_rows(con, "meta", ("key", "value"), list(meta.items()))
    if on_build is not None:
        on_build(con)


def _reader_errors() -> tuple[type[BaseException], ...]:
    """What a reader may raise on input it did not foresee. pyarrow's errors are looked up only
    where pyarrow is loaded (an ``except`` clause is evaluated when an exception reaches it, and
    only a reader that imported pyarrow can raise one), so the store never imports it."""
    errors: tuple[type[BaseException], ...] = (
        duckdb.Error,
        OSError,
        UnicodeError,
        ValueError,
        zlib.error,
        sqlite3.Error,
    )
    arrow = getattr(sys.modules.get("pyarrow"), "ArrowException", None)
    return (*errors, arrow) if arrow is not None else errors


def _open_valid(path: Path, identity: list[dict]) -> duckdb.DuckDBPyConnection | None:
    """The cache at ``path`` attached read-only, when its ``meta`` says it was built from these
    inputs by this schema, roofscope and DuckDB; None when it was not, or cannot be read.

    One DuckDB database per open: the session's in-memory one, with the cache attached and its
    ``meta`` read there (each database DuckDB starts costs ~20-30 ms; opening the file on its
    own to check it first made two). Checking what is attached also leaves no moment in which
    the file could be replaced between the check and the attach."""
    try:
        con = _attach(path)
    except duckdb.Error:
        return None
    try:
        rows = dict(con.execute("SELECT key, value FROM meta").fetchall())
    except duckdb.Error:
        rows = {}
    if (
        rows.get("schema_version") == str(SCHEMA_VERSION)
        and rows.get("roofscope_version") == __version__
        and rows.get("duckdb_version") == duckdb.__version__
        and rows.get("inputs") == json.dumps(identity, sort_keys=True)
    ):
        return con
    con.close()
    _ATTACHED.discard(path)
    return None


def spill_dir(cache: Path, pid: int | None = None, host: str | None = None) -> Path:
    """Where this process's queries on ``cache`` spill: a folder of its own (host and process
    in its name: a cache directory on a shared home is seen by several hosts, and two
    processes never share DuckDB's temporary files) inside the cache directory's ``spill``
    folder, made 0700 (DuckDB makes its folder 0755 and its files 0644), never the working
    directory (DuckDB's default for an in-memory database is ``./.tmp``)."""
    return cache.parent / SPILL / f"{cache.name}.{host or _HOST}.{pid or os.getpid()}"


def _attach(path: Path) -> duckdb.DuckDBPyConnection:
    con = _connect()
    try:
        spill = spill_dir(path)
        _make_private_dirs(spill.parent)
        con.execute(f"SET temp_directory = {quote_str(str(spill))}")
        con.execute(f"ATTACH {quote_str(str(path))} AS cache (READ_ONLY)")
        con.execute("USE cache")
    except duckdb.Error:
        con.close()
        raise
    _ATTACHED.add(path)
    return con


def open_store(
    paths: list[str | Path], *, use_cache: bool = True, on_build: BuildHook | None = None
) -> OpenedStore:
    """Open (building if needed) the store for these inputs. Raises RoofscopeError."""
    resolved = [Path(p) for p in paths]
    if not resolved:
        raise RoofscopeError("no input files given", hint="pass one or more ncu CSV exports")
    _check_inputs(resolved)
    identity = input_identity(resolved)
    if not use_cache:
        return OpenedStore(_build_in_memory(resolved, identity, on_build), None, False)
    directory = cache_dir()
    target = directory / f"{cache_key(identity)}.duckdb"
    if target.exists() and not target.is_file():
        # Something else (a folder, a socket) holds the cache file's name: never build there.
        con = _build_in_memory(resolved, identity, on_build)
        return OpenedStore(con, None, False, _blocked_note(target))
    if target.exists() and (con := _open_valid(target, identity)) is not None:
        return OpenedStore(con, target, True)
    _remove_abandoned_builds(directory)
    try:
        _make_private_dirs(directory)
        build_dir = Path(tempfile.mkdtemp(prefix=target.name + ".", suffix=".tmp", dir=directory))
        os.chmod(build_dir, 0o700)
    except OSError as exc:
        # No writable cache directory (read-only home, full disk): work in memory.
        con = _build_in_memory(resolved, identity, on_build)
        return OpenedStore(con, None, False, _no_cache_note(directory, exc))
    # DuckDB creates its file, WAL and spill folder with the umask's modes; inside a private
    # folder nobody else can read them while they are written, and the file is made 0600
    # before it is moved into the cache directory.
    tmp = build_dir / target.name
    try:
        _build_file(tmp, resolved, identity, on_build)
        os.chmod(tmp, 0o600)
    except (RoofscopeError, duckdb.Error, OSError) as exc:
        _remove_build(build_dir)
        if build_dir.parent.is_dir() and not _cache_write_failed(exc, tmp):
            raise
        # The disk filled (or a quota ran out, or someone removed the cache directory) while
        # writing the cache: the report itself is fine, so load it in memory and say so.
        con = _build_in_memory(resolved, identity, on_build)
        return OpenedStore(con, None, False, _no_cache_note(directory, exc))
    except BaseException:
        _remove_build(build_dir)
        raise
    if changed := changed_inputs(resolved, identity):
        _remove_build(build_dir)
        raise RoofscopeError(
            "changed while it was being read (still being written?)",
            path=", ".join(changed),
            hint="open it again when the program writing it has finished",
        )
    try:
        os.replace(tmp, target)
        return OpenedStore(_attach(target), target, False)
    except (OSError, duckdb.Error) as exc:
        # The cache directory was removed (or a folder took the file's name) after the build:
        # the cache is lost, the report is not.
        note = _blocked_note(target) if target.is_dir() else _no_cache_note(directory, exc)
        con = _build_in_memory(resolved, identity, on_build)
        return OpenedStore(con, None, False, note)
    finally:
        _remove_build(build_dir)


def _make_private_dirs(directory: Path) -> None:
    """Create ``directory`` and any missing parent as 0700, whatever the umask (folders that
    exist are left as they are: a team may share a cache directory on purpose)."""
    missing = []
    here = directory
    while not here.exists() and here != here.parent:
        missing.append(here)
        here = here.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue  # another process made it first
        os.chmod(folder, 0o700)
    if not directory.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(directory))


def _blocked_note(target: Path) -> str:
    return (
        f"no cache written: {target} is a directory, not a cache file: the report was loaded "
        "in memory and will be read again next time; remove that directory"
    )


def _build_file(
    tmp: Path, paths: list[Path], identity: list[dict], on_build: BuildHook | None
) -> None:
    con = _connect(str(tmp))
    try:
        # Builds of ten million nsys kernels sort and copy whole tables; spill to disk next to
        # the cache rather than take most of a login node's memory (DuckDB's default: 80%).
        con.execute(f"SET memory_limit = '{BUILD_MEMORY_LIMIT}'")
        build(con, paths, identity, on_build)
        con.execute("CHECKPOINT")
    finally:
        con.close()


def _remove_build(build_dir: Path) -> None:
    """A build's private folder with everything in it (database, WAL, DuckDB's spill folder)."""
    shutil.rmtree(build_dir, ignore_errors=True)


_DISK_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES)
_DISK_FULL_TEXT = ("No space left", "Disk quota", "File too large", "Read-only file system")


def _cache_write_failed(exc: BaseException, tmp: Path) -> bool:
    """Whether writing the cache (not reading the report) is what failed."""
    for err in (exc, exc.__cause__, exc.__context__):
        if isinstance(err, OSError) and err.errno in _DISK_FULL:
            return True
        if err is not None and any(t in str(err) for t in _DISK_FULL_TEXT):
            return True
        if isinstance(err, duckdb.IOException) and tmp.name in str(err):
            return True
    return False


def _no_cache_note(directory: Path, exc: BaseException) -> str:
    if not directory.exists():
        return (
            f"no cache written: the cache directory {directory} was removed while the cache "
            "was being built; the report was loaded in memory (the next open makes a new cache)"
        )
    text = " ".join(str(e) for e in (exc, exc.__cause__) if e is not None)
    known = [t for t in (*_DISK_FULL_TEXT, "Permission denied", "Not a directory") if t in text]
    reason = known[0] if known else getattr(exc, "strerror", None) or text.strip()[:120]
    return (
        f"no cache written in {directory} ({reason}): the report was loaded in memory and will "
        "be read again next time; free space there or set ROOFSCOPE_CACHE_DIR to a writable "
        "directory"
    )


def _remove_abandoned_builds(directory: Path, older_than_s: float = 3600.0) -> None:
    """Temporary files of builds that were killed (Ctrl+C, a lost SSH link) an hour ago or
    more; a build in progress elsewhere is younger than that."""
    now = time.time()
    try:
        leftovers = list(directory.glob("*.tmp*"))
    except OSError:
        return
    _remove_abandoned_spills(directory / SPILL, now)
    for leftover in leftovers:
        try:
            if leftover.is_dir():
                # a build folder: its database is written to while the build runs
                newest = max(
                    [leftover.stat().st_mtime] + [f.stat().st_mtime for f in leftover.iterdir()]
                )
                if now - newest > older_than_s:
                    shutil.rmtree(leftover)
            elif now - leftover.stat().st_mtime > older_than_s:
                leftover.unlink()
        except OSError:
            continue


def _remove_abandoned_spills(folder: Path, now: float) -> None:
    """Spill folders of processes that ended without DuckDB removing them (killed): this
    host's when their process is gone, another host's when untouched for a day (its process
    cannot be asked from here)."""
    try:
        spills = list(folder.iterdir())
    except OSError:
        return
    for spill in spills:
        try:
            host, _, pid = spill.name.split(".duckdb.", 1)[1].rpartition(".")
            if host == _HOST:
                if running(int(pid)):
                    continue
            elif now - spill.stat().st_mtime < SPILL_FORGOTTEN_S:
                continue
            shutil.rmtree(spill)
        except (OSError, IndexError, ValueError):
            continue


@contextmanager
def memory_capped(
    con: duckdb.DuckDBPyConnection, limit: str = QUERY_MEMORY_LIMIT
) -> Iterator[None]:
    """Queries in the block held to ``limit``, spilling past it (the report's and the
    advice's, measured at ten million kernels: 2.7 GB → 1.0 GB); DuckDB's default after."""
    con.execute(f"SET memory_limit = '{limit}'")
    try:
        yield
    finally:
        con.execute("RESET memory_limit")


def _build_in_memory(
    paths: list[Path], identity: list[dict], on_build: BuildHook | None
) -> duckdb.DuckDBPyConnection:
    con = _connect()
    build(con, paths, identity, on_build)
    return con


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # removed since it was listed
        return 0.0


def recent_inputs(limit: int = 10) -> list[str]:
    """Files opened before, newest first, read from the caches' ``meta`` (start screen)."""
    directory = cache_dir()
    if not directory.is_dir():
        return []
    seen: list[str] = []
    caches = sorted(directory.glob("*.duckdb"), key=_mtime, reverse=True)
    for path in caches:
        try:
            con = _connect(str(path), read_only=True)
            try:
                rows = con.execute("SELECT value FROM meta WHERE key = 'inputs'").fetchall()
            finally:
                con.close()
        except duckdb.Error:
            continue
        for entry in json.loads(rows[0][0]) if rows else []:
            name = entry.get("path")
            if name and name not in seen and Path(name).exists():
                seen.append(name)
        if len(seen) >= limit:
            break
    return seen[:limit]
