"""Escape answered in ESCDELAY (50 ms), not in Textual's 100 ms select period on top of it.

A lone ESC byte may be the Escape key or the start of a sequence (an arrow key is ESC [ A), so
a terminal program waits a moment for more bytes: ncurses' ESCDELAY, vim's ``ttimeoutlen``.
Textual waits ESCDELAY (100 ms by default), but its Linux driver only looks at the clock when
``select`` returns, and ``select`` waits 100 ms for input. An Escape therefore reached the app
100–200 ms after the key (clear the filter: 126 ms at p95 through a pty, of which 26 ms were
the app's own work; docs/performance.md, issue 31).

This driver waits in ``select`` only until the parser's pending ESC deadline, and roofscope's
delay is 50 ms (neovim's ``ttimeoutlen``) unless the user sets ``ESCDELAY``: an arrow key's
bytes leave the terminal in one write and arrive together, over SSH too.

The input loop is Textual 8's ``LinuxDriver.run_input_thread`` with that one change; the pin
``textual<9`` in pyproject.toml keeps the copy and the parser's private deadline in step
(``tests/test_keys_driver.py`` reads the deadline from Textual's own parser).
"""

from __future__ import annotations

import os
import selectors
from codecs import getincrementaldecoder

from textual import constants
from textual._loop import loop_last
from textual._time import get_time  # the parser's clock
from textual._xterm_parser import XTermParser
from textual.app import App
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver

ESCAPE_DELAY_MS = 50
POLL_S = 0.1  # Textual's select period: how often the loop looks at its exit flag


def escape_delay_s() -> float:
    """``ESCDELAY`` in milliseconds when the user set it (as ncurses and Textual read it),
    else roofscope's 50 ms."""
    raw = os.environ.get("ESCDELAY", "")
    try:
        return max(1, int(raw)) / 1000.0
    except ValueError:
        return ESCAPE_DELAY_MS / 1000.0


def wait_s(parser: XTermParser, now: float) -> float:
    """How long to wait for input: Textual's period, or less while a lone ESC waits for its
    deadline (then the loop wakes in time to send it)."""
    deadline = parser._timeout_time
    if deadline is None:
        return POLL_S
    return min(POLL_S, max(0.0, deadline - now))


class KeysDriver(LinuxDriver):
    """Textual's Linux driver, waking for a pending Escape at its deadline."""

    def start_application_mode(self) -> None:
        constants.ESCAPE_DELAY = escape_delay_s()  # type: ignore[misc]  # read at each ESC
        super().start_application_mode()

    def run_input_thread(self) -> None:
        """Wait for input and dispatch events (Textual 8.2's loop; see the module's note)."""
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        fileno = self.fileno
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode

        def process(events: list[tuple[selectors.SelectorKey, int]], final: bool = False) -> None:
            for last, (_key, mask) in loop_last(events):
                if mask & selectors.EVENT_READ:
                    data = decode(os.read(fileno, 1024 * 4), final=final and last)
                    if not data:
                        break  # stdin piped and at its end
                    for event in parser.feed(data):
                        self.process_message(event)
            for event in parser.tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                process(selector.select(wait_s(parser, get_time())))
            selector.unregister(self.fileno)
            process(selector.select(POLL_S), final=True)
        finally:
            selector.close()


class PromptEscape(App):
    """Mixed into every roofscope app: Textual's driver choice, with :class:`KeysDriver` in
    place of its Linux driver (Linux and macOS); a driver named in ``TEXTUAL_DRIVER`` stands,
    and tests' headless driver is chosen elsewhere."""

    def get_driver_class(self) -> type[Driver]:
        chosen = super().get_driver_class()
        named = constants.DRIVER is not None
        return KeysDriver if chosen is LinuxDriver and not named else chosen
