"""The one error type users can cause; the CLI turns it into a single line and exit code 2."""

from __future__ import annotations


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
        parts = ["roofscope"]
        if self.path:
            parts.append(str(self.path))
        text = self.message if not self.hint else f"{self.message} ({self.hint})"
        parts.append(" ".join(text.split()))
        return ": ".join(parts)

    def __str__(self) -> str:
        return self.one_line()
