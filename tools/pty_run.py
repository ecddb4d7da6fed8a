"""Run a command on a pseudo-terminal as a user's terminal would: wait until a text is drawn,
type keys, wait for the program to leave. Standard library only, so that CI runs it in a fresh
virtual environment with nothing but roofscope installed (``.ci/run`` drives README command 1
with it), and the tests and benchmarks use the same code.

The screen is not emulated: what the program wrote is searched with its escape sequences
removed, which finds any text Textual draws as one run of cells (a table row's group name).

Usage: python3 tools/pty_run.py [--size 80x24] [--until TEXT] [--keys KEYS] [--timeout S] -- CMD…
  Exit 0 when TEXT was drawn and, after KEYS, CMD left with exit code 0; else 1, with the end of
  what was on the screen.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass

ESCAPES = re.compile(
    rb"\x1b\[[0-9;?<=>$]*[ -/]*[@-~]"  # CSI: cursor moves, colours, modes
    rb"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, clipboard
    rb"|\x1b[()][0-9A-Za-z]|\x1b[=>78]"  # charsets, keypad modes, cursor save/restore
)


def plain(data: bytes) -> str:
    """What was written, as text: escape sequences removed."""
    return ESCAPES.sub(b"", data).decode("utf-8", errors="replace")


@dataclass
class PtyRun:
    drawn_s: float | None  # seconds from the start to the first output showing the text
    exit_code: int | None  # None: still running at the deadline (then killed)
    output: bytes  # everything the program wrote

    @property
    def text(self) -> str:
        return plain(self.output)


def run_on_pty(
    argv: list[str],
    *,
    until: str | None = None,
    keys: str = "",
    size: tuple[int, int] = (80, 24),
    timeout: float = 120.0,
    exit_timeout: float = 30.0,
    env: dict[str, str] | None = None,
) -> PtyRun:
    """Start ``argv`` on a ``size`` (columns, rows) pseudo-terminal as its controlling terminal;
    once ``until`` shows (or at once without it) type ``keys``, then wait for the exit."""
    master, slave = pty.openpty()
    columns, rows = size
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))

    def controlling_tty() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    env = {**(os.environ if env is None else env), "TERM": "xterm-256color"}
    for name in ("COLUMNS", "LINES"):
        env.pop(name, None)
    start = time.monotonic()
    proc = subprocess.Popen(
        argv, env=env, stdin=slave, stdout=slave, stderr=slave, preexec_fn=controlling_tty
    )
    os.close(slave)
    seen = bytearray()
    drawn: float | None = None
    wanted = until is None
    try:
        deadline = start + timeout
        while time.monotonic() < deadline:
            if not wanted and until is not None and until in plain(bytes(seen[-(1 << 20) :])):
                drawn, wanted = time.monotonic() - start, True
            if wanted:
                if keys:
                    os.write(master, keys.encode())
                deadline = min(deadline, time.monotonic() + exit_timeout)
                keys = ""
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(master, 1 << 16)
                except OSError:  # the program closed the terminal (it left)
                    chunk = b""
                if not chunk:
                    break
                seen += chunk
            elif proc.poll() is not None:
                break
        try:
            code: int | None = proc.wait(timeout=1 if proc.poll() is None else None)
        except subprocess.TimeoutExpired:
            code = None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        os.close(master)
    return PtyRun(drawn, code, bytes(seen))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="80x24", help="COLUMNSxROWS (default 80x24)")
    parser.add_argument("--until", help="text to wait for before typing KEYS")
    parser.add_argument("--keys", default="", help="what to type once TEXT shows, e.g. q")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for TEXT")
    parser.add_argument("argv", nargs=argparse.REMAINDER, help="-- CMD…")
    args = parser.parse_args()
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        parser.error("no command given")
    columns, rows = (int(n) for n in args.size.lower().split("x"))
    run = run_on_pty(
        argv, until=args.until, keys=args.keys, size=(columns, rows), timeout=args.timeout
    )
    tail = " ".join(run.text.split())[-600:]
    if args.until is not None and run.drawn_s is None:
        print(f"pty_run: {args.until!r} not drawn (exit {run.exit_code}): …{tail}")
        return 1
    drawn = f"{args.until!r} drawn after {run.drawn_s:.1f} s; " if args.until else ""
    print(f"pty_run: {drawn}exit {run.exit_code} after {args.keys!r}")
    if run.exit_code != 0:
        print(f"pty_run: the screen ended with: …{tail}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
