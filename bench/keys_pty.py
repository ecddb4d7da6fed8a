"""Keys as a user feels them: ``roofscope open FILE`` on a pseudo-terminal, each key written to
the terminal as the user's terminal would write it, timed until the screen changed.

The screen is a terminal emulator (``pyte``, ``pip install pyte``) fed with every byte the app
writes, so "changed" means what a user sees: the characters, or their colours and reverse
video (a table's cursor moves by colour alone). A key that types into the filter box is
timed until the text changed (the box's cursor blinks by itself). After each key the bench
waits until the app has written nothing for 0.3 s, so the next key starts from a settled
screen. This goes through everything ``bench/tui.py`` skips: the pty, Textual's input
parsing and its Escape delay, the compositor and the write.

Usage: python3 bench/keys_pty.py FILE [--rounds N] [--size 160x50]
  FILE: a report already in roofscope's cache is what a re-open measures
  (ROOFSCOPE_CACHE_DIR as for roofscope itself).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

try:
    import pyte
except ImportError:  # a bench dependency, not roofscope's
    raise SystemExit("bench/keys_pty.py needs pyte: pip install pyte") from None

REPO = Path(__file__).resolve().parents[1]
ENTRY = "import sys; from roofscope.cli import main; sys.exit(main())"
KEYS = {  # what an xterm writes for them
    "down": b"\x1b[B",
    "up": b"\x1b[A",
    "enter": b"\r",
    "escape": b"\x1b",
    "pagedown": b"\x1b[6~",
}
QUIET_S = 0.3  # no output for this long: the screen has settled


class Terminal:
    """``argv`` on a pty of ``cols``×``rows``, its output kept in an emulated screen."""

    def __init__(self, argv: list[str], cols: int, rows: int, env: dict[str, str]):
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

        def controlling_tty() -> None:
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(
            argv,
            env={**env, "TERM": "xterm-256color"},
            stdin=slave,
            stdout=slave,
            stderr=slave,
            preexec_fn=controlling_tty,
        )
        os.close(slave)
        self.master = master

    def read(self, timeout: float) -> bool:
        """Feed what the app wrote within ``timeout`` to the screen; False when nothing came."""
        data = self.take(timeout)
        self.stream.feed(data)
        return bool(data)

    def take(self, timeout: float) -> bytes:
        """The bytes written within ``timeout``, and all that follows them at once."""
        out = b""
        while True:
            ready, _, _ = select.select([self.master], [], [], timeout if not out else 0)
            if not ready:
                return out
            try:
                data = os.read(self.master, 1 << 16)
            except OSError:
                return out
            if not data:
                return out
            out += data

    def text(self) -> tuple[str, ...]:
        return tuple(self.screen.display)

    def looks(self) -> tuple:
        """The characters with their colours and reverse video: what the eye sees."""
        return tuple(
            tuple((c.data, c.fg, c.bg, c.reverse, c.bold) for c in line.values())
            for line in (self.screen.buffer[y] for y in range(self.screen.lines))
        )

    def wait_for(self, needle: str, timeout: float = 60.0) -> float:
        start = time.perf_counter()
        while time.perf_counter() - start < timeout:
            self.read(0.05)
            if any(needle in line for line in self.screen.display):
                return time.perf_counter() - start
        raise SystemExit(f"{needle!r} never appeared:\n" + "\n".join(self.screen.display))

    def settle(self, limit: float = 10.0) -> None:
        start = time.perf_counter()
        while time.perf_counter() - start < limit and self.read(QUIET_S):
            pass

    def press(self, key: str, by_text: bool, timeout: float = 10.0) -> float | None:
        """Seconds from writing ``key`` to the arrival of the output that changed the screen
        (taken before the emulator parses it: its parsing is the bench's time, not the
        app's); None when the screen did not change."""
        before = self.text() if by_text else self.looks()
        start = time.perf_counter()
        os.write(self.master, KEYS.get(key, key.encode()))
        while time.perf_counter() - start < timeout:
            data = self.take(0.5)
            if not data:
                continue
            arrived = time.perf_counter()
            self.stream.feed(data)
            now = self.text() if by_text else self.looks()
            if now != before:
                return arrived - start
        return None

    def close(self, quit_key: bytes | None = None) -> None:
        """Kill the app, or with ``quit_key`` ask it to leave (a profile is written then)."""
        if quit_key is not None:
            os.write(self.master, quit_key)
            try:
                deadline = time.perf_counter() + 30
                while self.proc.poll() is None and time.perf_counter() < deadline:
                    self.read(0.2)  # drained, so the app is never blocked writing
                self.proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        self.proc.kill()
        self.proc.wait()
        os.close(self.master)


def script(rounds: int) -> list[tuple[str, str, bool]]:
    """(what, key, timed by the text alone) in the order pressed."""
    steps: list[tuple[str, str, bool]] = []
    for _ in range(rounds):
        # down then up: each press moves the cursor, even with two groups (a press that
        # changes nothing waits out the 10 s limit)
        steps += [("cursor down (groups)", "down", False), ("cursor up (groups)", "up", False)] * 5
        steps += [("enter: open a group", "enter", False)]
        steps += [("cursor down (launches)", "down", False)] * 5
        steps += [("pagedown (launches)", "pagedown", False)] * 2
        steps += [("escape: back to groups", "escape", False)]
        steps += [("2: switch pane", "2", False), ("1: switch pane", "1", False)]
        steps += [("/: open the filter", "/", False)]
        steps += [("filter keystroke", ch, True) for ch in "ge"]
        steps += [("enter: apply the filter", "enter", False)]
        steps += [("escape: clear the filter", "escape", False)]
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size", default="160x50")
    parser.add_argument("--first-row", default=None, help="text of the table once drawn")
    parser.add_argument("--profile", help="run the app under cProfile, its stats to this file")
    args = parser.parse_args()
    cols, rows = (int(x) for x in args.size.split("x"))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    argv = [sys.executable, "-c", ENTRY, "open", args.file]
    if args.profile:  # where the event loop's time goes (it then leaves by q)
        argv = [sys.executable, "-m", "cProfile", "-o", args.profile, "-m", "roofscope"]
        argv += ["open", args.file]
    subprocess.run(
        [sys.executable, "-c", ENTRY, "report", args.file], env=env, stdout=subprocess.DEVNULL
    )  # the cache is built before: this measures a re-open
    term = Terminal(argv, cols, rows, env)
    try:
        painted = term.wait_for(args.first_row or "launches")
        term.settle()
        times: dict[str, list[float]] = {}
        missed: dict[str, int] = {}
        for what, key, by_text in script(args.rounds):
            got = term.press(key, by_text)
            if got is None:
                missed[what] = missed.get(what, 0) + 1
            else:
                times.setdefault(what, []).append(got)
            term.settle()
    finally:
        term.close(b"q" if args.profile else None)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{args.file}: {cols}×{rows} pty, first paint {painted:.2f} s, load {load}\n")
    print("| key | n | p50 ms | p95 ms | max ms | no change |")
    print("|---|---:|---:|---:|---:|---:|")
    for what in dict.fromkeys(w for w, _, _ in script(1)):
        got = sorted(times.get(what, []))
        if not got:
            print(f"| {what} | 0 | | | | {missed.get(what, 0)} |")
            continue
        p95 = got[min(len(got) - 1, round(0.95 * (len(got) - 1)))]
        print(
            f"| {what} | {len(got)} | {1000 * statistics.median(got):.0f} | {1000 * p95:.0f} "
            f"| {1000 * got[-1]:.0f} | {missed.get(what, 0)} |"
        )


if __name__ == "__main__":
    main()
