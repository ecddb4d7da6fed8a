"""The one error type users can cause; the CLI turns it into a single line and exit code 2.

Anything else is a bug, also said in one line (:func:`internal_error`, exit code 1); the
traceback is shown only when the user asks for it with ``roofscope --debug`` or
``ROOFSCOPE_DEBUG=1`` (:func:`debug`).
"""

from __future__ import annotations

import os

DEBUG_ENV = "ROOFSCOPE_DEBUG"


def debug() -> bool:
    """Whether the user asked for tracebacks (``ROOFSCOPE_DEBUG=1`` or ``roofscope --debug``)."""
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


class RoofscopeError(Exception):
    """A problem with the user's input or environment, never a bug.

    Rendered as ``roofscope: FILE: message (hint)`` so that a user on a login node sees what to
    fix without a traceback.
    """

    def __init__(self, message: str, *, path: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.hint = hint

    def one_line(self) -> str:
        """One terminal line: a newline or escape sequence in a file name or message (names
        are the user's, messages may quote file content) is shown escaped, never acted on."""
        parts = ["roofscope"]
        if self.path:
            parts.append(escape_controls(str(self.path)))
        text = self.message if not self.hint else f"{self.message} ({self.hint})"
        parts.append(escape_controls(" ".join(text.split())))
        return ": ".join(parts)

    def __str__(self) -> str:
        return self.one_line()


def escape_controls(text: str) -> str:
    """``text`` with control and format characters (newline, ESC, bidi overrides, U+2028)
    written as ``\\n``/``\\xNN``/``\\uNNNN`` escapes, so that it stays on one line."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        elif 0xDC80 <= ord(ch) <= 0xDCFF:  # a byte of a non-UTF-8 file name, as Python keeps it
            out.append(f"\\x{ord(ch) - 0xDC00:02x}")
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return "".join(out)


def internal_error(exc: BaseException) -> RoofscopeError:
    """A bug, in one line: what broke, and how to get the traceback to report it."""
    first = " ".join(str(exc).split())[:160]
    return RoofscopeError(
        f"internal error: {type(exc).__name__}{': ' + first if first else ''}",
        hint=f"a bug in roofscope: roofscope --debug … (or {DEBUG_ENV}=1) shows the traceback "
        "to report",
    )
