"""roofscope: Nsight Compute exports → DuckDB → rooflines, efficiency and kernel tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roofscope.errors import RoofscopeError
from roofscope.version import __version__

if TYPE_CHECKING:
    from roofscope.session import Session


def load(*paths: str, **options: object) -> Session:
    """Load ncu exports; see :class:`roofscope.session.Session` for the frames it gives."""
    from roofscope.session import load as _load

    return _load(*paths, **options)  # type: ignore[arg-type]


__all__ = ["RoofscopeError", "__version__", "load"]
