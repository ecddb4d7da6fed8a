"""Textual's footer, composed again only when the keys it shows change.

Textual's ``Footer`` removes and mounts every key on each bindings signal of its screen (a
focus change, an app's ``refresh_bindings``, a screen pushed or popped), and one key press
sends several: a pane switch recomposed it 9 times, a third of the switch's CPU time. This one
keeps at most one recompose pending and skips it when the screen's bindings are those it
shows already.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer


class KeysFooter(Footer):
    """A ``Footer`` (same looks, same CSS type) that recomposes once per change of its keys."""

    _shown: tuple[Any, ...] | None = None
    _pending = False

    def _keys_now(self) -> tuple[Any, ...]:
        return tuple((b, on, tip) for _, b, on, tip in self.screen.active_bindings.values())

    def compose(self) -> ComposeResult:
        # what the keys below are composed from, for bindings_changed to compare with
        self._shown = self._keys_now() if self._bindings_ready else None
        yield from super().compose()

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._pending:
            self._pending = True
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        self._pending = False
        if self.is_attached and self._keys_now() != self._shown:
            await self.recompose()
