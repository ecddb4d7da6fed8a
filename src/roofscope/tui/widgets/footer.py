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

from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult
from textual.compose import compose
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup

_REUSED = (FooterKey, FooterLabel, KeyGroup)


@dataclass
class _Plan:
    old: list[Widget]  # the widgets there
    new: list[Widget]  # the new keys' widgets, composed and not mounted
    pairs: list[tuple[int, int]]  # (old index, new index): which shows which
    keys: tuple[Any, ...]  # the bindings the new widgets were composed from


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
            # its width is its text's, which Textual caches twice: the content width (forgotten
            # by refresh() only once the widget is mounted) and the box model (keyed on a count
            # that refresh(layout=True) bumps only when no layout is pending already). A key
            # relabelled twice between two layouts, or before its mount completed, kept the
            # old text's width under load ("Zoom ou" for "Zoom out", "Reve" for "Reverse")
            old.clear_cached_dimensions()
            # (Textual's private counters, read only where they exist: a release that renames
            # them loses this mending, not the footer)
            if getattr(old, "_layout_required", False) and hasattr(old, "_layout_updates"):
                old._layout_updates += 1
            old.refresh(layout=True)
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

    def on_mount(self) -> None:
        # (Footer.on_mount subscribes to the bindings signal as well)
        self.watch(self.screen, "focused", self._focus_moved, init=False)

    def _focus_moved(self) -> None:
        """The focus moved: its keys now, in the frame that shows the move. Textual signals
        new bindings only after the next refresh, which cost a pane switch a second frame."""
        if self.app.app_focus:
            self.update_keys()

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._pending:
            self._pending = True
            self.call_later(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        """Mounting may take turns of the loop: the keys are checked again after it, and no
        other update starts meanwhile (it would plan over widgets not mounted yet)."""
        try:
            for _ in range(3):
                if not self.is_attached or self._keys_now() == self._shown:
                    break
                if not await self._patch():
                    await self.recompose()
        finally:
            self._pending = False

    def update_keys(self) -> None:
        """Show the focused widget's keys now if that needs no widget mounted (relabelling and
        hiding), else mount what is missing in a moment."""
        if self._pending or not (self.is_attached and self._bindings_ready):
            return  # (an update under way checks the keys again when it is done)
        if self._keys_now() == self._shown:
            return
        plan = self._plan()
        if plan is not None and len(plan.pairs) == len(plan.new):  # every new key has a widget
            self._apply(plan)
        else:
            self._pending = True
            self.call_later(self._recompose_if_changed)

    def _plan(self) -> _Plan | None:
        """The widgets there, the new keys' (unmounted), and which of the first show which of
        the second; None when nothing lines up (recompose)."""
        old = list(self.query_children("*").exclude(".-textual-system"))
        shown = self._shown
        with self._context():  # composed as the footer, whoever asks (data_bind reads it)
            new = compose(self)  # unmounted; a KeyGroup's keys wait in its pending children
        keys, self._shown = self._shown, shown  # (compose noted the keys: not shown yet)
        if not old or len(old) > _MOST_KEPT or not all(isinstance(w, _REUSED) for w in old + new):
            return None
        pairs = _matching([_shape(w, False) for w in old], [_shape(w, True) for w in new])
        return _Plan(old, new, pairs, keys) if pairs else None

    def _apply(self, plan: _Plan) -> None:
        """Relabel and show the widgets paired with new keys, hide the others."""
        taken = dict(plan.pairs)  # old index → new index
        for i, widget in enumerate(plan.old):
            if i in taken:
                _relabel(widget, plan.new[taken[i]])
            widget.display = i in taken
        self._shown = plan.keys

    async def _patch(self) -> bool:
        """Show the new keys with the widgets there: those matching the new keys in kind and
        order (a longest common subsequence) are relabelled and shown, the others hidden for a
        later change to take up again, and only new keys nothing matched are mounted. False
        (recompose instead) when nothing matches."""
        plan = self._plan()
        if plan is None:
            return False
        self._apply(plan)
        old, new, pairs = plan.old, plan.new, plan.pairs
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
