"""Ctrl+C while DuckDB works: every connection roofscope opens is interrupted at once.

DuckDB stops a running query when Python's SIGINT handler runs, but that handler runs only
when the main thread executes Python, and the main thread is inside DuckDB: measured on the
2-core machine under load, a Ctrl+C during a long query was missed 6–7 times in 12 whatever
the handler, and a second or thirtieth one too (the process asleep in a futex). So the CLI
asks the interpreter to write each signal's number to a pipe as it arrives
(``signal.set_wakeup_fd``, done by the C-level handler in any state), and a thread blocked on
that pipe calls ``interrupt()`` on every open connection — the query stops, and the
``KeyboardInterrupt`` pending in the main thread goes on as usual. The thread also remembers
that a SIGINT came, so an interrupt DuckDB or a reader's fallback turned into another error
still ends the command as one (``cli/exits.py``).
"""

from __future__ import annotations

import os
import signal
import threading
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

_OPEN: weakref.WeakSet[Any] = weakref.WeakSet()
_LOCK = threading.Lock()


def connect(database: str = ":memory:", **options: Any) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect``, the connection registered for Ctrl+C."""
    import duckdb

    con = duckdb.connect(database, **options)
    with _LOCK:
        _OPEN.add(con)
    return con


def _interrupt_all() -> None:
    with _LOCK:
        live = list(_OPEN)
    for con in live:
        try:
            con.interrupt()
        except Exception:  # closed meanwhile: nothing to stop
            continue


class Watch:
    """While entered (main thread only): SIGINT interrupts every open connection, and
    ``seen`` says whether one came. Python's own SIGINT handler stays in place."""

    def __init__(self) -> None:
        self.seen = False
        self._pipe: tuple[int, int] | None = None
        self._old_fd = -1
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Watch:
        if threading.current_thread() is not threading.main_thread():
            return self
        read, write = os.pipe()
        os.set_blocking(write, False)
        try:
            self._old_fd = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        except ValueError:  # not the main interpreter's main thread
            os.close(read)
            os.close(write)
            return self
        self._pipe = (read, write)
        self._thread = threading.Thread(target=self._wait, args=(read,), daemon=True)
        self._thread.start()
        return self

    def _wait(self, read: int) -> None:
        while True:
            try:
                got = os.read(read, 64)
            except OSError:
                return
            if not got:  # the write end closed: the watch is over
                return
            if signal.SIGINT in got:
                self.seen = True
                _interrupt_all()

    def __exit__(self, *exc: object) -> None:
        if self._pipe is None:
            return
        signal.set_wakeup_fd(self._old_fd)
        read, write = self._pipe
        os.close(write)  # the thread reads EOF and ends
        if self._thread is not None:
            self._thread.join(timeout=2)
        os.close(read)
        self._pipe = None
