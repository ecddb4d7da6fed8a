"""``roofscope monitor --follow`` over a fleet: N nodes' recordings, written by the real
recorder's writer and growing while the Monitor follows them at 1 Hz.

For each source tree given (``--src``, default this checkout's ``src``) the same scenario is
built afresh under ``--dir`` and followed by a headless ``MonitorApp`` (the code behind
``roofscope monitor --follow``) in its own process:

* every node has a complete 600 s part and a current part 0–600 s long (the recorder's default
  ``--rotate``), ``--gpus`` rows per sample;
* an appender process adds a sample per second to the growing nodes and flushes each every
  10 s (``--flush``'s default), staggered, rewriting the current part as ``roofscope record``
  does, and rotates parts at 600 s;
* 2% of the nodes stopped 5 minutes before the follower starts, 3% stop 5 s after it starts,
  and 1% were stopped and start recording again 15 s after (a new part, as a second job step
  writes): the follower should flag the first two groups and not the third.

The follower's process CPU time (user + system, every thread) between two refreshes is its cost
per refresh (ms), and over the wall time between them its share of one core (%); the first two
refreshes (the catch-up) are reported apart. On a busy machine a follower that needs more than
it gets stretches its refreshes, so its % understates it: compare ms per refresh. Stale nodes
are counted from each reading's notes and compared with when the appender last flushed each
node by its own log (not the files), under the follower's documented rule (stale past the
largest of 30 s and three flush intervals), so an appender that falls behind on a busy machine
does not count against the follower; a few seconds either side of each change are left out.

    python3 bench/follow_fleet.py                       # 1,000 nodes, this checkout
    python3 bench/follow_fleet.py --src ../main/src src --label before after
    python3 bench/follow_fleet.py --nodes 100 --seconds 20   # a quick look
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import pyarrow as pa  # noqa: E402

from roofscope.telemetry.recording import RecordingWriter, to_table  # noqa: E402
from roofscope.telemetry.sample import GpuSample, ProcessInfo  # noqa: E402

FLUSH_S = 10.0
ROTATE_S = 600.0
STALE_S = 30.0  # the follower's threshold at a 10 s flush and a 1 s step
START_GRACE_S = 12.0  # the appender's catch-up: every growing node flushed once


def host_name(i: int) -> str:
    return f"node{i:04d}"


def groups(nodes: int) -> dict[str, list[int]]:
    """Which nodes stopped before, stop during, and resume during the follow."""
    stride = max(1, nodes // max(1, round(nodes * 0.06)))
    picked = list(range(0, nodes, stride))[: max(3, round(nodes * 0.06))]
    before = picked[0::3][: max(1, round(nodes * 0.02))]
    during = picked[1::3] + picked[2::3]
    resume = during[: max(1, round(nodes * 0.01))]
    during = during[len(resume) :][: max(1, round(nodes * 0.03))]
    return {"before": before, "during": during, "resume": resume}


class Rows:
    """Arrow rows of one node, made column-wise from one real sample per GPU (to_table)."""

    def __init__(self, gpus: int):
        samples = [
            GpuSample(
                ts=0.0,
                host="x",
                gpu=g,
                name="NVIDIA H100 80GB HBM3",
                uuid=f"GPU-{g:08d}",
                util_gpu=0.5,
                util_mem=0.2,
                mem_used=40e9,
                mem_total=80e9,
                power_w=400.0,
                power_limit_w=700.0,
                temp_c=55.0,
                sm_clock_hz=1.98e9,
                mem_clock_hz=2.6e9,
                pcie_rx_bps=1e9,
                pcie_tx_bps=5e8,
                energy_j=1e6,
                mig_mode=False,
                sm_active=0.45,
                sm_occupancy=0.2,
                tensor_active=0.3,
                fp64_active=0.0,
                fp32_active=0.1,
                fp16_active=0.0,
                dram_bw_util=0.15,
                hmma_active=0.3,
                dmma_active=0.0,
                imma_active=0.0,
            )
            for g in range(gpus)
        ]
        self.gpus = gpus
        self.template = to_table(
            [(s, [ProcessInfo(s.gpu, 4242, "python", int(18e9))]) for s in samples]
        )

    def table(self, host: str, t0: float, ticks: int, seed: int) -> pa.Table:
        idx = pa.array([g for _ in range(ticks) for g in range(self.gpus)], pa.int64())
        table = self.template.take(idx)
        ts = [int((t0 + k) * 1e6) for k in range(ticks) for _ in range(self.gpus)]
        util = [
            0.5 + 0.45 * (((seed * 7919 + k * 31 + g * 17) % 97) / 97 - 0.5)
            for k in range(ticks)
            for g in range(self.gpus)
        ]
        table = table.set_column(0, "ts", pa.array(ts, pa.int64()).cast(pa.timestamp("us", "UTC")))
        table = table.set_column(1, "host", pa.array([host] * len(ts), pa.string()))
        i = table.column_names.index("util_gpu")
        table = table.set_column(i, "util_gpu", pa.array(util, pa.float64()))
        i = table.column_names.index("power_w")
        return table.set_column(i, "power_w", pa.array([100 + 500 * u for u in util]))


def setup(folder: Path, nodes: int, gpus: int, seed: int) -> dict:
    """Every node's past: a complete part and a current one (the stopped ones end 300 s ago)."""
    rng = random.Random(seed)
    rows = Rows(gpus)
    now = time.time()
    g = groups(nodes)
    stopped = set(g["before"]) | set(g["resume"])
    state = {}
    for i in range(nodes):
        host = host_name(i)
        end = now - 300.0 if i in stopped else now
        fill = rng.uniform(0, ROTATE_S)  # seconds in the current part
        start = end - ROTATE_S - fill
        writer = RecordingWriter(folder / f"{host}.parquet")
        writer.add_table(rows.table(host, start, int(ROTATE_S), i))
        writer.rotate()
        writer.add_table(rows.table(host, start + ROTATE_S, max(1, int(fill)), i))
        writer.flush()
        if i in stopped:
            for part in (folder / f"{host}.parquet").iterdir():
                os.utime(part, (end, end))
        state[host] = {
            "last": start + ROTATE_S + max(1, int(fill)) - 1,
            "part_start": end - fill,
            "written": end if i in stopped else time.time(),
        }
    (folder.parent / "state.json").write_text(json.dumps(state))
    return g


APPENDER = """
import json, sys, time, signal, os
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from follow_fleet import Rows, host_name, groups, FLUSH_S, ROTATE_S
from roofscope.telemetry.recording import RecordingWriter
folder, nodes, gpus = Path(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
t_start = float(sys.argv[6])
state = json.loads((folder.parent / "state.json").read_text())
g = groups(nodes)
before, during, resume = set(g["before"]), set(g["during"]), set(g["resume"])
rows = Rows(gpus)
writers = {}
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
log = {"flushes": 0, "late_s": 0.0, "stopped_at": {}, "resumed_at": {}, "flushed": {}}
# Staggered as a job's recorders are: node i flushes first i %% 10 seconds after the start.
flushed = {i: t_start - FLUSH_S + (i %% 10) * FLUSH_S / 10 for i in range(nodes)}
def writer(i):
    if i not in writers:
        writers[i] = RecordingWriter(folder / (host_name(i) + ".parquet"))
    return writers[i]
follow_start = t_start + %(grace)s
tick = 0
while not stop:
    now = time.time()
    t = now - follow_start
    for i in range(nodes):
        host = host_name(i)
        if i in before or (i in resume and t < 15.0) or host in log["stopped_at"]:
            continue
        s = state[host]
        if i in resume and host not in log["resumed_at"]:  # a new job step: a new part
            log["resumed_at"][host] = now
            s["last"], s["part_start"], flushed[i] = now - 1, now, now
        stopping = i in during and t >= 5.0
        if now - flushed[i] < FLUSH_S and not stopping:
            continue
        w = writer(i)
        ticks = int(now - s["last"])  # the samples since the last flush, converted at once
        if ticks > 0:
            w.add_table(rows.table(host, s["last"] + 1, ticks, i))
            s["last"] += ticks
        if now - s["part_start"] >= ROTATE_S:
            w.rotate()
            s["part_start"] = now
        else:
            w.flush()
        log["flushes"] += 1
        log["flushed"].setdefault(host, []).append(time.time())
        flushed[i] = now if now - flushed[i] > 1.5 * FLUSH_S else flushed[i] + FLUSH_S
        if stopping:  # SIGTERM: the final flush, then nothing
            writers.pop(i)
            log["stopped_at"][host] = time.time()
    tick += 1
    late = time.time() - (t_start + tick)
    log["late_s"] = max(log["late_s"], late)
    time.sleep(max(0.0, t_start + tick - time.time()))
(folder.parent / "appender.json").write_text(json.dumps(log))
"""

FOLLOWER = """
import json, os, resource, sys, threading, time
sys.path.insert(0, sys.argv[1])
out, pattern, seconds = sys.argv[2], sys.argv[3], float(sys.argv[4])
width, height, limit = int(sys.argv[5]), int(sys.argv[6]), int(float(sys.argv[7]) * 2**30)
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from roofscope.monitor.follow import FollowSource
from roofscope.tui.monitor_app import MonitorApp
from roofscope.tui.panes.monitor import MonitorPane
records, redraws, begun = [], [0.0, 0], time.time()
source = FollowSource([pattern])
plain_read = source.read
def read():
    wall, cpu, tcpu = time.time(), time.process_time(), time.thread_time()
    reading = plain_read()
    stale = sorted({n.split(":")[0].split(" GPU ")[0] for n in reading.notes if ": stale" in n})
    records.append({"wall": wall, "cpu": cpu, "read_wall": time.time() - wall,
                    "read_cpu": time.thread_time() - tcpu, "samples": len(reading.samples),
                    "stale": stale})
    return reading
source.read = read
plain_redraw = MonitorPane.redraw
def redraw(self):
    if profile and not redraws[1] % 10 and redraws[1] and time.time() - begun > 10:
        prof.enable()  # on the UI thread, once steady (enabling twice is harmless)
    t = time.thread_time()
    plain_redraw(self)
    redraws[0] += time.thread_time() - t
    redraws[1] += 1
MonitorPane.redraw = redraw
profile = os.environ.get("FOLLOW_FLEET_PROFILE")
if profile:  # the UI thread's functions (the reads run in a worker thread: read_cpu)
    import cProfile
    prof = cProfile.Profile()
def dump(why):
    if profile:
        prof.disable()
        prof.dump_stats(profile)
    statm = open("/proc/self/statm").read().split()
    doc = {"records": records, "redraw_cpu": redraws[0], "redraws": redraws[1], "end": why,
           "cpu": time.process_time(),
           "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           "rss_mb": int(statm[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20}
    open(out, "w").write(json.dumps(doc))
    os._exit(0)
def finish():
    time.sleep(seconds)
    dump("time")
threading.Thread(target=finish, daemon=True).start()
app = MonitorApp(lambda: source, interval=1.0)
try:
    app.run(headless=True, size=(width, height))
    dump(f"app ended: {app.return_code}")
except BaseException as exc:
    dump(f"{type(exc).__name__}: {exc}")
"""


def expected_stale(
    wall: float,
    since: float,
    written: dict[str, float],
    flushed: dict[str, list[float]],
    during: float = 0.0,
) -> tuple[set[str], set[str]]:
    """(sure, unsure) stale hosts at ``wall``, from when the writer last grew each node's files
    by its own log (not the files), with the follower's rule: stale when not grown for longer
    than the largest of 30 s and three flush intervals (the smallest of the last four gaps
    seen since ``since``, the follower's first read). A few seconds either side are left out,
    and so is a node flushed while the follower read (``during`` seconds from ``wall``)."""
    sure, unsure = set(), set()
    for host, first in written.items():
        times = [t for t in flushed.get(host, []) if t <= wall]
        age = wall - (times[-1] if times else first)
        if any(wall < t <= wall + during + 0.5 for t in flushed.get(host, [])):
            unsure.add(host)
            continue
        # The growths the follower saw: the last one before it started, and those after.
        seen = [t for t in times if t < since][-1:] + [t for t in times if t >= since]
        gaps = [b - a for a, b in itertools.pairwise(seen) if b - a >= 0.5][-4:]
        limit = max(STALE_S, 3 * min(gaps, default=0.0))
        # Two flushes close together (a stop's final flush) may have looked like one gap of up
        # to a flush interval and a bit to a follower polling at 1 Hz: 3 × 13 s then.
        if age > max(limit, 3 * (FLUSH_S + 3)) + 3:
            sure.add(host)
        elif age >= min(STALE_S, limit) - 2:
            unsure.add(host)
    return sure, unsure


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]


def run_one(src: Path, args: argparse.Namespace) -> dict:
    base = Path(tempfile.mkdtemp(prefix="follow_fleet_", dir=args.dir))
    folder = base / "job"
    folder.mkdir()
    t = time.time()
    setup(folder, args.nodes, args.gpus, args.seed)
    setup_s = time.time() - t
    t_start = time.time()
    appender = subprocess.Popen(
        [
            sys.executable,
            "-c",
            APPENDER % {"grace": START_GRACE_S},
            str(ROOT / "src"),
            str(ROOT / "bench"),
            str(folder),
            str(args.nodes),
            str(args.gpus),
            str(t_start),
        ]
    )
    time.sleep(max(0.0, t_start + START_GRACE_S - time.time()))
    out = base / "follower.json"
    env = {**os.environ, "PYTHONPATH": str(src)}
    subprocess.run(
        [
            sys.executable,
            "-c",
            FOLLOWER,
            str(src),
            str(out),
            str(folder / "*.parquet"),
            str(args.seconds),
            str(args.width),
            str(args.height),
            str(args.mem_limit_gb),
        ],
        env=env,
        timeout=args.seconds + 120,
    )
    appender.send_signal(signal.SIGTERM)
    appender.wait(timeout=60)
    doc = json.loads(out.read_text()) if out.exists() else {"records": []}
    log = json.loads((base / "appender.json").read_text())
    follow_start = t_start + START_GRACE_S
    written = {h: v["written"] for h, v in json.loads((base / "state.json").read_text()).items()}
    recs = doc["records"]
    cpu_pct = [
        100 * (b["cpu"] - a["cpu"]) / (b["wall"] - a["wall"])
        for a, b in itertools.pairwise(recs[2:])
    ]
    cpu_ms = [1e3 * (b["cpu"] - a["cpu"]) for a, b in itertools.pairwise(recs[2:])]
    mismatches = checked = 0
    details: list[tuple[float, str, str]] = []
    final = None
    for r in recs:
        sure, unsure = expected_stale(
            r["wall"], recs[0]["wall"], written, log["flushed"], r["read_wall"]
        )
        flagged = set(r["stale"])
        wrong = (flagged ^ sure) - unsure
        mismatches += len(wrong)
        details += [
            (
                round(r["wall"] - follow_start, 1),
                h,
                "flagged" if h in flagged else "missed",
                [round(t - follow_start, 1) for t in log["flushed"].get(h, [])][-5:],
            )
            for h in sorted(wrong)
        ]
        checked += 1
        final = (len(flagged), len(sure), len(unsure), sorted(wrong)[:5])
    shutil.rmtree(base, ignore_errors=True)
    return {
        "src": str(src),
        "end": doc.get("end"),
        "setup_s": setup_s,
        "refreshes": len(recs),
        "first_cpu_s": (recs[1]["cpu"] - recs[0]["cpu"]) if len(recs) > 1 else doc.get("cpu"),
        "first_wall_s": recs[0]["read_wall"] if recs else None,
        "cpu_pct": [round(c, 2) for c in cpu_pct],
        "cpu_p50": pct(cpu_pct, 0.5),
        "cpu_p95": pct(cpu_pct, 0.95),
        "cpu_ms_p50": pct(cpu_ms, 0.5),
        "cpu_ms_p95": pct(cpu_ms, 0.95),
        "read_cpu_ms_p50": pct([1e3 * r["read_cpu"] for r in recs[2:]], 0.5),
        "read_wall_ms_p50": pct([1e3 * r["read_wall"] for r in recs[2:]], 0.5),
        "read_wall_ms_p95": pct([1e3 * r["read_wall"] for r in recs[2:]], 0.95),
        "redraw_ms": 1e3 * doc.get("redraw_cpu", 0) / max(1, doc.get("redraws", 1)),
        "maxrss_mb": doc.get("maxrss_mb"),
        "rss_mb": doc.get("rss_mb"),
        "final_stale": final,
        "stale_mismatches": mismatches,
        "mismatch_details": details[:20],
        "checked": checked,
        "appender_flushes": log["flushes"],
        "appender_late_s": log["late_s"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--gpus", type=int, default=4, help="GPUs per node (default 4)")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long to follow")
    parser.add_argument(
        "--mem-limit-gb",
        type=float,
        default=10.0,
        help="address-space limit of the follower (main's code keeps every sample)",
    )
    parser.add_argument("--src", nargs="+", default=[str(ROOT / "src")], help="source trees")
    parser.add_argument("--label", nargs="+", default=None)
    parser.add_argument("--dir", default="/dev/shm" if Path("/dev/shm").is_dir() else None)
    parser.add_argument("--width", type=int, default=200)
    parser.add_argument("--height", type=int, default=60)
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args()
    labels = args.label or [Path(s).resolve().parent.name for s in args.src]
    results = []
    for label, src in zip(labels, args.src, strict=True):
        print(f"[{label}] {args.nodes} nodes × {args.gpus} GPUs, {args.seconds:g} s …", flush=True)
        r = run_one(Path(src).resolve(), args)
        r["label"] = label
        results.append(r)
        print(json.dumps(r), flush=True)
    print()
    head = (
        f"{'':<10}{'refreshes':>10}{'first s CPU':>12}{'CPU% p50':>10}{'CPU% p95':>10}"
        f"{'ms/refresh p50':>15}{'p95':>7}"
        f"{'read ms p50':>12}{'read ms p95':>12}{'redraw ms':>10}{'RSS MB':>8}{'max RSS':>8}"
        f"{'stale (flagged/expected)':>26}{'mismatch':>9}"
    )
    print(head)
    for r in results:
        flagged, sure, unsure, _ = r["final_stale"] or (0, 0, 0, [])
        print(
            f"{r['label']:<10}{r['refreshes']:>10}{r['first_cpu_s'] or float('nan'):>12.2f}"
            f"{r['cpu_p50']:>10.2f}{r['cpu_p95']:>10.2f}"
            f"{r['cpu_ms_p50']:>15.0f}{r['cpu_ms_p95']:>7.0f}{r['read_wall_ms_p50']:>12.1f}"
            f"{r['read_wall_ms_p95']:>12.1f}{r['redraw_ms']:>10.1f}{r['rss_mb'] or 0:>8.0f}"
            f"{r['maxrss_mb'] or 0:>8.0f}"
            f"{f'{flagged}/{sure}' + (f'±{unsure}' if unsure else ''):>26}"
            f"{r['stale_mismatches']:>9}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
