"""A store of N synthetic launches in the canonical schema, built in SQL (1M in ~1 s)."""

from __future__ import annotations

import duckdb

from roofscope.schema import CATALOGUE, DDL, SCHEMA_VERSION
from roofscope.session import Options, Session
from roofscope.session.loading import store_default_facts
from roofscope.sqlutil import insert_rows
from roofscope.store import OpenedStore

METRICS = {
    "gpu__time_duration.sum": ("ns", "s", 1e-9),
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": ("inst", "inst", 1.0),
    "dram__bytes.sum": ("byte", "B", 1.0),
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed": ("%", "%", 1.0),
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": ("%", "%", 1.0),
}
KERNELS = [
    "volta_sgemm_128x64_nn",
    "void at::native::vectorized_elementwise_kernel<4>(int)",
    "void cudnn::bn_fw_tr_1C11_singleread<float>(args)",
    "my_custom_kernel(float *)",
    "sm90_xmma_fprop_implicit_gemm_f32",
    "void at::native::reduce_kernel<512>(T3)",
]


def synthetic_session(n: int) -> Session:
    """N launches of six kernels with varied times, FLOPs, bytes and utilisations."""
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute(DDL)
    insert_rows(
        con, "meta", ("key", "value"), [("schema_version", str(SCHEMA_VERSION)), ("inputs", "[]")]
    )
    insert_rows(
        con,
        "reports",
        (
            "report_id",
            "path",
            "layout",
            "decimal",
            "gpu_name",
            "cc",
            "sm_count",
            "launches",
            "raw_values",
        ),
        [
            (
                0,
                f"synthetic-{n}.csv",
                "ncu-raw",
                ".",
                "NVIDIA H100 80GB HBM3",
                "9.0",
                132,
                n,
                "source",
            )
        ],
    )
    insert_rows(
        con,
        "catalogue",
        CATALOGUE.names,
        [(0, m, None, None, u, b, s, "raw column", True, True) for m, (u, b, s) in METRICS.items()],
    )
    names = "[" + ", ".join("'" + k.replace("'", "''") + "'" for k in KERNELS) + "]"
    con.execute(
        f"INSERT INTO launches SELECT 0, i, '1', 'app', 'host', {names}[1 + i % 6], NULL, '1', "
        f"'7', '(256, 1, 1)', '(' || (1 + i % 977) || ', 1, 1)', '0', '9.0', NULL, 1 "
        f"FROM range({n}) t(i)"
    )
    con.execute(
        "CREATE TABLE values_r0 AS SELECT i AS launch_id, "
        '1e-6 * (1 + (hash(i) % 1000)) AS "gpu__time_duration.sum", '
        '1e6 * (hash(i * 7) % 5000) AS "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", '
        '1e5 * (1 + hash(i * 13) % 9000) AS "dram__bytes.sum", '
        "(hash(i * 17) % 10000) / 100.0 AS "
        '"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed", '
        "(hash(i * 19) % 10000) / 100.0 AS "
        '"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed" FROM range(' + str(n) + ") t(i)"
    )
    store_default_facts(con)
    return Session(OpenedStore(con, None, False), Options(rules=None))
