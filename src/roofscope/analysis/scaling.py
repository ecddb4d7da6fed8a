"""Scaling across settings: the same model at several batch sizes, precisions or GPU counts.

Per report: step time (summed kernel time ÷ profiled steps), time per sample and throughput
(batch × GPUs per step), achieved FLOP/s, hardware efficiency (time-weighted, DESIGN.md §4),
and — against the first setting — the throughput ratio and, when the GPU count changes, the
scaling efficiency (throughput ratio ÷ GPU ratio). A setting comes from the command line, else
from the file name (``resnet50_bf16_b64_4gpu…``); an unknown batch leaves per-sample numbers
unknown rather than guessed.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from roofscope import quantities as q
from roofscope.analysis.roofline import classify
from roofscope.hardware.ceilings import Ceiling

_SEP = r"(?:^|[_\-.])"
_END = r"(?=[_\-.]|$)"
# "b64" is a batch size, "b200" the GPU
_BATCH = re.compile(rf"{_SEP}(?:bs|batch|b(?![123]00{_END}))[_\-]?(\d+){_END}", re.IGNORECASE)
_GPUS = re.compile(rf"{_SEP}(\d+)[_\-]?gpus?{_END}|{_SEP}gpus?[_\-]?(\d+){_END}", re.IGNORECASE)
_PRECISION = re.compile(rf"{_SEP}(fp32|tf32|bf16|fp16|fp8|amp|mixed|int8){_END}", re.IGNORECASE)


@dataclass
class Setting:
    """What a report was run with, and where each value came from."""

    batch: int | None = None
    precision: str | None = None
    gpus: int = 1
    steps: int = 1
    sources: dict[str, str] = field(default_factory=dict)


def infer_setting(path: str) -> Setting:
    """Batch, precision and GPU count from a file name such as ``resnet18_bf16_b32_h100``."""
    name = Path(path).name
    setting = Setting()
    if (m := _BATCH.search(name)) and int(m.group(1)) > 0:
        setting.batch, setting.sources["batch"] = int(m.group(1)), "file name"
    if m := _PRECISION.search(name):
        setting.precision, setting.sources["precision"] = m.group(1).lower(), "file name"
    if (m := _GPUS.search(name)) and int(m.group(1) or m.group(2)) > 0:  # "gpu0" is an index
        setting.gpus, setting.sources["gpus"] = int(m.group(1) or m.group(2)), "file name"
    return setting


@dataclass
class ScalingRow:
    path: str
    gpu: str | None
    setting: Setting
    time_s: float | None  # summed kernel time of the report
    flops: float | None
    efficiency: float | None
    roof_pct: float | None
    speedup: float | None = None  # throughput against the first row
    scaling_efficiency: float | None = None  # speedup ÷ GPU ratio, when GPU counts differ

    @property
    def step_time_s(self) -> float | None:
        return self.time_s / self.setting.steps if self.time_s else None

    @property
    def samples_per_step(self) -> int | None:
        b = self.setting.batch
        return b * self.setting.gpus if b else None

    @property
    def time_per_sample_s(self) -> float | None:
        n, t = self.samples_per_step, self.step_time_s
        return t / n if n and t else None

    @property
    def samples_per_s(self) -> float | None:
        t = self.time_per_sample_s
        return 1.0 / t if t else None

    @property
    def flop_per_s(self) -> float | None:
        return q.flop_per_s(self.flops, self.time_s)

    def label(self) -> str:
        s = self.setting
        parts = [s.precision or "?", f"b{s.batch}" if s.batch else "b?"]
        if s.gpus != 1 or "gpus" in s.sources:
            parts.append(f"{s.gpus} GPU")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "gpu": self.gpu,
            "label": self.label(),
            "setting": asdict(self.setting),
            q.TIME_S: self.time_s,
            "step_time_s": self.step_time_s,
            "time_per_sample_s": self.time_per_sample_s,
            "samples_per_s": self.samples_per_s,
            q.FLOPS: self.flops,
            q.FLOP_PER_S: self.flop_per_s,
            q.EFFICIENCY: self.efficiency,
            "roof_pct": self.roof_pct,
            "speedup": self.speedup,
            "scaling_efficiency": self.scaling_efficiency,
        }


def step_numbers(
    groups: list[dict[str, Any]], totals: dict[str, Any], ceilings: list[Ceiling]
) -> tuple[float | None, float | None, float | None]:
    """(FLOPs, time-weighted efficiency, % of the roof at the step's own intensity)."""
    complete = totals.get(q.FLOPS_COMPLETE, True)
    flops = q.flop_total(totals[q.FLOPS], complete)
    timed = [(g[q.TIME_S], g[q.EFFICIENCY]) for g in groups if g[q.EFFICIENCY] is not None]
    weight = sum(t for t, _ in timed if t)
    efficiency = sum(t * e for t, e in timed if t) / weight if weight else None
    roofs = {c.name: c for c in ceilings}
    _, attainable, _ = classify(
        totals[q.FLOPS], totals[q.BYTES], roofs, complete=complete is not False
    )
    time_s = totals[q.TIME_S]
    roof = (
        100.0 * flops / time_s / attainable if flops is not None and time_s and attainable else None
    )
    return flops, efficiency, roof


def relate(rows: list[ScalingRow]) -> list[ScalingRow]:
    """Order by (GPUs, batch; unknown batch last), keeping the given order otherwise (the first
    precision or GPU type named is the baseline), and fill speedup / scaling efficiency against
    the first row with a throughput."""
    rows = sorted(
        rows, key=lambda r: (r.setting.gpus, r.setting.batch is None, r.setting.batch or 0)
    )
    base = next((r for r in rows if r.samples_per_s), None)
    for r in rows:
        if base is None or not r.samples_per_s:
            continue
        r.speedup = r.samples_per_s / base.samples_per_s
        if r.setting.gpus != base.setting.gpus:
            r.scaling_efficiency = r.speedup / (r.setting.gpus / base.setting.gpus)
    return rows


def varying(rows: list[ScalingRow]) -> list[str]:
    """Which settings differ across the reports: batch, precision, gpus, gpu type."""
    out = []
    for name, get in (
        ("batch", lambda r: r.setting.batch),
        ("precision", lambda r: r.setting.precision),
        ("gpus", lambda r: r.setting.gpus),
        ("gpu", lambda r: r.gpu),
    ):
        if len({get(r) for r in rows}) > 1:
            out.append(name)
    return out
