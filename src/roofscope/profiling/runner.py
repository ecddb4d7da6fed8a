"""Run a profile: count the step's kernels, run ncu around it, export the CSV.

Blocking by design (the CLI calls it directly, the TUI from a thread worker); ``cancel`` may be
called from any thread. Each child runs in its own process group so cancelling stops ncu and
the Python step it launched together. The merged output is kept in the run's ``ncu.log``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from roofscope.errors import RoofscopeError
from roofscope.profiling import command, runs
from roofscope.profiling.command import RunSpec
from roofscope.profiling.presets import preset
from roofscope.profiling.progress import LineSplitter, Progress

PERMISSION_FIX = (
    "GPU performance counters are restricted to admin users (ERR_NVGPUCTRPERM): ask an admin "
    "to load the driver with NVreg_RestrictProfilingToAdminUsers=0, or run with sudo; see "
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM"
)

Listener = Callable[[Progress], None]


class Runner:
    def __init__(
        self,
        spec: RunSpec,
        *,
        root: Path | None = None,
        listener: Listener | None = None,
        python: str | None = None,
        count: bool = True,
        tick: float = 0.5,
    ):
        tool = preset(spec.preset).tool
        self.spec = spec
        self.tool = command.require_tool(tool)
        self.python = python
        self.count = count
        self.listener = listener or (lambda p: None)
        self.tick = tick
        self.run = runs.new_run(spec, root)
        self.progress = Progress()
        self._proc: subprocess.Popen | None = None
        self._cancelled = threading.Event()
        self._lock = threading.Lock()

    # -- control ---------------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop ncu and the step (SIGINT, then SIGTERM, then SIGKILL after 5 s each)."""
        with self._lock:
            self._cancelled.set()
            proc = self._proc
        if proc is not None:
            _stop_group(proc)

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    # -- the run ---------------------------------------------------------------------------
    def start(self) -> runs.Run:
        """Count, profile, export; the run's status says how it ended (never raises for a
        failed child, only for problems before anything started)."""
        run = self.run
        run.argv = command.profile_argv(self.spec, self.tool, run.folder, self.python)
        run.facts["pid"] = str(os.getpid())
        run.save()
        try:
            if self.count and not self.cancelled:
                self._count()
            if not self.cancelled:
                self._profile()
            if run.status == runs.RUNNING and not self.cancelled:
                self._export()
        except OSError as exc:
            self._fail(f"could not start {exc.filename or 'the profiler'}: {exc.strerror}")
        if self.cancelled:
            run.status = runs.CANCELLED
        elif run.status == runs.RUNNING:
            run.status = runs.DONE
        run.finished = time.time()
        run.save()
        self.listener(self.progress)
        return run

    def _popen(
        self, argv: list[str], stdout: Any, stderr: Any = subprocess.STDOUT
    ) -> subprocess.Popen | None:
        """Start a child in its own process group, unless a cancel came first; the step's
        settings (``command.step_env``) are added to this process's environment."""
        extra = command.step_env(self.spec)
        with self._lock:
            if self._cancelled.is_set():
                return None
            self._proc = subprocess.Popen(
                argv,
                stdout=stdout,
                stderr=stderr,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env={**os.environ, **extra} if extra else None,
            )
            return self._proc

    def _spawn(self, argv: list[str], log: Path | None, sink: Callable[[str, bool], None]) -> int:
        proc = self._popen(argv, subprocess.PIPE)
        if proc is None:
            return -signal.SIGINT
        assert proc.stdout is not None
        splitter = LineSplitter()
        last = 0.0
        fd = proc.stdout.fileno()
        read_all = False
        try:
            with open(log, "ab") if log else open(os.devnull, "wb") as out:
                while chunk := os.read(fd, 65536):
                    out.write(chunk)
                    out.flush()
                    for line in splitter.feed(chunk):
                        sink(line, True)
                    sink(splitter.buffer, False)
                    if time.monotonic() - last >= self.tick:
                        last = time.monotonic()
                        self.listener(self.progress)
                if splitter.buffer:
                    sink(splitter.buffer, True)
            read_all = True
        finally:
            if not read_all or self.cancelled:
                _stop_group(proc)  # an error while reading, or a cancel: leave nothing running
            proc.stdout.close()
            code = proc.wait()
            with self._lock:
                self._proc = None
        return code

    def _count(self) -> None:
        started = time.monotonic()
        counter = Progress()
        code = self._spawn(
            command.count_argv(self.spec, self.python),
            self.run.folder / "count.log",
            counter.feed,
        )
        self.run.timings["count_s"] = round(time.monotonic() - started, 3)
        if code == 0 and counter.expected is not None:
            expected = command.expected_kernels(self.spec, counter.expected)
            self.progress.expected = self.run.expected_kernels = expected
        self.run.facts.update(counter.facts)
        self.run.save()

    def _profile(self) -> None:
        started = time.monotonic()
        self.progress.started = started
        code = self._spawn(self.run.argv, self.run.log_path, self.progress.feed)
        p = self.progress
        self.run.timings["profile_s"] = round(time.monotonic() - started, 3)
        self.run.exit_code = code
        self.run.kernels = p.done
        self.run.phases = [list(r) for r in p.phase_ranges()]
        self.run.facts.update(p.facts)
        if self.cancelled:
            return
        if p.permission_denied():
            self._fail(PERMISSION_FIX)
        elif code != 0 or p.errors:
            first = p.errors[0] if p.errors else f"{Path(self.tool).name} exited with {code}"
            self._fail(f"{first} (log: {self.run.log_path})")
        elif p.done == 0 and preset(self.spec.preset).tool == "ncu":
            self._fail(
                f"ncu profiled no kernels (check --kernel-regex/--launch-skip; log: "
                f"{self.run.log_path})"
            )

    def _export(self) -> None:
        argv, target = command.export_argv(self.spec, self.tool, self.run.folder)
        started = time.monotonic()
        if preset(self.spec.preset).tool == "nsys":
            code = self._spawn(argv, self.run.folder / "export.log", lambda line, done: None)
        else:
            code = self._write(argv, target, "export.log")
        self.run.timings["export_s"] = round(time.monotonic() - started, 3)
        if code != 0 or not target.exists():
            self._fail(
                f"export failed with exit code {code} (see {self.run.folder / 'export.log'})"
            )
            return
        self.run.report = target.name
        if preset(self.spec.preset).details:
            argv, target = command.details_argv(self.spec, self.tool, self.run.folder)
            if self._write(argv, target, "details.log") == 0 and target.exists():
                self.run.details = target.name
            else:  # the raw report is whole: the run stands without ncu's rules
                self.run.facts["details"] = f"not exported (see {self.run.folder / 'details.log'})"

    def _write(self, argv: list[str], target: Path, log: str) -> int:
        """Run an ``ncu --import`` export into ``target`` atomically; its exit code."""
        tmp = target.with_name(target.name + ".tmp")
        with open(tmp, "wb") as out, open(self.run.folder / log, "wb") as err:
            code = subprocess.run(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL).returncode
        if code == 0 and tmp.stat().st_size > 0:
            os.replace(tmp, target)
        else:
            tmp.unlink(missing_ok=True)
        return code

    def _fail(self, message: str) -> None:
        self.run.status = runs.FAILED
        self.run.error = message


def _stop_group(proc: subprocess.Popen) -> None:
    """SIGINT, SIGTERM, SIGKILL to the whole group (ncu, the step and anything they started),
    5 s apart; the group may outlive its leader, so it is signalled even after ncu exited."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=5)
            os.killpg(proc.pid, 0)  # leader gone: is anything of the group left?
        except subprocess.TimeoutExpired:
            continue
        except (ProcessLookupError, PermissionError):
            return


def raise_if_failed(run: runs.Run) -> None:
    """The CLI's view of a finished run: failures become the usual one-line error."""
    if run.status == runs.FAILED:
        raise RoofscopeError(run.error or "the run failed", path=str(run.folder))
    if run.status == runs.CANCELLED:
        raise RoofscopeError(
            "cancelled", path=str(run.folder), hint="the log is kept in the run folder"
        )
