"""How NVIDIA's reader spends its time on a large report (issue 29): load, random access to the
last launch, then a sequential pass in steps of 500 launches with time and peak memory after
each step. ``python3 tools/device/ncu_rep_probe.py REPORT``."""

import resource
import sys
import time

import ncu_report


def rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


path = sys.argv[1]
t = time.perf_counter()
context = ncu_report.load_report(path)
n = context.range_by_idx(0).num_actions()
print(f"load + count: {time.perf_counter() - t:.2f} s, {n} launches, {rss()} MiB", flush=True)
t = time.perf_counter()
last = context.range_by_idx(0).action_by_idx(n - 1)
names = last.metric_names()
print(f"last launch first: {time.perf_counter() - t:.3f} s, {len(names)} metrics", flush=True)
del context, last
context = ncu_report.load_report(path)
rng = context.range_by_idx(0)
start = step = time.perf_counter()
for i in range(n):
    action = rng.action_by_idx(i)
    for name in action.metric_names():
        metric = action.metric_by_name(name)
        if metric is not None:
            metric.value()
    if (i + 1) % 500 == 0 or i == n - 1:
        now = time.perf_counter()
        total = now - start
        print(f"  {i + 1}: step {now - step:.2f} s, total {total:.2f} s, {rss()} MiB", flush=True)
        step = now
