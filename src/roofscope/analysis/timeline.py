"""The real (unreplayed) timeline of an nsys report: busy fraction, idle gaps, concurrency,
memory-copy throughput and sampled GPU metrics, over the whole run or a zoomed window.

Busy intervals (``islands``: each device's overlapping kernels merged) are made once at ingest,
so a bucketed view of ten million launches reads a few thousand intervals. Times are ns on the
export's clock; windows are half-open ``[t0, t1)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from roofscope.quantities import BYTES, LAUNCHES, TIME_S

if TYPE_CHECKING:
    import duckdb


@dataclass(frozen=True)
class Window:
    t0: int
    t1: int

    @property
    def width(self) -> int:
        return max(1, self.t1 - self.t0)

    def zoom(self, factor: float, centre: float = 0.5) -> Window:
        """Narrow (factor < 1) or widen around a point given as a fraction of the width."""
        mid = self.t0 + self.width * centre
        half = max(1000.0, self.width * factor / 2)
        return Window(int(mid - half), int(mid + half))

    def pan(self, fraction: float) -> Window:
        shift = int(self.width * fraction)
        return Window(self.t0 + shift, self.t1 + shift)

    def clamp(self, outer: Window) -> Window:
        width = min(self.width, outer.width)
        t0 = min(max(self.t0, outer.t0), outer.t1 - width)
        return Window(t0, t0 + width)


@dataclass
class Timeline:
    """Everything the Timeline view and the JSON ``timeline`` object show for one window."""

    window: Window
    device: int | None
    buckets: int
    busy: list[float] = field(default_factory=list)  # fraction of each bucket with a kernel
    concurrency: list[float] = field(default_factory=list)  # mean kernels running
    memcpy: list[float] = field(default_factory=list)  # B/s
    metrics: dict[str, list[float | None]] = field(default_factory=dict)
    metric_stats: dict[str, dict[str, float | None]] = field(default_factory=dict)
    busy_s: float = 0.0
    kernel_time_s: float = 0.0
    launches: int = 0
    gaps: int = 0
    gap_total_s: float = 0.0
    gap_longest_s: float = 0.0
    max_concurrency: int = 0
    memops: list[dict[str, object]] = field(default_factory=list)

    @property
    def busy_fraction(self) -> float:
        return self.busy_s / (self.window.width / 1e9)

    def to_dict(self) -> dict[str, object]:
        return {
            "window_ns": [self.window.t0, self.window.t1],
            "duration_s": self.window.width / 1e9,
            "device": self.device,
            LAUNCHES: self.launches,
            "kernel_time_s": self.kernel_time_s,
            "busy_s": self.busy_s,
            "busy_fraction": self.busy_fraction,
            "idle_gaps": {
                "count": self.gaps,
                "total_s": self.gap_total_s,
                "longest_s": self.gap_longest_s,
            },
            "max_concurrency": self.max_concurrency,
            "mean_concurrency": self.kernel_time_s / (self.window.width / 1e9),
            "memops": self.memops,
            "gpu_metrics": self.metric_stats,
        }


def has_timeline(con: duckdb.DuckDBPyConnection, report_id: int) -> bool:
    rows = con.execute(
        "SELECT (SELECT count(*) FROM spans WHERE report_id = $r) + (SELECT count(*) FROM "
        "memops WHERE report_id = $r AND start_ns IS NOT NULL) + (SELECT count(*) FROM "
        "gpu_metrics WHERE report_id = $r)",
        {"r": report_id},
    ).fetchall()
    return bool(rows[0][0])


def devices(con: duckdb.DuckDBPyConnection, report_id: int) -> list[int | None]:
    """Devices with kernels, busiest first."""
    rows = con.execute(
        "SELECT device FROM spans WHERE report_id = ? GROUP BY device "
        "ORDER BY sum(end_ns - start_ns) DESC, device",
        [report_id],
    ).fetchall()
    return [r[0] for r in rows]


def full_window(con: duckdb.DuckDBPyConnection, report_id: int) -> Window | None:
    row = con.execute(
        "SELECT min(t0), max(t1) FROM (SELECT min(start_ns) t0, max(end_ns) t1 FROM spans "
        "WHERE report_id = $r UNION ALL SELECT min(start_ns), max(end_ns) FROM memops "
        "WHERE report_id = $r UNION ALL SELECT min(ts_ns), max(ts_ns) FROM gpu_metrics "
        "WHERE report_id = $r)",
        {"r": report_id},
    ).fetchall()[0]
    if row[0] is None:
        return None
    return Window(int(row[0]), max(int(row[1]), int(row[0]) + 1))


def _device_sql(device: int | None) -> str:
    return "TRUE" if device is None else f"device = {int(device)}"


def _bucketed(
    con: duckdb.DuckDBPyConnection, table: str, where: str, w: Window, n: int, weight: str
) -> list[float]:
    """Σ over intervals of ``weight`` × (overlap with each bucket ÷ bucket width)."""
    width = w.width / n
    rows = con.execute(
        f"SELECT b, sum({weight} * (least(e, {w.t0} + (b + 1) * {width}) - "
        f"greatest(s, {w.t0} + b * {width}))) / {width} FROM (SELECT start_ns AS s, end_ns AS e, "
        f"*, unnest(range(CAST(greatest(0, floor((start_ns - {w.t0}) / {width})) AS BIGINT), "
        f"CAST(least({n}, floor((end_ns - {w.t0}) / {width}) + 1) AS BIGINT))) AS b "
        f"FROM {table} WHERE {where} AND end_ns > {w.t0} AND start_ns < {w.t1}) GROUP BY b"
    ).fetchall()
    out = [0.0] * n
    for b, v in rows:
        if 0 <= b < n:
            out[int(b)] = float(v or 0.0)
    return out


def timeline(
    con: duckdb.DuckDBPyConnection,
    report_id: int,
    window: Window | None = None,
    device: int | None = None,
    buckets: int = 60,
) -> Timeline | None:
    """The timeline of one device (``None``: all devices together) in a window."""
    full = full_window(con, report_id)
    if full is None:
        return None
    w = window or full
    n = max(1, int(buckets))
    rid = int(report_id)
    dev = _device_sql(device)
    spans = f"report_id = {rid} AND {dev}"
    t = Timeline(w, device, n)
    t.busy = _bucketed(con, "islands", spans, w, n, "1.0")
    t.concurrency = _bucketed(con, "spans", spans, w, n, "1.0")
    t.memcpy = _bucketed(
        con,
        "memops",
        f"report_id = {rid} AND start_ns IS NOT NULL AND kind <> 'memset' AND {dev}",
        w,
        n,
        "bytes / greatest(end_ns - start_ns, 1) * 1e9",
    )
    clip = f"least(end_ns, {w.t1}) - greatest(start_ns, {w.t0})"
    inside = f"end_ns > {w.t0} AND start_ns < {w.t1}"
    row = con.execute(
        f"SELECT coalesce(sum({clip}), 0) / 1e9, count(*) FROM spans WHERE {spans} AND {inside}"
    ).fetchall()[0]
    t.kernel_time_s, t.launches = float(row[0]), int(row[1])
    t.busy_s = float(
        con.execute(
            f"SELECT coalesce(sum({clip}), 0) / 1e9 FROM islands WHERE {spans} AND {inside}"
        ).fetchall()[0][0]
    )
    _gaps(con, t, spans, w, device)
    t.max_concurrency = _max_concurrency(con, spans, w)
    t.memops = [
        {"kind": k, "count": int(c or 0), BYTES: b, TIME_S: s}
        for k, c, b, s in con.execute(
            f"SELECT kind, sum(count), sum(bytes), sum(time_s) FROM memops WHERE report_id = "
            f"{rid} AND (start_ns IS NULL OR ({inside})) GROUP BY kind ORDER BY sum(time_s) "
            f"DESC NULLS LAST, kind"
        ).fetchall()
    ]
    t.metrics = _metric_series(con, rid, w, n)
    t.metric_stats = {
        name: {"mean": mean, "max": top, "samples": count}
        for name, mean, top, count in con.execute(
            f"SELECT source || ': ' || metric, avg(value), max(value), count(*) FROM gpu_metrics "
            f"WHERE report_id = {rid} AND ts_ns >= {w.t0} AND ts_ns < {w.t1} GROUP BY 1 ORDER BY 1"
        ).fetchall()
    }
    return t


def _gaps(
    con: duckdb.DuckDBPyConnection, t: Timeline, spans: str, w: Window, device: int | None
) -> None:
    """Idle time between busy intervals inside the window (all devices: gaps on any)."""
    part = "" if device is not None else "PARTITION BY device"
    row = con.execute(
        f"SELECT count(*), coalesce(sum(gap), 0) / 1e9, coalesce(max(gap), 0) / 1e9 FROM ("
        f"SELECT greatest(start_ns, {w.t0}) - least(lag(end_ns) OVER ({part} ORDER BY start_ns), "
        f"{w.t1}) AS gap FROM islands WHERE {spans} AND end_ns > {w.t0} AND start_ns < {w.t1}) "
        f"WHERE gap > 0"
    ).fetchall()[0]
    t.gaps, t.gap_total_s, t.gap_longest_s = int(row[0]), float(row[1]), float(row[2])


def _max_concurrency(con: duckdb.DuckDBPyConnection, spans: str, w: Window) -> int:
    row = con.execute(
        f"SELECT coalesce(max(running), 0) FROM (SELECT sum(d) OVER (ORDER BY t, d "
        f"ROWS UNBOUNDED PRECEDING) AS running FROM (SELECT greatest(start_ns, {w.t0}) AS t, "
        f"1 AS d FROM spans WHERE {spans} AND end_ns > {w.t0} AND start_ns < {w.t1} "
        f"UNION ALL SELECT least(end_ns, {w.t1}), -1 FROM spans WHERE {spans} "
        f"AND end_ns > {w.t0} AND start_ns < {w.t1}))"
    ).fetchall()[0]
    return int(row[0])


def _metric_series(
    con: duckdb.DuckDBPyConnection, rid: int, w: Window, n: int
) -> dict[str, list[float | None]]:
    width = w.width / n
    rows = con.execute(
        f"SELECT source || ': ' || metric, CAST(floor((ts_ns - {w.t0}) / {width}) AS BIGINT) b, "
        f"avg(value) FROM gpu_metrics WHERE report_id = {rid} AND ts_ns >= {w.t0} "
        f"AND ts_ns < {w.t1} GROUP BY ALL ORDER BY 1, 2"
    ).fetchall()
    names = [
        r[0]
        for r in con.execute(
            f"SELECT DISTINCT source || ': ' || metric FROM gpu_metrics WHERE report_id = {rid} "
            f"ORDER BY 1"
        ).fetchall()
    ]
    out: dict[str, list[float | None]] = {name: [None] * n for name in names}
    for name, b, v in rows:
        if 0 <= b < n:
            out[name][int(b)] = float(v)
    return out
