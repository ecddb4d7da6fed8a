"""Reading a user's TOML file (rules, ceilings, prices) with one-line errors instead of
tracebacks.

A config file is small and shallow: a few tables of short strings and numbers. So a file over
:data:`MAX_CONFIG_BYTES` or nested deeper than :data:`MAX_DEPTH` is refused before anything
acts on it (a 10 MB pattern took the load minutes; ``x = [[[[…`` ran ``tomllib`` out of stack),
and a key no table knows is refused with the known key it most looks like, so a typo or a
look-alike letter (Cyrillic ``а`` in ``pаttern``) is never silently ignored.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from roofscope.errors import RoofscopeError

MAX_CONFIG_BYTES = 1 << 20  # 1 MiB: the shipped price table is 3 KB, a rules file a few hundred B
MAX_DEPTH = 16  # tables and arrays inside each other; roofscope's files need 3


def quoted(value: object, width: int = 40) -> str:
    """A value from the file as the error repeats it: at most ``width`` characters (a
    400-digit number is not printed whole)."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def read_toml(path: str | Path, what: str, hint: str) -> dict[str, Any]:
    """The parsed file; a missing, unreadable, oversized, too deeply nested or invalid file
    raises :class:`RoofscopeError` naming ``what`` it should have been and ``hint`` on where
    its format is described."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError as exc:
        raise RoofscopeError(f"no such {what}", path=str(p), hint="check the path") from exc
    except OSError as exc:
        raise RoofscopeError(f"cannot be read ({exc.strerror or exc})", path=str(p)) from exc
    if len(raw) > MAX_CONFIG_BYTES:
        raise RoofscopeError(
            f"is larger than the {MAX_CONFIG_BYTES >> 20} MiB a {what} may be",
            path=str(p),
            hint=f"is it the right file? {hint}",
        )
    too_deep = RoofscopeError(
        f"has tables or arrays nested deeper than {MAX_DEPTH} levels", path=str(p), hint=hint
    )
    import tomllib  # here: roofscope open reaches this module before its first screen

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except RecursionError:
        raise too_deep from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RoofscopeError(
            f"is not valid TOML ({exc}){_odd_key(raw, str(exc))}", path=str(p), hint=hint
        ) from exc
    if depth(data) > MAX_DEPTH:
        raise too_deep
    return data


def depth(value: object) -> int:
    """How many tables and arrays are nested in ``value`` (a dict of scalars is 1), counted
    without recursion and stopping once past :data:`MAX_DEPTH`."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if not isinstance(item, dict | list):
            continue
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            break
        stack.extend((child, level + 1) for child in children)
    return deepest


def check_keys(
    table: dict[str, Any], known: Iterable[str], where: str, path: str | Path | None, hint: str
) -> None:
    """Refuse the first key of ``table`` that is not in ``known``, naming the known key it
    most looks like and any letter that only looks like ASCII (e.g. ``'а'`` U+0430)."""
    names = list(known)
    for key in table:
        if key not in names:
            raise RoofscopeError(
                f"unknown key {key!r} in {where}{_suggestion(key, names)}",
                path=None if path is None else str(path),
                hint=f"known keys: {', '.join(names)}; {hint}",
            )


def _odd_key(raw: bytes, error: str) -> str:
    """For a parse error on a line whose key has a non-ASCII letter (a bare TOML key is
    ASCII only): which letter, since it looks like the ASCII one it stands in for."""
    m = re.search(r"at line (\d+)", error)
    if m is None:
        return ""
    lines = raw.decode("utf-8", "replace").splitlines()
    number = int(m.group(1))
    key = lines[number - 1].split("=", 1)[0] if 0 < number <= len(lines) else ""
    odd = next((ch for ch in key if not ch.isascii()), None)
    if odd is None:
        return ""
    return f"; the key has the non-ASCII letter {odd!r} (U+{ord(odd):04X} {_char_name(odd)})"


def _char_name(ch: str) -> str:
    return unicodedata.name(ch, "unnamed")


def _suggestion(key: str, known: list[str]) -> str:
    """``: did you mean 'pattern'?`` and, for a key with a non-ASCII letter, which one."""
    by_case = {k.casefold(): k for k in known}
    close = [by_case[key.casefold()]] if key.casefold() in by_case else []
    close = close or difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    text = f": did you mean {close[0]!r}?" if close else ""
    odd = next((ch for ch in key if not ch.isascii()), None)
    if odd is not None:
        text += f" It has the non-ASCII letter {odd!r} (U+{ord(odd):04X} {_char_name(odd)})"
    return text


def text_value(
    table: dict[str, Any], key: str, where: str, path: str | Path | None, hint: str
) -> str:
    """``table[key]`` as a string; a number, boolean, array or table there is refused (a
    ``pattern = 5`` is not quietly the pattern ``"5"``)."""
    value = table[key]
    if not isinstance(value, str):
        example = (
            f'{key} = "{value}"'
            if isinstance(value, int | float) and not isinstance(value, bool)
            else f'{key} = "…"'
        )
        raise RoofscopeError(
            f"{where}: {key} = {quoted(value)} is not a string",
            path=None if path is None else str(path),
            hint=f"write {quoted(example, 60)}, in quotes; {hint}",
        )
    return value


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
