"""The ordered pass over each GPU's kernels and copies (analysis/advice/event_scan.py) against a
reading written apart from it: plain Python over the events the export was built from. Batches
of four events, so that every carry from batch to batch (the latest end, the busy time, the run
under way) and every cut between GPUs inside a batch is crossed."""

from __future__ import annotations

from pathlib import Path

import pytest

import roofscope
from roofscope.analysis.advice import event_scan
from roofscope.analysis.advice import timeline as rules
from tests.nsys_builder import Copy, Export, Kernel

US = 1_000
ADD = "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int, T2)"
GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_kernel"
GROUP = {ADD: "element-wise", GEMM: "GEMM"}


def _trace() -> Export:
    """Two GPUs. GPU 0: a launch-bound run of 30 tiny adds broken by a GEMM, a run of 12 with a
    copy in one of its gaps (it shortens that gap: the copy counts in prev_end, and neither ends
    nor joins the run), two adds too few for a run. GPU 1: two streams whose kernels overlap."""
    kernels, copies, t = [], [], 0
    for _ in range(30):
        kernels.append(Kernel(ADD, t, t + 2 * US))
        t += 10 * US
    kernels.append(Kernel(GEMM, t, t + 50 * US))
    t += 60 * US
    for i in range(12):
        kernels.append(Kernel(ADD, t, t + 2 * US))
        if i == 5:
            copies.append(Copy(t + 3 * US, t + 5 * US, 4096))
        t += 10 * US
    t += 500 * US  # a host stall: ends the run
    kernels += [Kernel(ADD, t, t + 2 * US), Kernel(ADD, t + 9 * US, t + 11 * US)]
    t = 7 * US
    for i in range(20):
        kernels.append(Kernel(ADD, t, t + 3 * US, device=1, stream=7))
        kernels.append(
            Kernel(GEMM, t + 1 * US, t + 40 * US, device=1, stream=8)
            if i % 5 == 0
            else Kernel(ADD, t + 1 * US, t + 2 * US, device=1, stream=8)
        )
        t += 12 * US
    return Export(kernels=kernels, copies=copies)


def _reading(export: Export, rule: event_scan.LaunchBound) -> tuple[dict, dict, dict]:
    """Windows, per-GPU totals and per-(GPU, group) counts of launch-bound kernels in runs."""
    events = [(k.device, k.start, k.end, k.name) for k in export.kernels]
    events += [(c.device, c.start, c.end, None) for c in export.copies]
    windows, totals, groups = {}, {}, {}
    for device in sorted({e[0] for e in events}):
        mine = sorted((e for e in events if e[0] == device), key=lambda e: (e[1], e[2]))
        latest, busy, run, bound = None, 0, 0, []
        for _, start, end, name in mine:
            busy += end - start if latest is None else max(end - max(start, latest), 0)
            if name is not None:
                dur = end - start
                gap = None if latest is None else start - latest
                ok = gap is not None and dur < rule.tiny_ns and dur <= gap <= rule.gap_max_ns
                if ok:
                    bound.append((run, name, dur, gap))
                else:
                    run += 1
            latest = end if latest is None else max(latest, end)
        windows[device] = (mine[0][1], latest, busy)
        sizes: dict[int, int] = {}
        for r, *_ in bound:
            sizes[r] = sizes.get(r, 0) + 1
        kept = [b for b in bound if sizes[b[0]] >= rule.run_min]
        if kept:
            totals[device] = (
                len(kept),
                sum(b[2] for b in kept),
                sum(b[3] for b in kept),
                sum(max(b[3] - rule.graph_gap_ns, 0) for b in kept),
                len({b[0] for b in kept}),
            )
            for b in kept:
                key = (device, GROUP[b[1]])
                groups[key] = groups.get(key, 0) + 1
    return windows, totals, groups


@pytest.mark.parametrize("batch", [4, event_scan.BATCH_ROWS])
def test_the_ordered_pass_agrees_with_a_plain_reading(tmp_path: Path, monkeypatch, batch):
    export = _trace()
    monkeypatch.setattr(event_scan, "BATCH_ROWS", batch)
    session = roofscope.load(export.write(tmp_path / "t.sqlite"), use_cache=False)
    try:
        report = session.reports[0]
        got = event_scan.scan(report._con, report.report_id, rules.LAUNCH_BOUND)
    finally:
        session.close()
    windows, totals, groups = _reading(export, rules.LAUNCH_BOUND)
    assert {d: (w.start_ns, w.end_ns, w.busy_ns) for d, w in got.windows.items()} == windows
    assert {r[0]: tuple(r[2:7]) for r in got.launch_bound if r[7]} == totals
    assert {(r[0], r[1]): r[2] for r in got.launch_bound if not r[7]} == groups
    assert set(totals) == {0}  # GPU 0 has runs (the test means something), GPU 1 none
    assert totals[0][4] == 2  # two runs: the 29 after the first add, the 11 after the GEMM
