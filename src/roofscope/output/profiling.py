"""``profile --list``, ``runs``, ``doctor``, ``ceilings`` and a run's summary in every format."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console, Group
from rich.padding import Padding
from rich.text import Text

from roofscope.output.columns import CellColumn, column_markdown, column_table, flat_csv
from roofscope.output.render import formatted
from roofscope.present.text import plain, shown
from roofscope.present.units import si
from roofscope.quantities import FLOPS, LEVELS, TIME_S

MODEL_COLUMNS: tuple[CellColumn, ...] = (
    ("name", lambda m: m["name"]),
    ("model", lambda m: m["title"]),
    ("input", lambda m: m["input"]),
    ("batch", lambda m: str(m["default_batch"])),
    ("from the study", lambda m: m["study"]),
)


def _when(epoch: float | None) -> str:
    return "—" if epoch is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch))


def settings_text(spec: dict[str, Any]) -> str:
    parts = [spec["precision"], f"b{spec['batch']}"]
    if spec.get("mode") == "infer":
        parts.append("infer")
    if spec.get("seq_len"):
        parts.append(f"seq {spec['seq_len']}")
    if spec.get("image_size"):
        parts.append(f"{spec['image_size']}px")
    if spec.get("channels_last"):
        parts.append("channels_last")
    if spec.get("compile"):
        parts.append("compile")
    return " ".join(parts)


def kernels_text(run: dict[str, Any]) -> str:
    expected = run.get("expected_kernels")
    return f"{run['kernels']}/{expected}" if expected else str(run["kernels"])


RUN_COLUMNS: tuple[CellColumn, ...] = (
    ("started", lambda r: _when(r["started"])),
    ("model", lambda r: r["spec"]["model"]),
    ("settings", lambda r: settings_text(r["spec"])),
    ("preset", lambda r: r["spec"]["preset"]),
    ("status", lambda r: r["status"]),
    ("duration", lambda r: si(r["duration_s"], "s")),
    ("kernels", kernels_text),
    ("folder", lambda r: r["name"]),
)
_MARK = {"ok": "✓", "warn": "!", "fail": "✗"}
DOCTOR_COLUMNS: tuple[CellColumn, ...] = (
    ("", lambda c: _MARK.get(c["status"], "?")),
    ("check", lambda c: c["check"]),
    ("finding", lambda c: c["detail"]),
    ("what to do", lambda c: c["hint"]),
)


def _rate(value: float | None, name: str) -> str:
    unit = "B/s" if name in LEVELS else "OP/s" if name == "tensor_int8" else "FLOP/s"
    return si(value, unit)


CEILING_COLUMNS: tuple[CellColumn, ...] = (
    ("roof", lambda c: c["name"]),
    ("measured", lambda c: _rate(c["value"], c["name"])),
    ("datasheet", lambda c: _rate(c["spec"], c["name"])),
    (
        "of spec",
        lambda c: (
            ("—" if c["of_spec"] is None else f"{c['of_spec']:.0%}")
            + ("" if c.get("saved", True) else " (not saved)")
        ),
    ),
    ("how", lambda c: c["method"]),
)
PHASE_COLUMNS: tuple[CellColumn, ...] = (
    ("phase", lambda r: r["phase"]),
    ("kernels", lambda r: str(r["kernels"])),
    ("time", lambda r: si(r[TIME_S], "s")),
    ("measured", lambda r: si(r[FLOPS], "FLOP") + ("" if r["tensor_known"] else " (no tensor)")),
    ("analytic", lambda r: si(r["analytic_flops"], "FLOP")),
    (
        "measured ÷ analytic",
        lambda r: (
            "—" if r["measured_over_analytic"] is None else f"{r['measured_over_analytic']:.2f}"
        ),
    ),
)
ESTIMATE_COLUMNS: tuple[CellColumn, ...] = (
    ("batch", lambda r: str(r["batch"])),
    ("step FLOPs", lambda r: si(r["flops"], "FLOP")),
    ("memory", lambda r: si(r["memory_bytes"], "B")),
)


def _simple(
    doc: dict[str, Any],
    key: str,
    columns: tuple[CellColumn, ...],
    left: set[str],
    fmt: str,
    console: Console | None,
    title: str = "",
    squeeze: tuple[str, ...] = (),
) -> str:
    def table(d: dict[str, Any], width: int) -> Group:
        parts: list[Any] = [plain(title)] if title else []
        parts.append(column_table(columns, d[key], left, squeeze))
        return Group(*parts)

    def md(d: dict[str, Any]) -> str:
        head = [shown(title), ""] if title else []
        return "\n".join([*head, *column_markdown(columns, d[key])]) + "\n"

    return formatted(doc, fmt, console, csv=lambda d: flat_csv(d[key]), md=md, table=table)


def render_models(doc: dict[str, Any], fmt: str, console: Console | None = None) -> str:
    return _simple(
        doc,
        "models",
        MODEL_COLUMNS,
        {"name", "model", "input", "from the study"},
        fmt,
        console,
        squeeze=("from the study",),
    )


def render_runs(doc: dict[str, Any], fmt: str, console: Console | None = None) -> str:
    title = f"runs in {doc['folder']}" if doc["runs"] else f"no runs yet in {doc['folder']}"
    if not doc["runs"] and fmt == "table":  # a hint, not an empty table
        hint = (
            f"{title}\nstart one with roofscope profile MODEL (roofscope profile --list names "
            "them; --dry-run prints the commands), or --runs-dir DIR to look elsewhere"
        )
        return formatted(doc, fmt, console, csv=str, md=str, table=lambda d, w: plain(hint))
    return _simple(
        doc,
        "runs",
        RUN_COLUMNS,
        {"started", "model", "settings", "preset", "status", "folder"},
        fmt,
        console,
        title,
        squeeze=("folder",),
    )


def _doctor_lines(doc: dict[str, Any], width: int) -> Group:
    """Findings and fixes are sentences: one check per line, its fix wrapped below it."""
    parts = []
    for c in doc["checks"]:
        line = Text(f"{_MARK.get(c['status'], '?')} {c['check']}: ", style="bold")
        line.append(c["detail"], style="")
        parts.append(line)
        if c["hint"] and c["status"] != "ok":
            parts.append(Padding(Text(f"→ {c['hint']}"), (0, 0, 0, 4), expand=False))
    return Group(*parts)


def render_doctor(doc: dict[str, Any], fmt: str, console: Console | None = None) -> str:
    def md(d: dict[str, Any]) -> str:
        return "\n".join(column_markdown(DOCTOR_COLUMNS, d["checks"])) + "\n"

    return formatted(
        doc, fmt, console, csv=lambda d: flat_csv(d["checks"]), md=md, table=_doctor_lines
    )


def render_ceilings(doc: dict[str, Any], fmt: str, console: Console | None = None) -> str:
    title = (
        f"{doc['device']} · saved to {doc['saved_to']}" if doc.get("saved_to") else doc["device"]
    )
    return _simple(
        doc, "ceilings", CEILING_COLUMNS, {"roof", "how"}, fmt, console, title, squeeze=("how",)
    )


def render_phases(doc: dict[str, Any], fmt: str, console: Console | None = None) -> str:
    title = (
        f"{doc['run']} · {doc['status']} · report {doc['report']}"
        if doc.get("report")
        else f"{doc['run']} · {doc['status']}"
    )
    if doc.get("details"):
        title += f" · ncu's rules: roofscope advise {doc['details']}"
    return _simple(doc, "phases", PHASE_COLUMNS, {"phase"}, fmt, console, title)


def render_estimate(doc: dict[str, Any], fmt: str, console: Console | None = None) -> str:
    f = doc["flops"]
    title = (
        f"{doc['title']} · {doc['input']} · {doc['mode']} {doc['precision']} · "
        f"{f['gmac_per_sample']:.3g} GMAC forward per sample · "
        f"{doc['memory']['parameters']:,} parameters"
    )
    return _simple(doc, "by_batch", ESTIMATE_COLUMNS, set(), fmt, console, title)
