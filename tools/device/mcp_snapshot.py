"""Device check of ``roofscope mcp``: the SDK's stdio client starts the server and calls
``monitor_snapshot`` (real NVML) and ``summary`` of a bundled sample; ``roofscope monitor --once
--format json`` runs beside it, so the two GPU lists can be compared. Writes $OUT/mcp.json.

Run on the device after ``source tools/device/setup.sh`` with the mcp wheels in ``.whl/``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def main() -> dict:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "roofscope", "mcp", "--root", "sample_reports"],
        env=dict(os.environ),
    )
    out: dict = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        out["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
        for tool, args in (
            ("monitor_snapshot", {}),
            ("summary", {"path": "gemm4096_bf16_h100.ncu-raw.csv"}),
        ):
            result = await session.call_tool(tool, args)
            out[tool] = {"is_error": result.is_error, "text": result.content[0].text}
    once = subprocess.run(
        [sys.executable, "-m", "roofscope", "monitor", "--once", "--format", "json"],
        capture_output=True,
        text=True,
    )
    out["monitor_once"] = once.stdout or once.stderr
    return out


if __name__ == "__main__":
    doc = asyncio.run(main())
    path = os.path.join(os.environ.get("OUT", "/tmp"), "mcp.json")
    with open(path, "w") as fh:
        json.dump(doc, fh, indent=1)
    snap = json.loads(doc["monitor_snapshot"]["text"])
    print("tools:", doc["tools"])
    print("snapshot available:", snap["available"], [g.get("name") for g in snap.get("gpus", [])])
    print("summary error:", doc["summary"]["is_error"], doc["summary"]["text"][:200])
