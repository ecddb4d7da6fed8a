"""``roofscope monitor --follow 'GLOB'``: the recordings of a job's nodes, read as they grow.

Each read re-expands the patterns (nodes start late), re-reads only the parts whose size or
modification time changed, and returns the rows newer than what it returned before. A node whose
newest sample is older than a few of its own intervals is reported as stale, so a crashed node
or a finished job shows as such instead of as a flat line.
"""

from __future__ import annotations

import glob
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from roofscope.telemetry.recording import from_table, is_recording, parts
from roofscope.telemetry.sample import GpuSample, Reading

STALE_AFTER_INTERVALS = 5
STALE_MIN_S = 30.0


class FollowSource:
    """Implements :class:`~roofscope.monitor.source.GpuSource` over recordings on disk."""

    live = False

    def __init__(self, patterns: list[str], clock: Callable[[], float] = time.time):
        self.patterns = patterns
        self.clock = clock
        self.label = "following " + " ".join(Path(p).name for p in patterns)
        self._seen: dict[Path, tuple[int, int]] = {}  # part → (size, mtime_ns) last read
        self._part_newest: dict[Path, pa.Scalar] = {}  # part → newest ts taken from it
        self._last: dict[tuple[str, int], GpuSample] = {}
        self._previous_ts: dict[tuple[str, int], float] = {}

    def recordings(self) -> list[Path]:
        found: list[Path] = []
        for pattern in self.patterns:
            for name in sorted(glob.glob(pattern)):
                path = Path(name)
                if path not in found and is_recording(path):
                    found.append(path)
        return found

    def read(self) -> Reading:
        reading = Reading()
        recordings = self.recordings()
        for recording in recordings:
            for part in parts(recording):
                try:
                    st = part.stat()
                except OSError:
                    continue
                identity = (st.st_size, st.st_mtime_ns)
                if self._seen.get(part) == identity:
                    continue
                try:
                    table = pq.read_table(part)
                except (OSError, pa.ArrowException):
                    continue  # renamed over while opening: read it on the next tick
                self._seen[part] = identity
                newest = self._part_newest.get(part)
                if newest is not None:  # a rewritten part: only its new rows become samples
                    table = table.filter(pc.greater(table["ts"], newest))
                if table.num_rows:
                    self._part_newest[part] = pc.max(table["ts"])
                    self._take(from_table(table), reading)
        reading.samples.sort(key=lambda s: (s.ts, s.host, s.gpu))
        if not recordings:
            reading.notes.append(f"no recordings match {' '.join(self.patterns)} yet")
        reading.notes += self.stale_notes()
        return reading

    def _take(self, part: Reading, into: Reading) -> None:
        for s in part.samples:
            last = self._last.get(s.key)
            if last is not None and s.ts <= last.ts:
                continue
            if last is not None:
                self._previous_ts[s.key] = last.ts
            self._last[s.key] = s
            into.samples.append(s)
        newest_gpus = {(s.host, s.gpu) for s in part.samples}
        host = part.samples[-1].host if part.samples else ""
        into.processes += [p for p in part.processes if (host, p.gpu) in newest_gpus]

    def stale_notes(self) -> list[str]:
        now = self.clock()
        notes = []
        for (host, gpu), last in sorted(self._last.items()):
            step = last.ts - self._previous_ts.get((host, gpu), last.ts)
            limit = max(STALE_MIN_S, STALE_AFTER_INTERVALS * step)
            age = now - last.ts
            if age > limit:
                notes.append(f"{host} GPU {gpu}: stale, last sample {_age(age)} ago")
        return notes

    def close(self) -> None:
        self._seen.clear()
        self._part_newest.clear()


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"
