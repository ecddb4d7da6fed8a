"""Text read from a file is data: the one place it becomes display text.

Kernel, NVTX, group and file names come from exports and user files. Shown through Rich or
Textual they would be parsed as markup (``[/]`` crashes, ``[fp32]`` vanishes) and a control
character in them (ESC, OSC, BEL, C1 ``\\x9b``) would reach the terminal raw. Everything that
shows such text goes through :func:`shown` (a ``str``), :func:`plain` (a Rich ``Text``, never
markup) or :func:`shown_doc` (every string of a report dict), and consoles come from
:func:`console` (markup off).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # Rich is imported where it draws: `roofscope --help` needs none of it
    from rich.console import Console
    from rich.text import Text

# C0, DEL, C1, and the bidirectional overrides/isolates that reorder what a line shows
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROL_BUT_NEWLINE = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(value: object, lines: bool = False) -> str:
    """``value`` as text with every control character written visibly (``\\x1b``); with
    ``lines`` a newline still breaks the line (text of several lines, not one name)."""
    text = "—" if value is None else str(value)
    return (_CONTROL_BUT_NEWLINE if lines else _CONTROL).sub(_escape, text)


def plain(value: object, style: str = "", lines: bool = False, **kwargs: Any) -> Text:
    """A Rich ``Text`` of ``value`` shown verbatim: never parsed as markup."""
    from rich.text import Text

    return Text(shown(value, lines), style=style, **kwargs)


def shown_doc(value: Any) -> Any:
    """A report dict with every string (keys too) passed through :func:`shown`, for the
    formats a terminal displays (table, Markdown, CSV); JSON keeps the real strings."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {shown_doc(k): shown_doc(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [shown_doc(v) for v in value]
    return value


def console(**kwargs: Any) -> Console:
    """A console that never reads markup or emoji codes (``:fire:``) in the strings it prints
    (tables included): what it shows is data."""
    from rich.console import Console

    kwargs.setdefault("emoji", False)
    return Console(markup=False, **kwargs)
