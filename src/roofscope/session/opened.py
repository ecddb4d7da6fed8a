"""What the JSON contract, the decisions across reports and the pandas frames read of an open
session, as a protocol: :class:`~roofscope.session.core.Session` has it, and those modules
need not import the session's own module, which imports them (no import circle)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import duckdb

    from roofscope.session.loading import Options
    from roofscope.session.report import Report


class Opened(Protocol):
    reports: list[Report]
    con: duckdb.DuckDBPyConnection
    lock: threading.RLock
    options: Options
    axis: str

    @property
    def warnings(self) -> list[str]: ...
