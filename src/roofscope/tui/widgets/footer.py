"""Textual's footer, changed only when the keys it shows change, and then in place.

Textual's ``Footer`` removes and mounts every key on each bindings signal of its screen (a
focus change, an app's ``refresh_bindings``, a screen pushed or popped), and one key press
sends several: a pane switch recomposed it 9 times, a third of the switch's CPU time. This one
keeps at most one update pending, skips it when the keys it would draw are those it shows
(a focused table's hidden arrow keys change nothing on screen), and otherwise turns the keys
there into the new ones: a pane switch changes the pane's few keys, and the filter box hides
all but two, so mounting the ~17 widgets of a footer again (40–120 ms of the UI thread,
docs/decisions.md) became relabelling them and hiding the rest, kept for the next change.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.compose import compose
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup

_REUSED = (FooterKey, FooterLabel, KeyGroup)


def _children(widget: Widget, pending: bool) -> list[Widget]:
    return list(widget._pending_children if pending else widget.children)


def _shape(widget: Widget, pending: bool) -> tuple[Any, ...]:
    """What must match for a mounted widget to show a new one by copying its labels: the
    type, the classes compose gave it and the same of its children."""
    classes = set(widget.classes)
    if isinstance(widget, FooterKey):
        classes -= {"-disabled", "-compact"}  # set from the binding and the footer's style
    kids = tuple(_shape(w, pending) for w in _children(widget, pending))
    return type(widget), frozenset(classes), kids


def _relabel(old: Widget, new: Widget) -> None:
    """Make the mounted ``old`` show what the unmounted ``new`` was composed to show."""
    if isinstance(old, FooterKey) and isinstance(new, FooterKey):
        label = (new.key, new.key_display, new.description, new.action, new._disabled)
        if (old.key, old.key_display, old.description, old.action, old._disabled) != label:
            old.key, old.key_display, old.description, old.action, old._disabled = label
            old.set_class(new._disabled, "-disabled")
            old.refresh(layout=True)  # its width is its text's
        if old.tooltip != new.tooltip:
            old.tooltip = new.tooltip
    elif (
        isinstance(old, FooterLabel) and isinstance(new, FooterLabel) and old.content != new.content
    ):
        old.update(new.content)
    for a, b in zip(_children(old, False), _children(new, True), strict=True):
        _relabel(a, b)


class KeysFooter(Footer):
    """A ``Footer`` (same looks, same CSS type) that updates once per change of its keys."""

    _shown: tuple[Any, ...] | None = None
    _pending = False

    def _keys_now(self) -> tuple[Any, ...]:
        """The bindings the footer draws: those shown, and the command palette's."""
        palette = self.app.COMMAND_PALETTE_BINDING
        return tuple(
            (b, on, tip)
            for key, (_, b, on, tip) in self.screen.active_bindings.items()
            if b.show or key == palette
        )

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
            self.call_later(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        self._pending = False
        if self.is_attached and self._keys_now() != self._shown and not await self._patch():
            await self.recompose()

    async def _patch(self) -> bool:
        """Show the new keys with the widgets there: those matching the new keys in kind and
        order (a longest common subsequence) are relabelled and shown, the others hidden for a
        later change to take up again, and only new keys nothing matched are mounted. False
        (recompose instead) when nothing matches."""
        old = list(self.query_children("*").exclude(".-textual-system"))
        new = compose(self)  # unmounted; a KeyGroup's keys wait in its pending children
        if not old or len(old) > _MOST_KEPT or not all(isinstance(w, _REUSED) for w in old + new):
            return False
        pairs = _matching([_shape(w, False) for w in old], [_shape(w, True) for w in new])
        if not pairs:
            return False
        taken = dict(pairs)  # old index → new index
        for i, widget in enumerate(old):
            if i in taken:
                _relabel(widget, new[taken[i]])
            widget.display = i in taken
        reused = {j: i for i, j in pairs}
        waiting: list[Widget] = []
        for j, widget in enumerate(new):
            if j not in reused:
                waiting.append(widget)
            elif waiting:
                await self.mount_all(waiting, before=old[reused[j]])
                waiting = []
        if waiting:
            await self.mount_all(waiting, after=old[pairs[-1][0]])
        return True


_MOST_KEPT = 40  # widgets kept (hidden ones too) before a recompose starts afresh


def _matching(old: list[Any], new: list[Any]) -> list[tuple[int, int]]:
    """Index pairs of a longest common subsequence of ``old`` and ``new`` (a few dozen)."""
    best = [[0] * (len(new) + 1) for _ in range(len(old) + 1)]
    for i in range(len(old) - 1, -1, -1):
        for j in range(len(new) - 1, -1, -1):
            best[i][j] = (
                best[i + 1][j + 1] + 1 if old[i] == new[j] else max(best[i + 1][j], best[i][j + 1])
            )
    pairs, i, j = [], 0, 0
    while i < len(old) and j < len(new):
        if old[i] == new[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs
