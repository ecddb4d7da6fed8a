"""roofscope: Nsight Compute exports → DuckDB → rooflines, efficiency and kernel tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:
    from roofscope.api import Session


def load(*paths: str, **options: object) -> Session:
    """Load ncu exports; see :class:`roofscope.api.Session` for the frames it gives."""
    from roofscope.api import load as _load

    return _load(*paths, **options)  # type: ignore[arg-type]


__all__ = ["__version__", "load"]
