"""``input_pipeline``: a GPU recording's long low-utilisation stretches between busy ones, while
the job's process holds the GPU (issue 19 item 2).

A training job whose data loader cannot keep up runs its GPU in bursts: busy while a batch is
there, idle with the process still attached (memory allocated, the process listed by NVML) while
the next one is read, decoded and augmented on the CPU. Before the first busy period (start-up,
model loading) and after the last (teardown) the same picture is something else, so only
stretches with busy samples on both sides count; a GPU nothing holds is not waiting for anyone.

Samples are read as the recording summary reads them (analysis/recording.py, one interval
logic for both): each sample stands for the interval since the previous one of its GPU, in the
order the recorder wrote them (``seq``), and an interval over 3× the median step (the recorder
paused) counts for nothing and breaks a stretch.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from roofscope.analysis.advice import ROOFSCOPE, Advice, Context, step_speedup
from roofscope.analysis.recording import LOW_UTIL, intervals_sql, summarise
from roofscope.telemetry.recording import CLOCK_JUMP_S

MIN_STRETCH_S = 5.0  # seconds a low stretch lasts before it counts (NVML's window is ≤ 1 s)
WAIT_SHARE = 5.0  # % of the recorded GPU time in such stretches before the rule fires
# bytes above the GPU's least memory use in the recording that mean a process holds it (a CUDA
# context alone takes ~0.5 GiB on an H100), for when NVML lists no process (containers)
HELD_BYTES = 256 * 2**20

BUSY = "busy"  # utilisation at or above LOW_UTIL
WAIT = "wait"  # under LOW_UTIL with a process holding the GPU
IDLE = "idle"  # under LOW_UTIL with nothing holding it
GAP = "gap"  # no interval to read: the first sample, a pause of the recorder, no utilisation

_STRETCHES = """
, c AS (
    SELECT report_id, host, gpu, seq, dt, util_gpu,
        CASE WHEN NOT counted OR util_gpu IS NULL THEN '{gap}'
             WHEN util_gpu >= {low} THEN '{busy}'
             WHEN coalesce(len(processes), 0) > 0
                  OR mem_used > min(mem_used) OVER g + {held} THEN '{wait}'
             ELSE '{idle}' END AS state,
        sum(CASE WHEN dt > 0 AND dt <= {jump} THEN dt ELSE 0 END) OVER (
            PARTITION BY report_id, host, gpu ORDER BY seq ROWS UNBOUNDED PRECEDING) AS elapsed
    FROM k WINDOW g AS (PARTITION BY report_id, host, gpu)
), r AS (
    SELECT *, sum(CASE WHEN state IS NOT DISTINCT FROM before THEN 0 ELSE 1 END) OVER (
        PARTITION BY report_id, host, gpu ORDER BY seq ROWS UNBOUNDED PRECEDING) AS run
    FROM (SELECT *, lag(state) OVER (PARTITION BY report_id, host, gpu ORDER BY seq) AS before
          FROM c)
), runs AS (
    SELECT report_id, host, gpu, run, any_value(state) AS state, count(*) AS samples,
        sum(dt) AS duration, sum(util_gpu * dt) / nullif(sum(dt), 0) AS util,
        min(elapsed - dt) AS start
    FROM r GROUP BY ALL
), flanked AS (
    SELECT *, lag(state) OVER w AS prev, lead(state) OVER w AS next
    FROM runs WINDOW w AS (PARTITION BY report_id, host, gpu ORDER BY run)
), busy AS (
    SELECT report_id, host, gpu, median(util_gpu) AS busy_median
    FROM c WHERE state = '{busy}' GROUP BY ALL
)
SELECT f.host, f.gpu, f.duration, f.util, f.samples, f.start, b.busy_median
FROM flanked f JOIN busy b USING (report_id, host, gpu)
WHERE f.state = '{wait}' AND f.prev = '{busy}' AND f.next = '{busy}'
    AND f.duration >= {min_s}
ORDER BY f.host, f.gpu, f.run
"""


@dataclass(frozen=True)
class Stretch:
    """A low-utilisation stretch of one GPU between two busy periods, the GPU held throughout."""

    host: str
    gpu: int
    duration_s: float  # Σ of its samples' intervals
    util: float  # its time-weighted utilisation, 0..1
    samples: int
    start_s: float  # seconds of recording (Σ intervals, pauses included) before it began
    busy_median: float  # the median utilisation of the GPU's busy samples, 0..1

    @property
    def gain_s(self) -> float:
        """The time the stretch would save at the busy median utilisation."""
        return self.duration_s * max(0.0, 1.0 - self.util / self.busy_median)


def stretches(con: duckdb.DuckDBPyConnection, report_id: int) -> list[Stretch]:
    """Every stretch of the recording, per GPU in recorded order."""
    sql = intervals_sql(report_id) + _STRETCHES.format(
        gap=GAP,
        busy=BUSY,
        wait=WAIT,
        idle=IDLE,
        low=LOW_UTIL,
        held=HELD_BYTES,
        jump=CLOCK_JUMP_S,
        min_s=MIN_STRETCH_S,
    )
    return [
        Stretch(str(h), int(g), float(d), float(u or 0.0), int(n), float(s or 0.0), float(b))
        for h, g, d, u, n, s, b in con.execute(sql).fetchall()
    ]


def _label(host: str, gpu: int) -> str:
    return f"{host}:{gpu}" if host else f"GPU {gpu}"


def input_pipeline(found: list[Stretch], spans: dict[tuple[str, int], float]) -> list[Advice]:
    """The rule over a recording: ``found`` its stretches, ``spans`` each GPU's recorded span
    (``duration_s`` of the recording summary) for the GPUs that ran work."""
    step = sum(spans.values())
    if not found or step <= 0:
        return []
    spent = sum(s.duration_s for s in found)
    share = 100.0 * spent / step
    if share < WAIT_SHARE:
        return []
    gain = sum(s.gain_s for s in found)
    inside = sum(s.util * s.duration_s for s in found) / spent
    gpus = sorted({(s.host, s.gpu) for s in found})
    medians = sorted({round(s.busy_median, 4) for s in found})
    median_text = (
        f"{medians[0]:.0%}" if len(medians) == 1 else f"{medians[0]:.0%}–{medians[-1]:.0%}"
    )
    evidence = [
        f"{len(found)} stretch(es) of ≥ {MIN_STRETCH_S:g} s with GPU utilisation under "
        f"{LOW_UTIL:.0%} while a process holds the GPU, between busy periods: {spent:.1f} s, "
        f"{share:.1f}% of the {step:.1f} s recorded (threshold {WAIT_SHARE:g}%)",
        f"utilisation inside them {inside:.0%} (time-weighted) against a busy median of "
        f"{median_text} (the GPU's samples at ≥ {LOW_UTIL:.0%})",
    ]
    for host, gpu in gpus:
        mine = [s for s in found if (s.host, s.gpu) == (host, gpu)]
        longest = max(mine, key=lambda s: s.duration_s)
        evidence.append(
            f"{_label(host, gpu)}: {len(mine)} stretch(es), {sum(s.duration_s for s in mine):.1f} "
            f"s of its {spans.get((host, gpu), 0.0):.1f} s; the longest {longest.duration_s:.1f} s "
            f"at {longest.util:.0%}, from {longest.start_s:.0f} s into the recording"
        )
    evidence.append(
        "held: NVML lists a process on the GPU, or its memory use is "
        f"≥ {HELD_BYTES / 2**20:.0f} MiB above its least in the recording"
    )
    return [
        Advice(
            rule="input_pipeline",
            source=ROOFSCOPE,
            title=(
                f"GPU waits between busy periods with the job on it: {share:.1f}% of the recording"
            ),
            action=(
                "feed the GPU faster: DataLoader(num_workers=…, pin_memory=True, "
                "prefetch_factor=…, persistent_workers=True), and move augmentation to the GPU"
            ),
            evidence=evidence,
            groups=[],
            launches=0,
            time_s=spent,
            time_pct=share,
            est_gain_s=gain,
            est_step_speedup=step_speedup(step, gain),
            assumptions=[
                "the stretches would run at their GPU's busy median utilisation: gain = Σ "
                "duration × (1 − utilisation inside ÷ busy median); the step is the recording's "
                "span"
                + (
                    f", summed over the {len(spans)} GPUs that ran work (GPU-seconds)"
                    if len(spans) > 1
                    else ""
                ),
                "utilisation is NVML's share of time a kernel was running, not SM occupancy: "
                "a busy GPU may still be far below its roofs",
                "a recording cannot tell a data-loader stall from evaluation, checkpointing or "
                "a peer's collective between busy periods: profile a step with nsys to see the "
                "host side",
                "not checked by applying it (no before/after run in docs/performance.md)",
            ],
        )
    ]


def advise(ctx: Context) -> list[Advice]:
    """The producer ``Report.advice()`` runs (analysis/advice/sources.py): recordings only."""
    report = ctx.report
    if report is None or not report.is_recording:
        return []
    found = stretches(ctx.con, ctx.report_id)
    if not found:
        return []
    worked = _gpus_that_worked(ctx.con, ctx.report_id)
    spans = {
        (g.host, g.gpu): g.duration_s
        for g in summarise(ctx.con, ctx.report_id)
        if (g.host, g.gpu) in worked
    }
    return input_pipeline(found, spans)


def _gpus_that_worked(con: duckdb.DuckDBPyConnection, report_id: int) -> set[tuple[str, int]]:
    """GPUs with at least one sample at or above LOW_UTIL: those the job ran on."""
    rows = con.execute(
        "SELECT DISTINCT host, gpu FROM gpu_samples WHERE report_id = ? AND util_gpu >= ?",
        [report_id, LOW_UTIL],
    ).fetchall()
    return {(str(h), int(g)) for h, g in rows}
