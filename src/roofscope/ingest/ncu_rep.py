"""Binary ``.ncu-rep`` reports: converted to the raw CSV page by the user's own ``ncu``."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from roofscope.errors import RoofscopeError

NCU_REP_MAGIC = b"NVIDIA Nsight Compute"


def is_ncu_rep(path: Path) -> bool:
    if path.suffix == ".ncu-rep":
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
