"""Every ``--format json`` is strict JSON (issue 16 item 12): a value roofscope could not
compute is ``null``, never ``NaN`` or ``Infinity``, which jq and JavaScript refuse."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import roofscope
from roofscope.output.gpu import render_summary
from roofscope.output.render import render
from roofscope.telemetry.recording import to_table
from tests.conftest import run_cli
from tests.gpu_fakes import SyntheticSource
from tests.ncu_builder import raw_page, write

SRC = Path(roofscope.__file__).parent
REPO = SRC.parents[1]
RESNET = REPO / "sample_reports" / "resnet18_fp32_h100.ncu-raw.csv"
RESNET_BF16 = REPO / "sample_reports" / "resnet18_bf16_h100.ncu-raw.csv"

# the bundled samples are opened read-only: each is ingested once per worker (conftest)
pytestmark = pytest.mark.usefixtures("shared_sample_cache")


def strict(text: str) -> object:
    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in JSON output")

    return json.loads(text, parse_constant=refuse)


def _run(*args: str, cwd: Path) -> str:
    out = run_cli(*args, "--format", "json", cwd=cwd)
    ok = (0, 1) if args[0] == "doctor" else (0,)  # doctor exits 1 on a machine without a GPU
    assert out.returncode in ok, out.stderr
    return out.stdout


def nan_recording(folder: Path) -> Path:
    """A recording whose power and temperature columns are NaN (a GPU that reports none)."""
    reading = SyntheticSource(gpus=1).read()
    table = to_table([(s, reading.processes) for s in reading.samples] * 3)
    for name in ("power_w", "temp_c", "util_gpu"):
        if name in table.column_names:
            i = table.column_names.index(name)
            nan = pa.array([math.nan] * table.num_rows, type=table.schema.field(i).type)
            table = table.set_column(i, table.schema.field(i), nan)
    path = folder / "nan.parquet"
    pq.write_table(table, path)
    return path


def nan_export(folder: Path) -> Path:
    """An ncu export whose one kernel took 0 ns: every rate is inf or NaN before cleaning."""
    units = {"gpu__time_duration.sum": "nsecond", "dram__bytes.sum": "byte"}
    page = raw_page(
        [
            ("k0", {"gpu__time_duration.sum": "0", "dram__bytes.sum": "5"}),
            ("k1", {"gpu__time_duration.sum": "10", "dram__bytes.sum": "0"}),
        ],
        units,
    )
    return write(folder / "zero.ncu-raw.csv", page)


def test_record_summary_with_nan_is_strict_json(tmp_path):
    doc = strict(_run("record", "--summary", str(nan_recording(tmp_path)), cwd=tmp_path))
    assert doc["gpus"] and doc["gpus"][0]["power_w"] is None


@pytest.mark.parametrize(
    "args",
    [
        ("report", "{zero}"),
        ("report", "{zero}", "--by", "kernel"),
        ("diff", "{zero}", "{resnet}"),
        ("scaling", "{resnet}", "{bf16}"),
        ("cost", "{resnet}", "{bf16}", "--run-steps", "10"),
        ("mig", "{rec}"),
        ("runs", "--runs-dir", "{tmp}"),
        ("doctor",),
    ],
)
@pytest.mark.slow
def test_each_json_command_is_strict(args, tmp_path):
    names = {
        "zero": nan_export(tmp_path),
        "resnet": RESNET,
        "bf16": RESNET_BF16,
        "rec": nan_recording(tmp_path),
        "tmp": tmp_path,
    }
    strict(_run(*(a.format(**names) for a in args), cwd=tmp_path))


def test_the_writers_turn_non_finite_values_to_null():
    doc = {"reports": [], "warnings": [], "x": [math.nan, math.inf, -math.inf, 1.5]}
    assert strict(render(doc, "json") or "")["x"] == [None, None, None, 1.5]
    assert strict(render_summary([{"power_w": math.nan}], "json")) == {
        "gpus": [{"power_w": None}],
        "warnings": [],
    }


@pytest.mark.slow
def test_one_json_writer_in_the_output_paths():
    """json.dumps outside jsonout.py would bypass allow_nan=False."""
    offenders = []
    for path in [
        *(SRC / "output").glob("*.py"),
        *(SRC / "cli").glob("*.py"),
        SRC / "atomic.py",
        *(SRC / "tui").rglob("*.py"),
    ]:
        if path.name == "jsonout.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            is_json = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            if is_json and node.value.id == "json" and node.attr in {"dump", "dumps"}:
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


def test_files_written_atomically_are_strict_json(tmp_path):
    """run.json and measured ceilings go through atomic.write_json: no ``NaN`` on disk."""
    from roofscope.atomic import write_json

    target = tmp_path / "run.json"
    write_json(target, {"duration_s": math.nan, "peaks": [math.inf, 2.0]})
    assert strict(target.read_text()) == {"duration_s": None, "peaks": [None, 2.0]}
