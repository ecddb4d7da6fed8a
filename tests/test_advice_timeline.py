"""roofscope's rules over an nsys timeline (issue 19, item 2, the nsys bullet): launch-bound
runs of tiny kernels (``cuda_graphs``), copies from pageable host memory (``pinned_memory``)
and NCCL time no compute overlaps (``nccl_overlap``).

Synthetic exports in the real 2025 schema (tests/nsys_builder.py) where each rule must fire
and where it must not; every real nsys SQLite sample against an independent reading with plain
``sqlite3`` (the numbers each rule reports, or that it stays quiet); ``roofscope advise``; and
the host memory kind of copies, ``memops.host_kind``, from the SQLite and the stats CSV paths.
"""

from __future__ import annotations

import json
import re
import sqlite3
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path

import pytest

import roofscope
from roofscope.analysis.advice import step_speedup
from roofscope.analysis.advice import timeline as rules
from roofscope.present.text import shown
from tests.conftest import SAMPLES, SHARED, run_cli, shared
from tests.nsys_builder import DEVICE, DTOD, DTOH, HTOD, PAGEABLE, PINNED, Copy, Export, Kernel

US = 1_000  # ns
MS = 1_000_000
GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_kernel"
ADD = "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int, T2)"
NCCL = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096UL>)"


def _advice(tmp_path: Path, export: Export, name: str = "t.sqlite") -> dict[str, list]:
    path = export.write(tmp_path / name)
    session = roofscope.load(path, use_cache=False)
    try:
        items = session.reports[0].advice()
    finally:
        session.close()
    out: dict[str, list] = {}
    for item in items:
        out.setdefault(item.rule, []).append(item)
    return out


def _chain(n: int, dur: int, gap: int, start: int = 0, **kw) -> list[Kernel]:
    """``n`` kernels of ``dur`` ns, each ``gap`` ns after the one before."""
    return [
        Kernel(ADD, start + i * (dur + gap), start + i * (dur + gap) + dur, **kw) for i in range(n)
    ]


def _checked_everywhere(item) -> None:
    """What every timeline item says about its model."""
    text = " ".join(item.assumptions)
    assert "not checked by applying it" in text
    assert "wall window" in text


# -- cuda_graphs -------------------------------------------------------------------------------


@pytest.mark.slow
def test_launch_bound_run_of_tiny_kernels_fires(tmp_path: Path) -> None:
    # 2 µs kernels, 8 µs apart: the CPU's launch rate sets the pace
    kernels = _chain(50, 2 * US, 8 * US)
    (item,) = _advice(tmp_path, Export(kernels=kernels))["cuda_graphs"]
    window = (50 * 2 + 49 * 8) * US / 1e9
    gain = 49 * (8 * US - rules.GRAPH_GAP_NS) / 1e9  # the first kernel has no gap before it
    assert item.source == "roofscope" and item.launches == 49
    assert item.time_s == pytest.approx(49 * 10 * US / 1e9)
    assert item.time_pct == pytest.approx(100 * 49 * 10 / (50 * 2 + 49 * 8))
    assert item.est_gain_s == pytest.approx(gain)
    assert item.est_step_speedup == pytest.approx(step_speedup(window, gain))
    assert item.groups == ["element-wise"]
    assert "torch.cuda.graphs" in item.action and "reduce-overhead" in item.action
    assert any("idle (no kernel or copy)" in e for e in item.evidence)
    _checked_everywhere(item)


@pytest.mark.parametrize(
    "kernels",
    [
        _chain(50, 100 * US, 1 * US),  # long kernels back to back: the GPU sets the pace
        _chain(50, 2 * US, 1 * US),  # tiny, but the gaps are shorter than the kernels
        _chain(50, 2 * US, 500 * US),  # tiny, but 500 µs apart: host work, not launches
        _chain(50, 12 * US, 20 * US),  # gaps longer than the kernels, but not tiny ones
    ],
    ids=["long-back-to-back", "gaps-shorter", "host-pauses", "not-tiny"],
)
@pytest.mark.slow
def test_no_launch_bound_run(kernels: list[Kernel], tmp_path: Path) -> None:
    assert "cuda_graphs" not in _advice(tmp_path, Export(kernels=kernels))


def test_a_busy_stream_beside_hides_the_gaps(tmp_path: Path) -> None:
    # the same tiny chain, but a long kernel on another stream keeps the GPU busy throughout
    kernels = [*_chain(50, 2 * US, 8 * US), Kernel(GEMM, 0, 500 * US, stream=9)]
    assert "cuda_graphs" not in _advice(tmp_path, Export(kernels=kernels))


def test_a_copy_in_a_gap_is_not_idle(tmp_path: Path) -> None:
    # each 8 µs gap holds a 7.5 µs copy: 0.5 µs of it is idle, shorter than the kernels
    kernels = _chain(50, 2 * US, 8 * US)
    copies = [
        Copy(k.end, k.end + 7500, 1 << 20, src=PINNED) for k in kernels[:-1]
    ]  # fmt: skip
    assert "cuda_graphs" not in _advice(tmp_path, Export(kernels=kernels, copies=copies))


@pytest.mark.slow
def test_runs_shorter_than_the_minimum_do_not_count(tmp_path: Path) -> None:
    # pairs of tiny kernels, each pair after a long kernel: runs of 2 < RUN_MIN
    kernels: list[Kernel] = []
    t = 0
    for _ in range(20):
        kernels.append(Kernel(GEMM, t, t + 50 * US))
        t += 50 * US
        for _ in range(2):
            kernels.append(Kernel(ADD, t + 8 * US, t + 10 * US))
            t += 10 * US
    assert rules.RUN_MIN > 2
    assert "cuda_graphs" not in _advice(tmp_path, Export(kernels=kernels))


@pytest.mark.slow
def test_one_item_per_gpu_with_its_own_window(tmp_path: Path) -> None:
    # GPU 1 is launch-bound, GPU 0 runs one long kernel
    kernels = [Kernel(GEMM, 0, 10 * MS, device=0), *_chain(20, 2 * US, 8 * US, device=1)]
    (item,) = _advice(tmp_path, Export(kernels=kernels))["cuda_graphs"]
    assert "on GPU 1" in item.title and item.launches == 19
    window_1 = (20 * 2 + 19 * 8) * US / 1e9
    assert item.time_pct == pytest.approx(100 * 19 * 10 * US / 1e9 / window_1)


# -- pinned_memory -----------------------------------------------------------------------------

BUSY = [Kernel(GEMM, 0, 10 * MS)]  # a 10 ms window


def test_pageable_copies_fire_with_the_pinned_bandwidth(tmp_path: Path) -> None:
    copies = [
        Copy(1 * MS, 3 * MS, 4_000_000, HTOD, PAGEABLE, DEVICE),  # 2 GB/s
        Copy(4 * MS, 4 * MS + 200 * US, 4_000_000, HTOD, PINNED, DEVICE),  # 20 GB/s
        Copy(5 * MS, 5 * MS + 300 * US, 1_000_000, HTOD, PINNED, DEVICE),  # 3.3 GB/s
        Copy(6 * MS, 6 * MS + 5 * US, 4_000, HTOD, PINNED, DEVICE),  # small: the floor
        Copy(7 * MS, 7 * MS + 40 * US, 1_000, DTOH, DEVICE, PAGEABLE),  # small, no reference
    ]
    items = _advice(tmp_path, Export(kernels=BUSY, copies=copies))
    (item,) = items["pinned_memory"]
    assert item.launches == 2 and item.groups == []
    assert item.time_s == pytest.approx((2 * MS + 40 * US) / 1e9)
    assert item.time_pct == pytest.approx(100 * (2 * MS + 40 * US) / (10 * MS))
    # Device-to-Host has no pinned copy to compare with: no estimate at all
    assert item.est_gain_s is None and item.est_step_speedup is None
    assert "no estimate" in item.assumptions[0] and "Device-to-Host" in item.assumptions[0]
    _checked_everywhere(item)


def test_pageable_gain_at_the_fastest_pinned_copy_never_below_the_floor(tmp_path: Path) -> None:
    copies = [
        Copy(1 * MS, 3 * MS, 4_000_000, HTOD, PAGEABLE, DEVICE),  # 2 ms → 0.2 ms at 20 GB/s
        Copy(3 * MS, 3 * MS + 30 * US, 1_000, HTOD, PAGEABLE, DEVICE),  # 30 µs → the 5 µs floor
        Copy(4 * MS, 4 * MS + 200 * US, 4_000_000, HTOD, PINNED, DEVICE),  # 20 GB/s
        Copy(5 * MS, 5 * MS + 300 * US, 1_000_000, HTOD, PINNED, DEVICE),  # 3.3 GB/s
        Copy(6 * MS, 6 * MS + 5 * US, 4_000, HTOD, PINNED, DEVICE),  # the shortest pinned
        Copy(7 * MS, 8 * MS, 100_000_000, DTOD, DEVICE, DEVICE),  # no host side
    ]
    (item,) = _advice(tmp_path, Export(kernels=BUSY, copies=copies))["pinned_memory"]
    gain = (2 * MS - 200 * US) + (30 * US - 5 * US)
    assert item.launches == 2
    assert item.est_gain_s == pytest.approx(gain / 1e9)
    assert item.est_step_speedup == pytest.approx(step_speedup(10 * MS / 1e9, gain / 1e9))
    assert any("20 GB/s" in e for e in item.evidence)


@pytest.mark.parametrize(
    "copies",
    [
        [Copy(1 * MS, 3 * MS, 4_000_000, HTOD, PINNED, DEVICE)],  # pinned: nothing to do
        [Copy(1 * MS, 1 * MS + 300 * US, 4_000_000, HTOD, PAGEABLE, DEVICE)],  # 3% < 5%
        [Copy(1 * MS, 3 * MS, 4_000_000, DTOD, DEVICE, DEVICE)],  # no host side
    ],
    ids=["pinned", "below-threshold", "device-to-device"],
)
@pytest.mark.slow
def test_no_pageable_item(copies: list[Copy], tmp_path: Path) -> None:
    assert "pinned_memory" not in _advice(tmp_path, Export(kernels=BUSY, copies=copies))


# -- nccl_overlap ------------------------------------------------------------------------------


def test_nccl_overlapped_by_compute_on_another_stream_does_not_fire(tmp_path: Path) -> None:
    kernels = [Kernel(GEMM, 0, 2 * MS, stream=7), Kernel(NCCL, 500 * US, 1500 * US, stream=20)]
    assert "nccl_overlap" not in _advice(tmp_path, Export(kernels=kernels))


def test_serialized_nccl_fires_with_its_exposed_time(tmp_path: Path) -> None:
    kernels = [Kernel(GEMM, 0, 2 * MS, stream=7), Kernel(NCCL, 2 * MS, 3 * MS, stream=20)]
    (item,) = _advice(tmp_path, Export(kernels=kernels))["nccl_overlap"]
    assert item.est_gain_s == pytest.approx(1e-3)
    assert item.est_step_speedup == pytest.approx(1.5)
    assert item.groups == ["NCCL"] and item.launches == 1
    assert item.time_s == pytest.approx(1e-3) and item.time_pct == pytest.approx(100 / 3)
    assert "upper bound" in item.assumptions[0]
    assert "gradient_as_bucket_view" in item.action
    _checked_everywhere(item)


def test_partly_overlapped_nccl_counts_only_the_exposed_part(tmp_path: Path) -> None:
    kernels = [
        Kernel(GEMM, 0, 1 * MS, stream=7),
        Kernel(ADD, 1200 * US, 1400 * US, stream=8),  # inside the NCCL kernel
        Kernel(NCCL, 600 * US, 2 * MS, stream=20),  # 0.4 + 0.2 ms covered of 1.4 ms
        Kernel(NCCL, 1800 * US, 2200 * US, stream=21),  # overlaps the first: counted once
        Kernel(GEMM, 10 * MS, 11 * MS, stream=7, device=1),  # another GPU: overlaps nothing
    ]
    (item,) = _advice(tmp_path, Export(kernels=kernels))["nccl_overlap"]
    exposed = (2200 - 600) - (400 + 200)
    assert item.est_gain_s == pytest.approx(exposed * US / 1e9)
    assert item.time_s == pytest.approx(1600 * US / 1e9) and item.launches == 2
    assert "on GPU 0" in item.title


# -- where it shows ----------------------------------------------------------------------------


def _all_three() -> Export:
    return Export(
        kernels=[
            *_chain(50, 2 * US, 8 * US),
            Kernel(GEMM, 1 * MS, 3 * MS),
            Kernel(NCCL, 3 * MS, 4 * MS, stream=20),
        ],
        copies=[Copy(4 * MS, 5 * MS, 2_000_000, HTOD, PAGEABLE, DEVICE)],
    )


@pytest.mark.slow
def test_advise_json_shows_the_timeline_items(tmp_path: Path) -> None:
    path = _all_three().write(tmp_path / "three.sqlite")
    out = run_cli("advise", str(path), "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (report,) = json.loads(out.stdout)["reports"]
    items = {a["rule"]: a for a in report["advice"]}
    assert {"cuda_graphs", "pinned_memory", "nccl_overlap"} <= set(items)
    assert items["nccl_overlap"]["est_gain_s"] == pytest.approx(1e-3)
    assert items["pinned_memory"]["est_gain_s"] is None  # no pinned copy to compare with
    gains = [a["est_gain_s"] for a in report["advice"] if a["est_gain_s"] is not None]
    assert gains == sorted(gains, reverse=True)  # ranked with the rest
    md = run_cli("advise", str(path), "--format", "md", cwd=tmp_path)
    assert "| cuda_graphs |" in md.stdout and "not checked by applying it" in md.stdout


def test_ncu_reports_get_no_timeline_items(shared_sample_cache) -> None:
    items = roofscope.load(SAMPLES / "resnet18_fp32_h100.ncu-raw.csv").reports[0].advice()
    assert not {a.rule for a in items} & {"cuda_graphs", "pinned_memory", "nccl_overlap"}


# -- memops.host_kind from each reader ---------------------------------------------------------

COPIES = [
    Copy(1 * MS, 2 * MS, 4_000_000, HTOD, PAGEABLE, DEVICE),
    Copy(3 * MS, 3 * MS + 200 * US, 4_000_000, HTOD, PINNED, DEVICE),
    Copy(4 * MS, 4 * MS + 500 * US, 2_000_000, DTOH, DEVICE, PAGEABLE),
    Copy(5 * MS, 5 * MS + 100 * US, 8_000_000, DTOD, DEVICE, DEVICE),
]
EXPECTED = [
    (1 * MS, "Host-to-Device", "pageable"),
    (3 * MS, "Host-to-Device", "pinned"),
    (4 * MS, "Device-to-Host", "pageable"),
    (5 * MS, "Device-to-Device", None),
]


def _host_kinds(path: Path) -> list[tuple]:
    session = roofscope.load(path, use_cache=False)
    try:
        return session.con.execute(
            "SELECT start_ns, kind, host_kind FROM memops ORDER BY start_ns"
        ).fetchall()
    finally:
        session.close()


@pytest.mark.parametrize("enum", [True, False], ids=["enum-table", "2020-22-no-enum-table"])
@pytest.mark.slow
def test_sqlite_fills_host_kind(enum: bool, tmp_path: Path) -> None:
    path = Export(kernels=BUSY, copies=COPIES, mem_kind_enum=enum).write(tmp_path / "k.sqlite")
    assert _host_kinds(path) == EXPECTED


def test_stats_trace_csv_fills_host_kind(tmp_path: Path) -> None:
    head = (
        "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),"
        "DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name"
    )
    gpu = "NVIDIA H100 80GB HBM3 (0)"
    lines = [head, f"0,{10 * MS},1,128,1,1,256,1,1,32,0.000,0.000,,,,,{gpu},1,,7,{GEMM}"]
    names = {HTOD: "Host-to-Device", DTOH: "Device-to-Host", DTOD: "Device-to-Device"}
    labels = {PAGEABLE: "Pageable", PINNED: "Pinned", DEVICE: "Device"}
    for i, c in enumerate(COPIES):
        lines.append(
            f"{c.start},{c.end - c.start},{i + 2},,,,,,,,,,{c.bytes / 1e6:.3f},0.0,"
            f"{labels[c.src]},{labels[c.dst]},{gpu},1,,7,[CUDA memcpy {names[c.kind]}]"
        )
    path = tmp_path / "r_cuda_gpu_trace.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _host_kinds(path) == EXPECTED


def test_events_view_labels_name_the_host_side(tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    path.write_text(
        "Name,Start,Duration,GPU,Context\n"
        "kern_a,1 ms,2 ms,GPU 0,Stream 7\n"
        "Memcpy HtoD (Pinned -> Device),4 ms,10 us,GPU 0,Stream 7\n"
        "Memcpy DtoH (Device -> Pageable),5 ms,20 us,GPU 0,Stream 7\n"
        "[CUDA memcpy HtoD],6 ms,10 us,GPU 0,Stream 7\n",
        encoding="utf-8",
    )
    assert _host_kinds(path) == [
        (4 * MS, "Host-to-Device", "pinned"),
        (5 * MS, "Device-to-Host", "pageable"),
        (6 * MS, "Host-to-Device", None),
    ]


def test_the_real_sqlite_and_its_stats_trace_agree_on_host_kind() -> None:
    gen = ("generated", "nsys_2025.3.1_from_ayush-os_a100")
    sqlite_path = shared(*gen, "ayush_vector_add_profile_v3.sqlite")
    csv_path = shared(*gen, "ayush_vector_add_profile_v3_cuda_gpu_trace.csv")
    from_sqlite, from_csv = _host_kinds(sqlite_path), _host_kinds(csv_path)
    assert from_sqlite == from_csv
    # what the file itself says: every copy of this report is from or to pageable memory
    assert [h for _, _, h in from_sqlite] == ["pageable"] * 3


# -- every real nsys SQLite sample against an independent reading -------------------------------


@dataclass
class Truth:
    """What the rules should report on one GPU, read from the export with plain sqlite3."""

    window_ns: int = 0
    bound: int = 0  # launch-bound kernels in runs
    bound_gap_ns: int = 0
    bound_span_ns: int = 0  # their durations and the gaps before them
    graph_gain_ns: int = 0
    pageable: int = 0
    pageable_bytes: float = 0.0
    pageable_ns: int = 0
    nccl_ns: int = 0
    nccl_exposed_ns: int = 0


MEM_KIND_FALLBACK = {0: "Pageable", 1: "Pinned", 2: "Device"}
COPY_FALLBACK = {1: "Host-to-Device", 2: "Device-to-Host", 3: "Host-to-Array", 4: "Array-to-Host"}


def _union(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def _length(intervals: list[tuple[int, int]]) -> int:
    return sum(e - s for s, e in intervals)


def _intersection(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    return sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in a for s2, e2 in b)


def _independent(path: Path) -> dict[int, Truth]:
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    names = dict(con.execute("SELECT id, value FROM StringIds"))
    kernels = con.execute(
        "SELECT rowid, deviceId, start, end, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL"
    ).fetchall()
    mem_kinds = dict(MEM_KIND_FALLBACK)
    if "ENUM_CUDA_MEM_KIND" in tables:
        mem_kinds.update(con.execute("SELECT id, label FROM ENUM_CUDA_MEM_KIND"))
    copy_kinds = dict(COPY_FALLBACK)
    if "ENUM_CUDA_MEMCPY_OPER" in tables:
        copy_kinds.update(con.execute("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER"))
    copies = con.execute(
        "SELECT deviceId, start, end, bytes, copyKind, srcKind, dstKind "
        "FROM CUPTI_ACTIVITY_KIND_MEMCPY"
    ).fetchall() if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables else []  # fmt: skip
    sets = con.execute(
        "SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_MEMSET"
    ).fetchall() if "CUPTI_ACTIVITY_KIND_MEMSET" in tables else []  # fmt: skip
    con.close()
    out: dict[int, Truth] = {}
    # every event on each GPU in time order; ties: the shorter first, kernels before copies,
    # then the export's row order (launch IDs follow it)
    events: dict[int, list[tuple]] = {}
    for row, device, s, e, _ in kernels:
        events.setdefault(device, []).append((s, e, 0, row))
    for device, s, e, *_ in [*copies, *sets]:
        events.setdefault(device, []).append((s, e, 1, 0))
    for device, evs in events.items():
        evs.sort()
        truth = out.setdefault(device, Truth())
        truth.window_ns = max(e for _, e, _, _ in evs) - min(s for s, _, _, _ in evs)
        latest: int | None = None
        run: list[tuple[int, int]] = []  # (gap, duration) of the current run's kernels

        def close(run: list[tuple[int, int]], truth: Truth = truth) -> None:
            if len(run) >= rules.RUN_MIN:
                truth.bound += len(run)
                truth.bound_gap_ns += sum(g for g, _ in run)
                truth.bound_span_ns += sum(g + d for g, d in run)
                truth.graph_gain_ns += sum(max(g - rules.GRAPH_GAP_NS, 0) for g, _ in run)

        for s, e, is_copy, _ in evs:
            if not is_copy:
                gap = None if latest is None else s - latest
                tiny = e - s < rules.TINY_NS
                if gap is not None and tiny and e - s <= gap <= rules.LAUNCH_GAP_MAX_NS:
                    run.append((gap, e - s))
                else:
                    close(run)
                    run = []
            latest = e if latest is None else max(latest, e)
        close(run)
    for device, s, e, size, kind, src, dst in copies:
        sides = {mem_kinds.get(src), mem_kinds.get(dst)}
        if copy_kinds.get(kind) in rules.HOST_COPIES and "Pageable" in sides:
            truth = out[device]
            truth.pageable += 1
            truth.pageable_bytes += size
            truth.pageable_ns += e - s
    for device in out:
        nccl = _union([(s, e) for _, d, s, e, n in kernels if d == device and "nccl" in
                       names.get(n, "").lower()])  # fmt: skip
        other = _union([(s, e) for _, d, s, e, n in kernels if d == device and "nccl" not in
                        names.get(n, "").lower()])  # fmt: skip
        out[device].nccl_ns = _length(nccl)
        out[device].nccl_exposed_ns = _length(nccl) - _intersection(nccl, other)
    return out


SQLITES = sorted(
    str(p.relative_to(SHARED)) for p in SHARED.glob("*/**/*.sqlite") if "corpus" not in p.parts
) if SHARED.exists() else ["(shared samples absent)"]  # fmt: skip


@pytest.mark.parametrize("name", SQLITES, ids=lambda n: Path(n).name[:40])
@pytest.mark.slow
def test_real_sample_against_the_independent_reading(name: str, shared_sample_cache) -> None:
    path = shared(*name.split("/"))
    truth = _independent(path)
    items = roofscope.load(path).reports[0].advice()
    many = len(truth) > 1
    for device, t in truth.items():
        window_s = t.window_ns / 1e9
        on = [a for a in items if (f"on GPU {device}" in a.title) or not many]

        graphs = [a for a in on if a.rule == "cuda_graphs"]
        if window_s and 100 * t.bound_gap_ns / t.window_ns >= rules.LAUNCH_BOUND_SHARE:
            (item,) = graphs
            assert item.launches == t.bound
            assert item.time_s == pytest.approx(t.bound_span_ns / 1e9, rel=1e-9)
            assert item.est_gain_s == pytest.approx(t.graph_gain_ns / 1e9, rel=1e-9)
            assert item.est_step_speedup == pytest.approx(
                step_speedup(window_s, t.graph_gain_ns / 1e9)
            )
        else:
            assert not graphs, (t.bound_gap_ns, t.window_ns)

        pinned = [a for a in on if a.rule == "pinned_memory"]
        if window_s and 100 * t.pageable_ns / t.window_ns >= rules.PAGEABLE_SHARE:
            (item,) = pinned
            assert item.launches == t.pageable
            assert item.time_s == pytest.approx(t.pageable_ns / 1e9, rel=1e-9)
            assert item.time_pct == pytest.approx(100 * t.pageable_ns / t.window_ns)
        else:
            assert not pinned, (t.pageable_ns, t.window_ns)

        nccl = [a for a in on if a.rule == "nccl_overlap"]
        if window_s and 100 * t.nccl_exposed_ns / t.window_ns >= rules.NCCL_SHARE:
            (item,) = nccl
            assert item.est_gain_s == pytest.approx(t.nccl_exposed_ns / 1e9, rel=1e-9)
        else:
            assert not nccl


@pytest.mark.parametrize("fmt", ["table", "md"])
@pytest.mark.slow
def test_group_names_in_the_evidence_are_data(fmt: str, tmp_path: Path) -> None:
    hostile = "[b]tiny[/b] \x1b]0;t\x07"  # a grouping rule's name, from roofscope.toml
    (tmp_path / "roofscope.toml").write_text(
        f'[[groups]]\npattern = "elementwise"\nname = {json.dumps(hostile)}\n', encoding="utf-8"
    )
    path = Export(kernels=_chain(50, 2 * US, 8 * US)).write(tmp_path / "t.sqlite")
    out = run_cli("advise", str(path), "--format", fmt, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "launch-bound" in out.stdout
    assert shown(hostile) in out.stdout or fmt == "table"  # the table shows 2 evidence lines
    assert not any(c in out.stdout for c in ("\x1b", "\x07"))


# -- idle_gaps (issue 32, item 4) ---------------------------------------------------------------


def test_idle_gaps_are_measured_by_length_with_what_each_is(tmp_path: Path) -> None:
    """Kernels of 100 µs with 5 gaps of 5 µs, 3 of 200 µs and 2 of 2 ms: every gap counted in
    its class; the item points at the longest share (waiting for the host)."""
    gaps = [5 * US] * 5 + [200 * US] * 3 + [2 * MS] * 2
    kernels, t = [], 0
    for gap in [*gaps, 0]:
        kernels.append(Kernel(GEMM, t, t + 100 * US))
        t += 100 * US + gap
    (item,) = _advice(tmp_path, Export(kernels=kernels))["idle_gaps"]
    idle = sum(gaps)
    window = 11 * 100 * US + idle
    assert item.time_s == pytest.approx(idle / 1e9)
    assert item.time_pct == pytest.approx(100 * idle / window)
    assert item.est_gain_s == pytest.approx((idle - len(gaps) * rules.GRAPH_GAP_NS) / 1e9)
    assert item.est_step_speedup == pytest.approx(step_speedup(window / 1e9, item.est_gain_s))
    assert "1 ms or longer" in item.title and "input pipeline" in item.action
    assert item.evidence[1:] == [
        f"2 gap(s) 1 ms or longer: 4 ms ({100 * 4 * MS / window:.1f}% of the window)",
        f"3 gap(s) 10 µs to 1 ms: 600 µs ({100 * 600 * US / window:.1f}% of the window)",
        f"5 gap(s) under 10 µs: 25 µs ({100 * 25 * US / window:.1f}% of the window)",
    ]
    _checked_everywhere(item)


def test_a_gpu_busy_but_for_short_gaps_gets_no_idle_item(tmp_path: Path) -> None:
    # 1 µs between 1 ms kernels: 0.1% idle, under the 2% threshold
    kernels = _chain(20, 1 * MS, 1 * US)
    assert "idle_gaps" not in _advice(tmp_path, Export(kernels=kernels))


def test_a_copy_fills_a_gap_and_overlapping_kernels_leave_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Idle is what no kernel or copy covers: a copy in a gap and a kernel on another stream
    across another leave only the uncovered parts (one gap left: the minimum lowered here)."""
    monkeypatch.setattr(rules, "GAPS_MIN", 1)
    kernels = [Kernel(GEMM, 0, 100 * US), Kernel(GEMM, 300 * US, 400 * US)]
    kernels += [Kernel(GEMM, 600 * US, 700 * US), Kernel(ADD, 350 * US, 650 * US, stream=9)]
    copies = [Copy(100 * US, 250 * US, 1 << 20, src=PINNED)]  # 50 µs of the first gap left
    (item,) = _advice(tmp_path, Export(kernels=kernels, copies=copies))["idle_gaps"]
    assert item.time_s == pytest.approx(50 * US / 1e9)
    assert item.evidence[1:] == [
        f"1 gap(s) 10 µs to 1 ms: 50 µs ({100 * 50 / 700:.1f}% of the window)"
    ]


def _idle_gaps_read_apart(path: Path) -> dict[int, list[tuple[int, int]]]:
    """Per GPU: count and Σ of the gaps no kernel, copy or memset covers, by class, from the
    SQLite itself (sqlite3 and Python, not roofscope's store)."""
    con = sqlite3.connect(path)
    events: dict[int, list[tuple[int, int]]] = {}
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                  "CUPTI_ACTIVITY_KIND_MEMSET"):  # fmt: skip
        if table in tables:
            for device, start, end in con.execute(f"SELECT deviceId, start, end FROM {table}"):
                if end >= start:
                    events.setdefault(device, []).append((start, end))
    con.close()
    out = {}
    for device, spans in events.items():
        classes = [[0, 0] for _ in range(len(rules.GAP_EDGES_NS) + 1)]
        latest = None
        for start, end in sorted(spans):
            if latest is not None and start > latest:
                gap = start - latest
                k = sum(gap >= edge for edge in rules.GAP_EDGES_NS)
                classes[k][0] += 1
                classes[k][1] += gap
            latest = end if latest is None else max(latest, end)
        out[device] = [tuple(c) for c in classes]
    return out


@pytest.mark.slow
def test_idle_gaps_on_a_real_trace_against_a_reading_apart(shared_sample_cache) -> None:
    """The real 23,419-kernel GTLS run (RTX 3060): no other rule fires on it; idle_gaps does,
    with the gaps a reading of the SQLite apart from roofscope counts."""
    path = shared("wild", "tomarriott__GTLS__report1.sqlite")
    expected = _idle_gaps_read_apart(path)
    session = roofscope.load(path)
    try:
        items = session.reports[0].advice()
        from roofscope.analysis.advice.event_scan import Extras, scan

        wins = scan(session.con, session.reports[0].report_id, rules.LAUNCH_BOUND,
                    Extras(rules.GAP_EDGES_NS)).windows  # fmt: skip
    finally:
        session.close()
    assert {d: list(w.gaps) for d, w in wins.items()} == expected
    (item,) = [a for a in items if a.rule == "idle_gaps"]
    assert [a.rule for a in items] == ["idle_gaps"]
    total = sum(ns for _, ns in expected[0]) / 1e9
    assert item.time_s == pytest.approx(total)
    assert item.time_pct == pytest.approx(6.0, abs=0.05)
    assert "1 ms or longer" in item.title


def test_one_pause_is_not_a_pattern(tmp_path: Path) -> None:
    """Two kernels and one 1 ms pause: 91% idle, but one gap is no pattern of the run (fewer
    than GAPS_MIN), and no graph or input pipeline is the answer to it."""
    kernels = [Kernel(GEMM, 0, 50 * US), Kernel(GEMM, 1050 * US, 1100 * US)]
    assert "idle_gaps" not in _advice(tmp_path, Export(kernels=kernels))
    assert rules.GAPS_MIN == 10


def _syncs_and_small_copies_read_apart(path: Path) -> dict[int, tuple]:
    """Per GPU, from the SQLite itself (sqlite3 and Python): the idle gaps in which a host
    synchronisation returned, the first to return there having been called while the GPU was
    busy (count, Σ ns), and the host copies under SMALL_COPY_BYTES (count, Σ duration, Σ idle
    gap before them; CUPTI's copy kinds 1-4, or the export's own labels)."""
    con = sqlite3.connect(path)
    names = {
        i: v
        for i, v in con.execute("SELECT id, value FROM StringIds")
        if re.fullmatch(r"cu(da)?(Device|Stream|Event|Ctx)Synchronize(_v\d+)?", v)
    }
    returns = sorted(
        (e, s)
        for n, s, e in con.execute('SELECT nameId, start, "end" FROM CUPTI_ACTIVITY_KIND_RUNTIME')
        if n in names and e >= s
    )
    ends = [e for e, _ in returns]
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    kinds = (
        dict(con.execute("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER"))
        if "ENUM_CUDA_MEMCPY_OPER" in tables
        else {1: "Host-to-Device", 2: "Device-to-Host", 3: "Host-to-Array", 4: "Array-to-Host"}
    )
    host = {"Host-to-Device", "Device-to-Host", "Host-to-Array", "Array-to-Host"}
    events: dict[int, list[tuple]] = {}
    for device, start, end in con.execute(
        'SELECT deviceId, start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL'
    ):
        events.setdefault(device, []).append((start, end, 0, None))
    for device, start, end, size, kind in con.execute(
        'SELECT deviceId, start, "end", bytes, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY'
    ):
        events.setdefault(device, []).append(
            (start, end, 1, size if kinds.get(kind) in host else None)
        )
    if "CUPTI_ACTIVITY_KIND_MEMSET" in tables:
        for device, start, end in con.execute(
            'SELECT deviceId, start, "end" FROM CUPTI_ACTIVITY_KIND_MEMSET'
        ):
            events.setdefault(device, []).append((start, end, 1, None))
    con.close()
    out = {}
    for device, spans in events.items():
        syncs, small, latest = [0, 0], [0, 0, 0], None
        for start, end, _, size in sorted(e for e in spans if e[1] >= e[0]):
            gap = start - latest if latest is not None else 0
            i = bisect_right(ends, latest) if latest is not None else 0  # first end after it
            if gap > 0 and i < len(ends) and ends[i] <= start and returns[i][1] <= latest:
                syncs[0] += 1
                syncs[1] += gap
            if size is not None and size < rules.SMALL_COPY_BYTES:
                small[0] += 1
                small[1] += end - start
                small[2] += max(gap, 0)
            latest = end if latest is None else max(latest, end)
        out[device] = (tuple(syncs), tuple(small))
    return out


@pytest.mark.slow
@pytest.mark.parametrize(
    ("where", "name", "fires"),
    [
        ("public", "lockfuehrer__beast_ressoruces__report1.sqlite", {"host_syncs"}),
        ("wild", "cestwc__balinski-and-gomory-cuda__report11.sqlite",
         {"host_syncs"}),
        ("wild", "NCAR__GPU_workshop__10_HandsOnNsight_nsys_reports_miniweather_baseline.sqlite",
         {"host_syncs", "small_copies"}),
        ("wild", "PolPuigPuy__OpenACC_Project_PolPuig__report2.sqlite",
         {"host_syncs", "small_copies"}),
        ("wild", "tomarriott__GTLS__report1.sqlite", set()),  # 30 syncs, 2,563 small copies
        # Unified Memory's 4 KiB page migrations: no host copy a staging buffer would batch
        ("wild", "sdroruganti__cuda-kernel-library__report2.sqlite", set()),
        ("public", "martisu1631998__kmeans-parallel__report2.sqlite", {"host_syncs"}),
    ],
)  # fmt: skip
def test_host_syncs_and_small_copies_on_real_traces_against_a_reading_apart(
    where, name, fires, shared_sample_cache
) -> None:
    """Issue 32 item 4: real traces whose host waits on the GPU after every kernel or copy
    (OpenACC, a CUDA assignment solver, NCAR's miniWeather) get host_syncs, with the gaps a
    reading of the SQLite apart from roofscope counts; small copies likewise."""
    path = shared(where, name)
    expected = _syncs_and_small_copies_read_apart(path)
    session = roofscope.load(path)
    try:
        report = session.reports[0]
        items = report.advice()
        from roofscope.analysis.advice.event_scan import Extras, scan

        syncs = session.con.execute(
            "SELECT start_ns, end_ns FROM host_syncs WHERE report_id = ?", [report.report_id]
        ).fetchall()
        starts, ends = [s for s, _ in syncs], [e for _, e in syncs]
        extras = Extras(rules.GAP_EDGES_NS, starts, ends, rules.SMALL_COPY_BYTES)
        wins = scan(session.con, report.report_id, rules.LAUNCH_BOUND, extras).windows
    finally:
        session.close()
    assert {d: (w.sync_gaps, w.small_copies) for d, w in wins.items()} == expected
    got = {a.rule for a in items} & {"host_syncs", "small_copies"}
    assert got == fires
    for item in items:
        if item.rule == "host_syncs":
            (device,) = wins
            assert item.time_s == pytest.approx(expected[device][0][1] / 1e9)
            assert "Synchronize ×" in item.evidence[1]


def test_the_host_syncs_kept_are_the_synchronising_calls_only(shared_sample_cache) -> None:
    """Of a trace's API calls only the synchronising ones are kept, by name without nsys'
    version suffix: 2,256 cuStreamSynchronize of lockfuehrer's 4,597 runtime calls."""
    path = shared("public", "lockfuehrer__beast_ressoruces__report1.sqlite")
    session = roofscope.load(path)
    try:
        rows = session.con.execute(
            "SELECT name, count(*), sum(end_ns - start_ns) FROM host_syncs WHERE report_id = ? "
            "GROUP BY name",
            [session.reports[0].report_id],
        ).fetchall()
    finally:
        session.close()
    con = sqlite3.connect(path)
    ((n, blocked),) = con.execute(
        'SELECT count(*), sum(r."end" - r.start) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds '
        "s ON s.id = r.nameId WHERE s.value = 'cuStreamSynchronize'"
    ).fetchall()
    con.close()
    assert rows == [("cuStreamSynchronize", n, blocked)] and n == 2256


@pytest.mark.parametrize(
    ("name", "kept"),
    [
        ("cudaStreamSynchronize_v3020", "cudaStreamSynchronize"),
        ("cudaStreamSynchronize_ptsz_v7000", "cudaStreamSynchronize"),  # per-thread stream
        ("cudaDeviceSynchronize_v3020", "cudaDeviceSynchronize"),
        ("cuCtxSynchronize", "cuCtxSynchronize"),
        ("cuEventSynchronize", "cuEventSynchronize"),
        ("cudaStreamSynchronizeAll", None),
        ("cudaLaunchKernel_v7000", None),
    ],
)
def test_which_api_calls_are_host_synchronisations(name, kept):
    from roofscope.ingest.nsys.export import SYNC_NAME

    match = SYNC_NAME.match(name)
    assert (match.group(1) if match else None) == kept


def _sqlite_exports() -> list[Path]:
    from tests.test_oracle import real_exports

    return [p for p in real_exports() if p.name.endswith(".sqlite")]


@pytest.mark.slow
@pytest.mark.parametrize("path", _sqlite_exports(), ids=lambda p: p.name[:50])
def test_every_real_trace_keeps_its_synchronising_calls(path: Path, shared_sample_cache) -> None:
    """Every real nsys SQLite export the project can reach: the host_syncs kept are its
    synchronising API calls, counted by name with sqlite3 apart from roofscope's ingest."""
    con = sqlite3.connect(path)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    expected: dict[str, int] = {}
    if {"CUPTI_ACTIVITY_KIND_RUNTIME", "StringIds"} <= tables:
        names = dict(con.execute("SELECT id, value FROM StringIds"))
        for name_id, start, end in con.execute(
            'SELECT nameId, start, "end" FROM CUPTI_ACTIVITY_KIND_RUNTIME'
        ):
            m = re.fullmatch(
                r"(cu(?:da)?(?:Device|Stream|Event|Ctx)Synchronize)(?:_pt[sd]z)?(?:_v\d+)?",
                names.get(name_id) or "",
            )
            if m and 0 <= start <= end:
                expected[m.group(1)] = expected.get(m.group(1), 0) + 1
    con.close()
    session = roofscope.load(path)
    try:
        got = dict(
            session.con.execute(
                "SELECT name, count(*) FROM host_syncs WHERE report_id = ? GROUP BY name",
                [session.reports[0].report_id],
            ).fetchall()
        )
    finally:
        session.close()
    assert got == expected
