"""The MCP server of ``roofscope mcp``: the functions of ``tools`` registered with the official
SDK's ``MCPServer`` over stdio. A client's mistake (a missing file, a path outside the roots, an
unknown group, a bad argument) comes back as a tool error carrying the CLI's one-line message,
and the server goes on; answers are strict JSON text (no NaN), as every roofscope command writes.

The stdio transport is the SDK's, fed through :class:`_Wire`: a line the SDK would drop in
silence (not JSON, no method, params not an object) is answered with its JSON-RPC error
(:mod:`roofscope.mcp.wire`), and when the client closes standard input the server exits, within
:data:`EOF_GRACE_S` even if a call is still running (nobody is left to read its answer).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import sys
import threading
from collections.abc import AsyncIterator, Callable
from typing import IO, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import ErrorData, JSONRPCError, jsonrpc_message_adapter

from roofscope.errors import RoofscopeError
from roofscope.jsonout import dumps
from roofscope.mcp import tools
from roofscope.mcp.tools import Workspace
from roofscope.mcp.wire import INVALID_REQUEST, Problem, problem, request_id
from roofscope.quantities import TIME_S
from roofscope.version import __version__

INSTRUCTIONS = (
    "roofscope reads Nsight Compute exports (ncu CSV: raw, details or summary pages, .csv.gz) "
    "and Nsight Systems exports (SQLite, parquet folders, nsys stats CSV). A path is a file "
    "under the server's --root folders; a relative path is taken from the first root. Start "
    "with summary(path), then groups(path) for where the time goes, roofline(path) for what "
    "bounds each group, advice(path) for what to change first, launches(path, group) and "
    "launch_detail(path, launch) to drill down, diff(before, after) to compare two runs. "
    "Times are seconds, FLOP counts FLOP, bytes B, rates per second; every answer lists its "
    "units, ceilings name their source, and lists are cut to top (at most 1,000) with their "
    "*_total beside them."
)


def _answer(compute: Callable[[], dict[str, Any]]) -> str:
    try:
        return dumps(compute(), indent=None)
    except RoofscopeError as exc:
        raise ToolError(exc.one_line()) from None


def build(workspace: Workspace) -> MCPServer:
    """The server, its tools bound to ``workspace``."""
    # WARNING: the SDK logs every failed call at INFO in a box on stderr, noise in a client's log
    server = MCPServer(
        "roofscope", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )

    def summary(path: str) -> str:
        """One report's totals: launches, GPU time (time_s, s), FLOP per precision (flops),
        bytes per memory level (bytes), the GPU, its ceilings (value and source), the share of
        FLOP per precision, the efficiency histogram with potential_speedup (the step's speedup
        if every kernel ran at its roof), how each number was made (provenance), warnings."""
        return _answer(lambda: tools.summary(workspace, path))

    def groups(path: str, sort: str = TIME_S, top: int = 20, ascending: bool = False) -> str:
        """The Kernels table: per group of kernels, launches, time_s and time_pct (share of GPU
        time), FLOP and bytes, flop_per_s, ai (FLOP per byte at l1/l2/dram), bound (what limits
        it), attainable_flop_per_s (its roof), efficiency (0-1 of the roof), headroom_s and
        speedup_if_at_roof. sort: time_s, headroom_s, efficiency, launches or flop_per_s,
        largest first (ascending true: smallest first, e.g. the least efficient); top: rows
        returned (groups_total says how many there are)."""
        return _answer(lambda: tools.groups(workspace, path, sort, top, ascending))

    def launches(
        path: str, group: str, sort: str = TIME_S, top: int = 20, ascending: bool = False
    ) -> str:
        """The launches of one group (its exact name from groups): per launch, name is the
        launch ID to pass to launch_detail, with kernel, time_s, FLOP, bytes, flop_per_s, ai,
        efficiency and headroom_s. sort: time_s, efficiency, headroom_s or flop_per_s, largest
        first (ascending true: smallest first); top: rows returned (launches_total: all)."""
        return _answer(lambda: tools.launches(workspace, path, group, sort, top, ascending))

    def launch_detail(path: str, launch: int, match: str = "", top: int = 100) -> str:
        """The metrics of one launch (an ID from launches): derived values first, with the
        formula that made them, then its exported values in base SI units with their column
        (a raw page has ~1,300). match: only metrics whose name contains it (any case, e.g.
        "dram" or "tensor"); top: metrics returned (metrics_total: all that match)."""
        return _answer(lambda: tools.launch_detail(workspace, path, launch, match, top))

    def roofline(path: str, level: str = "dram", top: int = 50) -> str:
        """Roofs (compute and memory ceilings: value, unit, source) and one point per group:
        ai at the chosen level (l1, l2 or dram; FLOP/B), flop_per_s achieved, time_pct, bound,
        attainable_flop_per_s and efficiency. top: points returned (most time first)."""
        return _answer(lambda: tools.roofline(workspace, path, level, top))

    def advice(path: str, top: int = 10) -> str:
        """What to change first: ranked items with evidence, action, est_gain_s (estimated
        seconds saved per step), est_step_speedup, the model behind the estimate and whether
        it was checked by applying it. top: items returned."""
        return _answer(lambda: tools.advice(workspace, path, top))

    def diff(before: str, after: str, by: str = "group", top: int = 20) -> str:
        """Two exports compared row by row (by group, kernel or launch): both sides' time and
        share of the roof, the change (delta_time_s, delta_time_pct, speedup, delta_roof_pp),
        new and vanished rows and kernels, and the total's before, after and change (as
        roofscope diff --format json). top: rows and names returned (*_total: all)."""
        return _answer(lambda: tools.diff(workspace, before, after, by, top))

    def monitor_snapshot() -> str:
        """One NVML sample of every GPU on this host (utilisation, memory, power, clocks,
        processes), or available false and the one-line reason none can be read."""
        return _answer(tools.monitor_snapshot)

    tools_: tuple[Callable[..., str], ...] = (
        summary, groups, launches, launch_detail, roofline, advice, diff, monitor_snapshot
    )  # fmt: skip
    for tool in tools_:  # docstrings without their indentation: a client shows them as they are
        server.add_tool(
            tool, description=inspect.cleandoc(tool.__doc__ or ""), structured_output=False
        )
    return server


def serve(workspace: Workspace) -> None:
    asyncio.run(_serve_stdio(build(workspace)))


EOF_GRACE_S = 2.0  # after the client closed stdin: time for a running call before exit


async def _serve_stdio(server: MCPServer) -> None:
    """The SDK's stdio transport and server loop, reading through a :class:`_Wire`."""
    wire_fd = _claim_stdin()
    with os.fdopen(wire_fd, "rb", closefd=wire_fd != 0) as stdin:
        wire = _Wire(stdin)
        try:
            async with stdio_server(stdin=wire) as (read_stream, write_stream):  # type: ignore[arg-type]
                wire.replies = write_stream
                wire.ready.set()
                lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs
                await lowlevel.run(
                    read_stream, write_stream, lowlevel.create_initialization_options()
                )
        finally:
            _release_stdin(wire_fd)


def _claim_stdin() -> int:
    """A private descriptor for the wire, fd 0 pointed at /dev/null meanwhile (as the SDK does
    for the stdin it opens itself): a child process or a stray read cannot eat a request."""
    try:
        wire_fd = os.dup(0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    except OSError:
        return 0
    return wire_fd


def _release_stdin(wire_fd: int) -> None:
    if wire_fd != 0:
        with contextlib.suppress(OSError):
            os.dup2(wire_fd, 0)


class _Wire:
    """The client's lines, as the SDK's transport reads them: well-formed ones pass, a
    malformed request is answered here with its JSON-RPC error, and the end of input arms
    the exit."""

    def __init__(self, stdin: IO[bytes]):
        self._stdin = stdin
        self.ready = asyncio.Event()
        self.replies: Any = None  # the transport's write stream, once it exists

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while raw := await asyncio.to_thread(self._stdin.readline):
            line = raw.decode("utf-8", "replace")
            if not line.strip():
                continue
            found = problem(line) or _sdk_problem(line)
            if found is None:
                yield line
                continue
            print(f"roofscope mcp: {found.message}", file=sys.stderr, flush=True)
            if found.answer:
                await self._reply(found)
        _exit_soon()

    async def _reply(self, found: Problem) -> None:
        await self.ready.wait()
        error = ErrorData(code=found.code, message=found.message)
        await self.replies.send(
            SessionMessage(JSONRPCError(jsonrpc="2.0", id=found.id, error=error))
        )


def _sdk_problem(line: str) -> Problem | None:
    """A line :func:`problem` let through that the SDK still cannot read (a result that is
    not an object…): Invalid Request, with its id."""
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception:
        import json

        return Problem(request_id(json.loads(line)), INVALID_REQUEST, "Invalid Request")
    return None


def _exit_soon() -> None:
    """The client closed stdin: the server ends by itself when no call runs; a call still
    running (a load inside DuckDB cannot be stopped) is left behind after the grace time."""
    timer = threading.Timer(EOF_GRACE_S, os._exit, (0,))
    timer.daemon = True
    timer.start()
