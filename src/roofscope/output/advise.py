"""``roofscope advise``: each report's advice, ranked, as a table, JSON or Markdown.

The document is ``{"schema_version", "reports": [{"path", "format", "gpu", "time_s",
"advice": [...]}], "warnings"}``; each item is ``Advice.to_dict`` (docs/json.md). Text from
the export (ncu's rule text, group names) reaches the table and Markdown through
``shown_doc`` (``formatted``)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.text import Text

from roofscope.output.columns import CellColumn, column_markdown, column_table, flat_csv
from roofscope.output.render import formatted
from roofscope.present.units import pct, si
from roofscope.quantities import LAUNCHES, TIME_PCT, TIME_S

TEXT_LINES = 3  # lines of ncu's text a table item shows (JSON and Markdown keep it whole)
# A report on which no rule fires: said, rather than an empty list under its heading
NOTHING = (
    "nothing to advise: no rule's threshold is reached in this report (docs/guide/advise.md "
    "lists every rule and its threshold)"
)
NONE_FOUND = (
    "no ncu rule results in this export: profile with sections (ncu --set full) and export the "
    "details page (ncu --import R.ncu-rep --csv --page details)"
)


def _gain(a: dict[str, Any]) -> str:
    return "—" if a["est_gain_s"] is None else si(a["est_gain_s"], "s")


def speedup_text(x: float | None) -> str:
    """A step speedup as the advice shows it: ``1.25×``, ``∞`` (the whole step), ``—``."""
    return "—" if x is None else ("∞" if x == float("inf") else f"{x:.2f}×")


def _speedup(a: dict[str, Any]) -> str:
    return speedup_text(a["est_step_speedup"])


def share_text(time_s: float, launches: int, time_pct: float) -> str:
    """An item's share of the step; "—" for one that covers no time at all (batch_memory is
    about memory, not about any launch)."""
    return "—" if not time_s and not launches else pct(time_pct)


COLUMNS: tuple[CellColumn, ...] = (
    ("#", lambda a: str(a["rank"])),
    ("rule", lambda a: a["rule"]),
    ("from", lambda a: a["source"]),
    (LAUNCHES, lambda a: f"{a[LAUNCHES]:,}"),
    ("of step", lambda a: share_text(a[TIME_S], a[LAUNCHES], a[TIME_PCT])),
    ("est. gain", _gain),
    ("step ×", _speedup),
)


def together_line(report: dict[str, Any]) -> str | None:
    """ncu's estimates for the whole step, overlapping rules combined (docs/json.md), in one
    line; None when the report has none."""
    t = report.get("ncu_rules_together")
    if not t:
        return None
    x = t["est_step_speedup"]
    speedup = "" if x is None else f" (step {speedup_text(x)})"
    return (
        f"ncu's estimates together: {t['rules']} rules on {t[LAUNCHES]:,} launches claim at "
        f"most {si(t['est_gain_s'], 's')}{speedup}; a launch's estimates are combined as "
        f"1 − Π(1 − s), never summed (summed: {si(t['summed_gain_s'], 's')}, up to "
        f"{t['most_rules_on_a_launch']} rules on one launch)"
    )


def _numbered(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"rank": i, **a} for i, a in enumerate(items, start=1)]


def _head(report: dict[str, Any]) -> str:
    """Name, GPU and what "step" means for this kind of report: an ncu report's summed kernel
    time; an nsys trace's rules measure each GPU's wall window; a recording has no kernels."""
    gpu = f" · {report['gpu']}" if report["gpu"] else ""
    family = report.get("family")
    if family == "recording":
        step = "GPU recording"
    elif family == "nsys":
        step = f"kernel time {si(report[TIME_S], 's')} (its rules: each GPU's wall window)"
    else:
        step = f"step {si(report[TIME_S], 's')}"
    return f"{Path(report['path']).name}{gpu} · {step}"


def _ncu_rules_missing(report: dict[str, Any], items: list[dict[str, Any]]) -> bool:
    """An ncu export without rule rows: say how to collect them (other kinds have none)."""
    return report.get("family", "ncu") == "ncu" and not any(a["source"] == "ncu" for a in items)


def _wrapped(text: str, width: int, lines: int | None = None) -> list[str]:
    """``text`` wrapped to ``width`` under a three-space indent, cut to ``lines`` lines (an
    ellipsis where cut)."""
    out = textwrap.wrap(text, max(width, 24), initial_indent="   ", subsequent_indent="   ")
    if lines is not None and len(out) > lines:
        out = out[:lines]
        out[-1] = out[-1][: max(width, 24) - 1].rstrip() + "…"
    return out


def advise_renderable(doc: dict[str, Any], width: int) -> Group:
    parts: list[Any] = []
    for report in doc["reports"]:
        parts.append(Text(_head(report), style="bold"))
        items = _numbered(report["advice"])
        if _ncu_rules_missing(report, items):  # say why ncu's rules are absent
            parts += [Text(line) for line in _wrapped(NONE_FOUND, width)]
            parts.append(Text(""))
        if not items:
            parts += [Text(line) for line in _wrapped(NOTHING, width)] + [Text("")]
            continue
        parts += [column_table(COLUMNS, items, {"rule", "from"}, squeeze=("rule",)), Text("")]
        line = together_line(report)
        if line:
            parts += [Text("\n".join(_wrapped(line, width))), Text("")]
        for a in items:
            lines = _wrapped(f"do: {a['action']}", width)
            lines += _wrapped(a["evidence"][0], width, TEXT_LINES) if a["evidence"] else []
            lines += [x for e in a["evidence"][1:2] for x in _wrapped(e, width)]
            if a["assumptions"]:  # the estimate's model, in short (--format md: all of them)
                lines += _wrapped(f"model: {a['assumptions'][0]}", width, TEXT_LINES)
            parts.append(Text(f"{a['rank']}. {a['title']}", style="bold"))
            parts.append(Text("\n".join(lines), no_wrap=True))
        parts.append(Text(""))
    parts += [Text(f"warning: {w}", style="yellow") for w in doc["warnings"]]
    return Group(*parts)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def advise_markdown(doc: dict[str, Any]) -> str:
    out = ["### roofscope advise", ""]
    for report in doc["reports"]:
        out += [f"**{_md(_head(report))}**", ""]
        items = _numbered(report["advice"])
        if _ncu_rules_missing(report, items):
            out += [NONE_FOUND, ""]
        if not items:
            out += [NOTHING, ""]
            continue
        out += [*column_markdown(COLUMNS, items), ""]
        line = together_line(report)
        if line:
            out += [_md(line), ""]
        for a in items:
            out += [f"{a['rank']}. **{_md(a['title'])}** — {_md(a['action'])}"]
            out += [f"   - {_md(e)}" for e in a["evidence"]]
            out += [f"   - assumed: {_md(x)}" for x in a["assumptions"]]
        out.append("")
    out += [f"> ⚠ {_md(w)}" for w in doc["warnings"]]
    return "\n".join(out).rstrip() + "\n"


def render_advise(doc: dict[str, Any], fmt: str, console: Console | None = None) -> str:
    return formatted(
        doc,
        fmt,
        console,
        csv=lambda d: flat_csv([a for r in d["reports"] for a in r["advice"]]),
        md=advise_markdown,
        table=advise_renderable,
    )
