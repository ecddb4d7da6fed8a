"""Which use of Nsight Compute 2025.3.1's ``ncu_report`` makes ``IMetric.unit`` crash (issue 29):
each variant runs in a fresh process on one report and prints its exit status.
``python3 tools/device/ncu_rep_unit_probe.py REPORT [VARIANT]``.

Found on the H200 machine: every variant passes but those that load DuckDB or pyarrow before
``ncu_report`` (exit -11, a segmentation fault in ``IMetric.unit``); loaded after it, they do no
harm. The worker's imports were made native-free for it."""

import importlib
import subprocess
import sys

FIRST = {"v_duckdb_first": "duckdb", "v_pyarrow_first": "pyarrow"}
if len(sys.argv) == 3 and sys.argv[2] in FIRST:
    importlib.import_module(FIRST[sys.argv[2]])
import ncu_report  # noqa: E402

NAME = "device__attribute_compute_capability_major"


def actions(ctx):
    rng = ctx.range_by_idx(0)
    return [rng.action_by_idx(i) for i in range(rng.num_actions())]


def v_first(path):  # load, first launch, unit
    ctx = ncu_report.load_report(path)
    return ctx.range_by_idx(0).action_by_idx(0).metric_by_name(NAME).unit()


def v_value_then_unit(path):
    ctx = ncu_report.load_report(path)
    m = ctx.range_by_idx(0).action_by_idx(0).metric_by_name(NAME)
    m.value()
    return m.unit()


def v_after_names(path):  # metric_names of every launch, then a unit
    ctx = ncu_report.load_report(path)
    for a in actions(ctx):
        a.metric_names()
    return ctx.range_by_idx(0).action_by_idx(0).metric_by_name(NAME).unit()


def v_after_names_one(path):  # metric_names of the first launch only
    ctx = ncu_report.load_report(path)
    a = ctx.range_by_idx(0).action_by_idx(0)
    a.metric_names()
    return a.metric_by_name(NAME).unit()


def v_after_nvtx(path):  # nvtx_state of every launch, then a unit
    ctx = ncu_report.load_report(path)
    for a in actions(ctx):
        a.nvtx_state()
    return ctx.range_by_idx(0).action_by_idx(0).metric_by_name(NAME).unit()


def v_after_nvtx_walk(path):  # as the worker's survey reads NVTX
    ctx = ncu_report.load_report(path)
    for a in actions(ctx):
        s = a.nvtx_state()
        if s is not None:
            for d in s.domains():
                s.domain_by_id(d).push_pop_ranges()
    return ctx.range_by_idx(0).action_by_idx(0).metric_by_name(NAME).unit()


def v_second_load(path):  # the shipped worker's order: walk in one load, unit in another
    ctx = ncu_report.load_report(path)
    for a in actions(ctx):
        a.metric_names()
    del ctx, a
    ctx = ncu_report.load_report(path)
    return ctx.range_by_idx(0).action_by_idx(0).metric_by_name(NAME).unit()


def v_two_contexts(path):  # a second load alive while reading units of the first
    ctx = ncu_report.load_report(path)
    other = ncu_report.load_report(path)
    other.range_by_idx(0).action_by_idx(0).metric_names()
    return ctx.range_by_idx(0).action_by_idx(0).metric_by_name(NAME).unit()


def v_every_unit(path):  # every metric's unit of every launch, nothing else first
    ctx = ncu_report.load_report(path)
    n = 0
    for a in actions(ctx):
        for name in a.metric_names():
            m = a.metric_by_name(name)
            if m is not None:
                m.unit()
                n += 1
    return n


def v_units_first_then_names(path):  # units of launch 0, then survey, then units again
    ctx = ncu_report.load_report(path)
    a0 = ctx.range_by_idx(0).action_by_idx(0)
    a0.metric_by_name(NAME).unit()
    for a in actions(ctx):
        a.metric_names()
        a.nvtx_state()
    second = ctx.range_by_idx(0).action_by_idx(1 % ctx.range_by_idx(0).num_actions())
    return second.metric_by_name(NAME).unit()


def v_has_value_then_unit(path):  # the worker's _value: has_value, value, unit
    ctx = ncu_report.load_report(path)
    m = ctx.range_by_idx(0).action_by_idx(0).metric_by_name(NAME)
    m.has_value()
    m.value()
    return m.unit()


def v_worker_identity(path):  # the worker's own functions: identity of the first launch
    from roofscope.ingest.ncu import report_worker as w

    ctx = ncu_report.load_report(path)
    return len(w._identity(ctx.range_by_idx(0).action_by_idx(0), 0))


def v_worker_survey_identity(path):  # its survey, then identity, in one load
    from roofscope.ingest.ncu import report_worker as w

    ctx = ncu_report.load_report(path)
    where = w._actions(ctx)
    w._survey(ctx, where)
    return len(w._identity(ctx.range_by_idx(0).action_by_idx(0), 0))


def v_worker_slice(path):  # the whole _slice of every launch
    import tempfile

    from roofscope.ingest.ncu import report_worker as w

    ctx = ncu_report.load_report(path)
    where = w._actions(ctx)
    del ctx
    return len(w._slice((path, where, 0, tempfile.mktemp(), w.GROWTH_BUDGET))["names"])


def v_duckdb_after(path):  # DuckDB's native library loaded after ncu_report: no harm
    import duckdb  # noqa: F401

    return v_first(path)


def v_duckdb_first(path):  # loaded before ncu_report (at the top): the crash
    return v_first(path)


def v_pyarrow_first(path):  # the same with pyarrow
    return v_first(path)


VARIANTS = {k: v for k, v in globals().items() if k.startswith("v_")}

if __name__ == "__main__":
    if len(sys.argv) == 3:
        print(VARIANTS[sys.argv[2]](sys.argv[1]), flush=True)
        sys.exit(0)
    for name in VARIANTS:
        argv = [sys.executable, __file__, sys.argv[1], name]
        p = subprocess.run(argv, capture_output=True, text=True)
        print(f"{name:28s} exit {p.returncode:4d}  {p.stdout.strip()[:40]}", flush=True)
