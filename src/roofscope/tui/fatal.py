"""How a roofscope app leaves on an error it did not foresee: one line on the terminal, as the
CLI does, instead of Textual's traceback with every local variable (a 1,900-line screen for one
missing package). ``roofscope --debug`` / ``ROOFSCOPE_DEBUG=1`` gives Textual's traceback back.

The app keeps the line (:attr:`OneLineErrors.fatal_line`) and the CLI prints it once the
terminal is restored: printed by Textual, a console of the terminal's width would wrap or crop
it.
"""

from __future__ import annotations

from textual.app import App
from textual.css.query import NoMatches
from textual.worker import WorkerFailed

from roofscope.errors import RoofscopeError, debug, internal_error
from roofscope.packages import missing_package_error


def one_line(error: BaseException) -> tuple[str, int]:
    """The line and exit code for an error that ended the app: 2 for what the user can fix (a
    missing package, a bad file), 1 for a bug."""
    if isinstance(error, WorkerFailed):  # raised in a thread worker: the worker's own error
        error = error.error
    if isinstance(error, RoofscopeError):
        return error.one_line(), 2
    if isinstance(error, ImportError):
        return missing_package_error(error).one_line(), 2
    return internal_error(error).one_line(), 1


class OneLineErrors(App):
    """Mixed into every roofscope app, ahead of :class:`textual.app.App`."""

    fatal_line: str | None = None  # what ended the app, for the CLI to print

    def _handle_exception(self, error: Exception) -> None:
        if isinstance(error, NoMatches) and getattr(self, "_exit", False) and not self.return_code:
            # ``q`` while the panes after the first screen were still being built: a Select
            # looked for its overlay as the app took its children down (seen in CI, 1 of 6
            # cold opens on a loaded machine). The user asked to leave; nothing is lost.
            return
        super()._handle_exception(error)

    def _fatal_error(self) -> None:
        error = self._exception  # the first one, which Textual's handler just recorded
        if debug() or error is None:
            super()._fatal_error()
            return
        self.fatal_line, self._return_code = one_line(error)
        self.bell()
        self._close_messages_no_wait()
