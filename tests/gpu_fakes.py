"""A synthetic GPU source behind the same protocol as NVML (the real one runs on the device:
see docs/performance.md), with a clock the test controls."""

from __future__ import annotations

import math

from roofscope.hardware.specs import match_device_name
from roofscope.monitor.estimate import fill_estimate
from roofscope.telemetry.sample import GpuSample, ProcessInfo, Reading

T0 = 1_800_000_000.0  # 2027-01-15: fixed, so snapshots do not move


class SyntheticSource:
    """GPUs whose utilisation ramps up and whose power follows it; tick ``k`` is at
    ``T0 + k·step``. ``gpm=False`` behaves like a pre-Hopper GPU. ``estimate=True`` also
    reads the per-pipe tensor activities and fills the estimates as the NVML source does
    (``mig=True``: in MIG mode, where the estimates are off)."""

    live = True

    def __init__(
        self,
        gpus: int = 1,
        host: str = "node01",
        step: float = 1.0,
        gpm: bool = True,
        estimate: bool = False,
        mig: bool = False,
    ):
        self.gpus = gpus
        self.host = host
        self.step = step
        self.gpm = gpm
        self.estimate = estimate
        self.mig = mig
        self.tick = 0
        self.label = f"synthetic · {host}"
        self.closed = False

    def now(self) -> float:
        return T0 + self.tick * self.step

    def sample(self, gpu: int) -> GpuSample:
        k = self.tick
        util = min(1.0, 0.05 * k) * (1.0 - 0.1 * gpu)
        s = GpuSample(
            ts=self.now(),
            host=self.host,
            gpu=gpu,
            name="NVIDIA H100 80GB HBM3",
            uuid=f"GPU-{gpu:08d}",
            util_gpu=util,
            util_mem=util / 2,
            mem_used=20e9 + 1e9 * gpu,
            mem_total=80e9,
            power_w=70.0 + 500.0 * util,
            power_limit_w=700.0,
            temp_c=30.0 + 30.0 * util,
            sm_clock_hz=1.98e9,
            mem_clock_hz=2.6e9,
            pcie_rx_bps=1e9 * (1 + math.sin(k)),
            pcie_tx_bps=5e8,
            energy_j=1000.0 + sum(70.0 + 500.0 * min(1.0, 0.05 * i) for i in range(k)) * self.step,
            mig_mode=False,
        )
        if self.gpm:
            s.sm_active, s.tensor_active, s.dram_bw_util = util * 0.9, util * 0.6, util * 0.3
            s.sm_occupancy, s.fp32_active, s.fp16_active, s.fp64_active = util * 0.4, 0.1, 0.0, 0.0
        else:
            s.gpm_status = "GPM not supported on this GPU (Hopper and later have it)"
        if self.estimate:
            s.mig_mode = self.mig
            if self.gpm:
                s.hmma_active, s.dmma_active, s.imma_active = s.tensor_active, 0.0, 0.0
            fill_estimate(s, match_device_name(s.name))
        return s

    def read(self) -> Reading:
        reading = Reading(
            samples=[self.sample(g) for g in range(self.gpus)],
            processes=[
                ProcessInfo(g, 4242 + g, "python", int(18e9), self.host) for g in range(self.gpus)
            ],
        )
        self.tick += 1
        return reading

    def close(self) -> None:
        self.closed = True


class FakeClock:
    """The recorder's clock and stop event: waiting advances time instead of sleeping."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t

    def is_set(self) -> bool:
        return False

    def wait(self, seconds: float) -> bool:
        self.t += seconds
        return False
