"""Following many nodes (issue 20 item 5): stale nodes from their files' growth (clocks and
mtimes set by the test, never slept on), incremental reads against a fresh read of the same
files, nodes coming and going, damaged parts, only the watched nodes read, the bulk history
path, and the Monitor pane flagging stale nodes in a fleet larger than it reads."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

from roofscope.monitor.follow import FollowSource
from roofscope.telemetry.history import SeriesHistory
from roofscope.telemetry.recording import RecordingWriter, from_table, parts, read_recorded
from roofscope.tui.monitor_app import MonitorApp
from roofscope.tui.panes import monitor
from roofscope.tui.panes.monitor import WATCH_ALL
from tests.gpu_fakes import T0, SyntheticSource
from tests.screen_text import screen_text
from tests.test_monitor import written_at


class Clock:
    """The follower's clock, moved by the test."""

    def __init__(self, t: float):
        self.t = t

    def __call__(self) -> float:
        return self.t


class Node:
    """A node's recorder: ``tick`` adds a sample, ``flush`` writes and dates the files."""

    def __init__(
        self, folder: Path, host: str, gpus: int = 2, rotate: int | None = None, step: float = 1
    ):
        self.writer = RecordingWriter(folder / f"{host}.parquet")
        self.src = SyntheticSource(gpus=gpus, host=host, step=step)
        self.rotate = rotate
        self.flushes = 0

    @property
    def path(self) -> Path:
        return self.writer.path

    def grow(self, ticks: int, at: float | None = None) -> None:
        """``ticks`` samples, flushed at the newest (or at ``at``)."""
        for _ in range(ticks):
            self.writer.add(self.src.read())
        self.flushes += 1
        if self.rotate and self.flushes % self.rotate == 0:
            self.writer.rotate()
        else:
            self.writer.flush()
        written_at(self.path, self.src.now() - self.src.step if at is None else at)


def by_node(samples) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for s in sorted(samples, key=lambda s: (s.host, s.gpu, s.ts)):
        out.setdefault(s.host, []).append(s.as_dict())
    return out


def fresh(paths: list[Path]) -> dict[str, list[dict]]:
    """Every sample of the recordings, read whole by the store's reader."""
    return by_node(s for p in paths for s in from_table(read_recorded(p)).samples)


# -- stale nodes ----------------------------------------------------------------------------------
def test_a_node_that_stops_growing_turns_stale_and_back(tmp_path):
    nodes = [Node(tmp_path, f"node0{i}") for i in (1, 2, 3)]
    for _ in range(3):  # flushes every 10 samples: the follower learns a 10 s flush interval
        for node in nodes:
            node.grow(10)
    clock = Clock(T0 + 30)
    follower = FollowSource([str(tmp_path / "node*.parquet")], clock=clock)
    reading = follower.read()
    assert [n.stale for n in reading.nodes] == [False, False, False]
    for _ in range(2):
        clock.t += 10
        nodes[0].grow(10)
        nodes[1].grow(10)  # node03 stopped at T0 + 29 (its last sample and its last flush)
        assert follower.read().notes == []
    clock.t += 10  # T0 + 60: node03 is 31 s past its last flush, over the 30 s threshold
    nodes[0].grow(10)
    reading = follower.read()
    assert reading.notes == ["node03: stale, last sample 31 s ago"]
    assert {n.host: n.stale for n in reading.nodes} == {
        "node01": False,
        "node02": False,
        "node03": True,
    }
    clock.t += 200  # node01 and node02 stopped too; node03 is minutes old
    reading = follower.read()
    assert reading.notes == [
        "node01: stale, last sample 3 min ago",
        "node02: stale, last sample 4 min ago",
        "node03: stale, last sample 4 min ago",
    ]
    nodes[2].grow(10, at=clock.t - 1)  # node03 records again (a second job step)
    reading = follower.read()
    assert [n.host for n in reading.nodes if n.stale] == ["node01", "node02"]
    assert follower.read().nodes is None  # nothing changed: no new layout to send


def test_the_threshold_follows_the_flush_interval_or_the_option(tmp_path):
    node = Node(tmp_path, "node01")
    clock = Clock(T0)
    follower = FollowSource([str(node.path)], clock=clock)
    for _ in range(3):  # a recorder started with --flush 60
        node.grow(60)
        clock.t = node.src.now()
        follower.read()
    clock.t += 100  # 101 s since the last flush: under 3 × 60 s
    assert follower.read().notes == []
    clock.t += 90
    assert follower.read().notes == ["node01: stale, last sample 3 min ago"]
    fixed = FollowSource([str(node.path)], clock=clock, stale_after=600)
    assert fixed.read().notes == []


def test_a_finished_job_is_stale_at_first_sight(tmp_path):
    node = Node(tmp_path, "node01")
    node.grow(5)
    follower = FollowSource([str(tmp_path / "*.parquet")], clock=lambda: T0 + 86400)
    follower.watch(set())  # not read: the newest part's times are looked at instead
    reading = follower.read()
    assert reading.samples == [] and reading.nodes[0].gpus == (0, 1)
    assert reading.notes == ["node01: stale, last sample 24.0 h ago"]


# -- incremental against whole reads --------------------------------------------------------------
def test_incremental_reads_give_the_same_samples_as_a_fresh_read(tmp_path):
    rng = random.Random(5)
    nodes = [Node(tmp_path, f"node0{i}", gpus=2, rotate=3) for i in (1, 2, 3)]
    clock = Clock(T0)
    follower = FollowSource([str(tmp_path / "*.parquet")], clock=clock)
    taken = []
    for _ in range(12):
        for node in nodes:
            if rng.random() < 0.6:
                node.grow(rng.randint(1, 4))
        clock.t = max(n.src.now() for n in nodes)
        taken += follower.read().samples
    assert len(parts(nodes[0].path)) > 1  # parts rotated while followed
    paths = [n.path for n in nodes]
    assert by_node(taken) == fresh(paths)
    again = FollowSource([str(tmp_path / "*.parquet")], clock=clock).read()
    assert by_node(again.samples) == fresh(paths)
    assert again.complete == {str(p) for p in paths}


def test_only_watched_nodes_are_read_and_a_node_watched_again_comes_whole(tmp_path):
    nodes = [Node(tmp_path, f"node0{i}") for i in (1, 2, 3)]
    for node in nodes:
        node.grow(5)
    follower = FollowSource([str(tmp_path / "*.parquet")], clock=lambda: T0 + 20)
    first, second, third = (str(n.path) for n in nodes)
    follower.watch({first})
    reading = follower.read()
    assert {s.host for s in reading.samples} == {"node01"} and reading.complete == {first}
    assert [n.gpus for n in reading.nodes] == [(0, 1)] * 3  # laid out all the same
    for node in nodes:
        node.grow(3)
    reading = follower.read()
    assert {s.host for s in reading.samples} == {"node01"} and reading.complete == set()
    assert len(reading.samples) == 3 * 2  # only what is new
    follower.watch({second})
    nodes[1].grow(2)
    reading = follower.read()
    assert reading.complete == {second}
    assert by_node(reading.samples) == fresh([nodes[1].path])
    follower.watch({first, second, third})
    reading = follower.read()  # node01 missed a flush while not watched: it comes whole
    assert reading.complete == {first, third}
    assert by_node(reading.samples) == fresh([nodes[0].path, nodes[2].path])


# -- nodes coming and going, damaged parts ---------------------------------------------------------
def test_nodes_appearing_and_disappearing_while_followed(tmp_path):
    follower = FollowSource([str(tmp_path / "*.parquet")], clock=lambda: T0 + 10)
    assert follower.read().notes == [f"no recordings match {tmp_path / '*.parquet'} yet"]
    one = Node(tmp_path, "node01")
    one.grow(3)
    (tmp_path / "node02.parquet").mkdir()  # a recorder that has not flushed yet
    reading = follower.read()
    assert [n.host for n in reading.nodes] == ["node01"] and len(reading.samples) == 6
    two = Node(tmp_path, "node02")
    two.grow(4)
    reading = follower.read()
    assert [n.host for n in reading.nodes] == ["node01", "node02"]
    assert by_node(reading.samples) == fresh([two.path])
    shutil.rmtree(one.path)
    reading = follower.read()
    assert [n.host for n in reading.nodes] == ["node02"] and reading.samples == []
    two.grow(1)
    assert len(follower.read().samples) == 2


def test_a_cut_or_empty_part_is_reported_and_read_once_whole(tmp_path):
    node = Node(tmp_path, "node01", rotate=1)
    node.grow(3)  # part 1, closed
    node.grow(3)  # part 2
    follower = FollowSource([str(node.path)], clock=lambda: T0 + 10)
    second = parts(node.path)[1]
    whole = second.read_bytes()
    second.write_bytes(whole[: len(whole) // 2])  # a copy cut short
    (node.path / "part-000003.parquet").write_bytes(b"")  # and one created, never written
    (node.path / ".part-abc.tmp").write_bytes(b"PAR1")  # a flush in progress: not a part
    reading = follower.read()
    assert [s.ts for s in reading.samples if s.gpu == 0] == [T0, T0 + 1, T0 + 2]
    notes = [n for n in reading.notes if "unreadable" in n]
    assert [n.split(" (")[0] for n in notes] == [
        "node01: part-000002.parquet unreadable",
        "node01: part-000003.parquet unreadable",
    ]
    assert follower.read().samples == []  # not read again until it changes
    second.write_bytes(whole)
    (node.path / "part-000003.parquet").unlink()
    reading = follower.read()
    assert [s.ts for s in reading.samples if s.gpu == 0] == [T0 + 3, T0 + 4, T0 + 5]
    assert not [n for n in reading.notes if "unreadable" in n]


# -- the bulk history path -------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(40))
def test_history_extend_equals_adding_one_by_one(seed):
    rng = random.Random(seed)
    capacity, tiers = rng.randint(2, 8), rng.randint(1, 4)
    one, bulk = (SeriesHistory(capacity, tiers, keys=("a", "b")) for _ in range(2))
    t = 0.0
    for _ in range(rng.randint(1, 5)):
        ts, a, b = [], [], []
        for _ in range(rng.randint(0, 50)):
            t += rng.choice([1.0, 0.5, 0.0, -2.0])  # repeats and steps back are ignored
            ts.append(t)
            a.append(rng.choice([None, rng.random()]))
            b.append(None if rng.random() < 0.9 else 1.0)
        for row in zip(ts, a, b, strict=True):
            one.add(row[0], row[1:])
        bulk.extend(ts, [a, b])

        def state(h: SeriesHistory) -> list:
            cols = [[[str(v) for v in c] for c in tier.cols] for tier in h.tiers]
            return [[list(t.t0), list(t.t1)] for t in h.tiers] + [cols, h.added, h.measured]

        assert state(bulk) == state(one)


# -- the Monitor pane over a fleet -----------------------------------------------------------------
def fleet(folder: Path, count: int, stale: set[int]) -> None:
    """``count`` one-GPU nodes of 5 samples: those in ``stale`` from T0 to T0 + 4 and flushed
    then, the others every 75 s up to T0 + 300, flushed then."""
    for i in range(count):
        node = Node(folder, f"node{i:03d}", gpus=1, step=1 if i in stale else 75)
        node.grow(5)


def cards(text: str) -> str:
    """The screen below the header (which names stale nodes too)."""
    return text.split("End live", 1)[1]


@pytest.mark.slow
async def test_the_monitor_flags_stale_nodes_and_reads_only_what_is_on_screen(
    tmp_path, utc, monkeypatch
):
    drawn, real = [], monitor.render_card
    monkeypatch.setattr(monitor, "render_card", lambda *a, **k: drawn.append(a[0]) or real(*a, **k))
    count = 100
    assert count > WATCH_ALL
    fleet(tmp_path, count, stale={1, 50, 77})
    now = T0 + 304
    follower = FollowSource([str(tmp_path / "*.parquet")], clock=lambda: now)
    app = MonitorApp(lambda: follower, autostart=False)
    shots = os.environ.get("ROOFSCOPE_SHOTS")
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.pane
        pane.clock = lambda: now
        pane.use_source(follower, poll=False)
        pane.ingest(follower.read())  # every node laid out, none read
        assert pane.histories == {} and len(pane.card_keys()) == count
        pane.ingest(follower.read())  # the nodes on screen and a screen either side
        await pilot.pause()
        watched = pane._watched
        assert watched is not None and 0 < len(watched) < count
        assert {k[0] for k in pane.histories} == {follower._nodes[p].host for p in watched}
        assert 0 < len(drawn) <= 2 * 12  # the cards on screen (80×24: 9), not the 100
        text = screen_text(app)
        assert "following *.parquet · 100 nodes · 100 GPUs" in text
        assert "stale: 3 of 100 nodes · node001 last sample 5 min ago · +2 more (n: next)" in text
        assert "node001:0 · STALE, last sample 5 min ago · H100" in cards(text)
        assert "node000:0 H100" in cards(text)  # a node that grows: no flag
        if shots:
            app.save_screenshot("monitor-fleet-80x24.svg", shots)
        await pilot.press("n", "n")  # the next stale nodes below the top: node001, node050
        await pilot.pause()
        pane.ingest(follower.read())  # its cards are read once on screen
        await pilot.pause()
        text = screen_text(app)
        assert cards(text).lstrip().startswith("node050:0 · STALE, last sample 5 min ago · H100")
        assert "node001" not in cards(text)
        assert "node050" in {k[0] for k in pane.histories}
        assert "node001" not in {k[0] for k in pane.histories}  # let go: read again if shown
        await pilot.press("n")
        await pilot.pause()
        assert cards(screen_text(app)).lstrip().startswith("node077:0 · STALE")
        await pilot.resize_terminal(200, 60)
        await pilot.pause()
        pane.ingest(follower.read())
        await pilot.pause()
        text = screen_text(app)
        assert "node077:0 · STALE, last sample 5 min ago · H100 80GB HBM3 · 20% util" in text
        assert "stale: 3 of 100 nodes · node001 last sample 5 min ago · node050" in text
        if shots:
            app.save_screenshot("monitor-fleet-200x60.svg", shots)
