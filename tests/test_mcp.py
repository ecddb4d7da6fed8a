"""Issue 21: ``roofscope mcp`` driven through the official SDK's own stdio client, as a coding
agent's client drives it: the tool list, each tool's numbers against ``roofscope report --format
json`` (and ``diff --format json``) of the same file, paths outside the roots refused (symlinks
too), and a client's mistakes answered with the CLI's one-line message while the server goes on."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
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


async def test_a_pathological_roofscope_toml_is_a_tool_error_not_a_hang(root, monkeypatch):
    """Issue 30 item 8: rules nested 100,000 deep in the working directory's roofscope.toml
    come back as the one-line refusal; the server answers and goes on."""
    (root / "roofscope.toml").write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    monkeypatch.chdir(root)
    async with connected(root) as session:
        text = await asyncio.wait_for(refused(session, "summary", path=RAW), timeout=120)
        assert "roofscope.toml" in text and "nested deeper than 16 levels" in text
        assert (await session.list_tools()).tools


class RawServer:
    """``roofscope mcp`` driven line by line, as a client with bugs would: every read has a
    deadline, so a server that never answers fails the test instead of hanging it."""

    def __init__(self, root: Path):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "roofscope", "mcp", "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(os.environ),
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 60) -> dict:
        return json.loads(self.lines.get(timeout=timeout))


def test_malformed_requests_get_json_rpc_errors_and_eof_ends_the_server(root):
    server = RawServer(root)
    try:
        server.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "1"},
                    },
                }
            )
        )
        assert server.answer()["id"] == 1
        server.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        cases = [
            ('{"jsonrpc": "2.0", "id": 2}', 2, -32600),  # no method
            ('{"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": [1]}', 3, -32602),
            (
                '{"jsonrpc": "2.0", "id": "four", "method": "tools/call", "params": "x"}',
                "four",
                -32602,
            ),
            ('{"jsonrpc": "2.0", "id": 5, "method": 5}', 5, -32600),
            ('{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}', None, -32600),
            ("this is not JSON", None, -32700),
            ("[" * 100_000, None, -32700),
            ("[1, 2]", None, -32600),
        ]
        for line, rid, code in cases:
            server.send(line)
            reply = server.answer()
            assert reply["id"] == rid and reply["error"]["code"] == code, (line[:60], reply)
        server.send('{"jsonrpc": "2.0", "id": 9, "method": "tools/list"}')
        assert server.answer()["id"] == 9  # and the server goes on
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        assert server.proc.wait(timeout=60) == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
        server.proc.wait(timeout=60)
