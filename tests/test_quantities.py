"""One rule for unknown FLOPs (docs/metrics.md "Unknown stays unknown"), in SQL and in Python."""

from __future__ import annotations

import itertools
from pathlib import Path

import duckdb
import pytest

import roofscope
from roofscope import quantities as q
from tests.ncu_builder import raw_page, write

VALUES = (None, 0.0, 3.0)


def test_sql_and_python_flop_totals_agree_on_every_mix_of_unknowns():
    con = duckdb.connect()
    cols = ", ".join(f"{p} DOUBLE" for p in q.PRECISIONS)
    con.execute(f"CREATE TABLE t ({cols})")
    mixes = list(itertools.product(VALUES, repeat=len(q.PRECISIONS)))
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", mixes)
    rows = con.execute(f"SELECT {', '.join(q.PRECISIONS)}, {q.flop_total_sql()} FROM t").fetchall()
    for *values, total in rows:
        expected = q.flop_total(dict(zip(q.PRECISIONS, values, strict=True)))
        assert total == expected
        assert (total is None) == all(v is None for v in values)  # each known one counts


@pytest.mark.parametrize(
    ("flops", "time_s", "expected"),
    [(None, 1.0, None), (2.0, None, None), (2.0, 0.0, None), (0.0, 2.0, 0.0), (6.0, 2.0, 3.0)],
)
def test_flop_per_s_is_unknown_when_either_side_is_or_time_is_zero(flops, time_s, expected):
    assert q.flop_per_s(flops, time_s) == expected
    sql = q.ratio_sql("?::DOUBLE", "?::DOUBLE")
    assert duckdb.connect().execute(f"SELECT {sql}", [flops, time_s]).fetchall()[0][0] == expected


def test_phase_flops_count_fp16_and_fp64_when_fp32_and_tensor_are_unmeasured(tmp_path, in_tmp_cwd):
    """Behaviour change: ``phase_totals`` used to report a phase's FLOPs as unknown unless an
    fp32 or tensor value was measured, so a phase of half- or double-precision kernels on a
    GPU without those counters lost its FLOPs; now every known precision counts."""
    hfma = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"
    dfma = "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum"
    units = {"gpu__time_duration.sum": "ns", hfma: "inst", dfma: "inst"}
    launches = [
        ("half_k", {"gpu__time_duration.sum": "1,000", hfma: "100", dfma: ""}),
        ("double_k", {"gpu__time_duration.sum": "1,000", hfma: "", dfma: "10"}),
    ]
    session = roofscope.load(write(tmp_path / "p.csv", raw_page(launches, units)), use_cache=False)
    (totals,) = session.reports[0].phase_totals([["step", 0, 1]])
    assert totals["kernels"] == 2
    assert totals["flops"] == pytest.approx(4 * 100 + 2 * 10)  # ncu convention: hfma 4, dfma 2
    group_flops = sum(r["flops_total"] for r in session.reports[0].rows("launch"))
    assert totals["flops"] == pytest.approx(group_flops)  # the same rule as the report's rows


def test_one_record_per_derived_quantity():
    """Each record is keyed by its own constant, aggregates in a known way, and has a title."""
    for key, record in q.QUANTITIES.items():
        assert record.key == key and record.aggregation in q.AGGREGATIONS and record.title
    for key in (q.TIME_S, q.FLOPS_TOTAL, q.FLOP_PER_S, q.EFFICIENCY, q.HEADROOM_S, q.LAUNCHES):
        assert key in q.QUANTITIES
    assert all(q.ai_key(level) in q.QUANTITIES for level in q.LEVELS)
    assert q.QUANTITIES[q.TIME_PCT].short_title == "%"
    assert q.QUANTITIES[q.TIME_S].short_title == "time"


def test_detail_aggregates_as_the_records_say():
    """Detail sums the extensive quantities and time-weights the fractions, as it did when
    the rule was "has a unit" (a fraction has none)."""
    from roofscope.analysis.detail import DERIVED

    for record in DERIVED:
        assert record.aggregation == (q.SUM if record.unit else q.TIME_WEIGHTED), record


def test_quantities_imports_nothing_of_roofscope():
    """The bottom of the layering: every layer may read it, so it reads none of them."""
    import ast

    tree = ast.parse(Path(q.__file__).read_text(encoding="utf-8"))
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m.split(".")[0] == "roofscope"]


# Where a derived quantity's key may be spelled as a literal: its home, and the layers that
# write the stored columns (schema.py names them, ingest/ fills them).
KEY_HOMES = ("quantities.py", "schema.py", "ingest/")
# The same spelling, meaning something else: (file under roofscope/, key) -> how many times.
KEY_LITERAL_EXCEPTIONS = {
    # a substring test on Nsight metric names (dram__bytes_read.sum), not a row key
    ("metrics.py", q.BYTES): 1,
    # the Efficiency pane's name (KEY), its worker group and its first column's title
    ("tui/panes/efficiency.py", q.EFFICIENCY): 3,
    # the same name in the panes' registry, which lists each pane before importing its module
    ("tui/panes/registry.py", q.EFFICIENCY): 1,
    # the title of the histogram table's first column (output text, not a key)
    ("output/render.py", q.EFFICIENCY): 1,
    # the id of the Kernels pane's launch table widget
    ("tui/panes/kernels.py", q.LAUNCHES): 1,
    # the Parquet dataset's table (folder) names: DIR/launches/…, docs/parquet.md
    ("output/parquet.py", q.LAUNCHES): 3,
    # analytic.json's own "flops" section (forward/backward/step FLOPs, not per precision) and
    # its by_batch rows: a file profiling/analytic.py writes into run folders and the summary,
    # model check, `profile --estimate` and its renderer read back; renaming the row key must
    # not rename it
    # the list of one group's launch rows in roofscope mcp's launches tool (a JSON key)
    ("mcp/tools.py", q.LAUNCHES): 1,
    ("profiling/analytic.py", q.FLOPS): 1,
    ("profiling/summary.py", q.FLOPS): 1,
    ("analysis/model_check.py", q.FLOPS): 1,
    ("cli/profile.py", q.FLOPS): 2,
    ("output/profiling.py", q.FLOPS): 2,
}


def key_literals(root: Path) -> dict[tuple[str, str], int]:
    """How often each derived-quantity key is spelled as a string literal, per file under
    ``root`` (outside KEY_HOMES). Precision and level names (fp32, dram…) are records'
    keys too, but they name precisions, levels, roofs and ceilings everywhere
    (quantities.PRECISIONS, LEVELS): they are not counted."""
    import ast

    nouns = {*q.PRECISIONS, *q.LEVELS}
    keys = {k for k in q.QUANTITIES if k not in nouns} | {q.FLOPS, q.BYTES, q.AI}
    found: dict[tuple[str, str], int] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(KEY_HOMES):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in keys:
                found[rel, node.value] = found.get((rel, node.value), 0) + 1
    return found


@pytest.mark.slow
def test_each_derived_quantity_key_is_spelled_once():
    """Code reads and writes derived quantities by quantities' constants (TIME_S, ai_key…),
    never by a literal "time_s": a literal outside the homes is a second definition."""
    assert key_literals(Path(q.__file__).parent) == KEY_LITERAL_EXCEPTIONS


def test_a_key_literal_put_back_is_caught(tmp_path):
    (tmp_path / "ok.py").write_text("from roofscope.quantities import TIME_S\nrow[TIME_S]\n")
    (tmp_path / "bad.py").write_text('row.get("flop_per_s")\nrow["dram"]\nf"{r[\'time_s\']}"\n')
    (tmp_path / "ingest").mkdir()
    (tmp_path / "ingest" / "reader.py").write_text('cols = ("time_s",)\n')
    assert key_literals(tmp_path) == {("bad.py", q.FLOP_PER_S): 1, ("bad.py", q.TIME_S): 1}
