"""One GPU's datasheet entry as roofscope holds it: its own module, so that the MIG profiles
(``mig.py``, which take a spec) and the spec table (``specs.py``, which makes MIG slices of a
spec) both import it and not each other."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuSpec:
    """One datasheet entry; peaks in FLOP/s and B/s (dense tensor rates)."""

    key: str
    aliases: tuple[str, ...]
    cc: str
    sms: int
    clock_mhz: float | None
    peaks: dict[str, float]  # fp64, fp32, fp16, bf16, tf32_tensor, fp16_tensor, … in FLOP/s
    dram_bw: float | None
    mem_gb: float | None
    source: str
    mig_slice: str | None = None
    sm_fraction: float = 1.0
    mem_fraction: float = 1.0

    @property
    def label(self) -> str:
        base = self.aliases[0] if self.aliases else self.key
        return f"{base} MIG {self.mig_slice}" if self.mig_slice else base
