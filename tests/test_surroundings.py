"""Issue 30 items 7 and 9, tried as a hostile or new user would: what the user's config
files, file names, standard output and Ctrl+C do to a command. Each ends in one line on
stderr (or, for a reader that stopped reading, none) and a conventional exit code, never a
traceback; a config mistake names the file and the key; the roofscope.toml that applies is
named in the report, its JSON and --help."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys

import pytest

from roofscope.cli import commands
from tests.conftest import SAMPLES, run_cli

GEMM = SAMPLES / "gemm4096_bf16_h100.ncu-raw.csv"
DEEP = "x = " + "[" * 100_000 + "]" * 100_000 + "\n"


def one_line(out: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert out.returncode == code, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr
    line = out.stderr.strip()
    assert line.startswith("roofscope: ") and "\n" not in line and len(line) < 600, line
    return line


# -- config files: rules (roofscope.toml in the working directory), ceilings, prices --------

RULES_CASES = [
    (DEEP, "nested deeper than 16 levels"),
    ("[[groups]]\npattern = 5\nname = 'five'\n", "pattern = 5 is not a string"),
    ("[[groups]]\npattern = 'gemm'\nname = 7\n", "name = 7 is not a string"),
    ('[[groups]]\n"p\u0430ttern" = "gemm"\nname = "G"\n', "did you mean 'pattern'?"),
    ("[[groups]]\np\u0430ttern = 'gemm'\nname = 'G'\n", "U+0430 CYRILLIC SMALL LETTER A"),
    (
        "[[group]]\npattern = 'gemm'\nname = 'G'\n",
        "unknown key 'group' in the file: did you mean 'groups'?",
    ),
    ("[[groups]]\npattern = 'gemm'\nname = 'G'\nnmae = 'H'\n", "unknown key 'nmae'"),
    (f"[[groups]]\npattern = '{'a' * 5000}'\nname = 'G'\n", "longer than the 4,096"),
    (f"[[groups]]\npattern = '{'a' * 2_000_000}'\nname = 'G'\n", "larger than the 1 MiB"),
]


@pytest.mark.parametrize(("text", "problem"), RULES_CASES)
def test_a_bad_roofscope_toml_is_one_line_naming_it(text, problem, tmp_path):
    (tmp_path / "roofscope.toml").write_text(text, encoding="utf-8")
    line = one_line(run_cli("report", str(GEMM), cwd=tmp_path))
    assert str(tmp_path / "roofscope.toml") in line and problem in line, line


def test_the_cyrillic_letter_is_named_in_a_quoted_key(tmp_path):
    (tmp_path / "roofscope.toml").write_text(RULES_CASES[3][0], encoding="utf-8")
    line = one_line(run_cli("report", str(GEMM), cwd=tmp_path))
    assert "'p\u0430ttern'" in line and "U+0430 CYRILLIC SMALL LETTER A" in line


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (DEEP, "nested deeper than 16 levels"),
        ("[ceilings]\nfp23 = 5e12\n", "unknown key 'fp23' in [ceilings]: did you mean 'fp32'?"),
        ("[ceiling]\nfp32 = 5e12\n", "unknown key 'ceiling'"),
    ],
)
def test_a_bad_ceilings_file_is_one_line(text, problem, tmp_path):
    toml = tmp_path / "c.toml"
    toml.write_text(text, encoding="utf-8")
    line = one_line(run_cli("report", str(GEMM), "--ceilings", str(toml), cwd=tmp_path))
    assert str(toml) in line and problem in line, line


PRICE = '[[price]]\ngpu = "h100-sxm5-80gb"\nusd_per_gpu_hour = 2.5\n'


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (DEEP, "nested deeper than 16 levels"),
        (PRICE + "usd_per_gpu_huor = 3\n", "did you mean 'usd_per_gpu_hour'?"),
        (PRICE + "offer = 5\n", "offer = 5 is not a string"),
        (PRICE + 'example = "yes"\n', "is not true or false"),
        ("[[prices]]\ngpu = 'h100-sxm5-80gb'\n", "did you mean 'price'?"),
    ],
)
def test_a_bad_price_file_is_one_line(text, problem, tmp_path):
    toml = tmp_path / "p.toml"
    toml.write_text(text, encoding="utf-8")
    out = run_cli("cost", str(GEMM), "--prices", str(toml), "--run-steps", "10", cwd=tmp_path)
    line = one_line(out)
    assert str(toml) in line and problem in line, line


def test_the_shipped_example_prices_still_read(tmp_path):
    example = run_cli("cost", "--example-prices", cwd=tmp_path)
    assert example.returncode == 0
    (tmp_path / "p.toml").write_text(example.stdout, encoding="utf-8")
    from roofscope.analysis.cost import load_prices

    assert load_prices(str(tmp_path / "p.toml")).prices


def test_help_says_which_rules_file_applies_here(tmp_path):
    none = run_cli("report", "--help", cwd=tmp_path).stdout
    assert "grouping rules from here: built-in only (no ./roofscope.toml" in none
    (tmp_path / "roofscope.toml").write_text("[[groups]]\npattern = 'gemm'\nname = 'G'\n")
    for argv in (("--help",), ("report", "--help")):
        text = " ".join(run_cli(*argv, cwd=tmp_path).stdout.split())
        assert f"grouping rules from here: {tmp_path / 'roofscope.toml'}" in text, argv


@pytest.mark.slow
def test_the_applied_roofscope_toml_is_named_in_the_report(tmp_path):
    toml = tmp_path / "roofscope.toml"
    toml.write_text("[[groups]]\npattern = 'gemm|nvjet'\nname = 'MY GEMM'\n")
    doc = json.loads(run_cli("report", str(GEMM), "--format", "json", cwd=tmp_path).stdout)
    assert doc["config_files"] == [str(toml)]
    assert "MY GEMM" in [g["name"] for g in doc["reports"][0]["groups"]]
    for fmt in ("table", "md"):
        text = run_cli("report", str(GEMM), "--format", fmt, cwd=tmp_path).stdout
        assert f"grouping rules from {toml}" in text.splitlines()[0], fmt
    toml.unlink()
    doc = json.loads(run_cli("report", str(GEMM), "--format", "json", cwd=tmp_path).stdout)
    assert doc["config_files"] == []
    plain = run_cli("report", str(GEMM), cwd=tmp_path).stdout
    assert "grouping rules" not in plain


# -- file names -------------------------------------------------------------------------------


def test_a_file_name_that_is_not_utf8_is_one_line(tmp_path):
    name = os.fsdecode(b"\xff.csv")  # how Python hands such a name over, from argv too
    (tmp_path / name).write_bytes(GEMM.read_bytes())
    line = one_line(run_cli("report", name, cwd=tmp_path))
    assert line.startswith("roofscope: \\xff.csv: the file name is not valid UTF-8"), line


# -- standard output ----------------------------------------------------------------------------


def _roofscope(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "roofscope", *args],
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        **kwargs,
    )


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [("report", str(GEMM)), ("--help",)])
def test_a_full_stdout_is_one_line_exit_2(argv):
    with open("/dev/full", "w") as full:
        out = _roofscope(*argv, stdout=full)
    line = one_line(out)
    assert "cannot write to standard output (No space left on device" in line


@pytest.mark.slow
def test_a_closed_stdout_is_one_line_exit_2_not_a_silent_success():
    out = _roofscope("report", str(GEMM), preexec_fn=lambda: os.close(1))
    assert "standard output is closed, nothing was written" in one_line(out)


@pytest.mark.slow
def test_a_reader_that_went_away_is_silent_exit_141():
    """``roofscope report X | head``: the pipe's reader is gone before a byte is written."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "roofscope", "report", str(GEMM), "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141 and err == "", (proc.returncode, err)


# -- Ctrl+C ---------------------------------------------------------------------------------------


def _interrupted(command, tmp_path, monkeypatch) -> subprocess.CompletedProcess[str]:
    monkeypatch.setitem(commands.COMMANDS, "report", command)
    return run_cli("report", "x.csv", cwd=tmp_path)


def test_ctrl_c_is_one_line_exit_130(tmp_path, monkeypatch):
    def command(args):
        signal.raise_signal(signal.SIGINT)
        return 0

    assert one_line(_interrupted(command, tmp_path, monkeypatch), 130) == "roofscope: interrupted"


def test_ctrl_c_turned_into_another_error_is_still_an_interrupt(tmp_path, monkeypatch):
    """DuckDB turns the interrupt into its own ``RuntimeError: Query interrupted``."""

    def command(args):
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            raise RuntimeError("Query interrupted") from None
        return 0

    assert one_line(_interrupted(command, tmp_path, monkeypatch), 130) == "roofscope: interrupted"


def test_ctrl_c_a_fallback_swallowed_still_ends_with_130(tmp_path, monkeypatch):
    def command(args):
        with contextlib.suppress(BaseException):  # a reader's fallback on any error
            signal.raise_signal(signal.SIGINT)
        return 0

    assert one_line(_interrupted(command, tmp_path, monkeypatch), 130) == "roofscope: interrupted"


SLOW_QUERY = """
import sys
from roofscope.cli import commands
from roofscope.interrupts import connect  # how roofscope opens every connection
def report(args):
    con = connect()
    print("ready", file=sys.stderr, flush=True)
    con.execute("SELECT count(*) FROM range(1000000000000) t(i) WHERE i % 7 = 3").fetchall()
    return 0
commands.COMMANDS["report"] = report
sys.exit(commands.main(["report", "x.csv"]))
"""


@pytest.mark.slow
def test_ctrl_c_inside_a_duckdb_query_is_one_line_exit_130():
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_QUERY],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stderr is not None
        assert proc.stderr.readline() == "ready\n"
        # one Ctrl+C, at once: with any SIGINT handler but Python's own, DuckDB missed it
        # now and then and the query ran on (exits.Surroundings)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    out = subprocess.CompletedProcess([], proc.returncode, "", err)
    assert one_line(out, 130) == "roofscope: interrupted"
