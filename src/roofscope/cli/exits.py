"""How a command ends when its surroundings end it: Ctrl+C, or a standard output that is
closed, full or whose reader went away. Each is one line (or, for a reader that stopped
reading, silence) and a conventional exit code, never a traceback (docs/decisions.md, "Exit
codes when the surroundings fail").

:class:`Surroundings` is entered once by ``main``: it puts a thin guard around
``sys.stdout``, so that a failed write to *standard output* (and only there: a full disk under
an export file is another error) is told apart from the rest, and it turns SIGINT into a
remembered :class:`KeyboardInterrupt`, so that an interrupt DuckDB turned into its own error
(``RuntimeError: Query interrupted``) or a reader's fallback swallowed still ends the command
with exit code 130.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import signal
import sys
import threading
from types import FrameType, TracebackType
from typing import Any, TextIO

from roofscope.interrupts import Watch

INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a command Ctrl+C stopped
PIPE_CLOSED = 128 + signal.SIGPIPE  # 141, what a shell reports for `cat big | head`
USER_FIXES = 2  # the CLI's code for a problem with input or environment


class OutputFailed(Exception):
    """A write to standard output failed (EPIPE, ENOSPC, EBADF, EIO…)."""

    def __init__(self, cause: OSError):
        super().__init__(cause.strerror or str(cause))
        self.errno = cause.errno
        self.strerror = cause.strerror or str(cause)


class _GuardedStdout:
    """``sys.stdout`` with its write errors raised as :class:`OutputFailed`; everything else
    (``buffer``, ``isatty``, ``encoding``…) is the stream's own."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise OutputFailed(exc) from exc

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise OutputFailed(exc) from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _ClosedStdout(io.TextIOBase):
    """What ``sys.stdout`` is when the shell closed it (``>&-``): Python starts with
    ``sys.stdout = None`` and ``print`` then writes nowhere, silently. Here a write fails as
    writing to a closed descriptor does, so the command says so; a command that writes
    nothing to standard output (``record --out``) still runs."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))


class Surroundings:
    """The guard around one ``main`` call; ``interrupted`` says whether Ctrl+C came.

    Its SIGINT handler remembers the interrupt before raising ``KeyboardInterrupt``, so one
    DuckDB or a reader's fallback turned into another error still ends the command as one;
    and :class:`roofscope.interrupts.Watch` interrupts every open DuckDB connection as the
    signal arrives, since the handler itself runs only once DuckDB gives the main thread back
    (under load DuckDB missed half the Ctrl+Cs without it, docs/decisions.md)."""

    def __init__(self) -> None:
        self._seen = False
        self._stdout: Any = None
        self._handler: Any = None
        self._watch = Watch()

    @property
    def interrupted(self) -> bool:
        return self._seen or self._watch.seen

    def __enter__(self) -> Surroundings:
        self._stdout = sys.stdout
        sys.stdout = _GuardedStdout(sys.stdout or _ClosedStdout())  # type: ignore[assignment]
        if threading.current_thread() is threading.main_thread():
            self._handler = signal.signal(signal.SIGINT, self._on_sigint)
            self._watch.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(sys.stdout, _GuardedStdout):
            sys.stdout = self._stdout
        self._watch.__exit__(kind, exc, tb)
        if self._handler is not None:
            signal.signal(signal.SIGINT, self._handler)

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        self._seen = True
        raise KeyboardInterrupt

    def flush(self) -> None:
        """Write out what standard output still holds: a full disk shows here, not at the
        interpreter's exit (where it would be a warning and exit code 120)."""
        sys.stdout.flush()

    def interrupt_exit(self) -> int:
        """The line and code of a command Ctrl+C ended."""
        _say("roofscope: interrupted")
        return INTERRUPTED

    def output_exit(self, exc: OutputFailed) -> int:
        """The line and code of a failed write to standard output: a reader that went away
        (``| head``) is not an error of ours, so silence and 141 as ``cat`` gets; a closed
        or full output is one line and exit code 2."""
        _discard(self._stdout)
        if exc.errno == errno.EPIPE:
            return PIPE_CLOSED
        if exc.errno == errno.EBADF:
            _say(
                "roofscope: standard output is closed, nothing was written (give it a file: "
                "roofscope … > out.txt, or > /dev/null to discard it)"
            )
        else:
            _say(
                f"roofscope: cannot write to standard output ({exc.strerror}; free some space "
                "or write elsewhere)"
            )
        return USER_FIXES


def _discard(stream: TextIO | None) -> None:
    """Point the failed stream's file descriptor at /dev/null, so that what Python still
    holds for it is dropped at exit instead of failing again there ("Exception ignored …
    BrokenPipeError", exit code 120). A stream with no descriptor (a test's) is left alone."""
    try:
        fd = stream.fileno() if stream is not None else -1
    except (OSError, ValueError):
        return
    if fd < 0:
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    except OSError:
        pass


def _say(line: str) -> None:
    """One line on standard error, if there is one to write to."""
    if sys.stderr is None:
        return
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)
