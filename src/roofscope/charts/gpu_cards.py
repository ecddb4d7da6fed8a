"""Monitor cards: one per GPU, a title line of current values and a sparkline per series.

A pure function of the histories, the window and the size, so the pane, its snapshot tests and
any other front end draw the same thing. The rows a card gets shrink with the number of GPUs:
eight GPUs in 24 lines still get a title and their utilisation each.
"""

from __future__ import annotations

from roofscope.charts.sparkline import sparkline
from roofscope.present.units import ratio_pct, si
from roofscope.telemetry.history import SeriesHistory
from roofscope.telemetry.sample import SERIES, GpuSample, Series

LABEL = 10
VALUE = 9


def value_text(series: Series, value: float | None) -> str:
    if value is None:
        return "—"
    if series.unit == "%":
        return ratio_pct(value)
    if series.unit == "°C":
        return f"{value:.0f}°C"
    if series.unit == "W":
        return f"{value:.0f} W"
    if series.unit == "FLOP/s":  # "648 TF/s": "648 TFLOP/s" is wider than the value column
        return si(value, "F/s")
    return si(value, series.unit)


def short_name(name: str) -> str:
    return name.removeprefix("NVIDIA ").removeprefix("Tesla ")


def title(label: str, s: GpuSample, width: int = 10_000, flag: str | None = None) -> str:
    """``GPU0 H100 80GB HBM3 · 98% util · 31.2/79.6 GB · 312/700 W · 61°C · 1.98 GHz``, with
    the parts that do not fit in ``width`` left out whole rather than cut; a ``flag`` (a stale
    node) comes right after the label, before anything that could be left out."""
    head = f"{label} · {flag} · " if flag else f"{label} "
    parts = [head + short_name(s.name)]
    if s.util_gpu is not None:
        parts.append(f"{100 * s.util_gpu:.0f}% util")
    if s.mem_used is not None and s.mem_total:
        parts.append(f"{s.mem_used / 1e9:.1f}/{s.mem_total / 1e9:.1f} GB")
    if s.power_w is not None:
        limit = f"/{s.power_limit_w:.0f}" if s.power_limit_w else ""
        parts.append(f"{s.power_w:.0f}{limit} W")
    if s.temp_c is not None:
        parts.append(f"{s.temp_c:.0f}°C")
    if s.sm_clock_hz is not None:
        parts.append(si(s.sm_clock_hz, "Hz"))
    if s.mig_mode:
        parts.append(f"MIG: {s.mig or 'on'}")
    if s.throttle and s.throttle != "idle":
        parts.append(f"throttle: {s.throttle}")
    if s.gpm_status:
        parts.append(s.gpm_status)
    out = parts[0][:width]
    for part in parts[1:]:
        if len(out) + 3 + len(part) <= width:
            out += " · " + part
    return out


def card_rows(n_cards: int, height: int) -> int:
    """Rows per card, title included: at least two (title + utilisation)."""
    if n_cards <= 0:
        return 0
    return max(2, height // n_cards)


def render_card(
    label: str,
    latest: GpuSample,
    history: SeriesHistory,
    *,
    end: float,
    seconds_per_column: float,
    width: int,
    rows: int,
    ascii_only: bool = False,
    live: bool = True,
    flag: str | None = None,
) -> list[str]:
    lines = [title(label, latest, width, flag)]
    columns = max(4, width - LABEL - VALUE - 1)
    measured = [s for s in SERIES if history.has(s.key)]
    for series in measured[: max(0, rows - 1)]:
        values = history.window(series.key, end, seconds_per_column, columns)
        if live:
            now = getattr(latest, series.key)
        else:
            now = next((v for v in reversed(values) if v is not None), None)
        top = series.top
        if top is None and series.key == "power_w" and latest.power_limit_w:
            top = latest.power_limit_w
        spark = sparkline(values, top, ascii_only=ascii_only)
        lines.append(
            f"{series.label[: LABEL - 1]:<{LABEL}}{spark} {value_text(series, now):>{VALUE}}"
        )
    return lines


def render_cards(
    cards: list[tuple[str, GpuSample, SeriesHistory]],
    *,
    end: float,
    seconds_per_column: float,
    width: int,
    height: int,
    ascii_only: bool = False,
    live: bool = True,
) -> list[str]:
    """Every card, stacked; ``height`` is what the caller can show without scrolling."""
    rows = card_rows(len(cards), height)
    out: list[str] = []
    for label, latest, history in cards:
        out += render_card(
            label,
            latest,
            history,
            end=end,
            seconds_per_column=seconds_per_column,
            width=width,
            rows=rows,
            ascii_only=ascii_only,
            live=live,
        )
    return out


def axis_line(seconds_per_column: float, width: int, right: str) -> str:
    """``-1 min ······ now`` under the sparklines, so a column has a known duration."""
    columns = max(4, width - LABEL - VALUE - 1)
    left = f"-{_span(columns * seconds_per_column)}"
    gap = max(1, columns - len(left) - len(right))
    return " " * LABEL + left + " " * gap + right


def _span(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.3g} h"
    if seconds >= 60:
        return f"{seconds / 60:.3g} min"
    return f"{seconds:.3g} s"
