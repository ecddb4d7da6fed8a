"""What a training run costs on each profiled GPU: steps × measured step time × GPUs × $/GPU-h.

Prices come from a user-editable TOML table (``--prices``, else the user's
``~/.config/roofscope/prices.toml``, else the shipped example table, whose every entry carries
its date and source and says it is an example). A GPU without a price gets no cost, never a
borrowed one.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from roofscope.errors import RoofscopeError
from roofscope.grouping import user_config_path
from roofscope.hardware.specs import find_gpu, match_device_name
from roofscope.tomlfile import check_keys, positive_float, quoted, read_toml, text_value

HINT = "see roofscope cost --example-prices for the format"


@dataclass(frozen=True)
class Price:
    gpu: str  # spec key
    offer: str
    usd_per_gpu_hour: float
    date: str
    source: str
    example: bool


@dataclass
class PriceTable:
    prices: list[Price]
    origin: str  # the file, or "example prices shipped with roofscope"
    examples_only: bool

    def for_gpu(self, key: str | None) -> list[Price]:
        return [p for p in self.prices if p.gpu == key]


def example_text() -> str:
    return resources.files("roofscope.data").joinpath("prices.toml").read_text(encoding="utf-8")


def user_prices_path() -> Path:
    return user_config_path().parent / "prices.toml"


def load_prices(path: str | None = None) -> PriceTable:
    """The given table, else the user's, else the shipped examples."""
    import tomllib

    if path is None and user_prices_path().is_file():
        path = str(user_prices_path())
    if path is None:
        data = tomllib.loads(example_text())
        origin = "the example table shipped with roofscope"
    else:
        data = read_toml(path, "price file", HINT)
        origin = path
    check_keys(data, ("price",), "the file", path, HINT)
    entries = data.get("price", [])
    if not isinstance(entries, list):
        raise RoofscopeError("price must be an array of [[price]] tables", path=path, hint=HINT)
    prices = [_price(e, i, path) for i, e in enumerate(entries)]
    return PriceTable(prices, origin, bool(prices) and all(p.example for p in prices))


def one_price(gpu_keys: list[str], usd_per_gpu_hour: float) -> PriceTable:
    """``--usd-per-gpu-hour``: the same price for every GPU of the reports."""
    prices = [Price(k, "one price for all GPUs", usd_per_gpu_hour, "", "", False) for k in gpu_keys]
    return PriceTable(prices, "--usd-per-gpu-hour", False)


PRICE_KEYS = ("gpu", "offer", "usd_per_gpu_hour", "date", "source", "example")
_TEXT_KEYS = ("gpu", "offer", "date", "source")


def _price(entry: Any, i: int, path: str | None) -> Price:
    where = f"[[price]] entry {i + 1}"
    if isinstance(entry, dict):
        check_keys(entry, PRICE_KEYS, where, path, HINT)
    if not isinstance(entry, dict) or "gpu" not in entry or "usd_per_gpu_hour" not in entry:
        raise RoofscopeError(f"{where} needs 'gpu' and 'usd_per_gpu_hour'", path=path, hint=HINT)
    value = _usd_per_hour(entry["usd_per_gpu_hour"], where, path)
    texts = {k: text_value(entry, k, where, path, HINT) for k in _TEXT_KEYS if k in entry}
    example = entry.get("example", False)
    if not isinstance(example, bool):
        raise RoofscopeError(
            f"{where}: example = {quoted(example)} is not true or false", path=path, hint=HINT
        )
    try:
        spec = find_gpu(texts["gpu"])
    except RoofscopeError as exc:
        raise RoofscopeError(
            f"{where}: {exc.message}", path=path, hint='name one GPU of that list in gpu = "…"'
        ) from exc
    return Price(
        spec.key,
        texts.get("offer", spec.key),
        value,
        texts.get("date", "undated"),
        texts.get("source", ""),
        example,
    )


MAX_USD_PER_GPU_HOUR = 1000.0  # above: a typo or a price per node-month, not per GPU-hour


def _usd_per_hour(value: object, where: str, path: str | None) -> float:
    """A price in $ per GPU-hour: a plain positive number (a string with a unit, a
    non-finite, huge or non-positive number is refused naming the entry)."""
    hint = "write usd_per_gpu_hour = 2.49 (a number of US dollars per GPU-hour)"

    def refuse(problem: str) -> RoofscopeError:
        return RoofscopeError(
            f"{where}: usd_per_gpu_hour = {quoted(value)} is {problem}", path=path, hint=hint
        )

    if isinstance(value, bool) or not isinstance(value, int | float):
        unit = (
            " (a FLOP/s or B/s quantity, not $/h)"
            if isinstance(value, str) and "/s" in value
            else ""
        )
        raise refuse(f"not a number{unit}")
    number = positive_float(value, refuse)
    if number > MAX_USD_PER_GPU_HOUR:
        raise refuse(f"over ${MAX_USD_PER_GPU_HOUR:,.0f} per GPU-hour")
    return number


@dataclass
class CostRow:
    path: str
    label: str
    gpu: str | None
    gpus: int
    step_time_s: float | None
    steps: int | None
    gpu_hours: float | None
    price: Price | None
    cost_usd: float | None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["price"] = asdict(self.price) if self.price else None
        return out


def run_steps(
    steps: int | None, epochs: float | None, samples: int | None, batch: int | None, gpus: int
) -> int | None:
    """Training steps of the run: given, or epochs × samples ÷ (batch × GPUs), rounded up."""
    if steps is not None:
        return steps
    if epochs is None or samples is None or not batch:
        return None
    return math.ceil(epochs * samples / (batch * gpus))


def estimate(
    scaling_rows: list[dict[str, Any]],
    table: PriceTable,
    steps: int | None = None,
    epochs: float | None = None,
    samples: int | None = None,
) -> list[CostRow]:
    """One row per (report, price of its GPU); cheapest first, unpriced rows last."""
    out = []
    for r in scaling_rows:
        setting = r["setting"]
        spec = match_device_name(r["gpu"])
        n = run_steps(steps, epochs, samples, setting["batch"], setting["gpus"])
        hours = n * r["step_time_s"] * setting["gpus"] / 3600 if n and r["step_time_s"] else None
        prices = table.for_gpu(spec.key if spec else None) or [None]
        for price in prices:
            cost = hours * price.usd_per_gpu_hour if hours is not None and price else None
            out.append(
                CostRow(
                    r["path"],
                    r["label"],
                    r["gpu"],
                    setting["gpus"],
                    r["step_time_s"],
                    n,
                    hours,
                    price,
                    cost,
                )
            )
    return sorted(out, key=lambda c: (c.cost_usd is None, c.cost_usd or 0.0))


def cost_doc(
    scaling: dict[str, Any],
    table: PriceTable,
    run_steps: int | None = None,
    epochs: float | None = None,
    samples: int | None = None,
) -> dict[str, Any]:
    """The cost document (docs/json.md) from an already measured scaling document, so a view
    that shows both measures once."""
    rows = estimate(scaling["rows"], table, run_steps, epochs, samples)
    warnings = list(scaling["warnings"])
    missing = sorted({r.gpu or "?" for r in rows if r.price is None})
    if missing:
        warnings.append(
            f"no price for {', '.join(missing)}: add a [[price]] entry "
            "(roofscope cost --example-prices shows the format)"
        )
    return {
        "run": {"steps": run_steps, "epochs": epochs, "samples": samples},
        "prices": {"origin": table.origin, "examples_only": table.examples_only},
        "rows": [r.to_dict() for r in rows],
        "warnings": warnings,
    }
