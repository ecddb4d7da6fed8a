"""Whole-session history in bounded memory: recent samples at full resolution, older ones
averaged in pairs as they age.

Tier 0 keeps the newest ``capacity`` samples as taken. When a tier overflows, its two oldest
buckets are averaged into one that moves to the next tier, so tier k holds buckets of 2**k
samples and the session's start is always still there, only coarser. With the defaults
(3,600 per tier, 10 tiers) one GPU costs at most ~7 MB and keeps 3.7 million samples' worth:
six weeks at 1 Hz. Past that the oldest buckets are dropped.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Sequence

from roofscope.telemetry.sample import SERIES_KEYS

NAN = float("nan")


def _mean(a: float, b: float) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return (a + b) / 2.0


class _Tier:
    """Parallel arrays: bucket start, end and one column per series (NaN = not measured)."""

    __slots__ = ("cols", "t0", "t1")

    def __init__(self, width: int):
        self.t0 = array("d")
        self.t1 = array("d")
        self.cols = [array("d") for _ in range(width)]

    def __len__(self) -> int:
        return len(self.t0)

    def append(self, t0: float, t1: float, values: Sequence[float]) -> None:
        self.t0.append(t0)
        self.t1.append(t1)
        for col, v in zip(self.cols, values, strict=True):
            col.append(v)

    def pop_oldest_pair(self) -> tuple[float, float, list[float]]:
        t0, t1 = self.t0[0], self.t1[1]
        merged = [_mean(col[0], col[1]) for col in self.cols]
        del self.t0[:2], self.t1[:2]
        for col in self.cols:
            del col[:2]
        return t0, t1, merged

    def drop_oldest(self) -> None:
        del self.t0[:1], self.t1[:1]
        for col in self.cols:
            del col[:1]


class SeriesHistory:
    """The history of one GPU: ``add`` samples in time order, ask for columns of a window."""

    def __init__(self, capacity: int = 3600, tiers: int = 10, keys: Sequence[str] = SERIES_KEYS):
        if capacity < 2 or tiers < 1:
            raise ValueError("capacity >= 2 and tiers >= 1")
        self.capacity = capacity
        self.keys = tuple(keys)
        self.index = {k: i for i, k in enumerate(self.keys)}
        self.tiers = [_Tier(len(self.keys)) for _ in range(tiers)]
        self.added = 0
        self.measured: set[str] = set()

    def add(self, ts: float, values: Sequence[float | None]) -> None:
        """A sample older than the newest one kept is ignored (a follower re-reading a file)."""
        newest = self.last_ts
        if newest is not None and ts <= newest:
            return
        self.added += 1
        row = [NAN if v is None else float(v) for v in values]
        if len(self.measured) < len(self.keys):
            self.measured.update(k for k, v in zip(self.keys, row, strict=True) if v == v)
        self.tiers[0].append(ts, ts, row)
        for level, tier in enumerate(self.tiers):
            if len(tier) <= self.capacity:
                break
            if level + 1 < len(self.tiers):
                t0, t1, merged = tier.pop_oldest_pair()
                self.tiers[level + 1].append(t0, t1, merged)
            else:
                tier.drop_oldest()

    def extend(self, ts: Sequence[float], columns: Sequence[Sequence[float | None]]) -> None:
        """Many samples at once (a follower's catch-up), with the same result as :meth:`add`
        for each in turn: ``columns`` holds one sequence per key, parallel to ``ts``."""
        newest = self.last_ts
        keep = []
        for i, t in enumerate(ts):
            if newest is None or t > newest:
                keep.append(i)
                newest = t
        if not keep:
            return
        self.added += len(keep)
        times = [float(ts[i]) for i in keep]
        cols = [[NAN if (v := col[i]) is None else float(v) for i in keep] for col in columns]
        if len(self.measured) < len(self.keys):
            self.measured.update(
                k for k, col in zip(self.keys, cols, strict=True) if any(v == v for v in col)
            )
        self._push(0, times, times, cols)

    def _push(self, level: int, t0: list[float], t1: list[float], cols: list[list[float]]) -> None:
        """Append buckets to a tier, then move its oldest pairs on as :meth:`add` would: a
        tier that overflows sheds pairs until it holds ``capacity`` or one less."""
        tier = self.tiers[level]
        tier.t0.extend(t0)
        tier.t1.extend(t1)
        for col, values in zip(tier.cols, cols, strict=True):
            col.extend(values)
        over = len(tier) - self.capacity
        if over <= 0:
            return
        if level + 1 == len(self.tiers):  # the last tier drops its oldest buckets
            del tier.t0[:over], tier.t1[:over]
            for col in tier.cols:
                del col[:over]
            return
        n = 2 * ((over + 1) // 2)
        starts, ends = tier.t0[0:n:2].tolist(), tier.t1[1:n:2].tolist()
        merged = [
            [_mean(a, b) for a, b in zip(col[0:n:2], col[1:n:2], strict=True)] for col in tier.cols
        ]
        del tier.t0[:n], tier.t1[:n]
        for col in tier.cols:
            del col[:n]
        self._push(level + 1, starts, ends, merged)

    @property
    def first_ts(self) -> float | None:
        for tier in reversed(self.tiers):
            if len(tier):
                return tier.t0[0]
        return None

    @property
    def last_ts(self) -> float | None:
        tier = self.tiers[0]
        return tier.t1[-1] if len(tier) else None

    def buckets(self) -> int:
        return sum(len(t) for t in self.tiers)

    def _in_range(self, start: float, end: float) -> Iterator[tuple[_Tier, int, int]]:
        for tier in reversed(self.tiers):  # oldest data first
            lo = bisect_left(tier.t1, start)
            hi = bisect_left(tier.t0, end)
            if lo < hi:
                yield tier, lo, hi

    def window(
        self, key: str, end: float, seconds_per_column: float, columns: int
    ) -> list[float | None]:
        """Mean of ``key`` per column over ``[end - columns·spc, end)``; None where nothing was
        sampled. An averaged (older) bucket counts in every column it overlaps, so zooming in
        on old data shows steps rather than gaps."""
        col_index = self.index[key]
        start = end - columns * seconds_per_column
        sums = [0.0] * columns
        counts = [0] * columns
        for tier, lo, hi in self._in_range(start, end):
            values, t0s, t1s = tier.cols[col_index], tier.t0, tier.t1
            if tier is self.tiers[0]:  # one instant per bucket: a single column
                for t, v in zip(t0s[lo:hi], values[lo:hi], strict=True):
                    if v == v:  # else NaN: not measured
                        c = int((t - start) // seconds_per_column)
                        if 0 <= c < columns:
                            sums[c] += v
                            counts[c] += 1
                continue
            for j in range(lo, hi):
                v = values[j]
                if v != v:  # NaN: not measured
                    continue
                first = int((t0s[j] - start) // seconds_per_column)
                last = int((t1s[j] - start) // seconds_per_column)
                for c in range(max(0, first), min(columns - 1, last) + 1):
                    sums[c] += v
                    counts[c] += 1
        out = [s / n if n else None for s, n in zip(sums, counts, strict=True)]
        # A lone empty column between two sampled ones is timer jitter (two samples fell in
        # its neighbour), not a pause: show the value before it instead of a hole.
        for c in range(1, columns - 1):
            if out[c] is None and out[c - 1] is not None and counts[c + 1]:
                out[c] = out[c - 1]
        return out

    def has(self, key: str) -> bool:
        """Whether ``key`` was ever measured (GPM series stay empty on older GPUs)."""
        return key in self.measured
