"""Binary ``.nsys-rep`` (and older ``.qdrep``) reports: converted by the user's own ``nsys``."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from roofscope.errors import RoofscopeError

SUFFIXES = (".nsys-rep", ".qdrep")
EXPORT_HINT = (
    "export it where Nsight Systems is installed: nsys export --type sqlite REPORT.nsys-rep, "
    "then open the .sqlite"
)


def is_nsys_rep(path: Path) -> bool:
    return path.suffix in SUFFIXES


def nsys_command(report: Path, nsys: str, out: Path) -> list[str]:
    """An argument list, never a shell string (the path is the user's)."""
    return [
        nsys, "export", "--type", "sqlite", "--force-overwrite", "true",
        "--output", str(out), str(report),
    ]  # fmt: skip


@contextlib.contextmanager
def converted_sqlite(report: Path) -> Iterator[Path]:
    """Yield a temporary SQLite export of ``report`` made by ``nsys export``."""
    nsys = os.environ.get("ROOFSCOPE_NSYS") or shutil.which("nsys")
    if not nsys:
        raise RoofscopeError(
            "is a binary Nsight Systems report and nsys is not on PATH",
            path=str(report),
            hint=EXPORT_HINT,
        )
    with tempfile.TemporaryDirectory(prefix="roofscope-nsys-") as tmp:
        out = Path(tmp) / (report.stem + ".sqlite")
        try:
            proc = subprocess.run(
                nsys_command(report, nsys, out),
                capture_output=True,
                timeout=3600,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RoofscopeError(
                f"could not run {nsys} ({exc})", path=str(report), hint=EXPORT_HINT
            ) from exc
        if proc.returncode != 0 or not out.is_file():
            detail = (proc.stderr or proc.stdout).decode(errors="replace").strip().splitlines()
            raise RoofscopeError(
                f"nsys could not export the report (exit {proc.returncode}"
                f"{': ' + detail[-1] if detail else ''})",
                path=str(report),
                hint="check that this nsys is as new as the one that recorded the report",
            )
        yield out
