"""The runs directory: one folder per profiling run, with ``run.json`` saying what it was.

A folder holds the ncu log, the ``.ncu-rep``, the exported CSV, ``analytic.json`` (the model's
FLOPs and memory estimate) and ``run.json`` (settings, command, status, timings, phases), so a
run can be listed, reopened and compared later — by the Runs pane, ``roofscope runs`` or a user
with ``ls``.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roofscope.atomic import write_json
from roofscope.errors import RoofscopeError
from roofscope.processes import running
from roofscope.profiling.command import RunSpec

RUNNING, DONE, FAILED, CANCELLED = "running", "done", "failed", "cancelled"
ABANDONED = "abandoned"


def runs_root() -> Path:
    """``$ROOFSCOPE_RUNS_DIR``, else the platform user data folder (``~/.local/share``)."""
    env = os.environ.get("ROOFSCOPE_RUNS_DIR")
    if env:
        return Path(env)
    from platformdirs import user_data_dir

    return Path(user_data_dir("roofscope")) / "runs"


@dataclass
class Run:
    folder: Path
    spec: RunSpec
    status: str = RUNNING
    argv: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    finished: float | None = None
    kernels: int = 0
    expected_kernels: int | None = None
    exit_code: int | None = None
    error: str | None = None
    report: str | None = None
    details: str | None = None  # ncu's details page beside the report (presets with rules)
    phases: list[list] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def duration(self) -> float | None:
        return None if self.finished is None else self.finished - self.started

    @property
    def report_path(self) -> Path | None:
        return self.folder / self.report if self.report else None

    @property
    def log_path(self) -> Path:
        return self.folder / "ncu.log"

    def analytic(self) -> dict[str, Any] | None:
        path = self.folder / "analytic.json"
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "spec": self.spec.to_dict(),
            "status": self.status,
            "argv": self.argv,
            "started": self.started,
            "finished": self.finished,
            "duration_s": self.duration,
            "kernels": self.kernels,
            "expected_kernels": self.expected_kernels,
            "exit_code": self.exit_code,
            "error": self.error,
            "report": self.report,
            "details": self.details,
            "phases": self.phases,
            "facts": self.facts,
            "timings": self.timings,
        }

    def save(self) -> None:
        """Atomically, so the Runs pane of another roofscope never reads half a file."""
        write_json(self.folder / "run.json", self.to_dict())

    @classmethod
    def load(cls, folder: Path) -> Run:
        try:
            data = json.loads((folder / "run.json").read_text())
            spec = RunSpec.from_dict(data["spec"])
        except (OSError, ValueError, KeyError, TypeError, RoofscopeError) as exc:
            raise RoofscopeError(f"not a roofscope run ({exc})", path=str(folder)) from None
        _check_types(data, folder)
        run = cls(folder, spec)
        for key in (
            "status",
            "argv",
            "started",
            "finished",
            "kernels",
            "expected_kernels",
            "exit_code",
            "error",
            "report",
            "details",
            "phases",
            "facts",
            "timings",
        ):
            if key in data and data[key] is not None:
                setattr(run, key, data[key])
        return run


_NUMBERS = ("started", "finished", "kernels", "expected_kernels", "exit_code")


def _check_types(data: dict[str, Any], folder: Path) -> None:
    """A hand-edited or foreign run.json is skipped, never a crash in a listing."""
    bad = [k for k in _NUMBERS if data.get(k) is not None
           and (isinstance(data[k], bool) or not isinstance(data[k], int | float))]  # fmt: skip
    phases = data.get("phases") or []
    if not isinstance(phases, list) or not all(
        isinstance(p, list) and len(p) == 3 and isinstance(p[0], str)
        and all(isinstance(i, int) and not isinstance(i, bool) for i in p[1:])
        for p in phases
    ):  # fmt: skip
        bad.append("phases")
    for key in ("facts", "timings"):
        if not isinstance(data.get(key) or {}, dict):
            bad.append(key)
    if bad:
        raise RoofscopeError(f"run.json has unreadable {', '.join(bad)}", path=str(folder))


def _alive(pid: str | None) -> bool:
    """Whether the roofscope that started a run still exists."""
    try:
        return running(int(pid or 0))
    except ValueError:
        return False


def new_run(spec: RunSpec, root: Path | None = None) -> Run:
    root = root or runs_root()
    base = f"{time.strftime('%Y%m%d-%H%M%S')}-{spec.slug}-{spec.preset}"
    folder, n = root / base, 1
    try:
        root.mkdir(parents=True, exist_ok=True)
        while True:
            try:
                folder.mkdir()
                break
            except FileExistsError:
                n += 1
                folder = root / f"{base}-{n}"
        run = Run(folder, spec)
        run.save()
    except OSError as exc:
        raise RoofscopeError(
            f"cannot write a run folder ({exc.strerror})",
            path=str(root),
            hint="set ROOFSCOPE_RUNS_DIR or --runs-dir to a writable folder",
        ) from None
    return run


def list_runs(root: Path | None = None) -> list[Run]:
    """Past and current runs, newest first; folders without a readable run.json are skipped."""
    root = root or runs_root()
    if not root.is_dir():
        return []
    runs = []
    for folder in root.iterdir():
        if (folder / "run.json").is_file():
            try:
                run = Run.load(folder)
            except RoofscopeError:
                continue
            if run.status == RUNNING and not _alive(run.facts.get("pid")):
                run.status = ABANDONED  # roofscope was killed mid-run
            runs.append(run)
    return sorted(runs, key=lambda r: r.started, reverse=True)
