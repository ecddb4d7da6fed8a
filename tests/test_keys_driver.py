"""Escape reaches the app at its ESCDELAY deadline (roofscope.tui.keys_driver), and the input
loop copied from Textual still reads keys from a real terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from textual._xterm_parser import XTermParser
from textual.events import Key

from roofscope.tui.app import RoofscopeApp
from roofscope.tui.keys_driver import ESCAPE_DELAY_MS, POLL_S, KeysDriver, escape_delay_s, wait_s
from roofscope.tui.monitor_app import MonitorApp


def test_a_lone_escape_shortens_the_wait_to_its_deadline(monkeypatch):
    """Textual's own parser: nothing pending → its 100 ms period; after ESC → no longer than
    the delay, and nothing once the deadline has passed, when ``tick`` gives the key."""
    monkeypatch.setattr("textual.constants.ESCAPE_DELAY", 0.05)
    parser = XTermParser()
    assert wait_s(parser, 0.0) == POLL_S
    assert list(parser.feed("\x1b")) == []
    deadline = parser._timeout_time
    assert deadline is not None
    assert wait_s(parser, deadline - 0.05) == pytest.approx(0.05)  # not POLL_S
    assert wait_s(parser, deadline + 1.0) == 0.0
    time.sleep(0.06)
    assert [e.key for e in parser.tick() if isinstance(e, Key)] == ["escape"]
    assert wait_s(parser, deadline + 1.0) == POLL_S


def test_an_arrow_key_is_not_an_escape():
    parser = XTermParser()
    keys = [e.key for e in parser.feed("\x1b[B") if isinstance(e, Key)]
    assert keys == ["down"]
    assert wait_s(parser, 0.0) == POLL_S


@pytest.mark.parametrize(
    ("value", "seconds"), [(None, ESCAPE_DELAY_MS / 1000), ("25", 0.025), ("x", 0.05), ("0", 0.001)]
)
def test_escdelay_is_the_users_when_set(monkeypatch, value, seconds):
    if value is None:
        monkeypatch.delenv("ESCDELAY", raising=False)
    else:
        monkeypatch.setenv("ESCDELAY", value)
    assert escape_delay_s() == pytest.approx(seconds)


@pytest.mark.parametrize("app", [RoofscopeApp, MonitorApp])
def test_every_app_runs_on_the_keys_driver(monkeypatch, app):
    monkeypatch.delenv("TEXTUAL_DRIVER", raising=False)
    assert app.get_driver_class(app.__new__(app)) is KeysDriver


KEYS_APP = """
import sys
from textual.app import App
from roofscope.tui.keys_driver import PromptEscape

class Keys(PromptEscape, App[None]):
    def on_key(self, event):
        with open(sys.argv[1], "a") as out:
            out.write(event.key + "\\n")
        if event.key == "escape":
            self.exit()

Keys().run()
"""


def test_keys_arrive_through_a_pseudo_terminal(tmp_path: Path):
    """The copied input loop on a real pty: an arrow key stays one key, a lone ESC arrives
    and ends the app (the time limit only guards against a hang)."""
    log = tmp_path / "keys"
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", KEYS_APP, str(log)],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "TERM": "xterm-256color"},
        close_fds=True,
    )
    os.close(follower)
    try:
        _drain_until_drawn(leader)
        os.write(leader, b"\x1b[B")
        _wait_for(leader, lambda: log.exists() and "down" in log.read_text())
        os.write(leader, b"\x1b")
        _wait_for(leader, lambda: proc.poll() is not None)
    finally:
        proc.kill()
        os.close(leader)
    assert log.read_text().split() == ["down", "escape"]


def _drain_until_drawn(fd: int) -> None:
    """Read the app's output until it has gone quiet after starting (it has drawn)."""
    deadline = time.monotonic() + 60
    seen = 0
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            seen += len(os.read(fd, 65536))
        elif seen:
            return
    raise AssertionError("the app drew nothing")


def _wait_for(fd: int, condition) -> None:
    """Drain the app's output (a full pty would stop it) until ``condition`` holds."""
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, "the key never arrived"
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                os.read(fd, 65536)
            except OSError:  # the app has closed the terminal
                time.sleep(0.05)


def test_a_driver_the_user_names_stands(monkeypatch):
    monkeypatch.setattr("textual.constants.DRIVER", "textual.drivers.linux_driver:LinuxDriver")
    from textual.drivers.linux_driver import LinuxDriver

    assert RoofscopeApp.get_driver_class(RoofscopeApp.__new__(RoofscopeApp)) is LinuxDriver


def test_textuals_loop_is_still_the_one_copied():
    """keys_driver.py copies Textual 8.2.8's ``LinuxDriver.run_input_thread``. When Textual
    changes it, compare the two, carry the change over, and record the new hash here."""
    import hashlib
    import inspect

    from textual.drivers.linux_driver import LinuxDriver

    source = inspect.getsource(LinuxDriver.run_input_thread)
    assert hashlib.sha256(source.encode()).hexdigest()[:16] == "d796af6d69db337d"


def test_the_loop_waits_only_until_a_lone_escapes_deadline(monkeypatch):
    """The copied loop on a pipe with a selector that records its waits: after a lone ESC the
    wait is the Escape delay, not Textual's 100 ms, and the Escape key comes out."""
    import selectors
    import threading

    monkeypatch.setattr("textual.constants.ESCAPE_DELAY", 0.05)
    read_fd, write_fd = os.pipe()
    waits: list[float] = []
    done = threading.Event()

    class Recording(selectors.SelectSelector):
        def select(self, timeout=None):
            waits.append(timeout)
            if len(waits) > 6:
                done.set()
            return super().select(timeout)

    monkeypatch.setattr("roofscope.tui.keys_driver.selectors.SelectSelector", Recording)
    driver = KeysDriver.__new__(KeysDriver)
    driver.fileno, driver.exit_event, driver._debug = read_fd, done, False
    got: list[str] = []
    driver.process_message = lambda event: got.append(getattr(event, "key", ""))
    os.write(write_fd, b"\x1b")
    try:
        driver.run_input_thread()
    finally:
        os.close(read_fd)
        os.close(write_fd)
    assert waits[0] == POLL_S  # nothing pending yet
    assert 0.0 <= waits[1] <= 0.05  # the ESC arrived: wake at its deadline
    assert "escape" in got
