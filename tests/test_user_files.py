"""Numbers in the user's own files (issue 16 item 10): a ceiling or a price is read in the
quantity it stands for, and a value that cannot be right (a 401-digit integer, NaN, a B/s
figure for a FLOP/s roof, zero, a negative) is refused in one line naming file, key and
problem, exit 2: never a traceback, never a roof of the wrong kind."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli

REPO = Path(__file__).resolve().parents[1]
RESNET = REPO / "sample_reports" / "resnet18_fp32_h100.ncu-raw.csv"
HUGE = "1" + "0" * 400


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


def _one_line_refusal(out: subprocess.CompletedProcess[str], *words: str) -> None:
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""
    line = out.stderr.strip()
    assert "\n" not in line and len(line) < 400, line
    for word in words:
        assert word in line, (word, line)


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (f"fp32 = {HUGE}", "out of range"),
        ('fp32 = "60 TB/s"', "B/s given where the roof is in FLOP/s"),
        ('dram = "3 TFLOP/s"', "FLOP/s given where the roof is in B/s"),
        ("dram = nan", "not a finite number"),
        ("fp32 = inf", "not a finite number"),
        ("fp32 = 0", "not positive"),
        ("dram = -3e12", "not positive"),
        ("fp32 = 6e40", "no GPU has that roof"),
        ('fp32 = "fast"', "not a number"),
    ],
)
def test_bad_ceilings_are_refused_in_one_line(entry, problem, tmp_path):
    toml = tmp_path / "c.toml"
    toml.write_text(f"[ceilings]\n{entry}\n", encoding="utf-8")
    out = _run("report", str(RESNET), "--ceilings", str(toml), "--format", "json", cwd=tmp_path)
    key = entry.split(" = ")[0]
    _one_line_refusal(out, str(toml), f"ceiling {key}", problem)


@pytest.mark.slow
def test_good_ceilings_with_units_still_read(tmp_path):
    toml = tmp_path / "c.toml"
    toml.write_text('[ceilings]\nfp32 = "60 TFLOP/s"\ndram = "3.35 TB/s"\nl2 = 1e13\n')
    out = _run("report", str(RESNET), "--ceilings", str(toml), "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert '"value": 60000000000000.0' in out.stdout


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (HUGE, "out of range"),
        ('"60 TFLOP/s"', "not a number (a FLOP/s or B/s quantity"),
        ("nan", "not a finite number"),
        ("0", "not positive"),
        ("-2.5", "not positive"),
        ("5000", "over $1,000 per GPU-hour"),
    ],
)
def test_bad_prices_are_refused_in_one_line(value, problem, tmp_path):
    toml = tmp_path / "p.toml"
    toml.write_text(f'[[price]]\ngpu = "h100-sxm5-80gb"\nusd_per_gpu_hour = {value}\n')
    out = _run("cost", str(RESNET), "--prices", str(toml), "--run-steps", "10", cwd=tmp_path)
    _one_line_refusal(out, str(toml), "usd_per_gpu_hour", problem)
