"""Binary ``.nsys-rep`` (and older ``.qdrep``) reports: converted by the user's own ``nsys``,
else read through a sibling export of the same report (``run.sqlite`` beside ``run.nsys-rep``),
else refused with the exact ``nsys export`` command that makes one."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
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


def export_command(report: Path) -> str:
    """What to type where nsys is installed: the SQLite export beside the report."""
    out = report.with_suffix(".sqlite")
    return shlex.join(["nsys", "export", "--type", "sqlite", "--output", str(out), str(report)])


def sibling_export(report: Path) -> Path | None:
    """An export of the same report beside it (``run.sqlite`` for ``run.nsys-rep``), newer
    than the report: read instead where nsys is not installed."""
    try:
        made = report.stat().st_mtime
    except OSError:
        return None
    for suffix in (".sqlite", ".sqlite3"):
        sibling = report.with_suffix(suffix)
        try:
            if sibling.is_file() and sibling.stat().st_mtime >= made:
                return sibling
        except OSError:
            continue
    return None


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
            hint=f"export it where Nsight Systems is installed: {export_command(report)}, "
            "then open the .sqlite (or put it beside the report: it is read instead)",
        )
    if sys.stderr.isatty():  # a large report takes minutes: say what is going on
        print(f"roofscope: converting {report.name} with {nsys} export…", file=sys.stderr)
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
