"""The lines the step prints between ncu's ``==PROF==`` lines, shared by step and runner.

ncu profiles each kernel while its launch call blocks, so a marker printed (and flushed) before
the backward pass precedes the first backward kernel's ``==PROF==`` line in the merged output:
the runner assigns every profiled kernel to the phase whose marker came last.
"""

from __future__ import annotations

PREFIX = "==ROOFSCOPE=="
PHASES = ("forward", "backward", "optimizer")


def line(key: str, value: object) -> str:
    return f"{PREFIX} {key} {value}"


def parse(text: str) -> tuple[str, str] | None:
    """``==ROOFSCOPE== phase forward`` -> ("phase", "forward")."""
    if not text.startswith(PREFIX):
        return None
    key, _, value = text[len(PREFIX) :].strip().partition(" ")
    return (key, value.strip()) if key else None
