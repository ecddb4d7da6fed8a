"""nsys + ncu of the same program: real timeline shares beside replayed roofline numbers.

ncu replays each kernel with locked clocks and caches flushed, so its durations are not the
program's; nsys records the real timeline but no counters. Kernels are matched by name (the
exact demangled name where both exports have it, else the base name, for ncu's
``--print-kernel-base function``), and the k-th launch of a name in ncu is paired with the k-th
launch of that name on the nsys timeline (ncu ``ID`` order = launch order).

Per ncu group: the nsys time of every nsys launch of the group's kernels (its true share of GPU
time) and the FLOP rate of the paired launches at their real durations.
"""

from __future__ import annotations

from typing import Any

import duckdb

from roofscope.grouping import base_name
from roofscope.quantities import FLOP_PER_S, LAUNCHES, TIME_PCT, TIME_S, flop_per_s, flop_total_sql
from roofscope.sqlutil import insert_rows

REPLAY_NOTE = (
    "nsys: real timeline · ncu: replayed kernels at locked clocks (its times are not the run's)"
)


def _tables(ncu_rid: int, nsys_rid: int) -> tuple[str, str]:
    return f"join_keys_{int(ncu_rid)}_{int(nsys_rid)}", f"join_pairs_{int(ncu_rid)}_{int(nsys_rid)}"


def build(con: duckdb.DuckDBPyConnection, ncu_rid: int, nsys_rid: int) -> None:
    """Per pair of reports: kernel name → match key, and the paired launches."""
    keys, pairs = _tables(ncu_rid, nsys_rid)
    names = {
        rid: {
            k
            for (k,) in con.execute(
                "SELECT DISTINCT kernel FROM launches WHERE report_id = ? AND kernel IS NOT NULL",
                [rid],
            ).fetchall()
        }
        for rid in (ncu_rid, nsys_rid)
    }
    common = names[ncu_rid] & names[nsys_rid]
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {keys} (report_id INTEGER, kernel VARCHAR, key VARCHAR)"
    )
    insert_rows(
        con,
        keys,
        ("report_id", "kernel", "key"),
        [(rid, k, k if k in common else base_name(k)) for rid in names for k in names[rid]],
    )
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {pairs} AS "
        f"WITH n AS (SELECT k.key, l.launch_id, row_number() OVER (PARTITION BY k.key "
        f"ORDER BY l.launch_id) AS k FROM launches l JOIN {keys} k ON k.kernel = l.kernel "
        f"AND k.report_id = {int(ncu_rid)} WHERE l.report_id = {int(ncu_rid)}), "
        f"s AS (SELECT k.key, l.launch_id, row_number() OVER (PARTITION BY k.key "
        f"ORDER BY l.launch_id) AS k FROM launches l JOIN {keys} k ON k.kernel = l.kernel "
        f"AND k.report_id = {int(nsys_rid)} WHERE l.report_id = {int(nsys_rid)}) "
        f"SELECT n.key, n.launch_id AS ncu_launch, s.launch_id AS nsys_launch "
        f"FROM n JOIN s USING (key, k)"
    )


def group_columns(
    con: duckdb.DuckDBPyConnection, ncu_rid: int, nsys_rid: int, where: str = "TRUE"
) -> dict[str, dict[str, Any]]:
    """Per group of the ncu report: nsys time, share, launches; paired launches and their
    FLOP rate at real durations."""
    keys, pairs = _tables(ncu_rid, nsys_rid)
    total = con.execute(
        "SELECT sum(time_s * invocations) FROM launch_facts WHERE report_id = ?", [nsys_rid]
    ).fetchall()[0][0]
    rows = con.execute(
        f"WITH g AS (SELECT DISTINCT v.grp, k.key FROM launch_view v JOIN {keys} k "
        f"ON k.kernel = v.kernel AND k.report_id = {int(ncu_rid)} "
        f"WHERE v.report_id = {int(ncu_rid)} AND ({where})), "
        f"t AS (SELECT g.grp, sum(f.time_s * f.invocations) AS time_s, sum(f.invocations) AS n "
        f"FROM g JOIN {keys} k ON k.key = g.key AND k.report_id = {int(nsys_rid)} "
        f"JOIN launch_facts f ON f.report_id = {int(nsys_rid)} AND f.kernel = k.kernel "
        f"GROUP BY g.grp), "
        f"p AS (SELECT v.grp, count(*) AS matched, sum({flop_total_sql('v.')}) AS flops, "
        f"sum(s.time_s) AS real_s "
        f"FROM {pairs} j JOIN launch_view v ON v.report_id = {int(ncu_rid)} "
        f"AND v.launch_id = j.ncu_launch JOIN launch_facts s ON s.report_id = {int(nsys_rid)} "
        f"AND s.launch_id = j.nsys_launch WHERE ({where}) GROUP BY v.grp) "
        f"SELECT coalesce(t.grp, p.grp), t.time_s, t.n, p.matched, p.flops, p.real_s "
        f"FROM t FULL JOIN p ON p.grp = t.grp"
    ).fetchall()
    out = {}
    for grp, time_s, n, matched, flops, real_s in rows:
        out[grp] = {
            TIME_S: time_s,
            TIME_PCT: 100.0 * time_s / total if time_s is not None and total else None,
            LAUNCHES: int(n or 0),
            "matched_launches": int(matched or 0),
            FLOP_PER_S: flop_per_s(flops, real_s),
        }
    return out


def coverage(con: duckdb.DuckDBPyConnection, ncu_rid: int, nsys_rid: int) -> dict[str, Any]:
    """How much of the real GPU time the ncu report's kernels account for."""
    keys, pairs = _tables(ncu_rid, nsys_rid)
    row = con.execute(
        f"SELECT sum(f.time_s * f.invocations), sum(f.time_s * f.invocations) FILTER (WHERE "
        f"k.key IN (SELECT key FROM {keys} WHERE report_id = {int(ncu_rid)})) "
        f"FROM launch_facts f JOIN {keys} k ON k.kernel = f.kernel "
        f"AND k.report_id = {int(nsys_rid)} WHERE f.report_id = {int(nsys_rid)}"
    ).fetchall()[0]
    paired = con.execute(f"SELECT count(*) FROM {pairs}").fetchall()[0][0]
    total, covered = row
    return {
        "nsys_time_s": total,
        "nsys_time_of_ncu_kernels_s": covered,
        "coverage": (covered or 0.0) / total if total else None,
        "paired_launches": int(paired),
        "note": REPLAY_NOTE,
    }
