"""Issue 21: ``roofscope mcp`` driven through the official SDK's own stdio client, as a coding
agent's client drives it: the tool list, each tool's numbers against ``roofscope report --format
json`` (and ``diff --format json``) of the same file, paths outside the roots refused (symlinks
too), and a client's mistakes answered with the CLI's one-line message while the server goes on."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from roofscope.cli import main
from tests.conftest import SAMPLES

pytest.importorskip("mcp")
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

CORPUS = Path(__file__).parent / "corpus" / "bad"
RAW = "resnet18_fp32_h100.ncu-raw.csv"
BEFORE, AFTER = "cnn_fp32_b128_h100.ncu-raw.csv", "cnn_tf32_b128_h100.ncu-raw.csv.gz"
TOOLS = {
    "summary",
    "groups",
    "launches",
    "launch_detail",
    "roofline",
    "advice",
    "diff",
    "monitor_snapshot",
}


@asynccontextmanager
async def connected(*roots: Path) -> AsyncIterator[ClientSession]:
    args = ["-m", "roofscope", "mcp"]
    for root in roots:
        args += ["--root", str(root)]
    # the test's own cache folder (conftest) reaches the server through its environment
    params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments) -> dict:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


async def refused(session: ClientSession, tool: str, **arguments) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error
    (content,) = result.content
    return content.text


def same(a: object, b: object) -> bool:
    """Equal, floats to 1e-12 relative (a sum taken in another order)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def cli_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 2
    return capsys.readouterr().err.strip()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "reports"
    folder.mkdir()
    for name in (RAW, BEFORE, AFTER):
        shutil.copy(SAMPLES / name, folder / name)
    return folder


async def test_every_tool_answers_the_numbers_of_report_json(root, capsys, monkeypatch):
    monkeypatch.chdir(root)
    want = cli_json(capsys, "report", RAW, "--format", "json", "--by", "launch")["reports"][0]
    changed = cli_json(capsys, "diff", BEFORE, AFTER, "--format", "json")
    async with connected(root) as session:
        listed = (await session.list_tools()).tools
        assert {t.name for t in listed} == TOOLS
        assert all(t.description and len(t.description) > 40 for t in listed)

        head = (await call(session, "summary", path=RAW))["report"]
        for key in ("launches", "kernels", "time_s", "flops", "bytes", "ceilings", "provenance"):
            assert head[key] == want[key], key
        assert head["efficiency"]["potential_speedup"] == want["efficiency"]["potential_speedup"]

        top = await call(session, "groups", path=RAW, top=3)
        assert top["groups"] == want["groups"][:3]
        assert top["groups_total"] == len(want["groups"]) and top["units"]["time_s"] == "s"

        group = want["groups"][0]["name"]
        mine = [r for r in want["rows"] if r["grp"] == group]
        listed_launches = await call(session, "launches", path=RAW, group=group, top=4)
        # time_pct of a filtered list divides by the report's total, summed in another order
        assert same(listed_launches["launches"], mine[:4])

        assert listed_launches["launches_total"] == len(mine)
        worst = await call(
            session, "launches", path=RAW, group=group, sort="efficiency", ascending=True, top=2
        )
        assert [r["efficiency"] for r in worst["launches"]] == sorted(
            r["efficiency"] for r in mine if r["efficiency"] is not None
        )[:2]

        launch = int(mine[0]["name"])
        detail = await call(session, "launch_detail", path=RAW, launch=launch)
        by_name = {m["name"]: m for m in detail["metrics"]}
        assert by_name["time_s"]["value"] == pytest.approx(mine[0]["time_s"])
        assert "gpu__time_duration.sum" in by_name["time_s"]["formula_or_source"]
        assert len(detail["metrics"]) == 100 and detail["metrics_total"] > 1000  # cut to top
        dram = await call(session, "launch_detail", path=RAW, launch=launch, match="DRAM__BYTES")
        assert dram["metrics"] and all("dram__bytes" in m["name"] for m in dram["metrics"])

        roof = await call(session, "roofline", path=RAW, level="l2", top=5)
        assert roof["roofs"] == want["ceilings"]
        first = roof["points"][0]
        assert first["group"] == group and first["ai"] == want["groups"][0]["ai"]["l2"]
        assert first["attainable_flop_per_s"] == want["groups"][0]["attainable_flop_per_s"]

        tips = await call(session, "advice", path=RAW, top=2)
        assert tips["advice"] == want["advice"][:2]

        compared = await call(session, "diff", before=BEFORE, after=AFTER, top=5)
        assert compared["total"] == changed["total"]
        assert compared["rows_total"] == len(changed["rows"])
        for got, full in zip(compared["rows"], changed["rows"][:5], strict=True):
            assert got["name"] == full["name"] and got["delta_time_s"] == full["delta_time_s"]
            assert got["new_kernels"] == full["new_kernels"][:5]
        same_file = await call(session, "diff", before=BEFORE, after=BEFORE)
        assert same_file["total"]["delta_time_s"] == 0

        gpus = await call(session, "monitor_snapshot")
        if gpus["available"]:  # on the GPU machine
            assert gpus["gpus"] and all("name" in g for g in gpus["gpus"])
        else:
            assert gpus["reason"].startswith("roofscope: ") and "\n" not in gpus["reason"]


async def test_a_clients_mistakes_are_errors_and_the_server_goes_on(root, capsys, monkeypatch):
    monkeypatch.chdir(root)
    missing = cli_error(capsys, "report", "nope.csv")
    async with connected(root) as session:
        assert missing in await refused(session, "summary", path="nope.csv")
        text = await refused(session, "launches", path=RAW, group="no such group")
        assert "has no group 'no such group'" in text and "its largest groups" in text
        assert "did you mean 'GEMM'" in await refused(session, "launches", path=RAW, group="gemm")
        assert "unknown sort" in await refused(session, "groups", path=RAW, sort="colour")
        assert "top needs" in await refused(session, "groups", path=RAW, top=0)
        assert "has no launch" in await refused(session, "launch_detail", path=RAW, launch=10**9)
        await refused(session, "groups", path=5)  # not a string: the SDK's validation
        await refused(session, "launch_detail", path=RAW)  # a required argument left out
        assert (await call(session, "groups", path=RAW, top=1))["groups"]


async def test_only_files_under_the_roots_open_symlinks_included(root, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(SAMPLES / RAW, outside / RAW)
    (root / "escape.csv").symlink_to(outside / RAW)
    (root / "inside.csv").symlink_to(root / RAW)
    second = tmp_path / "second"
    second.mkdir()
    shutil.copy(SAMPLES / BEFORE, second / BEFORE)
    async with connected(root, second) as session:
        for path in (str(outside / RAW), "escape.csv", "../elsewhere/" + RAW, "/etc/passwd"):
            assert "is outside the folders this server may read" in await refused(
                session, "summary", path=path
            ), path
        text = await refused(session, "diff", before=RAW, after=str(outside / RAW))
        assert "outside" in text
        assert (await call(session, "summary", path="inside.csv"))["report"]["launches"] == 361
        assert (await call(session, "summary", path=str(second / BEFORE)))["report"]["launches"]


async def test_hostile_names_come_back_as_data(tmp_path, capsys, monkeypatch):
    shutil.copy(CORPUS / "rich_markup_names.ncu-raw.csv", tmp_path / "names.csv")
    monkeypatch.chdir(tmp_path)
    want = cli_json(capsys, "report", "names.csv", "--format", "json")["reports"][0]["groups"]
    async with connected(tmp_path) as session:
        got = (await call(session, "groups", path="names.csv", top=50))["groups"]
    assert [g["name"] for g in got] == [g["name"] for g in want]
    assert any("[" in g["name"] for g in got)  # markup-looking names, verbatim


def test_a_root_that_is_no_folder_is_one_line_exit_2(tmp_path, capsys):
    assert main(["mcp", "--root", str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a folder" in err and "Traceback" not in err
