"""The one JSON writer of every command: strict JSON (RFC 8259), which has no NaN or Infinity.

A value roofscope could not compute is ``null``; ``json.dumps`` would otherwise write ``NaN``,
which ``jq``, JavaScript and every strict parser refuse.
"""

from __future__ import annotations

import json
import math
from typing import Any


def finite(value: Any) -> Any:
    """``value`` with every non-finite float (at any depth) turned to None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def dumps(doc: Any, indent: int | None = 2) -> str:
    """Strict JSON text of ``doc`` ending in a newline (strings kept exactly: JSON escapes
    control characters itself)."""
    return (
        json.dumps(finite(doc), indent=indent, ensure_ascii=False, allow_nan=False, default=str)
        + "\n"
    )
