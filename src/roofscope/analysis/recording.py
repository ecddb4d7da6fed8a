"""Per-GPU summaries of GPU recordings: the numbers the published studies tabulated from
nvidia-smi (average GPU usage, memory usage rate, temperature, power) plus energy and the time
spent under 30% utilisation, and where GPM gave them the estimated FLOP/s and DRAM B/s
(``est_*``, means over the samples that have an estimate: hardware/pipes.py).

Each sample's utilisation and power stand for the interval since the previous sample (NVML's
utilisation looks back over its own sample period). Intervals longer than three times the
median step — the recorder was stopped, the node hung — are left out of energy and time.
Intervals are taken in the order the recorder wrote the samples (``seq``), not in timestamp
order: the timestamps are the wall clock, which an NTP step or a wrong hardware clock moves back
or years ahead. An interval that goes back, or ahead by more than a day
(:data:`~roofscope.telemetry.recording.CLOCK_JUMP_S`), is such a step: it counts for nothing, not
even in ``duration_s`` (the sum of the other intervals, pauses of the recorder included), and
loading the recording warns about it.
Energy comes from the driver's energy counter where every interval has it (recordings of other
tools, tests), else from power × time: roofscope's NVML source reads the counter only every 10 s
because the call costs ~4 ms of CPU. On the H100 recordings of bench/monitor_device.py the two
agreed within 0.2%. ``energy_source`` says which was used.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import duckdb

from roofscope.telemetry.recording import CLOCK_JUMP_S, from_table
from roofscope.telemetry.sample import Reading

LOW_UTIL = 0.30

_INTERVALS = """
WITH s AS (
    SELECT *, ts - lag(ts) OVER w AS dt, energy_j - lag(energy_j) OVER w AS de
    FROM gpu_samples {where}
    WINDOW w AS (PARTITION BY report_id, host, gpu ORDER BY seq)
), steps AS (
    SELECT report_id, host, gpu, median(dt) FILTER (WHERE dt > 0) AS step FROM s GROUP BY ALL
), k AS (
    SELECT s.*, step, coalesce(dt > 0 AND dt <= 3 * step, FALSE) AS counted
    FROM s JOIN steps USING (report_id, host, gpu)
)
"""


def intervals_sql(report_id: int | None = None) -> str:
    """``WITH … k``: every column of ``gpu_samples`` (one report's, or all) with ``dt``, the
    seconds since the GPU's previous sample in the order written (``seq``), ``de`` the energy
    counter's increase over it, ``step`` the GPU's median interval and ``counted`` (0 < dt ≤
    3 × step: the interval counts for time and energy). A query over it reads ``FROM k``; the
    summary below and the recording advice (analysis/advice/recording.py) share it."""
    where = "" if report_id is None else f"WHERE report_id = {int(report_id)}"
    return _INTERVALS.format(where=where)


_SQL = """
SELECT report_id, host, gpu, any_value(name) AS name, count(*) AS samples,
    min(ts) AS start, max(ts) AS "end", any_value(step) AS step,
    avg(util_gpu) AS util_gpu, avg(util_mem) AS util_mem,
    avg(mem_used / nullif(mem_total, 0)) AS mem_used_frac, max(mem_used) AS mem_used_max,
    avg(temp_c) AS temp_c, max(temp_c) AS temp_max_c,
    avg(power_w) AS power_w, max(power_w) AS power_max_w,
    sum(dt) FILTER (WHERE counted) AS covered_s,
    coalesce(sum(dt) FILTER (WHERE dt > 0 AND dt <= {jump}), 0.0) AS span_s,
    sum(greatest(de, 0)) FILTER (WHERE counted) AS energy_counter_j,
    count(de) FILTER (WHERE counted) = count(*) FILTER (WHERE counted) AS counter_complete,
    sum(power_w * dt) FILTER (WHERE counted) AS energy_power_j,
    sum(dt) FILTER (WHERE counted AND util_gpu < {low}) AS low_util_s,
    avg(tensor_active) AS tensor_active, avg(sm_active) AS sm_active,
    avg(est_flops) AS est_flops, max(est_flops) AS est_flops_max,
    avg(est_dram_bps) AS est_dram_bps
FROM k GROUP BY report_id, host, gpu ORDER BY report_id, host, gpu
"""


@dataclass
class GpuSummary:
    report_id: int
    host: str
    gpu: int
    name: str | None
    samples: int
    start: float
    end: float
    duration_s: float
    interval_s: float | None
    util_gpu: float | None
    util_mem: float | None
    mem_used_frac: float | None
    mem_used_max: float | None
    temp_c: float | None
    temp_max_c: float | None
    power_w: float | None
    power_max_w: float | None
    energy_j: float | None
    energy_source: str | None
    low_util_s: float | None
    low_util_frac: float | None
    tensor_active: float | None
    sm_active: float | None
    # Estimates (hardware/pipes.py): GPM pipe activity × peak at the SM clock, and DRAM bw
    # utilisation × datasheet bandwidth; means over the samples that have them.
    est_flops: float | None = None
    est_flops_max: float | None = None
    est_dram_bps: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarise(con: duckdb.DuckDBPyConnection, report_id: int | None = None) -> list[GpuSummary]:
    sql = intervals_sql(report_id) + _SQL.format(low=LOW_UTIL, jump=CLOCK_JUMP_S)
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    out = []
    for values in cursor.fetchall():
        r = dict(zip(names, values, strict=True))
        covered = r["covered_s"]
        if r["counter_complete"] and r["energy_counter_j"] is not None:
            energy, source = r["energy_counter_j"], "NVML energy counter"
        elif r["energy_power_j"] is not None:
            energy, source = r["energy_power_j"], "power × time"
        else:
            energy, source = None, None
        low = (r["low_util_s"] or 0.0) if covered else None
        derived = {
            "duration_s": r["span_s"],
            "interval_s": r["step"],
            "energy_j": energy,
            "energy_source": source,
            "low_util_s": low,
            "low_util_frac": low / covered if covered and low is not None else None,
        }
        same = {
            k: v for k, v in r.items() if k in GpuSummary.__dataclass_fields__ and k not in derived
        }
        out.append(GpuSummary(**same, **derived))
    return out


class StoredRecordingSource:
    """A recording loaded in the store, as a :class:`~roofscope.monitor.source.GpuSource`:
    the first read returns every sample, later reads nothing (it is not growing)."""

    live = False

    def __init__(
        self, con: duckdb.DuckDBPyConnection, lock: Any, report_ids: list[int], label: str
    ):
        self.con = con
        self.lock = lock
        self.report_ids = report_ids
        self.label = label
        self.done = False

    def read(self) -> Reading:
        if self.done:
            return Reading()
        self.done = True
        ids = ", ".join(str(int(r)) for r in self.report_ids)
        with self.lock:
            table = self.con.sql(
                "SELECT * EXCLUDE (report_id, ts, seq), "
                "make_timestamp(CAST(ts * 1e6 AS BIGINT)) AS ts"
                f" FROM gpu_samples WHERE report_id IN ({ids}) ORDER BY ts, host, gpu"
            ).to_arrow_table()
        return from_table(table)

    def close(self) -> None:
        self.done = True
