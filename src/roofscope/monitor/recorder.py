"""``roofscope record``: sample a source on a fixed schedule and write a recording.

Ticks are scheduled at ``start + k·interval`` (not "sleep interval after each sample"), so the
rate does not drift with NVML's latency; a tick that falls behind is skipped, not queued.
SIGTERM (Slurm at the end of a job step) and Ctrl+C end the recording with a final flush.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from roofscope.errors import RoofscopeError
from roofscope.monitor.source import GpuSource
from roofscope.telemetry.recording import RecordingWriter

MIN_INTERVAL_S = 0.1
MAX_INTERVAL_S = 10.0


def check_interval(interval: float) -> float:
    if not MIN_INTERVAL_S <= interval <= MAX_INTERVAL_S:
        raise RoofscopeError(
            f"interval {interval:g} s is out of range",
            hint=f"use {MIN_INTERVAL_S:g} to {MAX_INTERVAL_S:g} seconds",
        )
    return interval


@dataclass
class RecordResult:
    path: Path
    samples: int
    ticks: int
    skipped: int
    seconds: float
    parts: int


def record(
    source: GpuSource,
    out: Path,
    *,
    interval: float = 1.0,
    duration: float | None = None,
    flush_s: float = 10.0,
    rotate_s: float = 600.0,
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.monotonic,
    warn: Callable[[str], None] | None = None,
) -> RecordResult:
    """Record until ``duration`` passes or ``stop`` is set (the signal handlers set it).

    A flush that cannot write (full disk) is retried at the next one and reported once through
    ``warn``; still failing at the end, it raises RoofscopeError: nothing is lost silently.
    """
    check_interval(interval)
    writer = RecordingWriter(out)
    first_part = writer.part_number
    stop = stop or threading.Event()
    start = clock()
    last_flush = last_rotate = start
    ticks = skipped = samples = 0
    try:
        while not stop.is_set():
            now = clock()
            if duration is not None and now - start >= duration:
                break
            reading = source.read()
            writer.add(reading)
            samples += len(reading.samples)
            ticks += 1
            now = clock()
            if now - last_rotate >= rotate_s:
                writer.rotate()
                last_rotate = last_flush = now
            elif now - last_flush >= flush_s:
                told = writer.error
                writer.flush()
                last_flush = now
                if writer.error and writer.error != told and warn is not None:
                    warn(f"{writer.error}: keeping samples in memory and trying again")
            next_tick = start + ticks * interval
            if now > next_tick:  # fell behind: skip the missed ticks
                missed = int((now - next_tick) // interval) + 1
                skipped += missed
                ticks += missed
                next_tick = start + ticks * interval
            wait = next_tick - clock()
            if duration is not None:
                wait = min(wait, start + duration - clock())
            if wait > 0:
                stop.wait(wait)
    finally:
        writer.flush()
    if writer.error:
        raise RoofscopeError(
            f"{writer.error}: the samples since its last successful write are not saved",
            path=str(out),
            hint="free space on that file system or record to another --out; the parts "
            "already on disk are complete",
        )
    return RecordResult(
        out, samples, ticks - skipped, skipped, clock() - start, writer.part_number - first_part + 1
    )


def stop_on_signals() -> threading.Event:
    """An event set by SIGTERM or SIGINT, so the loop ends with a flush instead of dying."""
    stop = threading.Event()

    def handler(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    return stop
