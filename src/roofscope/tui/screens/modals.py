"""Modal screens: help (every key), the grouping-rule editor, export."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from roofscope.errors import RoofscopeError
from roofscope.grouping import Grouper, Rule, save_rule
from roofscope.tui.messages import RulesChanged
from roofscope.tui.widgets.plain import PlainStatic

if TYPE_CHECKING:
    from roofscope.session import Session

MODAL_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{ width: 90%; max-width: 100; height: auto; max-height: 90%;
    border: thick $accent; background: $surface; padding: 0 1; }}
"""


class HelpScreen(ModalScreen[None]):
    """Every key; scrolls (↑ ↓ PgUp PgDn) where the terminal is shorter than the list."""

    DEFAULT_CSS = MODAL_CSS.format(name="HelpScreen").replace("> Vertical", "> VerticalScroll")
    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss", "Close"),
        Binding("up,k", "scroll(-1)", "Up", show=False),
        Binding("down,j", "scroll(1)", "Down", show=False),
        Binding("pageup", "scroll(-10)", "Page up", show=False),
        Binding("pagedown,space", "scroll(10)", "Page down", show=False),
        Binding("home", "scroll_to(0)", "Top", show=False),
        Binding("end", "scroll_to(-1)", "End", show=False),
    ]

    def __init__(self, text: Text):
        super().__init__()
        self.text = text  # built from bindings: plain text, never markup

    def compose(self) -> ComposeResult:
        # not focusable, so the apps' "no border on focus" leaves its frame alone; the keys
        # above scroll it
        with VerticalScroll(can_focus=False):
            yield Static(self.text, id="help-text", markup=False)

    def action_scroll(self, lines: int) -> None:
        self.query_one(VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_scroll_to(self, where: int) -> None:
        scroll = self.query_one(VerticalScroll)
        (scroll.scroll_end if where < 0 else scroll.scroll_home)(animate=False)


class RuleEditor(ModalScreen[None]):
    """Type a regex and a group name; the groups are recomputed as you type."""

    DEFAULT_CSS = MODAL_CSS.format(name="RuleEditor")
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save to roofscope.toml"),
    ]

    def __init__(self, base_rules: list[Rule], session: Session):
        super().__init__()
        self.base_rules = base_rules
        self.session = session
        self.rule: Rule | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                "New grouping rule — it goes first; the first match wins.\n"
                "Enter: apply · Ctrl+S: apply and save to ./roofscope.toml · Esc: cancel"
            )
            yield Input(placeholder="regex, e.g. splitKreduce", id="rule-pattern")
            yield Input(placeholder="group name, e.g. split-K epilogue", id="rule-name")
            yield PlainStatic(id="rule-preview")

    @on(Input.Changed)
    def _preview(self) -> None:
        pattern = self.query_one("#rule-pattern", Input).value
        name = self.query_one("#rule-name", Input).value or "(name)"
        preview = self.query_one("#rule-preview", Static)
        self.rule = None
        if not pattern:
            preview.update("")
            return
        try:
            grouper = Grouper([Rule(pattern, name, "editor")])
        except RoofscopeError as exc:
            preview.update(exc.message)
            return
        kernels = self.session.kernel_names()
        decided = grouper.match_all(kernels)
        hits = [k for k, (_, rule) in zip(kernels, decided, strict=True) if rule != "base name"]
        self.rule = Rule(pattern, name, "editor")
        shown = "\n".join(f"  {k[:90]}" for k in hits[:8])
        preview.update(f"matches {len(hits)} of {len(kernels)} kernel names\n{shown}")

    def _apply(self) -> bool:
        if self.rule is None or not self.query_one("#rule-name", Input).value:
            self.app.notify("type a regex and a group name first", severity="warning")
            return False
        self.post_message(RulesChanged([self.rule, *self.base_rules]))
        return True

    @on(Input.Submitted)
    def _submitted(self) -> None:
        if self._apply():
            self.app.notify("rule applied to this session; Ctrl+S in the editor (g) saves it")
            self.dismiss()

    def action_save(self) -> None:
        if self._apply() and self.rule is not None:
            path = Path.cwd() / "roofscope.toml"
            try:
                save_rule(path, self.rule)
            except (OSError, RoofscopeError) as exc:
                self.app.notify(f"could not save: {exc}", severity="error")
                return
            self.app.notify(f"rule saved to {path}")
            self.dismiss()

    def action_cancel(self) -> None:
        self.dismiss()


class ExportScreen(ModalScreen[str | None]):
    """Ask where to write what the current pane shows (.csv, .md or .txt)."""

    DEFAULT_CSS = MODAL_CSS.format(name="ExportScreen")
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, default: str, **kwargs: Any):
        super().__init__(**kwargs)
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                "Export this pane to (.csv or .md for tables, .txt for charts; a relative path "
                "is from the folder roofscope was started in) · Enter writes · Esc cancels"
            )
            yield Input(value=self.default, id="export-path")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
