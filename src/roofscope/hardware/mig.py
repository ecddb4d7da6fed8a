"""MIG profiles per GPU (reference/specs.md §6): name, compute slices, memory, SMs, profile ID.

IDs and SM counts are those ``nvidia-smi mig -lgip`` printed on A100-80GB, H100-80GB SXM,
H100 PCIe and H200 (found in public printouts; re-check on the target GPU). Where no printout
gave SM counts, ``sms`` is None and a slice counts as its share of the GPU's compute slices.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from roofscope.hardware.gpu_spec import GpuSpec


@dataclass(frozen=True)
class MigProfile:
    name: str  # 1g.10gb
    slices: int  # compute slices (of 7; 4 on the A30)
    mem_gb: float  # nominal, as in the name
    sms: int | None
    profile_id: int | None
    media: bool = False  # +me: the one profile with the media engines
    max_instances: int = 1  # how many fit on one GPU (NVIDIA's MIG user guide)


def _max_instances(slices: int, total: int, media: bool, double_memory: bool) -> int:
    """Per the MIG user guide: the +me profile exists once; a 1g slice with twice the smallest
    1g memory takes two memory slices, so four fit; a 4g leaves no room for another 4g."""
    if media:
        return 1
    if total == 4:  # A30: 1g ×4, 2g ×2, 4g ×1
        return total // slices
    if slices == 1:
        return 4 if double_memory else 7
    return {2: 3, 3: 2}.get(slices, 1)


def _parse(text: str, total: int = 7) -> tuple[MigProfile, ...]:
    """``1g.10gb (19) 16, 1g.10gb+me (20) 16, …`` as in specs.md §6."""
    out = []
    for item in text.split(","):
        m = re.match(r"\s*(\d+)g\.(\d+)gb(\+me)?(?:\s+\((\d+)\))?(?:\s+(\d+))?\s*$", item)
        if not m:
            raise ValueError(f"bad MIG profile {item!r}")
        g, mem, me, pid, sms = m.groups()
        out.append(
            MigProfile(
                f"{g}g.{mem}gb{me or ''}",
                int(g),
                float(mem),
                int(sms) if sms else None,
                int(pid) if pid else None,
                bool(me),
            )
        )
    smallest_1g = min((p.mem_gb for p in out if p.slices == 1), default=0.0)
    return tuple(
        MigProfile(
            p.name,
            p.slices,
            p.mem_gb,
            p.sms,
            p.profile_id,
            p.media,
            _max_instances(p.slices, total, p.media, p.slices == 1 and p.mem_gb > smallest_1g),
        )
        for p in out
    )


_A100_40 = "1g.5gb (19) 14, 1g.5gb+me (20) 14, 1g.10gb (15) 14, 2g.10gb (14) 28, 3g.20gb (9) 42, 4g.20gb (5) 56, 7g.40gb (0) 98"  # noqa: E501
_A100_80 = "1g.10gb (19) 14, 1g.10gb+me (20) 14, 1g.20gb (15) 14, 2g.20gb (14) 28, 3g.40gb (9) 42, 4g.40gb (5) 56, 7g.80gb (0) 98"  # noqa: E501
PROFILES: dict[str, tuple[MigProfile, ...]] = {
    "a100-sxm4-40gb": _parse(_A100_40),
    "a100-pcie-40gb": _parse(_A100_40),
    "a100-sxm4-80gb": _parse(_A100_80),
    "a100-pcie-80gb": _parse(_A100_80),
    "h100-sxm5-80gb": _parse(
        "1g.10gb (19) 16, 1g.10gb+me (20) 16, 1g.20gb (15) 26, 2g.20gb (14) 32, 3g.40gb (9) 60, "
        "4g.40gb (5) 64, 7g.80gb (0) 132"
    ),
    "h100-pcie-80gb": _parse(
        "1g.20gb (15) 14, 2g.20gb (14) 30, 3g.40gb (9) 46, 4g.40gb (5) 62, 7g.80gb (0) 114"
    ),
    "h100-nvl-94gb": _parse("1g.12gb, 1g.12gb+me, 1g.24gb, 2g.24gb, 3g.47gb, 4g.47gb, 7g.94gb"),
    "gh200-96gb": _parse("1g.12gb, 1g.12gb+me, 1g.24gb, 2g.24gb, 3g.48gb, 4g.48gb, 7g.96gb"),
    "h200-sxm-141gb": _parse(
        "1g.18gb (19) 16, 1g.18gb+me (20) 16, 1g.35gb (15), 2g.35gb (14) 32, 3g.71gb (9), "
        "4g.71gb (5), 7g.141gb (0) 132"
    ),
    "b200": _parse("1g.23gb, 1g.45gb, 2g.45gb, 3g.90gb, 4g.90gb, 7g.180gb"),
    "a30": _parse("1g.6gb, 1g.6gb+me, 2g.12gb, 2g.12gb+me, 4g.24gb", total=4),
}
PROFILES["h200-nvl-141gb"] = PROFILES["h200-sxm-141gb"]


def profiles_for(spec: GpuSpec) -> tuple[MigProfile, ...]:
    """The GPU's MIG profiles; empty when it has no MIG (or it is not in the table)."""
    return PROFILES.get(spec.key, ())


def total_slices(profiles: tuple[MigProfile, ...]) -> int:
    return max((p.slices for p in profiles), default=7)
