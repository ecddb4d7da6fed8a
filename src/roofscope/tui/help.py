"""The help screen's text, made from the bindings: a key added to a pane is in ``?``.

Each pane's section lists its ``BINDINGS`` (the tooltip when it has one, else the footer's
description) and the ``KEYS`` its child widgets handle; the app's own keys come last. Lines
fit 80 columns; the screen scrolls when the terminal is shorter.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence

from rich.text import Text
from textual.binding import Binding
from textual.keys import format_key

from roofscope.tui.panes.base import Pane

KEY_WIDTH = 12
WIDTH = 64  # the help dialog at 80 columns holds 66 (90% less border, padding, scrollbar)
_NAMED = {
    "escape": "Esc",
    "enter": "Enter",
    "home": "Home",
    "end": "End",
    "tab": "Tab",
    "left": "←",
    "right": "→",
    "up": "↑",
    "down": "↓",
    "pageup": "PgUp",
    "pagedown": "PgDn",
    "space": "Space",
}
_MODIFIERS = {"ctrl": "Ctrl", "shift": "Shift", "alt": "Alt"}


def key_text(key: str) -> str:
    """``ctrl+r`` → ``Ctrl+R``, ``left_square_bracket`` → ``[``."""
    *mods, last = key.split("+")
    name = _NAMED.get(last) or format_key(last)
    if mods and len(name) == 1:
        name = name.upper()
    return "+".join([*(_MODIFIERS.get(m, m) for m in mods), name])


def _entries(bindings: Iterable[Binding | tuple]) -> list[tuple[str, str]]:
    """(keys, what) per action described once: keys bound to one description share a line."""
    merged: dict[str, list[str]] = {}
    for b in bindings:
        if not isinstance(b, Binding):
            continue
        what = b.tooltip or _sentence_case(b.description)
        keys = [key_text(k.strip()) for k in b.key.split(",")]
        merged.setdefault(what, []).extend(k for k in keys if k not in merged.get(what, []))
    return [(" ".join(keys), what) for what, keys in merged.items()]


def _sentence_case(description: str) -> str:
    """The footer's "Zoom out" reads "zoom out" in a sentence; "AI level" stays."""
    if len(description) > 1 and description[1].islower():
        return description[0].lower() + description[1:]
    return description


def _lines(entries: Sequence[tuple[str, str]]) -> list[str]:
    out = []
    indent = " " * (KEY_WIDTH + 2)
    for keys, what in entries:
        body = textwrap.wrap(what, WIDTH - KEY_WIDTH - 2) or [""]
        if len(keys) < KEY_WIDTH:
            out.append(f"  {keys:<{KEY_WIDTH - 1}} {body[0]}")
        else:  # keys wider than their column: the text starts below them
            out += [f"  {keys}", indent + body[0]]
        out += [indent + rest for rest in body[1:]]
    return out


def pane_section(number: int | None, pane: type[Pane]) -> list[str]:
    """``number``: the key that shows it (None where it is the only pane)."""
    title = (
        (f"{number}  " if number else "") + pane.TITLE + (f" ({pane.HINT})" if pane.HINT else "")
    )
    return [title, *_lines([*pane.KEYS, *_entries(pane.BINDINGS)])]


def help_text(
    title: str,
    panes: Sequence[type[Pane]],
    app_bindings: Iterable[Binding | tuple],
    app_keys: Sequence[tuple[str, str]] = (),
    tail: str = "",
) -> Text:
    """Plain text with a bold first line (no markup: ``[`` and ``]`` are keys here)."""
    lines = [f"{title} — keys  (↑ ↓ PgUp PgDn Home End scroll · Esc closes)", ""]
    for number, pane in enumerate(panes, start=1):
        lines += [*pane_section(number if len(panes) > 1 else None, pane), ""]
    lines += ["Everywhere", *_lines([*_entries(app_bindings), *app_keys])]
    if tail:
        lines += ["", *textwrap.wrap(" ".join(tail.split()), WIDTH)]
    text = Text("\n".join(lines))
    text.stylize("bold", 0, len(title))
    return text
