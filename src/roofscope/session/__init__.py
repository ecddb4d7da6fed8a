"""The session every front end shares: open reports, derive, group, summarise.

``roofscope.load(*paths)`` returns a :class:`Session`; the CLI, the TUI and Python users all
read the same numbers from it. A session holds one :class:`Report` per export
(``session.reports``), which answers everything about that report alone; the session answers
what spans reports (diff, scaling, cost, MIG), the JSON contract and the pandas frames.

core (lifecycle, lock, regrouping) · loading (options, plans, ceilings) · views (the derived
chain, in order) · report (per-report queries) · decisions · contract · frames
"""

from roofscope.session.contract import JSON_SCHEMA_VERSION
from roofscope.session.core import Session, load, load_in_thread
from roofscope.session.loading import Options
from roofscope.session.report import Report
from roofscope.session.views import AXES

__all__ = ["AXES", "JSON_SCHEMA_VERSION", "Options", "Report", "Session", "load", "load_in_thread"]
