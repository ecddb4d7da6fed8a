"""``roofscope monitor --follow 'GLOB'``: the recordings of a job's nodes, read as they grow.

Built for a thousand nodes at 1 Hz (docs/performance.md, issue 20 item 5). Each read re-expands
the patterns (nodes start late, and their recordings can be removed), then costs one ``stat``
of each recording folder and of its newest part: a folder is listed again only when its own
identity changed (every flush of the recorder renames a part into it) and a part is read only
when its identity (inode, size, mtime) changed. Reading a part takes only the rows after those
already taken, which the recorder never rewrites.

Samples are read only of the recordings :meth:`FollowSource.watch` names (the Monitor's cards
on screen); the others are only ``stat``-ed, plus one look at the newest part's host, GPU and
time columns when first seen and when they turn stale. A recording that enters the watched set
is read whole once (``Reading.complete``), so its cards get their whole history.

A node is stale when its files stopped growing — judged from their mtimes, so neither the
nodes' clocks nor the follower's read rate matter — for longer than ``stale_after``: by default
the largest of 30 s, three of its flush intervals and five of its sample intervals.
"""

from __future__ import annotations

import glob
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from roofscope.present.units import ago
from roofscope.telemetry.recording import PART, from_table, is_recording
from roofscope.telemetry.sample import GpuSample, NodeStatus, Reading

STALE_AFTER_INTERVALS = 5
STALE_AFTER_FLUSHES = 3
STALE_MIN_S = 30.0
GAPS_KEPT = 4
PEEK_COLUMNS = ["ts", "host", "gpu"]

Ident = tuple[int, int, int]  # inode, size, mtime_ns


class _Part:
    __slots__ = ("bad", "ident", "rows")

    def __init__(self) -> None:
        self.ident: Ident | None = None
        self.rows = 0  # rows already taken: the recorder only appends to a part
        self.bad: str | None = None  # why this version could not be read


class _Node:
    """What the follower knows of one recording between reads."""

    __slots__ = (
        "dir_ident",
        "full",
        "gaps",
        "gpus",
        "grown_at",
        "host",
        "last",
        "last_ts",
        "parts",
        "path",
        "peeked",
        "recheck",
        "stale",
        "status",
        "step",
    )

    def __init__(self, path: str):
        self.path = path
        self.host = Path(path).name.removesuffix(".parquet")  # until a sample says
        self.gpus: tuple[int, ...] = ()
        self.dir_ident: tuple[int, int] | None = None
        self.recheck = False  # list the folder on the next read even if it looks the same
        self.parts: dict[str, _Part] = {}  # path → state, oldest first
        self.grown_at: float | None = None  # newest mtime of its parts (seconds)
        self.gaps: list[float] = []  # the last few intervals between two growths
        self.step = 0.0  # its sample interval
        self.last: dict[int, GpuSample] = {}  # newest sample taken per GPU
        self.last_ts: float | None = None
        self.full = True  # the next read of its samples must deliver its whole history
        self.peeked = False
        self.stale = False
        self.status: NodeStatus | None = None  # as last sent; None: changed since


class _Expansion:
    """One pattern's matches, listed again only when the folder they are in changes (when only
    the last component of the pattern has wildcards; else globbed at every read)."""

    __slots__ = ("folder", "ident", "matches", "pattern", "recheck")

    def __init__(self, pattern: str):
        self.pattern = pattern
        head, tail = os.path.split(pattern)
        self.folder = (head or ".") if not glob.has_magic(head) and tail else None
        self.ident: tuple[int, int] | None = None
        self.recheck = False
        self.matches: list[str] = []

    def expand(self) -> list[str]:
        if self.folder is None:
            return sorted(glob.glob(self.pattern))
        try:
            st = os.stat(self.folder)
        except OSError:
            self.ident, self.matches = None, []
            return []
        ident = (st.st_ino, st.st_mtime_ns)
        if ident != self.ident or self.recheck:
            self.recheck = ident != self.ident  # once more next time: mtimes are coarse
            self.ident = ident
            self.matches = sorted(glob.glob(self.pattern))
        return self.matches


class FollowSource:
    """Implements :class:`~roofscope.monitor.source.GpuSource` over recordings on disk."""

    live = False

    def __init__(
        self,
        patterns: list[str],
        clock: Callable[[], float] = time.time,
        stale_after: float | None = None,
    ):
        self.patterns = patterns
        self.clock = clock
        self.stale_after = stale_after
        self.label = "following " + " ".join(Path(p).name for p in patterns)
        self._nodes: dict[str, _Node] = {}
        self._expansions = [_Expansion(p) for p in patterns]
        # path → (identity, checked twice) of a match that is not a recording (yet)
        self._not_recordings: dict[str, tuple[tuple[int, int], bool]] = {}
        self._watch: frozenset[str] | None = None  # None: every recording
        self._lock = threading.Lock()
        self._sent: list[NodeStatus] | None = None

    # -- what to read --------------------------------------------------------------------------
    def watch(self, nodes: Iterable[str] | None) -> None:
        """Read the samples of these recordings only (paths as in ``NodeStatus.node``; None:
        all of them). One that enters the set is read whole at the next read. Safe to call
        from another thread than the one reading."""
        new = None if nodes is None else frozenset(nodes)
        with self._lock:
            old = self._watch
            for path, node in self._nodes.items():
                if (old is not None and path not in old) and (new is None or path in new):
                    node.full = True
            self._watch = new

    def recordings(self) -> list[str]:
        """The recordings the patterns match now: folders of parts or roofscope Parquet files.
        A match that is not (yet) a recording is checked again only when it changes."""
        found: list[str] = []
        seen: set[str] = set()
        for expansion in self._expansions:
            for name in expansion.expand():
                if name in seen:
                    continue
                seen.add(name)
                if name in self._nodes:
                    found.append(name)
                    continue
                try:
                    st = os.stat(name)
                except OSError:
                    continue
                ident = (st.st_ino, st.st_mtime_ns)
                checked = self._not_recordings.get(name)
                if checked == (ident, True):
                    continue
                if is_recording(Path(name)):
                    self._not_recordings.pop(name, None)
                    found.append(name)
                else:  # checked once more on the next read: mtimes are coarse
                    again = checked is not None and checked[0] == ident
                    self._not_recordings[name] = (ident, again)
        return found

    # -- one tick ------------------------------------------------------------------------------
    def read(self) -> Reading:
        now = self.clock()
        reading = Reading()
        paths = self.recordings()
        with self._lock:
            if len(paths) != len(self._nodes) or any(p not in self._nodes for p in paths):
                for gone in set(self._nodes) - set(paths):
                    del self._nodes[gone]
                for path in paths:
                    if path not in self._nodes:
                        self._nodes[path] = _Node(path)
            watch = self._watch
        nodes = self._nodes
        for path in paths:
            node = nodes[path]
            changed = self._scan(node)
            if changed is None:
                continue
            if watch is None or path in watch:
                if node.full:
                    with self._lock:
                        full, node.full = node.full, False
                else:
                    full = False
                if full or changed:
                    self._take(node, changed, full, reading)
            elif changed and not node.peeked:
                self._peek(node)
            stale = node.grown_at is not None and now - node.grown_at > self._limit(node)
            if stale != node.stale:
                if stale and watch is not None and path not in watch:
                    self._peek(node)  # its newest sample, to say how old it is
                node.stale, node.status = stale, None
        reading.samples.sort(key=lambda s: (s.ts, s.host, s.gpu))
        if not paths:
            reading.notes.append(f"no recordings match {' '.join(self.patterns)} yet")
        reading.notes += self.stale_notes(now)
        status = [self._status(nodes[p]) for p in paths]
        if status != self._sent:
            reading.nodes = self._sent = status
        return reading

    def _scan(self, node: _Node) -> list[str] | None:
        """``stat`` the recording (and list it when it changed): the parts whose identity
        changed since the last read, or None when it is gone. A folder whose own identity did
        not change costs that one ``stat``: the recorder renames each flush into it."""
        try:
            st = os.stat(node.path)
        except OSError:
            return None
        if stat.S_ISDIR(st.st_mode):
            ident = (st.st_ino, st.st_mtime_ns)
            moved = ident != node.dir_ident
            if not moved and not node.recheck:
                return []
            # Listed once more on the next read after a change: a second change within the
            # same mtime tick (coarse on most file systems) would leave no trace otherwise.
            node.dir_ident, node.recheck = ident, moved
            try:
                names = sorted(n for n in os.listdir(node.path) if PART.match(n))
            except OSError:
                return None
            old = node.parts
            node.parts = {p: old.get(p) or _Part() for p in (f"{node.path}/{n}" for n in names)}
            if list(old) != list(node.parts):
                node.status = None
            to_stat = list(node.parts)
        else:
            if not node.parts:
                node.parts = {node.path: _Part()}
            to_stat = [node.path]
        changed = []
        newest = node.grown_at
        for path in to_stat:
            part = node.parts[path]
            try:
                pst = st if path == node.path else os.stat(path)
            except OSError:
                node.parts.pop(path, None)
                continue
            ident = (pst.st_ino, pst.st_size, pst.st_mtime_ns)
            if ident != part.ident:
                part.ident, part.bad = ident, None
                changed.append(path)
            mtime = pst.st_mtime_ns / 1e9
            if newest is None or mtime > newest:
                newest = mtime
        if newest is not None and newest != node.grown_at:
            if node.grown_at is not None and newest - node.grown_at >= 0.5:
                node.gaps = [*node.gaps, newest - node.grown_at][-GAPS_KEPT:]
            node.grown_at, node.status = newest, None
        return changed

    def _take(self, node: _Node, changed: list[str], full: bool, into: Reading) -> None:
        """The rows of ``node`` not yet taken (all of them when ``full``) as samples."""
        if full:
            node.last = {}
        for path, part in node.parts.items():
            if not full and (path not in changed or part.bad):
                continue
            try:
                table = pq.ParquetFile(path).read(use_threads=False)
            except (OSError, pa.ArrowException) as exc:
                # A part being replaced or cut short: the next version is read when it comes.
                part.bad = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
                continue
            start = 0 if full or table.num_rows < part.rows else part.rows
            part.rows = table.num_rows
            if start < table.num_rows:
                self._add(node, from_table(table.slice(start)), into)
        node.peeked = True
        if full:
            into.complete.add(node.path)

    def _add(self, node: _Node, part: Reading, into: Reading) -> None:
        newest: set[tuple[str, int]] = set()
        for s in part.samples:
            last = node.last.get(s.gpu)
            if last is not None and s.ts <= last.ts:
                continue
            if last is not None:
                node.step = s.ts - last.ts
            node.last[s.gpu] = s
            into.samples.append(s)
            newest.add(s.key)
        if node.last:
            hosts = {s.host for s in node.last.values()}
            node.host = min(hosts)
            node.gpus = tuple(sorted(node.last))
            node.last_ts = max(s.ts for s in node.last.values())
            node.status = None
        into.processes += [p for p in part.processes if (p.host, p.gpu) in newest]

    def _peek(self, node: _Node) -> None:
        """Host, GPUs and newest sample time from the newest readable part, without its
        samples: what lays out and dates a node that is not on screen."""
        for path, part in reversed(node.parts.items()):
            try:
                table = pq.ParquetFile(path).read(columns=PEEK_COLUMNS, use_threads=False)
            except (OSError, pa.ArrowException) as exc:
                part.bad = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
                continue
            if not table.num_rows:
                continue
            node.peeked = True
            node.host = str(table.column("host")[-1].as_py())
            node.gpus = tuple(sorted(pc.unique(table.column("gpu")).to_pylist()))
            newest = pc.max(table.column("ts").cast(pa.int64())).as_py()
            node.last_ts = newest / 1e6 if newest is not None else node.last_ts
            node.status = None
            return

    def _limit(self, node: _Node) -> float:
        if self.stale_after is not None:
            return self.stale_after
        flush = min(node.gaps, default=0.0)
        return max(STALE_MIN_S, STALE_AFTER_FLUSHES * flush, STALE_AFTER_INTERVALS * node.step)

    def _status(self, node: _Node) -> NodeStatus:
        if node.status is None:
            node.status = NodeStatus(
                node.path, node.host, node.gpus, node.last_ts, node.grown_at, node.stale
            )
        return node.status

    def stale_notes(self, now: float | None = None) -> list[str]:
        """``node07: stale, last sample 2 min ago`` for each stale node, by host."""
        now = self.clock() if now is None else now
        notes = []
        for node in sorted(self._nodes.values(), key=lambda n: n.host):
            if node.stale:
                since = node.last_ts if node.last_ts is not None else node.grown_at
                notes.append(f"{node.host}: stale, last sample {ago(now - (since or now))} ago")
        for node in self._nodes.values():
            for path, part in node.parts.items():
                if part.bad:
                    notes.append(f"{node.host}: {Path(path).name} unreadable ({part.bad})")
        return notes

    def close(self) -> None:
        self._nodes.clear()
        self._not_recordings.clear()
