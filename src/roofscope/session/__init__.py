"""The session every front end shares: open reports, derive, group, summarise.

``roofscope.load(*paths)`` returns a :class:`Session`; the CLI, the TUI and Python users all
read the same numbers from it. A session holds one :class:`Report` per export
(``session.reports``), which answers everything about that report alone; the session answers
what spans reports (diff, scaling, cost, MIG), the JSON contract and the pandas frames.

core (lifecycle, lock, regrouping) · loading (options, plans, ceilings) · views (the derived
chain, in order) · report (per-report queries) · decisions · contract · frames
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from roofscope.grouping import AXES

if TYPE_CHECKING:
    from roofscope.session.contract import JSON_SCHEMA_VERSION
    from roofscope.session.core import Session, load, load_in_thread
    from roofscope.session.loading import Options
    from roofscope.session.report import Report

__all__ = ["AXES", "JSON_SCHEMA_VERSION", "Options", "Report", "Session", "load", "load_in_thread"]

# Imported when first asked for (PEP 562): ``core`` loads DuckDB (~0.15 s), and the TUI draws
# its first screen from a kept copy before any session exists (tui/first_screen.py).
_WHERE = {
    "JSON_SCHEMA_VERSION": "contract",
    "Session": "core",
    "load": "core",
    "load_in_thread": "core",
    "Options": "loading",
    "Report": "report",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'roofscope.session' has no attribute {name!r}")
    return getattr(import_module(f"roofscope.session.{module}"), name)
