"""What is wrong with one line a client sent, in JSON-RPC 2.0's terms (no SDK here).

The SDK drops a line it cannot read as a message, and the client waits for ever for the
answer. JSON-RPC says an invalid request gets an error response with the request's id (null
when it cannot be told): -32700 for text that is not JSON, -32600 for JSON that is not a
request (no method, a method that is not a string, a bad id or ``jsonrpc``), and -32602 for
params that are not an object (MCP's params are always named). A notification is never
answered, not even when it is malformed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


@dataclass(frozen=True)
class Problem:
    """The error to answer with: ``id`` is the request's (None: unknown, sent as null);
    ``answer`` is False for a notification, which gets no response."""

    id: int | str | None
    code: int
    message: str
    answer: bool = True


def request_id(message: Any) -> int | str | None:
    """The message's id when it is one JSON-RPC allows (an integer or a string), else None."""
    if not isinstance(message, dict):
        return None
    rid = message.get("id")
    if isinstance(rid, bool) or not isinstance(rid, int | str):
        return None
    return rid


def problem(line: str) -> Problem | None:
    """The problem of one line, or None when it is well formed (a request, a notification or
    a response to the server's own request) and the SDK may take it."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return Problem(None, PARSE_ERROR, "Parse error: the line is not JSON")
    if not isinstance(message, dict):
        return Problem(None, INVALID_REQUEST, "Invalid Request: not a JSON object")
    rid = request_id(message)
    if "id" in message and rid is None:
        return Problem(None, INVALID_REQUEST, "Invalid Request: id must be a string or integer")
    if message.get("jsonrpc") != "2.0":
        return Problem(rid, INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"')
    if "method" not in message:
        if rid is not None and ("result" in message or "error" in message):
            return None  # a client's answer to a request of the server
        return Problem(rid, INVALID_REQUEST, "Invalid Request: no method")
    notification = "id" not in message
    if not isinstance(message["method"], str):
        return Problem(
            rid, INVALID_REQUEST, "Invalid Request: method must be a string", not notification
        )
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        return Problem(rid, INVALID_PARAMS, "Invalid params: must be an object", not notification)
    return None
