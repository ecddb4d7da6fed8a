"""ncu's rules rolled up over the step (issue 19 items 1 and 3): ingest of the rule rows,
the per-rule totals against an independent reading (tests/oracle.py), rewrites that must not
move them, ``Report.advice()``, ``report --format json`` and ``roofscope advise``."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

import roofscope
from roofscope.analysis.advice import ROOFSCOPE, step_speedup
from tests import oracle
from tests.conftest import REPO, run_cli, shared
from tests.ncu_builder import ID_NEW, _id_values
from tests.test_metamorphic import crlf, gzipped, no_final_newline, rows_shuffled

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

RESNET = REPO / "sample_reports" / "resnet18_fp32_h100.ncu-details.csv"
APP = ("generated", "ncu_2025.3.1_h100", "app_full_details.csv")
FULL = (
    REPO / "sample_reports" / "cnn_fp32_b128_full_h100.ncu-details.csv.gz"
)  # profile --preset full
REAL = [
    RESNET,
    FULL,
    ("h100", "resnet18_fp32.details.csv"),
    APP,
    ("public", "CodeGandee__llm-perf-opt__kernel_0001_ncu.details.csv"),
]
RULES = [
    "Rule Name",
    "Rule Type",
    "Rule Description",
    "Estimated Speedup Type",
    "Estimated Speedup",
]


def _page(launches: list[tuple[str, float, list[tuple]]], speedups: bool = True) -> str:
    """A details page with rule columns: per launch (kernel, duration in µs, rule rows), each
    rule row (name, type, text, speedup type, speedup %)."""
    rules = RULES if speedups else RULES[:3]
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow([*ID_NEW, "Section Name", "Metric Name", "Metric Unit", "Metric Value", *rules])
    for i, (kernel, us, fired) in enumerate(launches):
        ids = _id_values(i, kernel, "9.0")
        w.writerow([*ids, "Command line profiler metrics", "gpu__time_duration.sum", "us", us])
        for rule in fired:
            w.writerow([*ids, "SchedulerStats", "", "", "", *rule[: len(rules)]])
    return buf.getvalue()


def _write(tmp_path: Path, text: str, name: str = "rules.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _advice(path: Path) -> list:
    session = roofscope.load(path, use_cache=False)
    try:
        return session.reports[0].advice()
    finally:
        session.close()


def _by_rule(items: list) -> dict[str, tuple]:
    """Per ncu rule: launches, time and gain, its items (one per kind of text) added up."""
    out: dict[str, tuple] = {}
    for a in items:
        n, t, g = out.get(a.rule, (0, 0.0, None))
        gain = g if a.est_gain_s is None else (g or 0.0) + a.est_gain_s
        out[a.rule] = (n + a.launches, t + a.time_s, gain)
    return out


HAND = [
    ("alpha_kernel", 2.0, [
        ("Issue", "OPT", "issue text on a", "global", "50"),
        ("Info", "INF", "just information", "", ""),
        ("Broken", "ERR", "Traceback\n  float division by zero", "", ""),
    ]),
    ("beta_kernel", 8.0, [
        ("Issue", "OPT", "issue text on b", "local", "20"),
        ("Issue", "OPT", "issue text on b, again", "local", "10"),
        ("Warn", "WRN", "a warning without an estimate", "", ""),
    ]),
    ("gamma_kernel", 10.0, []),
]  # fmt: skip


def test_hand_made_rules_roll_up_over_the_step(tmp_path: Path) -> None:
    items = _advice(_write(tmp_path, _page(HAND)))
    assert [a.rule for a in items] == ["Issue", "Warn"]  # INF is information, ERR a failure
    issue, warn = items
    step = 20e-6
    gain = 0.5 * 2e-6 + 0.2 * 8e-6  # the larger of a launch's two estimates
    assert issue.source == "ncu" and issue.launches == 2
    assert issue.time_s == pytest.approx(10e-6)
    assert issue.time_pct == pytest.approx(50.0)
    assert issue.est_gain_s == pytest.approx(gain)
    assert issue.est_step_speedup == pytest.approx(step_speedup(step, gain))
    assert issue.est_step_speedup == pytest.approx(step / (step - gain))
    assert issue.groups == ["beta_kernel", "alpha_kernel"]  # longest first
    assert issue.evidence[0].startswith("ncu's text (OPT, SchedulerStats section, launch 1")
    assert "issue text on b" in issue.evidence[0]
    assert any("local" in x and "upper bound" in x for x in issue.assumptions)
    assert warn.est_gain_s is None and warn.est_step_speedup is None
    assert warn.action == "see ncu's rule text"
    assert warn.launches == 1 and warn.time_s == pytest.approx(8e-6)


def test_a_known_rule_maps_to_a_short_action(tmp_path: Path) -> None:
    rows = [("k", 4.0, [("IssueSlotUtilization", "OPT", "ncu says", "local", "25")])]
    (item,) = _advice(_write(tmp_path, _page(rows)))
    assert item.title.startswith("ncu IssueSlotUtilization: ")
    assert item.action.startswith("hide latency")
    assert item.est_gain_s == pytest.approx(1e-6)


def test_rule_columns_without_estimates_older_ncu(tmp_path: Path) -> None:
    rows = [("k", 4.0, [("Occupancy", "WRN", "limited", "", "")])]
    (item,) = _advice(_write(tmp_path, _page(rows, speedups=False)))
    assert item.rule == "Occupancy" and item.est_gain_s is None
    assert item.time_s == pytest.approx(4e-6)


def test_an_estimate_that_is_no_percentage_is_left_out_with_a_warning(tmp_path: Path) -> None:
    rows = [("k", 4.0, [("X", "OPT", "t", "global", "150"), ("Y", "OPT", "t", "global", "abc")])]
    session = roofscope.load(_write(tmp_path, _page(rows)), use_cache=False)
    try:
        items = session.reports[0].advice()
        warnings = session.reports[0].warnings
    finally:
        session.close()
    assert {a.rule: a.est_gain_s for a in items} == {"X": None, "Y": None}
    assert any("not a percentage from 0 to 100" in w for w in warnings)


def test_a_page_without_rules_gives_no_advice(tmp_path: Path) -> None:
    assert _advice(_write(tmp_path, _page([("k", 4.0, [])], speedups=False))) == []
    raw = REPO / "sample_reports" / "mlp_fp32_b128_h100.ncu-raw.csv"
    assert [a for a in _advice(raw) if a.source == "ncu"] == []  # roofscope's rules may fire


def test_rule_text_is_data_in_table_and_markdown(tmp_path: Path) -> None:
    text = "[bold]look[/] \x1b]0;owned\x07 here"
    path = _write(tmp_path, _page([("k", 4.0, [("Evil", "OPT", text, "global", "10")])]))
    for fmt in ("table", "md"):
        out = run_cli("advise", str(path), "--format", fmt, "--no-cache", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert "\x1b" not in out.stdout and "\x07" not in out.stdout
        assert "\\x1b" in out.stdout and "[bold]look[/]" in out.stdout
    out = run_cli("advise", str(path), "--format", "json", "--no-cache", cwd=tmp_path)
    (item,) = json.loads(out.stdout)["reports"][0]["advice"]
    assert text in item["evidence"][0]  # JSON keeps the real string


# -- real exports against the independent reading ------------------------------------------------


def _real(where: Path | tuple[str, ...]) -> Path:
    return where if isinstance(where, Path) else shared(*where)


@pytest.mark.parametrize("where", REAL, ids=lambda w: w.name if isinstance(w, Path) else w[-1])
def test_rule_totals_agree_with_the_independent_reading(where, shared_sample_cache) -> None:
    path = _real(where)
    expected = oracle.ncu_rules(path)
    ncu = [a for a in roofscope.load(path).reports[0].advice() if a.source == "ncu"]
    got = _by_rule(ncu)
    assert set(got) == set(expected) and expected
    for rule, want in expected.items():
        launches, time_s, gain = got[rule]
        assert launches == want.launches, rule
        assert time_s == pytest.approx(want.time_s, rel=1e-9), rule
        if want.est_gain_s is None:
            assert gain is None, rule
        else:
            assert gain == pytest.approx(want.est_gain_s, rel=1e-9), rule


def test_the_full_set_export_has_global_and_local_estimates(shared_sample_cache) -> None:
    items = roofscope.load(shared(*APP)).reports[0].advice()
    gains = [a.est_gain_s for a in items]
    known = [g for g in gains if g is not None]
    assert known == sorted(known, reverse=True) and gains[: len(known)] == known
    assert items[0].rule == "HighPipeUtilization"
    assert any("upper bound" in x for x in items[0].assumptions)


def test_older_rule_columns_on_a_real_export(shared_sample_cache) -> None:
    path = shared(
        "public",
        "leleucas__Actual-Parameter-Collection-for-Machine-Learning-Operators__"
        "gpt2_flashattn_nsight.csv",
    )
    expected = oracle.ncu_rules(path)
    # ncu's rules only: roofscope's own items (fusion fires on its layer norms and dropout)
    # are not what the older columns carry
    advice = roofscope.load(path).reports[0].advice()
    got = _by_rule([a for a in advice if a.source != ROOFSCOPE])
    assert {r: (n, g) for r, (n, _, g) in got.items()} == {
        r: (t.launches, None) for r, t in expected.items()
    }


# -- rewrites do not move the totals --------------------------------------------------------------


@pytest.mark.parametrize("rewrite", [no_final_newline, crlf, gzipped, rows_shuffled])
@pytest.mark.parametrize("where", [RESNET, APP], ids=["resnet-sample", "app-full"])
def test_rule_totals_survive_rewrites(where, rewrite, tmp_path: Path) -> None:
    path = _real(where)
    before = _by_rule(_advice(path))
    after = _by_rule(_advice(rewrite(path, "ncu", tmp_path / path.name)))
    assert after.keys() == before.keys()
    for rule, (n, t, g) in before.items():
        assert after[rule][0] == n
        assert after[rule][1] == pytest.approx(t, rel=1e-12)
        assert after[rule][2] == (None if g is None else pytest.approx(g, rel=1e-12))


# -- where it shows --------------------------------------------------------------------------------


def test_report_json_carries_advice_per_report(tmp_path: Path, shared_sample_cache) -> None:
    out = run_cli("report", str(RESNET), "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)["reports"][0]
    ncu = [a for a in report["advice"] if a["source"] == "ncu"]
    # SOLBottleneck, one item per kind of ncu text on its launches (issue 32: no item says
    # what ncu's text on its launches contradicts)
    assert {a["rule"] for a in ncu} == {"SOLBottleneck"}
    assert sorted(a["title"] for a in ncu) == [
        "ncu SOLBottleneck: compute is the busier unit",
        "ncu SOLBottleneck: grid too small to fill the GPU",
        "ncu SOLBottleneck: memory is the busier unit",
        "ncu SOLBottleneck: neither compute nor memory is busy (latency)",
    ]
    item = ncu[0]
    assert "channels_last" in {a["rule"] for a in report["advice"]}  # roofscope's own, beside
    assert set(item) == {
        "rule", "source", "title", "action", "evidence", "groups", "launches", "time_s",
        "time_pct", "est_gain_s", "est_step_speedup", "assumptions",
    }  # fmt: skip
    assert "groups" in report and "efficiency" in report  # the existing keys stay


def test_advise_table_fits_80_columns(tmp_path: Path, shared_sample_cache, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    out = run_cli("advise", str(RESNET), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert any(re.match(r"\d SOLBottleneck ", line) for line in lines)
    assert any("do: " in line for line in lines)


def test_advise_json_and_top(tmp_path: Path, shared_sample_cache) -> None:
    path = shared(*APP)
    out = run_cli("advise", str(path), str(RESNET), "--format", "json", "--top", "2", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [len(r["advice"]) for r in doc["reports"]] == [2, 2]
    assert doc["reports"][0]["advice"][0]["rule"] == "HighPipeUtilization"
    md = run_cli("advise", str(path), "--format", "md", cwd=tmp_path)
    assert md.stdout.startswith("### roofscope advise")
    assert "| 1 | HighPipeUtilization |" in md.stdout


def test_advise_says_when_an_export_has_no_rules(tmp_path: Path, shared_sample_cache) -> None:
    raw = REPO / "sample_reports" / "mlp_fp32_b128_h100.ncu-raw.csv"
    out = run_cli("advise", str(raw), cwd=tmp_path)
    assert out.returncode == 0 and "no ncu rule results" in out.stdout


def test_full_preset_sample_carries_ncu_rules(shared_sample_cache) -> None:
    """The details page `roofscope profile cnn --preset full` wrote on an H100: 17 of ncu's rules
    fire on SimpleCNN's 44 launches, with estimates; the raw page beside it has no rule rows."""
    items = roofscope.load(FULL).reports[0].advice()
    ncu = [a for a in items if a.source == "ncu"]
    assert len(ncu) == 17 and ncu[0].rule == "HighPipeUtilization" and ncu[0].launches == 43
    assert sum(a.est_gain_s is not None for a in ncu) == 14
    raw = roofscope.load(str(FULL).replace("details", "raw")).reports[0].advice()
    assert not [a for a in raw if a.source == "ncu"]


def test_advise_says_what_step_means_for_traces_and_recordings(tmp_path: Path) -> None:
    """No "profile with sections" hint where ncu's rules cannot exist; a recording has no step."""
    from tests.nsys_builder import Export, Kernel

    trace = Export([Kernel("k", i * 10_000, i * 10_000 + 2_000) for i in range(5)])
    path = trace.write(tmp_path / "t.sqlite")
    out = run_cli("advise", str(path), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "no ncu rule results" not in out.stdout
    assert "each GPU's wall window" in " ".join(out.stdout.split())
    assert json.loads(run_cli("advise", str(path), "--format", "json", cwd=tmp_path).stdout)[
        "reports"
    ][0]["format"].startswith("nsys")
    recording = REPO / "sample_reports" / "h100_matmul.parquet"
    out = run_cli("advise", str(recording), "--format", "md", cwd=tmp_path)
    assert "GPU recording" in out.stdout and "no ncu rule results" not in out.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--top", "0"], "--top needs a positive number"),
        (["missing.csv"], "missing.csv"),
    ],
)
def test_advise_errors_are_one_line(args, message, tmp_path: Path) -> None:
    files = [] if args[0].endswith(".csv") else [str(RESNET)]
    out = run_cli("advise", *files, *args, cwd=tmp_path)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and message in out.stderr


def test_api_reaches_advice(shared_sample_cache) -> None:
    items = roofscope.load(str(RESNET)).reports[0].advice()
    assert "SOLBottleneck" in {a.to_dict()["rule"] for a in items}
