"""The Monitor's live roofline of the node: one point per GPU at its estimated FLOP/s and
FLOP per DRAM byte (hardware/pipes.py), under the datasheet roofs of the node's GPU.

A pure function of the newest samples and a size; the drawing is charts/roofline.py's ``render``
without colour (the Monitor draws plain lines). Every line says "est.": the point is GPM pipe
activity × peak, not counted FLOPs.
"""

from __future__ import annotations

from collections.abc import Sequence

from roofscope.charts.roofline import Point, Roof, render, roof_title
from roofscope.hardware.specs import GpuSpec, match_device_name
from roofscope.telemetry.sample import GpuSample

TITLE = "est. roofline of the node: GPM pipe activity × peak at the SM clock"
HEIGHT = 12
MAX_WIDTH = 72


def node_roofs(spec: GpuSpec) -> list[Roof]:
    """Datasheet roofs: the fp16/bf16 dense tensor peak, FP32, DRAM (those the table has)."""
    source = f"datasheet {spec.key}"
    roofs = [
        Roof(name, "compute", spec.peaks[key], source)
        for name, key in (("tensor", "fp16_tensor"), ("fp32", "fp32"))
        if spec.peaks.get(key)
    ]
    if spec.dram_bw:
        roofs.append(Roof("dram", "memory", spec.dram_bw, source))
    return roofs


def has_estimates(samples: Sequence[GpuSample]) -> bool:
    return any(s.est_flops is not None for s in samples)


def render_node_roofline(
    cards: Sequence[tuple[str, GpuSample]], width: int, *, ascii_only: bool = False
) -> list[str]:
    """Title, chart and a line of roofs for ``(label, newest sample)`` of each GPU; nothing
    when no GPU has an estimate. A GPU doing no DRAM traffic or no math has no point."""
    samples = [s for _, s in cards]
    if not has_estimates(samples):
        return []
    spec = next((sp for s in samples if (sp := match_device_name(s.name)) is not None), None)
    roofs = node_roofs(spec) if spec is not None else []
    points = [
        Point(label, s.est_flops / s.est_dram_bps, s.est_flops, 1.0, tag=label)
        for label, s in cards
        if s.est_flops and s.est_dram_bps
    ]
    full, width = width, max(30, min(width, MAX_WIDTH))
    lines = [TITLE[:full]]
    if not points:
        lines.append("  no GPU is doing both math and DRAM traffic now: no point to draw")
    else:
        chart = render(points, roofs, width, HEIGHT, ascii_only=ascii_only, color=False)
        lines += chart.splitlines()
    axes = "x: FLOP per DRAM byte · y: FLOP/s"
    if roofs:
        axes += " · roofs (datasheet): " + " · ".join(roof_title(r) for r in roofs)
    lines.append(axes[:full])
    return lines
