"""The built-in grouping rules against a table of real kernel names (tests/data/kernel_groups.csv).

Each row is a kernel name, the group the built-in rules must give it, and the export it was taken
from (``tools/kernel_names.py`` lists them; ``--table`` drafts the rows). Rows whose source starts
with ``synthetic:`` stand for families no real export here has (NCCL, CUTLASS 3, FlashAttention 3,
some Inductor templates); they say why, and are not counted as real.
"""

from __future__ import annotations

import csv
import importlib.util
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from roofscope.grouping import BUILTIN_RULES, Grouper
from tests.conftest import REPO, SHARED

TABLE = REPO / "tests" / "data" / "kernel_groups.csv"
ROWS = list(csv.DictReader(TABLE.open(encoding="utf-8", newline="")))
REAL = [r for r in ROWS if not r["source"].startswith("synthetic:")]


def test_every_name_groups_as_the_table_says():
    names = [r["name"] for r in ROWS]
    got = Grouper(BUILTIN_RULES).match_all(names)
    wrong = [
        f"{r['name'][:100]!r}: expected {r['group']!r}, got {group!r} ({why})"
        for r, (group, why) in zip(ROWS, got, strict=True)
        if group != r["group"]
    ]
    assert not wrong, "\n".join(wrong)


def test_the_table_holds_150_real_names_once_each():
    assert len(REAL) >= 150
    assert len({r["name"] for r in ROWS}) == len(ROWS)
    assert all(r["source"] for r in ROWS)


def test_the_table_covers_todays_families():
    groups = Counter(r["group"] for r in REAL)
    for family in ("attention", "GEMM", "layer norm", "softmax", "loss", "embedding"):
        assert groups[family] >= 4, family
    for family in ("dropout/RNG", "optimizer", "reduction", "element-wise", "sort", "scan"):
        assert groups[family] >= 4, family
    inductor = [r for r in REAL if r["name"].startswith("triton_")]
    assert len(inductor) >= 40
    assert {"layer norm", "softmax", "reduction", "element-wise", "dropout/RNG", "GEMM"} <= {
        r["group"] for r in inductor
    }


def test_attention_wins_over_convolution():
    """cuDNN's SDPA kernels say fprop/bprop; they are attention, not convolutions."""
    sdpa = [r for r in REAL if "native_sdpa" in r["name"]]
    assert {"fprop", "bprop"} <= {w for r in sdpa for w in ("fprop", "bprop") if w in r["name"]}
    assert {r["group"] for r in sdpa} == {"attention"}


def test_a_compiled_encoder_step_summarises():
    """The torch.compile'd two-layer encoder step: its ~50 Inductor kernels fall in a few groups."""
    step = [r for r in REAL if r["name"].startswith("triton_")]
    groups = {r["group"] for r in step}
    assert len(groups) <= 8 < len(step)


@cache
def _names_in(path: Path) -> frozenset[str]:
    spec = importlib.util.spec_from_file_location("kernel_names", REPO / "tools/kernel_names.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return frozenset(module.names(path))


def _source(row: dict[str, str]) -> Path:
    source = row["source"]
    if source.startswith("shared/samples/"):
        return SHARED / source.removeprefix("shared/samples/")
    return REPO / source


@pytest.mark.parametrize("source", sorted({r["source"] for r in REAL}))
@pytest.mark.slow
def test_real_names_are_in_their_exports(source):
    """Every real row's name is read back from the export it names (none was typed in)."""
    path = _source({"source": source})
    if not path.is_file():
        pytest.skip(f"{source} is not here (the shared samples are optional)")
    missing = {r["name"] for r in REAL if r["source"] == source} - _names_in(path)
    assert not missing, missing


# Every real export the project can reach, by where the listed sources say it is (the wild
# samples' SOURCES.md asks that none of their text be copied here: they are not read).
UNGROUPED = REPO / "tests" / "data" / "ungrouped_names.csv"
REACHABLE = (
    "sample_reports",
    "tests/data",
    "shared/samples/h100",
    "shared/samples/generated",
    "shared/samples/public",
)


def _reachable_names() -> dict[str, str]:
    """Each distinct kernel name in the reachable exports -> the first export (as a source)."""
    spec = importlib.util.spec_from_file_location("kernel_names", REPO / "tools/kernel_names.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    seen: dict[str, str] = {}
    for root in REACHABLE:
        base = _source({"source": root})
        if not base.is_dir():
            continue
        for source, found in module.distinct([str(base)]).items():
            path = Path(found)
            where = (
                f"shared/samples/{path.relative_to(SHARED).as_posix()}"
                if path.is_relative_to(SHARED)
                else path.relative_to(REPO).as_posix()
            )
            seen.setdefault(source, where)
    return seen


@pytest.mark.slow
def test_the_names_no_built_in_rule_groups_are_the_listed_ones():
    """Issue 32: every kernel name of every reachable real export that falls into no built-in
    group (it is grouped by its base name) is listed in tests/data/ungrouped_names.csv, and
    every listed name still does. A new framework's kernels, or a rule that stopped matching,
    show up here by name. The listed ones are a program's own kernels (vectorAdd, a
    benchmark's GEMM variants, Julia and OpenACC names), which a project rule should group."""
    seen = _reachable_names()
    if not seen:
        pytest.skip("no export is reachable")
    grouped = Grouper(BUILTIN_RULES).match_all(sorted(seen))
    ungrouped = {
        name for name, (_, why) in zip(sorted(seen), grouped, strict=True) if why == "base name"
    }
    listed = {r["name"] for r in csv.DictReader(UNGROUPED.open(encoding="utf-8", newline=""))}
    new = sorted(ungrouped - listed)
    stale = sorted((listed & set(seen)) - ungrouped)
    assert not new, "names no built-in rule groups, not listed:\n" + "\n".join(
        f"{n[:160]!r} ({seen[n]})" for n in new
    )
    assert not stale, "listed as ungrouped, but a built-in rule groups them now:\n" + "\n".join(
        repr(n[:160]) for n in stale
    )
