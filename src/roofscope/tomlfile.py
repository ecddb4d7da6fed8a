"""Reading a user's TOML file (rules, ceilings, prices) with one-line errors instead of
tracebacks."""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from roofscope.errors import RoofscopeError


def quoted(value: object, width: int = 40) -> str:
    """A value from the file as the error repeats it: at most ``width`` characters (a
    400-digit number is not printed whole)."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def read_toml(path: str | Path, what: str, hint: str) -> dict[str, Any]:
    """The parsed file; a missing, unreadable or invalid file raises :class:`RoofscopeError`
    naming ``what`` it should have been and ``hint`` on where its format is described."""
    p = Path(path)
    try:
        return tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise RoofscopeError(f"no such {what}", path=str(p), hint="check the path") from exc
    except OSError as exc:
        raise RoofscopeError(f"cannot be read ({exc.strerror or exc})", path=str(p)) from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RoofscopeError(f"is not valid TOML ({exc})", path=str(p), hint=hint) from exc


def positive_float(value: float, refuse: Callable[[str], Exception]) -> float:
    """A number from a user's file as a float: one too large for a float (a 401-digit
    integer), NaN/inf or not above zero is refused with ``refuse(problem)``, never a
    traceback nor a roof of zero."""
    try:
        number = float(value)
    except OverflowError:
        raise refuse("out of range") from None
    if not math.isfinite(number):
        raise refuse("not a finite number")
    if number <= 0:
        raise refuse("not positive")
    return number
