"""``roofscope monitor``: the Monitor pane on its own, for a training node or a login node
following recordings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding

from roofscope.monitor.source import GpuSource
from roofscope.tui.fatal import OneLineErrors
from roofscope.tui.help import help_text
from roofscope.tui.keys_driver import PromptEscape
from roofscope.tui.panes.monitor import MonitorPane
from roofscope.tui.screens.modals import HelpScreen
from roofscope.tui.state import ViewState
from roofscope.tui.widgets.footer import KeysFooter

HELP_TAIL = """GPU util is the fraction of time any kernel ran (nvidia-smi's GPU-Util), not how
busy the SMs were: on Hopper and later the GPM rows (SM active, tensor, DRAM bw, FP32/16/64) say
that. History is kept for the whole session: recent samples as taken, older ones averaged in
pairs."""


class MonitorApp(OneLineErrors, PromptEscape, App[None]):
    TITLE = "roofscope monitor"
    CSS = "*:focus { border: none; }"
    BINDINGS = [
        Binding("question_mark", "help", "Help", tooltip="this help"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(
        self,
        source_factory: Callable[[], GpuSource],
        *,
        interval: float = 1.0,
        ascii_only: bool = False,
        **pane_options: Any,
    ):
        super().__init__()
        self.pane = MonitorPane(
            source_factory,
            state=ViewState(ascii_only=ascii_only),
            interval=interval,
            **pane_options,
        )

    def compose(self) -> ComposeResult:
        yield self.pane
        yield KeysFooter()

    def on_mount(self) -> None:
        self.pane.focus()

    def action_help(self) -> None:
        text = help_text("roofscope monitor", [MonitorPane], self.BINDINGS, tail=HELP_TAIL)
        self.push_screen(HelpScreen(text))
