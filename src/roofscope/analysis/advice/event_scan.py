"""Each GPU's kernels and copies in time order, read once: the GPU's wall window and busy time,
and the launch-bound kernels that ``cuda_graphs`` (advice/timeline.py) is about.

Both need, for every event, the latest end of everything before it on its GPU (``prev_end``),
and the launch-bound kernels need runs: consecutive kernels of a GPU that are each launch-bound.
As SQL these were window functions, one pass for ``prev_end`` and one for the runs, each ~1 s
per ten million kernels on two cores, and they held 2.4 GB (docs/performance.md, issue 31
item 4). Here DuckDB sorts the events (0.4 s at ten million) and streams them as Arrow batches;
pyarrow's cumulative functions carry ``prev_end`` and the run count from batch to batch. The
launch-bound kernels go into a temporary table (DuckDB spills it if it must) and one GROUP BY
names their groups. Memory is a batch, not the trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

from roofscope.sqlutil import scanned

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

BATCH_ROWS = 1_000_000

# The copies between host and GPU memory (not device-to-device, peer or Unified Memory's page
# migrations, which no staging buffer or pinned memory changes)
HOST_COPIES = ("Host-to-Device", "Device-to-Host", "Host-to-Array", "Array-to-Host")
# Each GPU's kernels and timed copies, the one event stream the windows and gaps are read from;
# a host copy's bytes (NULL for everything else) for the small copies
EVENTS = f"""
    SELECT device, start_ns, end_ns, launch_id, NULL::DOUBLE AS copy_bytes FROM spans
    WHERE report_id = $rid AND device IS NOT NULL AND end_ns >= start_ns
    UNION ALL
    SELECT device, start_ns, end_ns, NULL,
           CASE WHEN kind IN ({", ".join(f"'{k}'" for k in HOST_COPIES)}) THEN bytes END
    FROM memops
    WHERE report_id = $rid AND device IS NOT NULL AND start_ns IS NOT NULL
      AND end_ns >= start_ns
"""
# The order every rule reads them in; ties broken so that a run is the same on every read.
ORDER = "device, start_ns, end_ns, launch_id"


@dataclass(frozen=True)
class Window:
    """One GPU's wall window in the trace, and how much of it a kernel or copy ran."""

    device: int
    start_ns: int
    end_ns: int
    busy_ns: int  # the union of its kernels and copies
    # the idle gaps before its events, by length class (scan's ``gap_edges``): (count, Σ ns)
    gaps: tuple[tuple[int, int], ...] = ()
    # the idle gaps a host synchronisation returned in, having waited on a busy GPU (scan's
    # ``syncs``): count, Σ ns
    sync_gaps: tuple[int, int] = (0, 0)
    # copies under scan's ``small_copy_bytes``: count, Σ their ns, Σ ns of the idle gap before
    small_copies: tuple[int, int, int] = (0, 0, 0)

    @property
    def seconds(self) -> float:
        return max(self.end_ns - self.start_ns, 0) / 1e9

    def share(self, seconds: float) -> float:
        return 100.0 * seconds / self.seconds if self.seconds > 0 else 0.0

    @property
    def idle_s(self) -> float:
        return max(self.end_ns - self.start_ns - self.busy_ns, 0) / 1e9


@dataclass(frozen=True)
class LaunchBound:
    """What makes a kernel launch-bound, and how a run of them is counted (cuda_graphs)."""

    tiny_ns: int  # shorter than this
    gap_max_ns: int  # after a gap at least as long as itself and at most this
    run_min: int  # this many in a row make a run
    graph_gap_ns: int  # the gap a CUDA graph leaves between them (the gain's model)


@dataclass
class EventScan:
    windows: dict[int, Window]
    # per (GPU, group) and per GPU (group NULL, last column 1): the launch-bound kernels of
    # runs of at least ``run_min``: count, Σ duration, Σ gap before them, Σ gain, runs
    launch_bound: list[tuple]


@dataclass
class _Carry:
    """One GPU's state between batches."""

    start_ns: int  # its first event's start
    latest_end: int  # the latest end so far (prev_end of its next event)
    busy_ns: int
    runs: int  # kernels so far that were not launch-bound: the id of the run under way
    gaps: list[int]  # per gap class: count, Σ ns, count, Σ ns, …
    sync_gaps: list[int]  # count, Σ ns
    small_copies: list[int]  # count, Σ ns, Σ gap ns


@dataclass(frozen=True)
class Extras:
    """What else the pass counts: idle gaps by length (``gap_edges``, ns, ascending: shorter
    than the first edge, between edges, at least the last), the gaps a host synchronisation
    returned in after waiting on the GPU (``sync_starts``, ``sync_ends``: ns, one sync each,
    any order; numpy arrays or lists), and the host copies under ``small_copy_bytes``."""

    gap_edges: tuple[int, ...] = ()
    sync_starts: Sequence[int] = ()
    sync_ends: Sequence[int] = ()
    small_copy_bytes: float = 0.0


def scan(
    con: duckdb.DuckDBPyConnection,
    report_id: int,
    rule: LaunchBound,
    extras: Extras = Extras(),
) -> EventScan:
    """Windows and launch-bound kernels of one report, in one ordered pass, with the
    ``extras`` counted in each window."""
    rid = int(report_id)
    table = f"rs_launch_bound_r{rid}"
    reader_con = con.cursor()  # streams while ``con`` writes; temporary objects stay on con
    try:
        reader_con.execute(f"USE {con.execute('SELECT current_database()').fetchone()[0]}")  # type: ignore[index]
        reader = reader_con.sql(f"SELECT * FROM ({EVENTS}) ORDER BY {ORDER}", params={"rid": rid})
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {table} "
            "(device INTEGER, launch_id BIGINT, run BIGINT, dur BIGINT, gap BIGINT)"
        )
        carries: dict[int, _Carry] = {}
        syncs = _by_end(extras.sync_starts, extras.sync_ends)
        for batch in reader.to_arrow_reader(BATCH_ROWS):
            for device, part in _by_device(batch):
                bound = _scan_part(device, part, carries, rule, extras, syncs)
                if bound.num_rows:
                    with scanned(con, rs_bound_batch=bound):
                        con.execute(f"INSERT INTO {table} SELECT {device}, * FROM rs_bound_batch")
        rows = con.execute(
            f"""
            WITH runs AS (SELECT device, run FROM {table} GROUP BY device, run
                          HAVING count(*) >= {int(rule.run_min)})
            SELECT device, grp, count(*), sum(dur), sum(gap),
                   sum(greatest(gap - {int(rule.graph_gap_ns)}, 0)), count(DISTINCT run),
                   GROUPING(grp)
            FROM (SELECT b.*, coalesce(v.grp, '(unnamed)') AS grp FROM {table} b
                  JOIN runs USING (device, run)
                  LEFT JOIN launch_view v ON v.report_id = $rid AND v.launch_id = b.launch_id)
            GROUP BY GROUPING SETS ((device, grp), (device))
            """,
            {"rid": rid},
        ).fetchall()
    finally:
        reader_con.close()
        con.execute(f"DROP TABLE IF EXISTS {table}")
    windows = {
        d: Window(
            d,
            c.start_ns,
            c.latest_end,
            c.busy_ns,
            tuple(zip(c.gaps[::2], c.gaps[1::2], strict=True)),
            (c.sync_gaps[0], c.sync_gaps[1]),
            (c.small_copies[0], c.small_copies[1], c.small_copies[2]),
        )
        for d, c in sorted(carries.items())
    }
    return EventScan(windows, rows)


def _by_device(batch: pa.RecordBatch) -> list[tuple[int, pa.RecordBatch]]:
    """The batch cut where the device changes (sorted by device: a few cuts at most)."""
    import pyarrow.compute as pc

    device = batch.column(0)
    n = len(device)
    if n == 0:
        return []
    changes = pc.indices_nonzero(pc.not_equal(device.slice(1), device.slice(0, n - 1)))
    cuts = [0, *(i + 1 for i in changes.to_pylist()), n]
    return [(int(device[a].as_py()), batch.slice(a, b - a)) for a, b in pairwise(cuts)]


def _by_end(starts: Sequence[int], ends: Sequence[int]):  # type: ignore[no-untyped-def]
    """The syncs' starts and ends as int64 arrays, ordered by end (16 bytes a sync)."""
    import numpy as np

    starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
    order = np.argsort(ends, kind="stable")
    return starts[order], ends[order]


def _scan_part(
    device: int,
    part: pa.RecordBatch,
    carries: dict[int, _Carry],
    rule: LaunchBound,
    extras: Extras,
    syncs,  # type: ignore[no-untyped-def]  # (starts, ends): numpy int64, by end
) -> pa.Table:
    """One GPU's next events: its window and busy time carried on; its launch-bound kernels
    (launch id, run id, duration, gap before) returned."""
    import pyarrow as pa
    import pyarrow.compute as pc

    start, end, launch, copy_bytes = (part.column(i) for i in (1, 2, 3, 4))
    n = len(start)
    carry = carries.get(device)
    running = pc.cumulative_max(end)
    if carry is not None:
        running = pc.max_element_wise(running, pa.scalar(carry.latest_end, pa.int64()))
    # prev_end[i]: the latest end of every event before event i on this GPU (none for its first)
    prev_end = pa.concat_arrays(
        [pa.array([carry.latest_end if carry else None], pa.int64()), running.slice(0, n - 1)]
    )
    dur = pc.subtract(end, start)
    # busy: each event's part after everything before it had ended (the union of intervals)
    newly = pc.max_element_wise(pc.subtract(end, pc.max_element_wise(start, prev_end)), 0)
    busy = int(pc.sum(newly).as_py() or 0)
    gap = pc.subtract(start, prev_end)  # NULL for the first
    bound = pc.fill_null(
        pc.and_(
            pc.and_(pc.is_valid(launch), pc.less(dur, rule.tiny_ns)),
            pc.and_(pc.greater_equal(gap, dur), pc.less_equal(gap, rule.gap_max_ns)),
        ),
        False,
    )
    # a run: the kernels after one that is not launch-bound (copies neither end nor join one)
    breaks = pc.cast(pc.and_(pc.is_valid(launch), pc.invert(bound)), pa.int64())
    run = pc.add(pc.cumulative_sum(breaks), carry.runs if carry else 0)
    latest_end = int(running[n - 1].as_py())
    classes = _gap_classes(gap, extras.gap_edges)
    sync_gaps = _sync_gaps(start, prev_end, gap, syncs)
    small = _small_copies(copy_bytes, dur, gap, extras.small_copy_bytes)
    if carry is None:
        carry = _Carry(
            int(start[0].as_py()),
            latest_end,
            busy,
            int(run[n - 1].as_py()),
            classes,
            sync_gaps,
            small,
        )
        carries[device] = carry
    else:
        carry.latest_end, carry.busy_ns = latest_end, carry.busy_ns + busy
        carry.runs = int(run[n - 1].as_py())
        carry.gaps = [a + b for a, b in zip(carry.gaps, classes, strict=True)]
        carry.sync_gaps = [a + b for a, b in zip(carry.sync_gaps, sync_gaps, strict=True)]
        carry.small_copies = [a + b for a, b in zip(carry.small_copies, small, strict=True)]
    return pa.table({"launch_id": launch, "run": run, "dur": dur, "gap": gap}).filter(bound)


def _gap_classes(gap: pa.Array, edges: tuple[int, ...]) -> list[int]:
    """Count and Σ of the positive gaps (idle time: nothing ran on the GPU) in each class cut
    by ``edges``, flattened: [count, Σ ns, count, Σ ns, …]; [] without edges. Counted as
    "shorter than each edge" and differenced: two passes an edge, no filtered copies."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not edges:
        return []
    none = pa.scalar(None, pa.int64())
    # the gaps, NULL where there is none (overlap, or the first event's NULL)
    idle = pc.if_else(pc.fill_null(pc.greater(gap, 0), False), gap, none)
    below = [(0, 0)]
    for edge in edges:
        kept = pc.if_else(pc.less(idle, edge), idle, none)
        below.append((int(pc.count(kept).as_py()), int(pc.sum(kept).as_py() or 0)))
    below.append((int(pc.count(idle).as_py()), int(pc.sum(idle).as_py() or 0)))
    out: list[int] = []
    for (n0, s0), (n1, s1) in pairwise(below):
        out += [n1 - n0, s1 - s0]
    return out


def _sync_gaps(start: pa.Array, prev_end: pa.Array, gap: pa.Array, syncs) -> list[int]:  # type: ignore[no-untyped-def]
    """Count and Σ of the idle gaps (prev_end, start] in which a host synchronisation returned
    that was called while the GPU was still busy (at or before prev_end): the GPU ran out of
    work while the host waited on it, and the next launch came only after the host went on. A
    sync called once the GPU was already idle did not make the gap. The first sync to return
    in the gap is the one read (a host thread's syncs follow one another)."""
    import numpy as np
    import pyarrow.compute as pc

    starts, ends = syncs
    if not len(ends):
        return [0, 0]
    gaps = pc.fill_null(gap, 0).to_numpy(zero_copy_only=False)
    after = pc.fill_null(prev_end, 0).to_numpy(zero_copy_only=False)
    before = start.to_numpy(zero_copy_only=False)
    first = np.searchsorted(ends, after, "right")  # the first sync to return after prev_end
    inside = first < len(ends)
    at = np.minimum(first, len(ends) - 1)
    hit = (gaps > 0) & inside & (ends[at] <= before) & (starts[at] <= after)
    return [int(hit.sum()), int(gaps[hit].sum())]


def _small_copies(copy_bytes: pa.Array, dur: pa.Array, gap: pa.Array, limit: float) -> list[int]:
    """Count, Σ duration and Σ idle gap before of the copies under ``limit`` bytes."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if limit <= 0:
        return [0, 0, 0]
    small = pc.fill_null(pc.less(copy_bytes, limit), False)
    waited = pc.max_element_wise(pc.fill_null(gap, 0), pa.scalar(0, pa.int64()))
    return [
        int(pc.sum(pc.cast(small, pa.int64())).as_py() or 0),
        int(pc.sum(pc.filter(dur, small)).as_py() or 0),
        int(pc.sum(pc.filter(waited, small)).as_py() or 0),
    ]
