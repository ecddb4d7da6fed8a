"""Which MIG slice a job needs, from what was measured on the whole GPU.

Model (stated with every answer): the job kept the GPU busy a fraction ``u`` of the time
(NVML utilisation: any kernel running) and used a fraction ``a`` of the SM-time (GPM SM active,
Hopper and later). While running, its kernels therefore occupied ``a/u`` of the SMs. On a
slice with a fraction ``f`` of the SMs, kernels that needed more than ``f`` run ``(a/u)/f``
times longer and idle time stays as it was, so

    step time on the slice ÷ step time on the GPU ≈ (1 − u) + u × max(1, (a/u) / f).

Without SM active, ``a = u`` (kernels fill the GPU) — the pessimistic case, and said so.
Memory must fit with headroom. The suggestion is the smallest slice (fewest compute slices,
then least memory) whose memory fits and whose expected slowdown stays under the tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from roofscope.hardware.mig import MigProfile, profiles_for, total_slices
from roofscope.hardware.specs import GpuSpec

MEMORY_HEADROOM = 0.10
SLOWDOWN_TOLERANCE = 1.10
GB = 1e9


@dataclass
class SliceFit:
    profile: MigProfile
    sm_fraction: float
    fits_memory: bool
    slowdown: float
    instances: int

    @property
    def work_per_gpu(self) -> float:
        """Jobs' worth of work one GPU does when filled with this slice (instances ÷ slowdown)."""
        return self.instances / self.slowdown

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile.name,
            "profile_id": self.profile.profile_id,
            "sms": self.profile.sms,
            "memory_gb": self.profile.mem_gb,
            "sm_fraction": self.sm_fraction,
            "fits_memory": self.fits_memory,
            "expected_slowdown": self.slowdown,
            "instances_per_gpu": self.instances,
            "work_per_gpu": self.work_per_gpu,
        }


@dataclass
class MigAdvice:
    gpu: str
    suggestion: SliceFit | None
    fits: list[SliceFit]
    reasoning: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu,
            "suggestion": self.suggestion.to_dict() if self.suggestion else None,
            "profiles": [f.to_dict() for f in self.fits],
            "reasoning": self.reasoning,
        }


def slowdown(util: float, sm_active: float | None, fraction: float) -> float:
    """Expected step time on a slice with ``fraction`` of the SMs, relative to the whole GPU."""
    u = min(max(util, 0.0), 1.0)
    if u == 0:
        return 1.0
    a = min(sm_active if sm_active is not None else u, u)
    return (1 - u) + u * max(1.0, (a / u) / fraction)


def advise(
    spec: GpuSpec,
    util: float,
    memory_bytes: float,
    sm_active: float | None = None,
    tolerance: float = SLOWDOWN_TOLERANCE,
) -> MigAdvice:
    """Fit the job (fractions 0..1; memory in bytes) to the GPU's MIG profiles."""
    profiles = [p for p in profiles_for(spec) if not p.media]
    name = spec.label
    if not profiles:
        return MigAdvice(name, None, [], [f"{name} has no MIG profiles in roofscope's table"])
    total = total_slices(profiles_for(spec))
    need_mem = memory_bytes * (1 + MEMORY_HEADROOM)
    fits = []
    for p in sorted(profiles, key=lambda p: (p.slices, p.mem_gb)):
        fraction = p.sms / spec.sms if p.sms and spec.sms else p.slices / total
        fits.append(
            SliceFit(
                p,
                min(fraction, 1.0),
                p.mem_gb * GB >= need_mem,
                slowdown(util, sm_active, min(fraction, 1.0)),
                p.max_instances,
            )
        )
    good = [f for f in fits if f.fits_memory and f.slowdown <= tolerance]
    pick = good[0] if good else None
    reasoning = _reasoning(spec, util, sm_active, memory_bytes, need_mem, tolerance, pick, fits)
    return MigAdvice(name, pick, fits, reasoning)


def _reasoning(
    spec: GpuSpec,
    util: float,
    sm_active: float | None,
    memory_bytes: float,
    need_mem: float,
    tolerance: float,
    pick: SliceFit | None,
    fits: list[SliceFit],
) -> list[str]:
    lines = [f"measured on the whole GPU: busy {util:.0%} of the time (NVML utilisation)"]
    if sm_active is not None:
        share = min(sm_active, util) / util if util else 0.0
        lines.append(
            f"SM active {sm_active:.0%} of SM-time (GPM), so running kernels occupied "
            f"{share:.0%} of the {spec.sms} SMs"
        )
    else:
        lines.append(
            "no SM-active measurement (GPM needs Hopper or later and a roofscope recording): "
            "kernels are assumed to fill the GPU while running, the pessimistic case"
        )
    lines.append(
        f"memory: peak {memory_bytes / GB:.1f} GB + {MEMORY_HEADROOM:.0%} headroom = "
        f"{need_mem / GB:.1f} GB needed"
    )
    lines.append(
        "slowdown on a slice with a fraction f of the SMs ≈ (1 − busy) + busy × max(1, "
        f"occupied / f); suggestion: the smallest slice within {tolerance:.2f}× whose memory fits"
    )
    if pick is not None:
        p = pick.profile
        lines.append(
            f"→ {p.name}{f' (ID {p.profile_id})' if p.profile_id is not None else ''}: "
            f"{pick.sm_fraction:.0%} of the SMs, {p.mem_gb:g} GB, expected slowdown "
            f"{pick.slowdown:.2f}×, {pick.instances} per GPU"
        )
    else:
        mem_ok = [f for f in fits if f.fits_memory]
        why = (
            "no slice has enough memory"
            if not mem_ok
            else f"every slice with enough memory is slower than {tolerance:.2f}× "
            f"(best: {min(mem_ok, key=lambda f: f.slowdown).profile.name} at "
            f"{min(f.slowdown for f in mem_ok):.2f}×)"
        )
        lines.append(f"→ keep the whole GPU: {why}")
    packed = [f for f in fits if f.fits_memory]
    if packed:
        best = max(packed, key=lambda f: f.work_per_gpu)
        if best.instances > 1:
            lines.append(
                f"most work per GPU: {best.instances} × {best.profile.name} at "
                f"{best.slowdown:.2f}× each = {best.work_per_gpu:.2f} jobs' worth per GPU "
                "(when throughput matters more than each job's time)"
            )
    return lines
