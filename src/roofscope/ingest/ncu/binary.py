"""Binary ``.ncu-rep`` reports, read where no ncu is installed.

In order: NVIDIA's report reader, the ``ncu_report`` module (the ``roofscope[ncu-rep]`` extra,
PyPI's ``ncu-report``, or the copy an Nsight Compute install keeps in ``extras/python``), run
in a worker process (:mod:`roofscope.ingest.ncu.report_worker`) that writes the report's raw
page, rule results and hottest instructions as CSV; else the user's own ``ncu --import``; else
one line naming both ways. The raw page then goes through the CSV reader, so a ``.ncu-rep``
gives the numbers its CSV export gives.
"""

from __future__ import annotations

import contextlib
import glob
import gzip
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from roofscope.errors import RoofscopeError
from roofscope.packages import OPTIONAL

if TYPE_CHECKING:
    import duckdb

    from roofscope.ingest.report_info import ReportInfo

NCU_REP_MAGIC = b"NVIDIA Nsight Compute"
MODULE = "ncu_report"
READER_ENV = "ROOFSCOPE_NCU_REPORT"  # "off": skip NVIDIA's reader (tests, or to compare)
# where Nsight Compute installs keep the module, newest version first when several match
INSTALL_GLOBS = (
    "/opt/nvidia/nsight-compute/*/extras/python",
    "/opt/nvidia/nsight-compute*/extras/python",
    "/usr/local/cuda*/nsight-compute*/extras/python",
    "/usr/local/NVIDIA-Nsight-Compute*/extras/python",
)
WORKER_TIMEOUT_S = 3600
REPORT_MAGIC = b"NVR\x00"  # how every .ncu-rep of ncu 2023-2025 seen here begins
EMPTY_REPORT_MAX = 64 << 10  # bytes: a report of no launch is its header alone
GZIP_RATIO_MAX = 200  # a gzipped report decompressed to more than this × its size is refused


def is_ncu_rep(path: Path) -> bool:
    if path.name.endswith((".ncu-rep", ".ncu-rep.gz")):
        return True
    try:
        with open(path, "rb") as fh:
            return NCU_REP_MAGIC in fh.read(4096)
    except OSError:
        return False


def ncu_command(report: Path, ncu: str) -> list[str]:
    """The export command; base units so values need no per-file scaling guesswork."""
    return [ncu, "--import", str(report), "--csv", "--page", "raw", "--print-units", "base"]


@contextlib.contextmanager
def converted_csv(report: Path) -> Iterator[Path]:
    """Yield a temporary raw-page CSV made from ``report`` by ``ncu --import``."""
    ncu = os.environ.get("ROOFSCOPE_NCU") or shutil.which("ncu")
    if not ncu:
        raise RoofscopeError(
            "is a binary Nsight Compute report and ncu is not on PATH",
            path=str(report),
            hint="export it where ncu is installed: "
            "ncu --import REPORT.ncu-rep --csv --page raw > REPORT.csv",
        )
    fd, name = tempfile.mkstemp(prefix="roofscope-ncu-", suffix=".csv")
    out = Path(name)
    try:
        try:
            with os.fdopen(fd, "wb") as fh:
                proc = subprocess.run(
                    ncu_command(report, ncu),
                    stdout=fh,
                    stderr=subprocess.PIPE,
                    timeout=3600,
                    check=False,
                )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RoofscopeError(
                f"could not run {ncu} ({exc})",
                path=str(report),
                hint="check ncu (or $ROOFSCOPE_NCU), or export the CSV where ncu works",
            ) from exc
        if proc.returncode != 0:
            detail = proc.stderr.decode(errors="replace").strip().splitlines()
            raise RoofscopeError(
                f"ncu could not import the report (exit {proc.returncode}"
                f"{': ' + detail[-1] if detail else ''})",
                path=str(report),
                hint="check that this ncu is as new as the one that recorded the report",
            )
        yield out
    finally:
        out.unlink(missing_ok=True)


def find_reader() -> str | None:
    """Where ``ncu_report`` comes from: ``""`` when this Python imports it (the extra),
    else the ``extras/python`` folder of an Nsight Compute install (beside ``ncu`` on PATH,
    or a usual install folder); None when there is none, or ``ROOFSCOPE_NCU_REPORT=off``."""
    if os.environ.get(READER_ENV, "").lower() == "off":
        return None
    if importlib.util.find_spec(MODULE) is not None:
        return ""
    folders: list[str] = []
    for ncu in (os.environ.get("ROOFSCOPE_NCU"), shutil.which("ncu")):
        if ncu:
            real = Path(ncu).resolve().parent
            folders.append(str(real / "extras" / "python"))
            folders += sorted(glob.glob(str(real.parent / "nsight-compute*/extras/python")))[::-1]
    for pattern in INSTALL_GLOBS:
        folders += sorted(glob.glob(pattern))[::-1]
    return next((f for f in folders if (Path(f) / f"{MODULE}.py").is_file()), None)


def ingest_ncu_rep(con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
    """Read a binary report (gzipped too) with NVIDIA's reader, else with ``ncu --import``."""
    with _plain(path) as plain:
        info = _ingest_plain(con, plain, report_id, path)
    info.path = str(path)
    return info


@contextlib.contextmanager
def _plain(path: Path) -> Iterator[Path]:
    """The report itself, or a gzipped one (``run.ncu-rep.gz``, as pipelines keep them; a
    report is mostly cubins and shrinks 10-25×) decompressed into a temporary file that goes
    when the read is done; at most 200× the compressed size, so a small hostile file cannot
    fill the disk."""
    try:
        with open(path, "rb") as fh:
            compressed = fh.read(2) == b"\x1f\x8b"
        size = path.stat().st_size
    except OSError as exc:
        raise RoofscopeError(f"cannot be read ({exc.strerror})", path=str(path)) from exc
    if not compressed:
        yield path
        return
    limit = max(1 << 30, GZIP_RATIO_MAX * size)
    fd, name = tempfile.mkstemp(prefix="roofscope-ncu-rep-", suffix=".ncu-rep")
    try:
        with os.fdopen(fd, "wb") as out:
            _gunzip(path, out, limit)
        yield Path(name)
    finally:
        os.unlink(name)


def _gunzip(path: Path, out: BinaryIO, limit: int) -> None:
    copied = 0
    try:
        with gzip.open(path, "rb") as src:
            while chunk := src.read(1 << 20):
                copied += len(chunk)
                if copied > limit:
                    raise RoofscopeError(
                        f"decompresses to more than {limit:,} bytes ({GZIP_RATIO_MAX}× its size): "
                        "no report shrinks that much",
                        path=str(path),
                        hint="decompress it yourself if it is a report",
                    )
                out.write(chunk)
    except (OSError, EOFError, zlib.error) as exc:
        raise RoofscopeError(
            f"is not a readable gzip file ({exc})", path=str(path), hint="copy it again"
        ) from exc


def _ingest_plain(
    con: duckdb.DuckDBPyConnection, path: Path, report_id: int, named: Path
) -> ReportInfo:
    """``path``, the report as it is on disk (``named`` is what the user gave)."""
    from roofscope.ingest.ncu.pages import ingest_ncu_csv

    reader = find_reader()
    ncu = os.environ.get("ROOFSCOPE_NCU") or shutil.which("ncu")
    if reader is None and not ncu:
        extra = OPTIONAL[MODULE]
        raise RoofscopeError(
            "is a binary Nsight Compute report, and neither NVIDIA's report reader nor ncu "
            "is installed",
            path=str(named),
            hint=f"{extra.install} (NVIDIA's reader, from PyPI), or put ncu on PATH, or "
            "export it where ncu is: ncu --import REPORT.ncu-rep --csv --page raw > REPORT.csv",
        )
    failed = None
    if reader is not None:
        try:
            return _read_with_worker(con, path, report_id, reader, named)
        except RoofscopeError as exc:
            if not ncu:
                raise
            failed = exc.message
    with converted_csv(path) as csv_path:
        info = ingest_ncu_csv(con, csv_path, report_id, keep_raw=True)
    info.path = str(path)
    if failed:
        info.warnings.append(f"NVIDIA's report reader failed ({failed}); read with {ncu} --import")
    return info


def _read_with_worker(
    con: duckdb.DuckDBPyConnection, path: Path, report_id: int, reader: str, named: Path
) -> ReportInfo:
    from roofscope.ingest.ncu.pages import ingest_ncu_csv, load_rule_rows
    from roofscope.ingest.report_info import ReportInfo
    from roofscope.schema import create_empty_values

    with tempfile.TemporaryDirectory(prefix="roofscope-ncu-rep-") as tmp:
        out = Path(tmp)
        meta = _run_worker(path, out, reader, named)
        bare = meta.get("without_metrics") or []
        if bare:
            raise RoofscopeError(
                f"is cut or damaged: NVIDIA's reader found {meta['launches']} launches, "
                f"launch {bare[0]} without any metric",
                path=str(named),
                hint="copy the report again (a download or a disk quota may have cut it)",
            )
        if not meta.get("launches"):
            _check_empty(path, named)
            con.execute(create_empty_values(report_id))
            return ReportInfo(
                report_id,
                str(named),
                "ncu-raw",
                warnings=[
                    "the report holds no kernel launches (ncu profiled none: check its "
                    "--kernel-name and --launch-skip filters)",
                    *meta.get("warnings", []),
                ],
            )
        info = ingest_ncu_csv(con, out / "raw.csv", report_id, keep_raw=True)
        load_rule_rows(con, out / "rules.csv", info)
        load_hot_instructions(con, out / "sources.csv", report_id)
    info.path = str(path)
    info.warnings.extend(meta.get("warnings", []))
    return info


def _check_empty(path: Path, named: Path) -> None:
    """NVIDIA's reader returns no range, without an error, for a file that is cut or is not a
    report at all: an empty report is what ncu writes when it profiled nothing, a few kB that
    start with ncu's magic bytes. Anything else is refused rather than shown as 0 launches."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(REPORT_MAGIC))
        size = path.stat().st_size
    except OSError as exc:
        raise RoofscopeError(f"cannot be read ({exc.strerror})", path=str(named)) from exc
    if head != REPORT_MAGIC:
        raise RoofscopeError(
            "is not an Nsight Compute report NVIDIA's reader can read (it does not start "
            "with ncu's NVR header)",
            path=str(named),
            hint="a damaged copy? take the report again, or export it as CSV where ncu is",
        )
    if size > EMPTY_REPORT_MAX:
        raise RoofscopeError(
            f"NVIDIA's reader found no launch in its {size:,} bytes: the file is cut or "
            "damaged (an empty report is a few kB)",
            path=str(named),
            hint="copy the report again (a download or a disk quota may have cut it)",
        )


def _run_worker(path: Path, out: Path, reader: str, named: Path) -> dict:
    """Run :mod:`roofscope.ingest.ncu.report_worker` on ``path``: its own process, so that a
    crash of the native reader or a report of gigabytes cannot take this one down."""
    env = dict(os.environ)
    here = str(Path(__file__).resolve().parents[3])  # the folder that holds roofscope
    env["PYTHONPATH"] = os.pathsep.join(p for p in (reader, here, env.get("PYTHONPATH")) if p)
    argv = [sys.executable, "-m", "roofscope.ingest.ncu.report_worker", str(path), str(out)]
    try:
        proc = subprocess.run(
            argv, env=env, capture_output=True, timeout=WORKER_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RoofscopeError(
            f"NVIDIA's report reader did not finish ({exc})", path=str(named)
        ) from exc
    if proc.returncode != 0:
        lines = proc.stderr.decode(errors="replace").strip().splitlines()
        why = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
        raise RoofscopeError(
            f"NVIDIA's report reader could not read it ({why}{': ' + lines[-1] if lines else ''})",
            path=str(named),
            hint="is the ncu-report package as new as the Nsight Compute that wrote the "
            "report? pip install -U ncu-report",
        )
    try:
        return json.loads((out / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RoofscopeError("NVIDIA's report reader wrote no summary", path=str(named)) from exc


def load_hot_instructions(con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> None:
    """The worker's ``sources.csv`` (each launch's hottest SASS instructions) into ``ncu_hot``."""
    from roofscope.ingest.sniff import duckdb_name, open_input
    from roofscope.schema import NCU_HOT
    from roofscope.sqlutil import quote_str

    fd = open_input(path)
    try:
        con.execute(
            f"INSERT INTO {NCU_HOT.name} SELECT {int(report_id)}, CAST(ID AS BIGINT), address, "
            f"instruction, CAST(samples AS BIGINT), CAST(share AS DOUBLE) FROM read_csv("
            f"{quote_str(duckdb_name(fd))}, header = true, all_varchar = true)"
        )
    finally:
        os.close(fd)
