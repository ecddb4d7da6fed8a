"""``roofscope diff`` as a table, JSON, CSV or Markdown for a pull request.

Every format renders the same dict (``Diff.to_dict()``, docs/json.md), and the Compare pane
shows the same cells, so a number pasted from CI is the number on screen.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from roofscope.grouping import base_name
from roofscope.output.export import dicts_csv
from roofscope.output.render import formatted
from roofscope.present.text import plain
from roofscope.present.units import cut, si
from roofscope.quantities import TIME_S

SHOWN_ROWS = 20  # table and Markdown; JSON and CSV carry every row


def signed(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    text = si(value, unit)
    return text if text.startswith("-") or value == 0 else f"+{text}"


def signed_pct(value: float | None) -> str:
    return "—" if value is None else f"{value:+.1f}%"


def _side(row: dict[str, Any], side: str, key: str) -> Any:
    values = row[side]
    return None if values is None else values.get(key)


def _roof_move(row: dict[str, Any]) -> str:
    a, b = _side(row, "before", "roof_pct"), _side(row, "after", "roof_pct")
    if a is None and b is None:
        return "—"
    fmt = lambda v: "—" if v is None else f"{v:.0f}%"  # noqa: E731
    return f"{fmt(a)}→{fmt(b)}"


def _kernels(row: dict[str, Any]) -> str:
    if row["status"] != "matched":
        return row["status"]
    if row["matched_by"] in ("group", "name", "launch order"):
        new, gone = len(row["new_kernels"]), len(row["vanished_kernels"])
        return f"+{new}-{gone}" if new or gone else ""
    return row["matched_by"]


COLUMNS: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    ("before", lambda r: si(_side(r, "before", TIME_S), "s")),
    ("after", lambda r: si(_side(r, "after", TIME_S), "s")),
    ("Δtime", lambda r: signed(r["delta_time_s"], "s")),
    ("Δ%", lambda r: signed_pct(r["delta_time_pct"])),
    ("% of roof", _roof_move),
    ("ΔFLOP/s", lambda r: signed(r["delta_flop_per_s"], "")),
    ("kernels", _kernels),
)


def header(doc: dict[str, Any]) -> list[str]:
    return [doc["by"], *(c[0] for c in COLUMNS)]


def cells(row: dict[str, Any], by: str = "group") -> list[str]:
    """Display cells; a launch row reads ``#k base name`` (the full name is in JSON/CSV)."""
    name = str(row["name"])
    if by == "launch" and " #" in name:
        kernel, k = name.rsplit(" #", 1)
        name = f"#{k} {base_name(kernel)}"
    return [name, *(f(row) for _, f in COLUMNS)]


def label(head: dict[str, Any]) -> str:
    return Path(head["path"]).name


def headline(doc: dict[str, Any]) -> str:
    """``3.92 ms → 3.71 ms (-5.2%, 1.06× faster)``: the step's summed kernel time."""
    t0, t1 = doc["before"][TIME_S], doc["after"][TIME_S]
    total = doc["total"]
    speed = total["speedup"]
    if speed is None:
        verdict = ""
    elif speed >= 1:
        verdict = f", {speed:.2f}× faster"
    else:
        verdict = f", {1 / speed:.2f}× slower"
    return (
        f"{si(t0, 's')} → {si(t1, 's')} ({signed_pct(total['delta_time_pct'])}{verdict}) "
        f"GPU time of all kernels"
    )


def kernel_counts(doc: dict[str, Any]) -> str:
    k = doc["kernels"]
    by_base = sum(1 for m in k["matched"] if m["matched_by"] != "name")
    return (
        f"kernels: {len(k['matched'])} matched ({by_base} without data types or by base "
        "name), "
        f"{len(k['new'])} new, {len(k['vanished'])} vanished"
    )


def to_markdown(doc: dict[str, Any], top: int | None = None) -> str:
    before, after = doc["before"], doc["after"]
    out = [
        f"### roofscope diff: `{label(before)}` → `{label(after)}`",
        "",
        f"**{headline(doc)}** · {before['gpu'] or 'GPU ?'} → {after['gpu'] or 'GPU ?'} · "
        f"{kernel_counts(doc)}",
        "",
    ]
    rows = doc["rows"]
    shown = rows[: top or SHOWN_ROWS]
    out.append("| " + " | ".join(header(doc)) + " |")
    out.append("|---|" + "---:|" * (len(COLUMNS) - 1) + "---|")
    for row in shown:
        out.append("| " + " | ".join(_md(c) for c in cells(row, doc["by"])) + " |")
    if len(rows) > len(shown):
        out.append(
            f"\n{len(rows) - len(shown)} more rows with smaller changes "
            "(`roofscope diff --format json` lists all)."
        )
    k = doc["kernels"]
    for title, names in (("New kernels", k["new"]), ("Vanished kernels", k["vanished"])):
        if names:
            out += ["", f"<details><summary>{title} ({len(names)})</summary>", ""]
            out += [f"- `{_md(_short(n))}`" for n in names]
            out += ["", "</details>"]
    out += [""] + [f"> ⚠ {_md(w)}" for w in doc["warnings"]]
    return "\n".join(out).rstrip() + "\n"


def _short(name: str, width: int = 120) -> str:
    """A pull request needs the start of a signature."""
    return cut(name, width)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'").replace("\n", " ")


def to_csv(doc: dict[str, Any]) -> str:
    """One row per diff row, both sides' numbers flattened (``before_time_s``, …)."""
    return dicts_csv(flat_rows(doc))


def flat_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The diff rows one level deep, in base units: what CSV and the Compare pane's file hold."""
    rows = []
    for r in doc["rows"]:
        flat = {k: v for k, v in r.items() if k not in ("before", "after")}
        flat["new_kernels"] = len(r["new_kernels"])
        flat["vanished_kernels"] = len(r["vanished_kernels"])
        for side in ("before", "after"):
            for key, value in (r[side] or {}).items():
                flat[f"{side}_{key}"] = value
        rows.append(flat)
    return rows


def renderable(doc: dict[str, Any], width: int, top: int | None = None) -> Group:
    before, after = doc["before"], doc["after"]
    # SIMPLE_HEAD puts one space between columns, so cells need no padding of their own
    # (with it, 80 columns cut the last one: "vanished" read "vanishe").
    table = Table(
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
        padding=(0, 0, 0, 0),
        caption="kernels: +new -vanished kernel names in a matched row, or how it matched",
        caption_justify="left",
    )
    widths = {"% of roof": 9, "kernels": 10, "Δtime": 8}
    others = sum(widths.get(name, 7) + 1 for name, _ in COLUMNS)
    table.add_column(
        doc["by"],
        overflow="ellipsis",
        no_wrap=True,
        min_width=14,
        max_width=max(14, width - others),
    )
    for name, _ in COLUMNS:
        wide = widths.get(name, 7)
        table.add_column(
            name, justify="right" if name != "kernels" else "left", no_wrap=True, min_width=wide
        )
    rows = doc["rows"]
    shown = top or SHOWN_ROWS
    for row in rows[:shown]:
        table.add_row(*map(plain, cells(row, doc["by"])))
    parts: list[Any] = [
        Text.assemble(
            (label(before), "bold"),
            f" ({before['gpu'] or 'GPU ?'}) → ",
            (label(after), "bold"),
            f" ({after['gpu'] or 'GPU ?'})",
        ),
        Text(headline(doc)),
        Text(kernel_counts(doc)),
        table,
    ]
    if len(rows) > shown:
        parts.append(Text(f"{len(rows) - shown} more rows (--top N, --format json)"))
    parts += [Text(f"⚠ {w}", style="yellow") for w in doc["warnings"]]
    return Group(*parts)


def render_diff(
    doc: dict[str, Any], fmt: str, console: Console | None = None, top: int | None = None
) -> str:
    """Text for json/csv/md; ``table`` prints to ``console`` and returns ''."""
    return formatted(
        doc,
        fmt,
        console,
        csv=to_csv,
        md=lambda d: to_markdown(d, top),
        table=lambda d, width: renderable(d, width, top),
    )
