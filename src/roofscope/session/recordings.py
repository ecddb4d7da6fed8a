"""``roofscope record --summary``: per-GPU summaries of many recordings without building a
report session.

A session builds, per file, the store's tables, views and facts — ~27 ms a recording, 30 s
over a thousand small ones, where the follower (``monitor --follow``) reads the same files in
3 s (issue 30). A summary needs only the samples: each recording is read by the same reader
a session uses (:func:`roofscope.ingest.recording.ingest_recording`: parts in written order,
repeated parts once, other format versions refused) into one in-memory table, and summarised
by the same SQL (:func:`roofscope.analysis.recording.summarise`), all of them in one insert
and one clock-step query.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from roofscope.analysis.recording import summarise
from roofscope.ingest.recording import clock_jumps, insert_samples, recording_table
from roofscope.interrupts import connect
from roofscope.schema import GPU_SAMPLES


def recording_summaries(paths: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """(per-GPU summaries of every recording, warnings as ``path: text``); a recording named
    twice is read once."""
    import pyarrow as pa

    warnings: list[tuple[int, str]] = []
    tables = []
    seen: dict[Path, str] = {}
    named: dict[int, str] = {}
    for report_id, path in enumerate(paths):
        real = Path(path).resolve()
        if real in seen:
            warnings.append((report_id, f"the same recording as {seen[real]}: read once"))
            named[report_id] = path
            continue
        seen[real] = named[report_id] = path
        found: list[str] = []
        tables.append(recording_table(Path(path), report_id, found))
        warnings += [(report_id, w) for w in found]
    con = connect()
    try:
        con.execute(GPU_SAMPLES.ddl())
        if tables:
            insert_samples(con, pa.concat_tables(tables, promote_options="default"))
        for report_id, jumps in clock_jumps(con).items():
            warnings += [(report_id, w) for w in jumps]
        summaries = [g.to_dict() for g in summarise(con)]
    finally:
        con.close()
    return summaries, [f"{named[rid]}: {w}" for rid, w in sorted(warnings, key=lambda x: x[0])]
