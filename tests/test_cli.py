"""The CLI: formats, the JSON contract, and one-line errors. Formats and options run through
``main`` in this process (conftest.run_cli, as the other CLI tests do); the entry points
themselves (the console script, ``python -m roofscope`` with its exit codes, a closed pipe, a
stand-in ncu on PATH) run as processes below."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SAMPLES, run_cli
from tests.ncu_builder import raw_page, write

MOBILENET = SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv"

# the bundled samples are opened read-only: each is ingested once per worker (conftest)
pytestmark = pytest.mark.usefixtures("shared_sample_cache")


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``roofscope ARGS`` through ``main`` in this process, as a finished process."""
    return run_cli(*args, cwd=cwd or Path.cwd())


def test_console_script_is_installed():
    beside = Path(sys.executable).parent / "roofscope"
    exe = str(beside) if beside.exists() else shutil.which("roofscope")
    assert exe, "pip install -e . should install the roofscope console script"
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("roofscope ")


def test_json_contract(tmp_path):
    result = run("report", str(MOBILENET), "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc) >= {"reports", "warnings"}
    (report,) = doc["reports"]
    for key in (
        "path",
        "format",
        "gpu",
        "launches",
        "kernels",
        "time_s",
        "flops",
        "bytes",
        "ceilings",
        "efficiency",
        "groups",
    ):
        assert key in report
    assert set(report["gpu"]) >= {"name", "cc", "sm_count"}
    assert set(report["flops"]) == {"fp64", "fp32", "fp16", "tensor"}
    assert report["flops"]["tensor"] is None
    assert set(report["bytes"]) == {"l1", "l2", "dram"}
    assert set(report["efficiency"]) >= {"potential_speedup", "bins"}
    for c in report["ceilings"]:
        assert set(c) >= {"name", "kind", "value", "unit", "source"}
    for g in report["groups"]:
        assert set(g) >= {
            "name",
            "launches",
            "kernels",
            "time_s",
            "time_pct",
            "flops",
            "bytes",
            "flop_per_s",
            "ai",
            "bound",
            "efficiency",
            "headroom_s",
        }


def test_csv_by_kernel_and_top(tmp_path):
    result = run(
        "report", str(MOBILENET), "--format", "csv", "--by", "kernel", "--top", "5", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 5
    assert {"report", "name", "time_s", "flops_fp32", "bytes_dram", "ai_dram"} <= set(rows[0])
    times = [float(r["time_s"]) for r in rows]
    assert times == sorted(times, reverse=True)


def test_markdown_pastes_as_a_table(tmp_path):
    result = run("report", str(MOBILENET), "--format", "md", "--top", "3", cwd=tmp_path)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| group |"))
    assert lines[header + 1].startswith("|---|")
    assert len([x for x in lines[header + 2 :] if x.startswith("| ")]) >= 3


def test_table_is_the_default(tmp_path):
    result = run("report", str(MOBILENET), "--top", "3", cwd=tmp_path)
    assert result.returncode == 0
    assert "NVIDIA H100 80GB HBM3" in result.stdout
    assert "run time by hardware efficiency" in result.stdout


def test_fp16_convention_switch(tmp_path):
    units = {
        "gpu__time_duration.sum": "ns",
        **{
            f"smsp__sass_thread_inst_executed_op_{o}_pred_on.sum": "inst"
            for o in ("hadd", "hmul", "hfma")
        },
    }
    values = {"gpu__time_duration.sum": "1,000", **{k: "100" for k in units if "op_" in k}}
    path = write(tmp_path / "h.csv", raw_page([("hk", values)], units))
    docs = {}
    for conv in ("ncu", "nersc"):
        out = run(
            "report",
            str(path),
            "--format",
            "json",
            "--fp16-convention",
            conv,
            "--no-cache",
            cwd=tmp_path,
        )
        docs[conv] = json.loads(out.stdout)["reports"][0]
    assert docs["ncu"]["flops"]["fp16"] == 2 * 100 + 2 * 100 + 4 * 100
    assert docs["nersc"]["flops"]["fp16"] == 100 + 100 + 2 * 100
    assert "NERSC" in docs["nersc"]["provenance"]["fp16"]


@pytest.mark.slow
def test_several_files_and_gzip(tmp_path):
    gz = tmp_path / "m.csv.gz"
    gz.write_bytes(gzip.compress(MOBILENET.read_bytes()))
    result = run("report", str(MOBILENET), str(gz), "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    a, b = json.loads(result.stdout)["reports"]
    assert a["launches"] == b["launches"] == 459
    assert a["flops"]["fp32"] == pytest.approx(b["flops"]["fp32"])


@pytest.mark.slow
def test_gpu_and_ceilings_options(tmp_path):
    toml = write(tmp_path / "c.toml", '[ceilings]\nfp32 = "10 TFLOP/s"\ndram = 2e12\n')
    details = SAMPLES / "mobilenetv2_fp32_h100.ncu-details.csv"
    result = run(
        "report",
        str(details),
        "--format",
        "json",
        "--gpu",
        "h100-sxm5-80gb",
        "--ceilings",
        str(toml),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    ceilings = {c["name"]: c for c in json.loads(result.stdout)["reports"][0]["ceilings"]}
    assert ceilings["fp32"]["value"] == 10e12 and ceilings["fp32"]["source"].startswith("user")
    assert ceilings["dram"]["value"] == 2e12
    assert "datasheet" in ceilings["fp64"]["source"]


BAD_INPUTS = {
    "empty.csv": b"",
    "binary.csv": bytes(range(256)) * 64,
    "page.csv": b"<!DOCTYPE html><html><body>ncu report</body></html>\n",
    "semicolon.csv": b'"ID";"Process ID";"Kernel Name";"Metric Value"\n"0";"1";"k";"1"\n',
    "noheader.csv": b'"0","1337","app","127.0.0.1","k","1","7","(1, 1, 1)","(1, 1, 1)","0",'
    b'"9.0","Command line profiler metrics","gpu__time_duration.sum","ns","5"\n',
    "other.csv": b"name,value\nalpha,1\nbeta,2\n",
    "truncated.csv": b'"ID","Process ID","Process Na',
    "units.csv": raw_page(
        [("k", {"gpu__time_duration.sum": "1"})], {"gpu__time_duration.sum": "furlong"}
    ).encode(),
    "report.ncu-rep": b"NVIDIA Nsight Compute report\x00\x01\x02",
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
@pytest.mark.slow
def test_bad_input_is_one_line_and_exit_2(name, tmp_path, monkeypatch):
    path = tmp_path / name
    path.write_bytes(BAD_INPUTS[name])
    env_path = str(tmp_path)  # no ncu on PATH for the .ncu-rep case
    result = subprocess.run(
        [sys.executable, "-m", "roofscope", "report", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PATH": env_path, "ROOFSCOPE_CACHE_DIR": str(tmp_path / "c"), "HOME": str(tmp_path)},
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"roofscope: {path}: ")
    assert "(" in lines[0] and lines[0].endswith(")"), "a hint in parentheses"
    assert "Traceback" not in result.stderr


def test_missing_file_and_unknown_gpu(tmp_path):
    result = run("report", str(tmp_path / "nope.csv"), cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    result = run("report", str(MOBILENET), "--gpu", "not-a-gpu", cwd=tmp_path)
    assert result.returncode == 2 and "unknown GPU" in result.stderr


@pytest.mark.slow
def test_ncu_rep_is_converted_when_ncu_is_on_path(tmp_path):
    """A stand-in ``ncu`` executable (the real one lives on GPU nodes) receives the documented
    import command and its CSV is loaded."""
    fake = tmp_path / "bin" / "ncu"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho "$@" > {tmp_path}/args\ncat {MOBILENET}\n')
    fake.chmod(0o755)
    rep = tmp_path / "run.ncu-rep"
    rep.write_bytes(b"NVIDIA Nsight Compute binary")
    env = {
        "PATH": f"{fake.parent}:/usr/bin:/bin",
        "ROOFSCOPE_CACHE_DIR": str(tmp_path / "c"),
        "HOME": str(tmp_path),
    }
    result = subprocess.run(
        [sys.executable, "-m", "roofscope", "report", str(rep), "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["reports"][0]["launches"] == 459
    args = (tmp_path / "args").read_text().split()
    assert args == ["--import", str(rep), "--csv", "--page", "raw", "--print-units", "base"]


@pytest.mark.slow
def test_table_at_80_columns_keeps_the_names(tmp_path):
    """A narrow terminal drops the least needed numbers, never the group names."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "roofscope",
            "report",
            str(SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert result.returncode == 0, result.stderr
    assert "layout transform" in result.stdout and "conv fprop" in result.stdout
    assert "not shown at this width: AI L2, headroom" in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 80


def test_help_says_where_to_start_and_every_option_has_help():
    from roofscope.cli import build_parser

    result = run("--help")
    assert "start here:" in result.stdout and "roofscope open FILE" in result.stdout
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, command in sub.choices.items():
        for action in command._actions:
            assert action.help, f"roofscope {name} {action.option_strings or action.dest}"


def test_estimate_and_ceilings_without_torch_say_what_to_install(tmp_path):
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from roofscope.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    for args in (["profile", "vgg11", "--estimate"], ["ceilings", "--no-save"]):
        result = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert "needs the torch package" in result.stderr and "[profile]" in result.stderr


def test_runs_without_runs_says_how_to_start_one(tmp_path):
    result = run("runs", "--runs-dir", str(tmp_path / "none"))
    assert result.returncode == 0
    assert "no runs yet" in result.stdout and "roofscope profile MODEL" in result.stdout
    assert "started" not in result.stdout  # no empty table


@pytest.mark.slow
def test_a_closed_pipe_is_not_a_traceback():
    head = subprocess.run(
        f'"{sys.executable}" -m roofscope profile mlp --dry-run | head -c 1',
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in head.stderr


@pytest.mark.slow
def test_csv_cells_carry_no_float_noise():
    """A time summed from integer nanoseconds reads 0.000885088, not 0.0008850879999999999:
    every number cell has at most 15 significant digits, what a double holds for certain."""
    result = run("report", str(SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"), "--format", "csv")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    layout = next(r for r in rows if r["name"] == "layout transform")
    assert layout["time_s"] == "0.000885088"
    numbers = 0
    for row in rows:
        for cell in row.values():
            try:
                value = float(cell)
            except ValueError:
                continue
            numbers += 1
            assert cell in (repr(float(f"{value:.15g}")), str(int(value))), cell
    assert numbers > 100
