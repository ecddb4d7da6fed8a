"""Headless text for GPU samples (``monitor --once``) and recording summaries (``record
--summary``): the same rows as a Rich table, CSV, Markdown or JSON."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from roofscope.analysis.recording import LOW_UTIL
from roofscope.jsonout import dumps
from roofscope.output.export import table_text
from roofscope.present.text import console as plain_console
from roofscope.present.text import plain, shown, shown_doc
from roofscope.present.units import si
from roofscope.telemetry.sample import GpuSample, Reading

Column = tuple[str, Callable[[Any], str]]


def _pct(v: float | None) -> str:
    return "" if v is None else f"{100 * v:.1f}"


def _num(v: float | None, digits: int = 1) -> str:
    return "" if v is None else f"{v:.{digits}f}"


def _scaled(v: float | None, unit: float, digits: int = 1) -> str:
    return "" if v is None else f"{v / unit:.{digits}f}"


SUMMARY_COLUMNS: tuple[Column, ...] = (
    ("host", lambda s: s["host"]),
    ("gpu", lambda s: str(s["gpu"])),
    ("name", lambda s: s["name"] or ""),
    ("duration s", lambda s: _num(s["duration_s"])),
    ("samples", lambda s: str(s["samples"])),
    ("GPU usage %", lambda s: _pct(s["util_gpu"])),
    ("mem usage rate %", lambda s: _pct(s["util_mem"])),
    ("mem used %", lambda s: _pct(s["mem_used_frac"])),
    ("temp °C", lambda s: _num(s["temp_c"])),
    ("power W", lambda s: _num(s["power_w"])),
    ("energy J", lambda s: _num(s["energy_j"], 0)),
    (f"time <{100 * LOW_UTIL:.0f}% util s", lambda s: _num(s["low_util_s"])),
    (f"time <{100 * LOW_UTIL:.0f}% util %", lambda s: _pct(s["low_util_frac"])),
    ("tensor active %", lambda s: _pct(s["tensor_active"])),
    ("est. TFLOP/s", lambda s: _scaled(s.get("est_flops"), 1e12)),
    ("est. peak TFLOP/s", lambda s: _scaled(s.get("est_flops_max"), 1e12)),
    ("est. DRAM GB/s", lambda s: _scaled(s.get("est_dram_bps"), 1e9, 0)),
)

SAMPLE_COLUMNS: tuple[Column, ...] = (
    ("host", lambda s: s.host),
    ("gpu", lambda s: str(s.gpu)),
    ("name", lambda s: s.name),
    ("util %", lambda s: _pct(s.util_gpu)),
    ("mem util %", lambda s: _pct(s.util_mem)),
    ("mem used", lambda s: si(s.mem_used, "B") if s.mem_used is not None else ""),
    ("power W", lambda s: _num(s.power_w)),
    ("temp °C", lambda s: _num(s.temp_c, 0)),
    ("SM clock", lambda s: si(s.sm_clock_hz, "Hz") if s.sm_clock_hz is not None else ""),
    ("tensor %", lambda s: _pct(s.tensor_active)),
    ("SM active %", lambda s: _pct(s.sm_active)),
    ("DRAM bw %", lambda s: _pct(s.dram_bw_util)),
    ("est. FLOP/s", lambda s: si(s.est_flops, "FLOP/s") if s.est_flops is not None else ""),
    ("est. DRAM", lambda s: si(s.est_dram_bps, "B/s") if s.est_dram_bps is not None else ""),
    ("throttle", lambda s: s.throttle or ""),
)


def _rows(items: Sequence[Any], columns: Sequence[Column]) -> list[list[str]]:
    return [[fn(item) for _, fn in columns] for item in items]


def _print(console: Console, title: str, columns: Sequence[Column], rows: list[list[str]]) -> None:
    """Transposed: a row per quantity and a column per GPU, which fits 80 columns."""
    table = Table(title=title, title_justify="left")
    table.add_column("")
    for row in rows:
        table.add_column(f"{row[0]}:{row[1]}", justify="right")
    for i, (name, _) in enumerate(columns[2:], start=2):
        table.add_row(name, *(plain(row[i] or "—") for row in rows))
    console.print(table)


def render_summary(
    summaries: list[dict[str, Any]],
    fmt: str,
    console: Console | None = None,
    warnings: list[str] | None = None,
) -> str:
    """``summaries``: :meth:`GpuSummary.to_dict` of every GPU; ``warnings``: what reading the
    recordings found (a repeated part, a clock step), in the JSON as ``warnings`` (the
    other formats print them to stderr, from the caller)."""
    if fmt == "json":
        return dumps({"gpus": summaries, "warnings": warnings or []})
    rows = _rows(shown_doc(summaries), SUMMARY_COLUMNS)
    if fmt == "table":
        _print(console or plain_console(), "GPU recording summary", SUMMARY_COLUMNS, rows)
        energy = {s["energy_source"] for s in summaries if s["energy_source"]}
        if energy:
            (console or plain_console()).print(plain(f"energy from: {', '.join(sorted(energy))}"))
        return ""
    return table_text([name for name, _ in SUMMARY_COLUMNS], rows, fmt)


def reading_dict(reading: Reading) -> dict[str, Any]:
    """The newest sample of every GPU, as ``monitor --once --format json`` and ``roofscope mcp``
    give it."""
    samples: list[GpuSample] = sorted(reading.latest().values(), key=lambda s: s.key)
    return {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "gpus": [s.as_dict() for s in samples],
        "processes": [p.__dict__ for p in reading.processes],
        "notes": reading.notes,
    }


def render_reading(reading: Reading, fmt: str, console: Console | None = None) -> str:
    samples: list[GpuSample] = sorted(reading.latest().values(), key=lambda s: s.key)
    if fmt == "json":
        return dumps(reading_dict(reading))
    rows = [
        [shown(c) if c is not None else None for c in r] for r in _rows(samples, SAMPLE_COLUMNS)
    ]
    if fmt == "table":
        _print(console or plain_console(), "GPUs", SAMPLE_COLUMNS, rows)
        for note in reading.notes:
            (console or plain_console()).print(plain(note))
        return ""
    return table_text([name for name, _ in SAMPLE_COLUMNS], rows, fmt)
