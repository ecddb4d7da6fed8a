"""pandas frames of a session, the documented Python API (README "From Python").

pandas is imported only here and only when a frame is asked for, so the CLI and the TUI start
without it. ``report`` stays a position in ``session.reports`` (None: every report), as
documented.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roofscope.analysis import summary
from roofscope.packages import needs

if TYPE_CHECKING:
    import pandas as pd

    from roofscope.session.opened import Opened


def frame(session: Opened, by: str, report: int | None) -> pd.DataFrame:
    """Rows of ``by`` (group or kernel), flattened, with the report's path in each."""
    with needs(f"Session.{by}s()"):
        import pandas as pd

    chosen = session.reports if report is None else [session.reports[report]]
    frames = []
    for r in chosen:
        flat = [{**summary.flat_row(row), "report": r.path} for row in r.rows(by)]
        frames.append(pd.DataFrame(flat))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def launches(session: Opened, report: int | None) -> pd.DataFrame:
    """One row per launch with every derived column, straight from DuckDB."""
    with needs("Session.launches()"):
        import pandas  # noqa: F401 - DuckDB's .df() needs it; say so in one line
    where = "" if report is None else f"WHERE report_id = {session.reports[report].report_id}"
    with session.lock:
        return session.con.execute(
            f"SELECT * FROM launch_view {where} ORDER BY report_id, launch_id"
        ).df()
