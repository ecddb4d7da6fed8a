"""roofscope's totals against an independent reader (tests/oracle.py) on every real export.

Issue 16: "no silent wrong number on any real export". Both readers parse the same text, so the
totals must agree to 1e-9 (relative); a disagreement is a bug in one of them, to be found by
reading the file by hand, never papered over with a looser tolerance.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import pytest

import roofscope
from tests import oracle
from tests.conftest import DATA, REPO, SAMPLES, SHARED

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

REL = 1e-9
_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".json", ".txt", ".sqlite")


def real_exports() -> list[Path]:
    """Every file that may be an export: the bundled samples, tests/data and the shared
    samples (h100, public, wild, generated) when that folder exists; a file whose bytes are
    those of one found before (a sample copied under another name) only once."""
    roots = [SAMPLES, DATA] + [SHARED / d for d in ("h100", "public", "wild", "generated")]
    found: list[Path] = []
    seen: set[str] = set()
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(
            p for p in root.rglob("*") if p.is_file() and p.name.endswith(_SUFFIXES)
        ):
            digest = hashlib.sha1(path.read_bytes()).hexdigest()
            if digest not in seen:
                seen.add(digest)
                found.append(path)
    return found


def label(path: Path) -> str:
    for base, name in ((SHARED, "shared"), (REPO, "repo")):
        if path.is_relative_to(base):
            return f"{name}/{path.relative_to(base)}"
    return str(path)


def roofscope_totals(
    path: str | Path, warnings: list[str] | None = None, use_cache: bool = True
) -> dict[str, float | int | None]:
    """The totals roofscope reports for one file, keyed like ``oracle.Totals.as_dict``
    (its warnings added to ``warnings`` when given)."""
    session = roofscope.load(path, use_cache=use_cache)
    try:
        t = session.reports[0].totals()
        if warnings is not None:
            warnings += session.warnings
    finally:
        session.close()
    out: dict[str, float | int | None] = {"launches": t["launches"], "time_s": t["time_s"]}
    out.update({f"flops.{k}": t["flops"][k] for k in oracle.FLOPS})
    out.update({f"bytes.{k}": t["bytes"][k] for k in oracle.BYTES})
    return out


def differences(expected: dict, got: dict, rel: float = REL) -> list[str]:
    """``key: expected … got …`` for each total that differs (None must meet None)."""
    out = []
    for key, want in expected.items():
        have = got.get(key)
        if want is None and have is None:
            continue
        if want is None or have is None or not math.isclose(want, have, rel_tol=rel, abs_tol=0):
            out.append(f"{key}: expected {want!r}, got {have!r}")
    return out


EXPORTS = real_exports()


@pytest.mark.parametrize("path", EXPORTS, ids=[label(p) for p in EXPORTS])
def test_totals_agree_with_the_independent_reader(path: Path) -> None:
    """Launches, time, FLOPs per precision and bytes per level equal the oracle's reading."""
    try:
        expected = oracle.read(path)
    except oracle.NotAnExport as exc:
        pytest.skip(f"not a kernel export: {exc}")
    warnings: list[str] = []
    got = roofscope_totals(path, warnings, use_cache=False)  # the same ingest, ~30% faster
    assert differences(expected.as_dict(), got) == [], f"{label(path)} ({expected.kind})"
    # every value of a real export has a shape ncu writes: none is left out as unreadable
    assert not [w for w in warnings if "not numbers as ncu writes" in w], label(path)


def test_there_are_real_exports_to_check() -> None:
    """The bundled samples alone give a dozen exports; an empty list would pass vacuously."""
    assert sum(1 for p in EXPORTS if p.is_relative_to(SAMPLES)) >= 12


# -- the oracle itself, against published numbers and plain rules -------------------------------


def _details(tmp_path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    head = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
    head += '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
    head += '"Metric Value"\n'
    ident = '"{}","1","app","127.0.0.1","k(float *, int)","1","7","(256, 1, 1)","(8, 1, 1)","0",'
    lines = [head]
    for launch, name, unit, value in rows:
        lines.append(ident.format(launch) + f'"8.0","Command line profiler metrics","{name}",'
                     f'"{unit}","{value}"\n')  # fmt: skip
    path = tmp_path / "published.csv"
    path.write_text("==PROF== Connected to process 1\n" + "".join(lines), encoding="utf-8")
    return path


def test_oracle_reproduces_the_published_check(tmp_path: Path) -> None:
    """DESIGN §4: 72,581 cycles at 10,083,762,361 cycle/s, 2·ffma 30,968,064 + fadd 763,904 +
    fmul 772,096, DRAM 2,481,024 B → 7.2 µs, 32,504,064 FLOP, AI ≈ 13.1."""
    op = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"
    path = _details(tmp_path, [
        ("0", "sm__cycles_elapsed.avg", "cycle", "72,581"),
        ("0", "sm__cycles_elapsed.avg.per_second", "cycle/second", "10,083,762,361"),
        ("0", op.format("ffma"), "inst", "15,484,032"),
        ("0", op.format("fadd"), "inst", "763,904"),
        ("0", op.format("fmul"), "inst", "772,096"),
        ("0", "dram__bytes_read.sum", "Kbyte", "2,481.024"),
    ])  # fmt: skip
    t = oracle.read(path)
    assert t.launches == 1
    assert t.time_s == pytest.approx(7.198e-6, rel=1e-3)
    assert t.flops["fp32"] == 32_504_064
    assert t.flops["fp64"] is None and t.flops["tensor"] is None
    assert t.bytes["dram"] == pytest.approx(2_481_024, rel=1e-15)
    assert t.flops["fp32"] / t.bytes["dram"] == pytest.approx(13.1, abs=0.05)


def test_oracle_numbers_and_units() -> None:
    """Grouped numbers, n/a, decimal byte prefixes, clock units; an unknown unit is refused."""
    assert oracle.number("1,234.5") == 1234.5
    assert oracle.number("65,536 (0; 0; 1)") == 65536
    assert oracle.number("n/a") is None and oracle.number("") is None
    assert oracle.in_base("2.5", "Mbyte") == 2.5e6
    assert oracle.in_base("1.5", "Ghz") == 1.5e9
    assert oracle.in_base("380.096", "us") == pytest.approx(380.096e-6, rel=1e-15)
    with pytest.raises(oracle.OracleError):
        oracle.in_base("1", "furlong")
    with pytest.raises(oracle.OracleError):
        oracle.number("27.595.520")  # a comma-decimal locale is not guessed


def test_oracle_tensor_needs_cc_70_for_the_instruction_count(tmp_path: Path) -> None:
    """A bare pipe_tensor count gives tensor FLOPs only on CC 7.0 (DESIGN §4)."""
    path = _details(tmp_path, [("0", "sm__inst_executed_pipe_tensor.sum", "inst", "10")])
    assert oracle.read(path).flops["tensor"] is None  # the helper writes CC 8.0
    text = path.read_text(encoding="utf-8").replace('"8.0"', '"7.0"')
    path.write_text(text, encoding="utf-8")
    assert oracle.read(path).flops["tensor"] == 5120
