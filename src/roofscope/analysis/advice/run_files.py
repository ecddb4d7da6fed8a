"""A ``roofscope profile`` run's own files beside its export: ``analytic.json`` (the model's
FLOPs per layer and its memory model) and ``run.json`` (the settings and the step's measured
facts). Both are found in the export's folder (a run folder) or named after the export
(``x_h100.analytic.json`` beside ``x_h100.ncu-raw.csv.gz``, as the samples are)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

ANALYTIC = "analytic.json"
RUN = "run.json"


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError):  # RecursionError: a hostile file's nesting
        return None
    return data if isinstance(data, dict) else None


def _beside(
    path: str | Path,
    name: str,
    valid: Callable[[dict[str, Any]], bool],
    plain_valid: Callable[[dict[str, Any]], bool] = lambda _: True,
) -> dict[str, Any] | None:
    export = Path(path)
    # the file named after the export first: a folder's plain one may be another run's, so
    # it must also pass ``plain_valid``
    named = _read(export.with_name(f"{export.name.split('.')[0]}.{name}"))
    if named is not None and valid(named):
        return named
    plain = _read(export.with_name(name))
    if plain is not None and valid(plain) and plain_valid(plain):
        return plain
    return None


def _model_of(data: dict[str, Any]) -> str | None:
    model = data.get("model")
    return model if isinstance(model, str) and model else None


def analytic_beside(path: str | Path) -> dict[str, Any] | None:
    """The run's ``analytic.json``; None when absent or not readable: the rules that read it
    then have nothing to compare with. A folder's plain ``analytic.json`` is the export's only
    when the export is named after its model (``roofscope profile`` names it
    ``MODEL_PRECISION_bBATCH…``) or the folder's ``run.json`` ran that model: in a folder of
    several exports it is another run's."""
    export = Path(path)

    def same_run(data: dict[str, Any]) -> bool:
        model = _model_of(data)
        if model is None:
            return False
        if export.name.startswith(f"{model}_"):
            return True
        run = _read(export.with_name(RUN))
        spec = run.get("spec") if run is not None else None
        return isinstance(spec, dict) and spec.get("model") == model

    return _beside(path, ANALYTIC, lambda d: isinstance(d.get("layers"), list), same_run)


def run_beside(path: str | Path) -> dict[str, Any] | None:
    """The run's ``run.json``; None when absent or not readable."""
    return _beside(path, RUN, lambda d: isinstance(d.get("facts"), dict))
