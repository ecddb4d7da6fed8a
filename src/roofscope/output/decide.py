"""``roofscope cost`` and ``roofscope mig`` as tables, JSON, CSV or Markdown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.text import Text

from roofscope.output.columns import CellColumn, column_markdown, column_table, flat_csv
from roofscope.output.render import formatted
from roofscope.present.bars import hbars
from roofscope.present.units import si


def _hours(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _usd(value: float | None) -> str:
    return "—" if value is None else f"${value:,.2f}"


def _price(r: dict[str, Any], key: str) -> Any:
    return (r["price"] or {}).get(key)


COST_COLUMNS: tuple[CellColumn, ...] = (
    ("setting", lambda r: r["label"]),
    ("GPU", lambda r: (r["gpu"] or "?").replace("NVIDIA ", "")),
    ("step", lambda r: si(r["step_time_s"], "s")),
    ("GPU-h", lambda r: _hours(r["gpu_hours"])),
    ("$/GPU-h", lambda r: _usd(_price(r, "usd_per_gpu_hour"))),
    ("cost", lambda r: _usd(r["cost_usd"])),
    ("date", lambda r: _price(r, "date") or ""),
    ("offer", lambda r: _price(r, "offer") or "no price for this GPU"),
)
MIG_COLUMNS: tuple[CellColumn, ...] = (
    ("profile", lambda f: f["profile"]),
    ("SMs", lambda f: "—" if f["sms"] is None else str(f["sms"])),
    ("of GPU", lambda f: f"{f['sm_fraction']:.0%}"),
    ("memory", lambda f: f"{f['memory_gb']:g} GB"),
    ("fits", lambda f: "yes" if f["fits_memory"] else "no"),
    ("slowdown", lambda f: f"{f['expected_slowdown']:.2f}×"),
    ("per GPU", lambda f: str(f["instances_per_gpu"])),
    ("work/GPU", lambda f: f"{f['work_per_gpu']:.2f}"),
)


def cost_chart(doc: dict[str, Any], width: int, ascii_only: bool = False) -> list[str]:
    priced = [r for r in doc["rows"] if r["cost_usd"] is not None]
    items = [(f"{r['label']} · {_price(r, 'offer')}"[:40], r["cost_usd"]) for r in priced]
    return hbars(items, width, _usd, ascii_only=ascii_only) if items else []


def run_line(doc: dict[str, Any]) -> str:
    run = doc["run"]
    if run["steps"] is not None:
        return f"a run of {run['steps']:,} steps"
    epochs = f"{run['epochs']:g} epoch{'' if run['epochs'] == 1 else 's'}"
    return f"{epochs} of {run['samples']:,} samples"


def _caveat(prices: dict[str, Any]) -> str:
    return " — EXAMPLES, not quotes: put yours in --prices FILE" if prices["examples_only"] else ""


def cost_markdown(doc: dict[str, Any]) -> str:
    prices = doc["prices"]
    out = [
        f"### roofscope cost: {run_line(doc)}",
        "",
        f"Prices: {prices['origin']}{_caveat(prices)}",
        "",
    ]
    report_col: CellColumn = ("report", lambda r: f"`{Path(r['path']).name}`")
    out += column_markdown((report_col, *COST_COLUMNS), doc["rows"])
    out += ["", *(f"> {w}" for w in doc["warnings"])]
    return "\n".join(out).rstrip() + "\n"


def render_cost(doc: dict[str, Any], fmt: str, console: Console | None = None) -> str:
    return formatted(
        doc,
        fmt,
        console,
        csv=lambda d: flat_csv(d["rows"]),
        md=cost_markdown,
        table=cost_renderable,
    )


def cost_renderable(doc: dict[str, Any], width: int, ascii_only: bool = False) -> Group:
    prices = doc["prices"]
    caveat = _caveat(prices)
    return Group(
        Text(f"cost of {run_line(doc)}; prices: {prices['origin']}{caveat}"),
        column_table(COST_COLUMNS, doc["rows"], {"setting", "GPU", "offer", "date"}),
        *(Text(line) for line in cost_chart(doc, min(width, 100), ascii_only)),
        *(Text(f"⚠ {w}", style="yellow") for w in doc["warnings"]),
    )


def mig_markdown(doc: dict[str, Any]) -> str:
    out = ["### roofscope mig", ""]
    for a in doc["advice"]:
        out += [f"**{a['source']}** · {a['gpu']}", ""]
        out += [f"- {line}" for line in a["reasoning"]]
        out += ["", *column_markdown(MIG_COLUMNS, a["profiles"]), ""]
    return "\n".join(out).rstrip() + "\n"


def mig_csv(doc: dict[str, Any]) -> str:
    profiles = [
        {"source": a["source"], "gpu": a["gpu"], **p} for a in doc["advice"] for p in a["profiles"]
    ]
    return flat_csv(profiles)


def render_mig(doc: dict[str, Any], fmt: str, console: Console | None = None) -> str:
    return formatted(
        doc, fmt, console, csv=mig_csv, md=mig_markdown, table=lambda d, _: mig_renderable(d)
    )


def mig_renderable(doc: dict[str, Any]) -> Group:
    parts: list[Any] = []
    for a in doc["advice"]:
        parts.append(Text.assemble((f"MIG: {a['source']}", "bold"), f" · {a['gpu']}"))
        parts += [Text(f"  {line}") for line in a["reasoning"]]
        if a["profiles"]:
            parts.append(column_table(MIG_COLUMNS, a["profiles"], {"profile", "fits"}))
    return Group(*parts)
