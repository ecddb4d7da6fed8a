"""Work the model does not need: a layer whose kernels count far more FLOPs than its shape asks
for (a 3-channel stem convolution that the library pads to a tensor-core tile of channels).

The useful FLOPs come from the run's ``analytic.json`` (``roofscope profile`` writes it beside
the export: torch's FlopCounterMode per layer, shapes only); the measured ones from the launches
each layer made, told apart by the per-layer NVTX ranges the profiled step pushes (``ncu
--nvtx``: ``<default domain>:forward:…  <default domain>:stem.0:…``). So the rule speaks only
for bundled models' runs, and only for their forward pass, where the layer ranges are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from roofscope.analysis.advice import ROOFSCOPE, Advice, Context, step_speedup
from roofscope.analysis.advice.kernel_classes import MATRIX, family
from roofscope.analysis.advice.run_files import analytic_beside
from roofscope.ncu_nvtx import push_pop_ranges
from roofscope.present.text import shown
from roofscope.present.units import counted, si, time
from roofscope.quantities import flop_total_sql

WASTE_RATIO = 3.0  # measured ÷ analytic FLOPs of a layer before its extra work is advice
WASTE_SHARE = 1.0  # % of the step in such layers' matrix kernels


@dataclass(frozen=True)
class Layer:
    """One layer's forward work as measured beside its analytic count."""

    name: str
    analytic: float  # useful FLOPs (FlopCounterMode)
    measured: float  # FLOPs its launches counted
    matrix_s: float  # time of its matrix kernels (convolution, GEMM, attention)
    launches: int  # its matrix launches
    groups: tuple[str, ...]

    @property
    def ratio(self) -> float:
        return self.measured / self.analytic

    @property
    def waste_s(self) -> float:
        """The matrix kernels' time less what their useful FLOPs would take at the same rate."""
        return self.matrix_s * (1.0 - 1.0 / self.ratio)


nvtx_ranges = push_pop_ranges  # ncu's NVTX column, outermost first (roofscope.ncu_nvtx)


def useful_flops(analytic: dict[str, Any]) -> dict[str, float]:
    out = {}
    for row in analytic.get("layers", []):
        name, flops = (
            (row.get("layer"), row.get("forward_flops")) if isinstance(row, dict) else (None, None)
        )
        if isinstance(name, str) and isinstance(flops, int | float) and flops > 0:
            out[name] = float(flops)
    return out


def measured_layers(
    rows: list[tuple[str, str | None, str | None, float, float]], useful: dict[str, float]
) -> list[Layer]:
    """``rows``: (kernel, group, nvtx, time, FLOPs) per launch. A launch belongs to the layer
    named by its innermost range when that range is one of the analytic layers and the launch
    sits inside ``forward``."""
    acc: dict[str, dict[str, Any]] = {}
    for _kernel, group, nvtx, seconds, flops in rows:
        names = nvtx_ranges(nvtx)
        if len(names) < 2 or names[0] != "forward" or names[-1] not in useful:
            continue
        layer = acc.setdefault(names[-1], {"counted": 0.0, "time": 0.0, "n": 0, "groups": {}})
        layer["counted"] += flops or 0.0
        if group and family(group) in MATRIX:
            layer["time"] += seconds or 0.0
            layer["n"] += 1
            layer["groups"][group] = layer["groups"].get(group, 0.0) + (seconds or 0.0)
    return [
        Layer(name, useful[name], a["counted"], a["time"], a["n"],
              tuple(sorted(a["groups"], key=lambda g: -a["groups"][g])))
        for name, a in acc.items()
    ]  # fmt: skip


def model_flops(layers: list[Layer], step_s: float, model: str) -> list[Advice]:
    """One item over every layer past WASTE_RATIO, when their matrix time is a real share."""
    wasteful = sorted(
        (x for x in layers if x.analytic and x.ratio >= WASTE_RATIO and x.matrix_s > 0),
        key=lambda x: -x.waste_s,
    )
    spent = sum(x.matrix_s for x in wasteful)
    share = 100.0 * spent / step_s if step_s > 0 else 0.0
    if not wasteful or share < WASTE_SHARE:
        return []
    gain = sum(x.waste_s for x in wasteful)
    groups = list(dict.fromkeys(g for x in wasteful for g in x.groups))
    top = wasteful[0]
    return [
        Advice(
            rule="model_flops",
            source=ROOFSCOPE,
            title=f"layer {shown(top.name)} computes {top.ratio:.1f}× the FLOPs its shape needs",
            action=(
                "reshape the layer for the library's tiles: pad a 3-channel input to 4 "
                "(channels_last; cuDNN has C=4 first-layer kernels) or its channels to a "
                "multiple of 8, or accept it if the layer's share is small"
            ),
            evidence=[
                f"{shown(x.name)}: {si(x.measured, 'FLOP')} measured, {si(x.analytic, 'FLOP')} "
                f"analytic ({x.ratio:.1f}×), "
                f"{counted(x.launches, 'matrix launch', 'matrix launches')}, {time(x.matrix_s)}"
                for x in wasteful
            ]
            + [
                f"threshold {WASTE_RATIO:g}× the analytic FLOPs; together "
                f"{share:.1f}% of GPU time (threshold {WASTE_SHARE:g}%)"
            ],
            groups=groups,
            launches=sum(x.launches for x in wasteful),
            time_s=spent,
            time_pct=share,
            est_gain_s=gain,
            est_step_speedup=step_speedup(step_s, gain),
            assumptions=[
                f"analytic FLOPs of {shown(model)} from its analytic.json (torch's "
                "FlopCounterMode, 2 FLOPs per multiply-add); measured FLOPs of the launches "
                "inside each layer's NVTX range, forward pass only (the backward has no layer "
                "ranges)",
                "gain: each layer's matrix kernels doing only the useful FLOPs at the rate "
                "they reach now, time × (1 − analytic ÷ measured); an upper bound",
                "not checked by applying it (no profile option reshapes a layer); "
                "channels_last alone left ResNet-18's stem at 10.7× (H100, bf16)",
            ],
        )
    ]


def advise(ctx: Context) -> list[Advice]:
    """The producer ``Report.advice()`` runs (analysis/advice/sources.py): ncu reports of
    bundled models' runs, with the analytic.json beside them."""
    report = ctx.report
    if report is None or not ctx.step_s or report.is_nsys or report.is_recording:
        return []
    analytic = analytic_beside(report.path)
    useful = useful_flops(analytic) if analytic else {}
    if not useful:
        return []
    rows = ctx.con.execute(
        f"SELECT f.kernel, g.grp, f.nvtx, f.time_s * f.invocations, "
        f"({flop_total_sql('f.')}) * f.invocations FROM launch_facts f "
        f"LEFT JOIN kernel_groups g ON g.kernel = f.kernel "
        f"WHERE f.report_id = ? AND f.nvtx IS NOT NULL",
        [ctx.report_id],
    ).fetchall()
    return model_flops(measured_layers(rows, useful), ctx.step_s, str(analytic.get("model", "")))
