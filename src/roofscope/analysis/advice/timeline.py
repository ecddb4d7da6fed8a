"""roofscope's rules over an Nsight Systems timeline: what the GPU waits for between kernels.

An nsys trace has what a replayed ncu profile cannot: the real timeline. Three rules read it
per GPU (``spans``: each kernel's start and end; ``memops``: copies with their host memory):

* ``cuda_graphs``: runs of tiny kernels with gaps as long as the kernels themselves, so the
  CPU's launch rate, not the GPU, sets the pace;
* ``pinned_memory``: host↔device copies from or to pageable host memory;
* ``nccl_overlap``: NCCL kernels during which no other kernel runs on that GPU;
* ``idle_gaps``: the time the GPU ran nothing at all between its kernels and copies, by the
  length of the gaps, each length with what usually causes it (issue 32, item 4);
* ``host_syncs``: the idle gaps in which a host synchronisation (cudaDeviceSynchronize,
  cuStreamSynchronize, …: ``host_syncs``) returned: the GPU ran dry while the host waited;
* ``small_copies``: many copies of a few kilobytes, each a round trip for little data, and
  the GPU's idle time before them.

The step each rule measures against is the GPU's wall window in the trace (first kernel or
copy start to last end on that GPU), not the summed kernel time: idle time is what these rules
are about. Every estimate is a model written into the item's ``assumptions``; none can be
checked by applying the advice here (nsys cannot record on the machine the other rules were
checked on). Everything is SQL over the store or Arrow batches of it (the ordered pass of
``event_scan.py``), so a ten-million-kernel trace is never read row by row in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from roofscope.analysis.advice import ROOFSCOPE, Advice, Context, step_speedup
from roofscope.analysis.advice.event_scan import (
    HOST_COPIES,
    EventScan,
    Extras,
    LaunchBound,
    Window,
    scan,
)
from roofscope.present.units import si, time

# -- cuda_graphs ------------------------------------------------------------------------------
TINY_NS = 10_000  # kernels shorter than this (10 µs) run no longer than an eager launch takes
# A gap longer than this (100 µs) is host work (a sync, data loading, Python between steps),
# not the launch overhead a graph removes: it ends a run.
LAUNCH_GAP_MAX_NS = 100_000
RUN_MIN = 3  # consecutive launch-bound kernels before they count as a run (not one stray)
# The gap between consecutive kernels of a replayed CUDA graph, taken as 1 µs. Measured on an
# H100 (bench/graph_gap.py, PyTorch 2.11's profiler: 200 one-element adds, ~1.1 µs each): a
# median 0.26 µs between them replayed from a graph, 10-17 µs launched eagerly. 1 µs leaves
# room for larger kernels' ramp-up and tail and for other GPUs and drivers: a conservative gain.
GRAPH_GAP_NS = 1_000
LAUNCH_BOUND_SHARE = 5.0  # % of the GPU's window in the gaps of such runs before it fires
LAUNCH_BOUND = LaunchBound(TINY_NS, LAUNCH_GAP_MAX_NS, RUN_MIN, GRAPH_GAP_NS)
# -- pinned_memory ----------------------------------------------------------------------------
PAGEABLE_SHARE = 5.0  # % of the GPU's window in copies from/to pageable host memory
PINNED_REF_BYTES = 1_000_000  # pinned copies this large (1 MB) set the reference bandwidth
# -- nccl_overlap -----------------------------------------------------------------------------
NCCL_SHARE = 5.0  # % of the GPU's window in NCCL time that no compute kernel overlaps
NCCL = "%nccl%"  # kernel names (ILIKE): ncclDevKernel_*, ncclKernel_*

# -- idle_gaps ---------------------------------------------------------------------------------
IDLE_SHARE = 2.0  # % of the GPU's window with nothing running before it fires (a choice, not fit)
# gaps in the window before it fires: a pattern of the run, not one pause (a toy trace of one
# kernel and a copy is 98% idle in a single gap, and no graph or pipeline change is the answer)
GAPS_MIN = 10
# Gap lengths (ns): under 10 µs the GPU waits for the next launch to reach it (launch rate);
# up to 1 ms the host does work between launches (Python, allocator, a small sync); longer,
# the GPU waits for the host (input data, a synchronisation, CPU-side work)
GAP_EDGES_NS = (10_000, 1_000_000)
GAP_CLASSES = (
    (
        "under 10 µs: the next launch had not reached the GPU (launch rate)",
        'a CUDA graph or torch.compile(mode="reduce-overhead"), or more work per launch',
    ),
    (
        "10 µs to 1 ms: host work between launches (Python, the allocator, a small sync)",
        "a CUDA graph or torch.compile; remove syncs in the step (.item(), .cpu(), printing "
        "tensors)",
    ),
    (
        "1 ms or longer: the GPU waited for the host (input data, a synchronisation, CPU work)",
        "overlap the input pipeline (DataLoader workers, pin_memory=True with "
        "non_blocking=True copies), move preprocessing to the GPU, a larger batch per step",
    ),
)
# -- host_syncs and small_copies ---------------------------------------------------------------
SYNC_SHARE = 2.0  # % of the GPU's window in idle gaps a host synchronisation returned in
SYNCS_MIN = 10  # such gaps before it fires: a loop's pattern, not the end of the program
SMALL_COPY_BYTES = 64 * 1024  # copies under 64 KiB move too little to amortise a round trip
SMALL_COPIES_MIN = 100
SMALL_COPY_SHARE = 2.0  # % of the window in small copies and the idle gaps before them

GROUPS_SHOWN = 3  # groups named in the evidence, the longest first
NOT_CHECKED = (
    "not checked by applying it: nsys cannot record on the machine roofscope's advice is "
    "checked on, so this model has no before/after run"
)
WINDOW = (
    "the step is this GPU's wall window in the trace (first kernel or copy start to last end "
    "on it), not the summed kernel time: idle time counts; step speedup is Amdahl over it"
)


@dataclass(frozen=True)
class Part:
    """One kernel group's part of an item on one GPU."""

    name: str
    launches: int
    time_s: float


def _groups(parts: Sequence[Part]) -> list[Part]:
    return sorted(parts, key=lambda p: (-p.time_s, p.name))


def _shown(parts: Sequence[Part]) -> str:
    more = f" and {len(parts) - GROUPS_SHOWN} more" if len(parts) > GROUPS_SHOWN else ""
    return (
        ", ".join(f"{p.name} {p.launches:,}× {time(p.time_s)}" for p in parts[:GROUPS_SHOWN]) + more
    )


def _on(window: Window, many: bool) -> str:
    return f" on GPU {window.device}" if many else ""


# -- cuda_graphs ------------------------------------------------------------------------------


def cuda_graphs(ctx: Context, events: EventScan) -> list[Advice]:
    """Tiny kernels with gaps as long as themselves: the GPU finishes each before the CPU has
    launched the next. A CUDA graph launches the whole run at once; larger kernels do more
    work per launch. Either way the gaps go."""
    per_device: dict[int, tuple] = {}
    parts: dict[int, list[Part]] = {}
    wins = events.windows
    for device, grp, n, dur, gap, gain, runs, total in events.launch_bound:
        if total:
            per_device[int(device)] = (int(n), int(dur), int(gap), int(gain), int(runs))
        else:
            parts.setdefault(int(device), []).append(Part(str(grp), int(n), (dur + gap) / 1e9))
    items = []
    for device, (n, dur, gap, gain, runs) in sorted(per_device.items()):
        w = wins[device]
        gap_s, gain_s, spent = gap / 1e9, gain / 1e9, (dur + gap) / 1e9
        if w.share(gap_s) < LAUNCH_BOUND_SHARE:
            continue
        groups = _groups(parts.get(device, []))
        on = _on(w, len(wins) > 1)
        items.append(
            Advice(
                rule="cuda_graphs",
                source=ROOFSCOPE,
                title=f"launch-bound runs of tiny kernels{on}: {w.share(gap_s):.1f}% of the "
                "window in the gaps between them",
                action=(
                    "capture the runs in a CUDA graph (torch.cuda.graphs, "
                    'torch.compile(mode="reduce-overhead"); cudaStreamBeginCapture in CUDA) '
                    "or do more work per launch (a larger batch, fused kernels)"
                ),
                evidence=[
                    f"{n:,} kernels under {si(TINY_NS / 1e9, 's')} in {runs:,} run(s) of "
                    f"≥ {RUN_MIN}, each after a gap at least as long as itself (and at most "
                    f"{si(LAUNCH_GAP_MAX_NS / 1e9, 's')}): kernels {time(dur / 1e9)}, gaps "
                    f"{time(gap_s)} ({w.share(gap_s):.1f}% of the window; threshold "
                    f"{LAUNCH_BOUND_SHARE:g}%), mean gap {time(gap_s / n)} per kernel",
                    f"GPU {device}: window {time(w.seconds)}, idle (no kernel or copy) "
                    f"{time(w.idle_s)} ({w.share(w.idle_s):.1f}%)",
                    f"groups (time with the gaps before their kernels): {_shown(groups)}",
                ],
                groups=[p.name for p in groups],
                launches=n,
                time_s=spent,
                time_pct=w.share(spent),
                est_gain_s=gain_s,
                est_step_speedup=step_speedup(w.seconds, gain_s),
                assumptions=[
                    "gain = Σ over those kernels of (gap before it − "
                    f"{si(GRAPH_GAP_NS / 1e9, 's')}): in a graph each gap shrinks to a replayed "
                    f"graph's gap between kernels, taken as {si(GRAPH_GAP_NS / 1e9, 's')} (a "
                    "conservative choice: 0.26 µs measured between tiny kernels replayed from "
                    "a graph on an H100, bench/graph_gap.py)",
                    "the kernels keep their durations; the CPU work between them (Python, "
                    "dispatch) is what the graph removes, so the runs must be capturable "
                    "(static shapes, no host sync inside)",
                    "time and share: the wall time the runs span (kernels and the gaps "
                    "before them)",
                    WINDOW,
                    NOT_CHECKED,
                ],
            )
        )
    return items


# -- pinned_memory ----------------------------------------------------------------------------


def _copies(ctx: Context) -> list[tuple]:
    """Per (GPU, direction): pageable copies (count, bytes, time), the gain against the pinned
    reference, and that reference (bandwidth of the fastest pinned copy ≥ 1 MB of the same
    direction anywhere in the trace, and the shortest pinned copy's time, the floor)."""
    directions = ", ".join(f"'{d}'" for d in HOST_COPIES)
    return ctx.con.execute(
        f"""
        WITH timed AS (
            SELECT device, kind, bytes, end_ns - start_ns AS ns, host_kind FROM memops
            WHERE report_id = $rid AND start_ns IS NOT NULL AND end_ns >= start_ns
              AND device IS NOT NULL AND kind IN ({directions})
        ), ref AS (
            SELECT kind, max(bytes / ns) FILTER (WHERE bytes >= {PINNED_REF_BYTES} AND ns > 0)
                       AS bytes_per_ns,
                   min(ns) AS floor_ns
            FROM timed WHERE host_kind = 'pinned' GROUP BY kind
        )
        SELECT t.device, t.kind, count(*), coalesce(sum(t.bytes), 0), sum(t.ns),
               sum(greatest(t.ns - greatest(coalesce(t.bytes, 0) / r.bytes_per_ns,
                                           r.floor_ns), 0)),
               any_value(r.bytes_per_ns), any_value(r.floor_ns)
        FROM timed t LEFT JOIN ref r ON r.kind = t.kind
        WHERE t.host_kind = 'pageable'
        GROUP BY t.device, t.kind ORDER BY t.device, sum(t.ns) DESC, t.kind
        """,
        {"rid": ctx.report_id},
    ).fetchall()


def pinned_memory(ctx: Context, wins: dict[int, Window]) -> list[Advice]:
    """A copy from pageable memory is staged by the driver through a pinned buffer, in pieces,
    and cannot overlap with compute; from pinned memory the copy engine reads it directly."""
    by_device: dict[int, list[tuple]] = {}
    for device, *row in _copies(ctx):
        by_device.setdefault(int(device), []).append(tuple(row))
    items = []
    for device, rows in sorted(by_device.items()):
        w = wins.get(device)
        count = sum(r[1] for r in rows)
        spent = sum(r[3] for r in rows) / 1e9
        if w is None or w.share(spent) < PAGEABLE_SHARE:
            continue
        unreferenced = [r[0] for r in rows if r[5] is None]
        gain = None if unreferenced else sum(r[4] for r in rows) / 1e9
        evidence = [
            f"{direction}: {n:,} pageable {'copy' if n == 1 else 'copies'}, "
            f"{si(size, 'B')} in {time(ns / 1e9)} "
            f"({si(size / ns * 1e9, 'B/s') if ns else '—'})"
            + (
                f"; pinned copies of this direction reach {si(bw * 1e9, 'B/s')}"
                if bw is not None
                else "; no pinned copy ≥ 1 MB of this direction to compare with"
            )
            for direction, n, size, ns, _gain, bw, _floor in rows
        ]
        evidence.append(
            f"together {time(spent)}: {w.share(spent):.1f}% of GPU {device}'s window "
            f"{time(w.seconds)} (threshold {PAGEABLE_SHARE:g}%)"
        )
        assumptions = [
            "each pageable copy would run at the bandwidth the fastest pinned copy ≥ 1 MB of "
            "the same direction reaches in this trace, never shorter than its shortest pinned "
            "copy (the latency floor); gain = Σ (time − that time)",
            "the pinned buffer is allocated once and reused (pin_memory=True in a DataLoader, "
            "tensor.pin_memory(), cudaHostAlloc); pinning every step costs more than it saves",
        ]
        if unreferenced:
            assumptions = [
                f"no estimate: the trace has no pinned copy ≥ 1 MB of "
                f"{' or '.join(unreferenced)} to take a bandwidth from (a host↔device copy "
                "from pinned memory reaches the link's rate, often several times pageable's, "
                "but how much depends on the machine)",
                assumptions[1],
            ]
        on = _on(w, len(wins) > 1)
        items.append(
            Advice(
                rule="pinned_memory",
                source=ROOFSCOPE,
                title=f"copies from/to pageable host memory{on}: {w.share(spent):.1f}% of the "
                "window",
                action=(
                    "copy from pinned memory: DataLoader(pin_memory=True) or "
                    "tensor.pin_memory(), then .to('cuda', non_blocking=True); cudaHostAlloc / "
                    "cudaHostRegister in CUDA"
                ),
                evidence=evidence,
                groups=[],
                launches=count,
                time_s=spent,
                time_pct=w.share(spent),
                est_gain_s=gain,
                est_step_speedup=step_speedup(w.seconds, gain),
                assumptions=[
                    *assumptions,
                    "launches and time: the pageable copies and their time on the GPU",
                    WINDOW,
                    NOT_CHECKED,
                ],
            )
        )
    return items


# -- nccl_overlap -----------------------------------------------------------------------------


def _merged(kernels: str) -> str:
    """Each GPU's intervals of the launches ``kernels`` selects, overlapping ones merged."""
    return f"""
        SELECT device, min(start_ns) AS s, max(end_ns) AS e FROM (
            SELECT *, sum(CASE WHEN prev IS NULL OR start_ns > prev THEN 1 ELSE 0 END)
                OVER (PARTITION BY device ORDER BY start_ns, end_ns) AS island
            FROM (SELECT sp.device, sp.start_ns, sp.end_ns, max(sp.end_ns) OVER (
                      PARTITION BY sp.device ORDER BY sp.start_ns, sp.end_ns
                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev
                  FROM spans sp JOIN launches l
                    ON l.report_id = sp.report_id AND l.launch_id = sp.launch_id
                  WHERE sp.report_id = $rid AND sp.device IS NOT NULL
                    AND sp.end_ns >= sp.start_ns AND {kernels}))
        GROUP BY device, island
    """


def _nccl(ctx: Context) -> list[tuple]:
    """Per GPU: NCCL's wall time (its kernels merged) and the part of it some other kernel on
    that GPU overlaps."""
    return ctx.con.execute(
        f"""
        WITH n AS ({_merged(f"l.kernel ILIKE '{NCCL}'")}),
             c AS ({_merged(f"NOT coalesce(l.kernel ILIKE '{NCCL}', false)")}),
             covered AS (
                 SELECT n.device, sum(least(n.e, c.e) - greatest(n.s, c.s)) AS ns
                 FROM n JOIN c ON c.device = n.device AND c.s < n.e AND c.e > n.s
                 GROUP BY n.device)
        SELECT n.device, sum(n.e - n.s), any_value(coalesce(covered.ns, 0))
        FROM n LEFT JOIN covered ON covered.device = n.device
        GROUP BY n.device ORDER BY n.device
        """,
        {"rid": ctx.report_id},
    ).fetchall()


def _nccl_groups(ctx: Context) -> dict[int, list[Part]]:
    rows = ctx.con.execute(
        f"""
        SELECT sp.device, coalesce(v.grp, '(unnamed)'), count(*),
               sum(sp.end_ns - sp.start_ns) / 1e9
        FROM spans sp JOIN launch_view v ON v.report_id = sp.report_id
            AND v.launch_id = sp.launch_id
        WHERE sp.report_id = $rid AND v.kernel ILIKE '{NCCL}' AND sp.end_ns >= sp.start_ns
        GROUP BY ALL
        """,
        {"rid": ctx.report_id},
    ).fetchall()
    out: dict[int, list[Part]] = {}
    for device, grp, n, seconds in rows:
        out.setdefault(int(device), []).append(Part(str(grp), int(n), float(seconds)))
    return out


def _any_nccl(ctx: Context) -> bool:
    """Whether any kernel name of the session is NCCL's (``kernel_groups`` holds each distinct
    name once): a trace without one skips merging every kernel of every GPU."""
    rows = ctx.con.execute(
        f"SELECT count(*) FROM kernel_groups WHERE kernel ILIKE '{NCCL}'"
    ).fetchall()
    return bool(rows[0][0])


def nccl_overlap(ctx: Context, wins: dict[int, Window]) -> list[Advice]:
    """Communication that no compute overlaps is time the GPU only waits on the network or
    NVLink; started earlier on its own stream, it hides behind the backward pass."""
    if not _any_nccl(ctx):
        return []
    rows = [(int(d), int(t), int(c)) for d, t, c in _nccl(ctx)]
    if not rows:
        return []
    groups = _nccl_groups(ctx)
    items = []
    for device, nccl_ns, covered_ns in rows:
        w = wins[device]
        nccl_s, exposed = nccl_ns / 1e9, max(nccl_ns - covered_ns, 0) / 1e9
        if w.share(exposed) < NCCL_SHARE:
            continue
        parts = _groups(groups.get(device, []))
        on = _on(w, len(wins) > 1)
        items.append(
            Advice(
                rule="nccl_overlap",
                source=ROOFSCOPE,
                title=f"NCCL not overlapped with compute{on}: {w.share(exposed):.1f}% of the "
                "window",
                action=(
                    "overlap communication with compute: DDP's gradient buckets "
                    "(bucket_cap_mb, gradient_as_bucket_view=True), FSDP's forward/backward "
                    "prefetch, collectives on their own stream"
                ),
                evidence=[
                    f"NCCL kernels run {time(nccl_s)} on GPU {device} (overlapping ones "
                    f"counted once); {time(exposed)} of it with no other kernel running on "
                    f"that GPU: {w.share(exposed):.1f}% of its window {time(w.seconds)} "
                    f"(threshold {NCCL_SHARE:g}%)",
                    f"{time(covered_ns / 1e9)} of it overlapped by compute kernels (any stream)",
                    f"groups: {_shown(parts)}",
                ],
                groups=[p.name for p in parts],
                launches=sum(p.launches for p in parts),
                time_s=nccl_s,
                time_pct=w.share(nccl_s),
                est_gain_s=exposed,
                est_step_speedup=step_speedup(w.seconds, exposed),
                assumptions=[
                    "gain = the exposed NCCL time (its time minus its overlap with the union of "
                    "the other kernels on that GPU): an upper bound, reached only if enough "
                    "independent compute exists to hide it and sharing the SMs slows neither",
                    "a kernel is NCCL's when its name contains 'nccl' (any case)",
                    WINDOW,
                    NOT_CHECKED,
                ],
            )
        )
    return items


def advise(ctx: Context) -> list[Advice]:
    """The producer ``Report.advice()`` runs (analysis/advice/sources.py): nsys reports only."""
    if ctx.report is None or not ctx.report.is_nsys:
        return []
    # the syncs as two arrays (16 bytes each, never a Python tuple a sync), and by name
    where = "FROM host_syncs WHERE report_id = ?"
    times = ctx.con.execute(f"SELECT start_ns, end_ns {where}", [ctx.report_id]).fetchnumpy()
    calls = ctx.con.execute(
        f"SELECT name, count(*), sum(end_ns - start_ns) {where} GROUP BY name ORDER BY 3 DESC",
        [ctx.report_id],
    ).fetchall()
    extras = Extras(GAP_EDGES_NS, times["start_ns"], times["end_ns"], SMALL_COPY_BYTES)
    events = scan(ctx.con, ctx.report_id, LAUNCH_BOUND, extras)
    wins = events.windows
    if not wins:
        return []
    return [
        *cuda_graphs(ctx, events),
        *pinned_memory(ctx, wins),
        *nccl_overlap(ctx, wins),
        *idle_gaps(wins),
        *host_syncs(wins, calls),
        *small_copies(wins),
    ]


# -- idle_gaps --------------------------------------------------------------------------------


def idle_gaps(wins: dict[int, Window]) -> list[Advice]:
    """The GPU running nothing between its kernels and copies, measured gap by gap and told
    by length: what each length usually is, and what removes it. The gain is an upper bound
    that every rule here shares: the gaps, less the gap a CUDA graph still leaves between
    kernels."""
    items = []
    for device, w in sorted(wins.items()):
        count = sum(n for n, _ in w.gaps)
        if count < GAPS_MIN or w.share(w.idle_s) < IDLE_SHARE:
            continue
        total_s = sum(ns for _, ns in w.gaps) / 1e9
        gain_s = max(total_s - count * GRAPH_GAP_NS / 1e9, 0.0)
        on = _on(w, len(wins) > 1)
        (big_n, big_ns), what, do = max(
            ((g, what, do) for g, (what, do) in zip(w.gaps, GAP_CLASSES, strict=True)),
            key=lambda x: x[0][1],
        )
        evidence = [
            f"GPU {device}: window {time(w.seconds)}, nothing running for {time(w.idle_s)} "
            f"({w.share(w.idle_s):.1f}%; threshold {IDLE_SHARE:g}%) in {count:,} gaps (at least "
            f"{GAPS_MIN}) between its kernels and copies"
        ]
        evidence += [  # the longest first
            f"{n:,} gap(s) {what.split(':')[0]}: {time(ns / 1e9)} "
            f"({w.share(ns / 1e9):.1f}% of the window)"
            for (n, ns), (what, _) in sorted(
                zip(w.gaps, GAP_CLASSES, strict=True), key=lambda x: -x[0][1]
            )
            if n
        ]
        items.append(
            Advice(
                rule="idle_gaps",
                source=ROOFSCOPE,
                title=f"GPU idle between kernels{on}: {w.share(w.idle_s):.1f}% of the window, "
                f"most in gaps of {what.split(':')[0]}",
                action=f"{what.split(': ', 1)[1]}: {do}",
                evidence=evidence,
                groups=[],
                launches=0,
                time_s=total_s,
                time_pct=w.share(total_s),
                est_gain_s=gain_s,
                est_step_speedup=step_speedup(w.seconds, gain_s),
                assumptions=[
                    "gain = the gaps' time less "
                    f"{si(GRAPH_GAP_NS / 1e9, 's')} per gap (what a replayed CUDA graph still "
                    "leaves between kernels): an upper bound, reached only if nothing the "
                    "GPU waits for remains (launches, host work, input data)",
                    "overlaps cuda_graphs and pinned_memory where they fire: their gaps are "
                    "among these",
                    f"the largest share is in gaps {what.split(':')[0]} ({big_n:,}, "
                    f"{time(big_ns / 1e9)}): the action is for those",
                    WINDOW,
                    NOT_CHECKED,
                ],
            )
        )
    return items


# -- host_syncs and small_copies ----------------------------------------------------------------


def host_syncs(wins: dict[int, Window], calls: Sequence[tuple[str, int, int]]) -> list[Advice]:
    """A host synchronisation returns when the GPU (or a stream) has nothing left to do; the
    next launch reaches the GPU only after the host has gone on. The gaps a sync returned in are
    measured; the calls themselves are counted by name, with the host time they blocked."""
    items = []
    for device, w in sorted(wins.items()):
        count, gap_ns = w.sync_gaps
        if count < SYNCS_MIN or w.share(gap_ns / 1e9) < SYNC_SHARE:
            continue
        gain_s = max(gap_ns / 1e9 - count * GRAPH_GAP_NS / 1e9, 0.0)
        said = ", ".join(
            f"{name} ×{n:,} ({time((blocked or 0) / 1e9)} blocked)" for name, n, blocked in calls
        )
        items.append(
            Advice(
                rule="host_syncs",
                source=ROOFSCOPE,
                title=f"GPU idle after host synchronisations{_on(w, len(wins) > 1)}: "
                f"{w.share(gap_ns / 1e9):.1f}% of the window",
                action="take synchronisations out of the loop: .item(), .cpu(), printing or "
                "branching on GPU values, cudaDeviceSynchronize after each kernel; use CUDA "
                "events, non_blocking copies, or check less often",
                evidence=[
                    f"GPU {device}: {count:,} idle gaps in which a host synchronisation "
                    f"returned, called while the GPU was busy: {time(gap_ns / 1e9)}, "
                    f"{w.share(gap_ns / 1e9):.1f}% of its "
                    f"window {time(w.seconds)} (threshold {SYNC_SHARE:g}%, at least "
                    f"{SYNCS_MIN} gaps)",
                    f"the host's synchronising calls: {said}",
                ],
                groups=[],
                launches=0,
                time_s=gap_ns / 1e9,
                time_pct=w.share(gap_ns / 1e9),
                est_gain_s=gain_s,
                est_step_speedup=step_speedup(w.seconds, gain_s),
                assumptions=[
                    "gain = those gaps less "
                    f"{si(GRAPH_GAP_NS / 1e9, 's')} each: an upper bound, reached only if the "
                    "host, no longer waiting, queues the next work before the GPU runs dry",
                    "a gap is counted when the first host synchronisation to return in it was "
                    "called before the GPU went idle, whatever stream or GPU it waited for (on "
                    "several GPUs a sync that waited on one counts against the others' gaps "
                    "too); these gaps are among idle_gaps'",
                    WINDOW,
                    NOT_CHECKED,
                ],
            )
        )
    return items


def small_copies(wins: dict[int, Window]) -> list[Advice]:
    """Copies of a few kilobytes: each pays a launch and a round trip for little data, and a
    synchronous one leaves the GPU idle while the host sets up the next."""
    items = []
    for device, w in sorted(wins.items()):
        count, copy_ns, gap_ns = w.small_copies
        spent_s = (copy_ns + gap_ns) / 1e9
        if count < SMALL_COPIES_MIN or w.share(spent_s) < SMALL_COPY_SHARE:
            continue
        items.append(
            Advice(
                rule="small_copies",
                source=ROOFSCOPE,
                title=f"{count:,} host copies under {SMALL_COPY_BYTES // 1024} KiB"
                f"{_on(w, len(wins) > 1)}: {w.share(spent_s):.1f}% of the window with the "
                "idle time before them",
                action="batch them into one copy per step (a pinned staging buffer), keep "
                "the data on the GPU, or copy with non_blocking=True from pinned memory",
                evidence=[
                    f"GPU {device}: {count:,} copies between host and GPU under "
                    f"{SMALL_COPY_BYTES // 1024} KiB ran "
                    f"{time(copy_ns / 1e9)}; the GPU was idle {time(gap_ns / 1e9)} just before "
                    f"them: together {w.share(spent_s):.1f}% of its window {time(w.seconds)} "
                    f"(threshold {SMALL_COPY_SHARE:g}%, at least {SMALL_COPIES_MIN} copies)",
                ],
                groups=[],
                launches=0,
                time_s=spent_s,
                time_pct=w.share(spent_s),
                est_gain_s=spent_s,
                est_step_speedup=step_speedup(w.seconds, spent_s),
                assumptions=[
                    "gain = the small copies' time and the idle gaps before them: an upper "
                    "bound, as if one batched copy took no time and nothing else was waited "
                    "for in those gaps; those gaps are among idle_gaps'",
                    WINDOW,
                    NOT_CHECKED,
                ],
            )
        )
    return items
