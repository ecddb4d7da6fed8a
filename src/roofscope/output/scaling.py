"""``roofscope scaling`` as a table with a bar chart, JSON, CSV or Markdown."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from roofscope.output.export import dicts_csv
from roofscope.output.render import formatted
from roofscope.present.bars import hbars
from roofscope.present.text import plain
from roofscope.present.units import counted, pct, ratio_pct, si
from roofscope.quantities import EFFICIENCY, FLOP_PER_S


def _x(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


COLUMNS: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    ("setting", lambda r: r["label"]),
    ("GPU", lambda r: (r["gpu"] or "?").replace("NVIDIA ", "")),
    ("step", lambda r: si(r["step_time_s"], "s")),
    ("/sample", lambda r: si(r["time_per_sample_s"], "s")),
    ("samples/s", lambda r: "—" if r["samples_per_s"] is None else f"{r['samples_per_s']:,.0f}"),
    ("FLOP/s", lambda r: si(r[FLOP_PER_S], "")),
    ("eff", lambda r: ratio_pct(r[EFFICIENCY])),
    ("roof", lambda r: pct(r["roof_pct"])),
    ("speedup", lambda r: _x(r["speedup"])),
    ("scal. eff", lambda r: ratio_pct(r["scaling_efficiency"])),
)


def shown(doc: dict[str, Any]) -> list[tuple[str, Callable[[dict[str, Any]], str]]]:
    """The GPU column only when GPUs differ, scaling efficiency only when GPU counts do."""
    drop = set()
    if "gpu" not in doc["varying"]:
        drop.add("GPU")
    if "gpus" not in doc["varying"]:
        drop.add("scal. eff")
    return [c for c in COLUMNS if c[0] not in drop]


def cells(row: dict[str, Any], columns=COLUMNS) -> list[str]:
    return [f(row) for _, f in columns]


def chart(doc: dict[str, Any], width: int, ascii_only: bool = False) -> list[str]:
    """Throughput per setting; step time when no batch size is known."""
    rows = doc["rows"]
    if rows and all(r["samples_per_s"] is not None for r in rows):
        title = "samples/s (more is better)"
        items = [(r["label"], r["samples_per_s"]) for r in rows]
        fmt: Callable[[float], str] = lambda v: f"{v:,.0f}"  # noqa: E731
    else:
        title = "step time (less is better)"
        items = [(r["label"], r["step_time_s"]) for r in rows]
        fmt = lambda v: si(v, "s")  # noqa: E731
    return [title, *hbars(items, width, fmt, ascii_only=ascii_only)]


def to_markdown(doc: dict[str, Any]) -> str:
    out = ["### roofscope scaling", ""]
    out.append("| report | " + " | ".join(c[0] for c in COLUMNS) + " |")
    out.append("|---|" + "---|" * len(COLUMNS))
    for r in doc["rows"]:
        out.append(f"| `{Path(r['path']).name}` | " + " | ".join(cells(r)) + " |")
    out += ["", "```", *chart(doc, 60), "```", ""]
    out += [f"> {w}" for w in doc["warnings"]]
    return "\n".join(out).rstrip() + "\n"


def to_csv(doc: dict[str, Any]) -> str:
    rows = []
    for r in doc["rows"]:
        flat = {k: v for k, v in r.items() if k != "setting"}
        flat.update({k: v for k, v in r["setting"].items() if k != "sources"})
        rows.append(flat)
    return dicts_csv(rows)


def renderable(doc: dict[str, Any], width: int, ascii_only: bool = False) -> Group:
    """Title, table, bar chart and caveats: the CLI table and the TUI show the same."""
    columns = shown(doc)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 0))
    for name, _ in columns:
        table.add_column(
            name, justify="left" if name in ("setting", "GPU") else "right", no_wrap=True
        )
    for r in doc["rows"]:
        table.add_row(*map(plain, cells(r, columns)))
    varying = ", ".join(doc["varying"]) or "nothing"
    gpus = {r["gpu"] or "GPU ?" for r in doc["rows"]}
    on = f" on {gpus.pop()}" if len(gpus) == 1 else ""
    parts: list[Any] = [
        Text.assemble(
            ("scaling", "bold"),
            f" across {counted(len(doc['rows']), 'report')}{on} (varying: {varying})",
        ),
        table,
        *(Text(line) for line in chart(doc, min(width, 100), ascii_only)),
        *(Text(f"⚠ {w}", style="yellow") for w in doc["warnings"]),
    ]
    return Group(*parts)


def render_scaling(doc: dict[str, Any], fmt: str, console: Console | None = None) -> str:
    return formatted(doc, fmt, console, csv=to_csv, md=to_markdown, table=renderable)
