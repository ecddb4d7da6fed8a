"""What one tick of a GPU source yields: a sample per GPU and the processes using them.

Values are in the store's units: fractions (0..1) for utilisations and activities, bytes, watts,
degrees Celsius, hertz, bytes per second, joules. ``None`` means not measured (not supported on
this GPU, or no permission) — never zero.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Series:
    """A numeric field of :class:`GpuSample` that the history keeps and the pane draws."""

    key: str
    label: str
    unit: str  # "%" for fractions shown as percentages
    top: float | None = None  # full height of a sparkline; None: the series' own maximum


# Draw order in a card: what answers "is my GPU busy, and with what" first.
SERIES: tuple[Series, ...] = (
    Series("util_gpu", "GPU util", "%", 1.0),
    Series("tensor_active", "tensor", "%", 1.0),
    Series("est_flops", "est. FLOP", "FLOP/s"),
    Series("sm_active", "SM active", "%", 1.0),
    Series("mem_used_frac", "mem used", "%", 1.0),
    Series("power_w", "power", "W"),
    Series("temp_c", "temp", "°C"),
    Series("dram_bw_util", "DRAM bw", "%", 1.0),
    Series("est_dram_bps", "est. DRAM", "B/s"),
    Series("util_mem", "mem util", "%", 1.0),
    Series("sm_occupancy", "occupancy", "%", 1.0),
    Series("sm_clock_hz", "SM clock", "Hz"),
    Series("pcie_rx_bps", "PCIe rx", "B/s"),
    Series("pcie_tx_bps", "PCIe tx", "B/s"),
    Series("fp32_active", "FP32", "%", 1.0),
    Series("fp16_active", "FP16", "%", 1.0),
    Series("fp64_active", "FP64", "%", 1.0),
    Series("hmma_active", "HMMA", "%", 1.0),
    Series("dmma_active", "DMMA", "%", 1.0),
    Series("imma_active", "IMMA", "%", 1.0),
)
SERIES_KEYS = tuple(s.key for s in SERIES)
GPM_KEYS = (
    "sm_active",
    "sm_occupancy",
    "tensor_active",
    "fp64_active",
    "fp32_active",
    "fp16_active",
    "dram_bw_util",
    "hmma_active",
    "dmma_active",
    "imma_active",
)
# Estimates from the GPM pipes (hardware/pipes.py), labelled "est." wherever they are shown.
ESTIMATE_KEYS = ("est_flops", "est_dram_bps")


@dataclass(frozen=True)
class ProcessInfo:
    gpu: int
    pid: int
    name: str
    mem_bytes: int | None  # None where NVML cannot say (MIG, Windows WDDM)
    host: str = ""


@dataclass(slots=True)
class GpuSample:
    """One GPU at one moment. ``host`` and ``gpu`` identify it across a recorded job."""

    ts: float  # seconds since the epoch
    host: str
    gpu: int
    name: str
    uuid: str | None = None
    util_gpu: float | None = None  # fraction of time a kernel ran (nvidia-smi "GPU-Util")
    util_mem: float | None = None  # fraction of time device memory was read or written
    mem_used: float | None = None
    mem_total: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    temp_c: float | None = None
    sm_clock_hz: float | None = None
    mem_clock_hz: float | None = None
    pcie_rx_bps: float | None = None
    pcie_tx_bps: float | None = None
    energy_j: float | None = None  # the driver's counter since it loaded
    throttle: str | None = None  # active clock-event reasons, comma separated
    mig_mode: bool | None = None
    mig: str | None = None  # MIG instances, e.g. "3g.40gb, 1g.10gb×4"
    sm_active: float | None = None
    sm_occupancy: float | None = None
    tensor_active: float | None = None
    fp64_active: float | None = None
    fp32_active: float | None = None
    fp16_active: float | None = None
    dram_bw_util: float | None = None
    hmma_active: float | None = None  # tensor pipe, fp16/bf16 (tf32, fp8) matrix ops
    dmma_active: float | None = None  # tensor pipe, fp64 matrix ops
    imma_active: float | None = None  # tensor pipe, int8 matrix ops
    gpm_status: str | None = None  # why GPM activities are missing; None when they are read
    # Estimates, not counts: Σ pipe activity × the pipe's peak at the SM clock; DRAM bw
    # utilisation × the datasheet bandwidth (hardware/pipes.py).
    est_flops: float | None = None  # FLOP/s
    est_dram_bps: float | None = None  # B/s
    est_status: str | None = None  # why the estimates are missing where GPM was read

    @property
    def key(self) -> tuple[str, int]:
        return (self.host, self.gpu)

    @property
    def mem_used_frac(self) -> float | None:
        if self.mem_used is None or not self.mem_total:
            return None
        return self.mem_used / self.mem_total

    def series_values(self) -> tuple[float | None, ...]:
        return tuple(getattr(self, k) for k in SERIES_KEYS)

    def as_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["mem_used_frac"] = self.mem_used_frac
        return out


@dataclass(frozen=True, slots=True)
class NodeStatus:
    """One followed recording as the Monitor lays it out: known before its samples are read (a
    follower of a thousand nodes reads only those on screen) and flagged when it stops growing."""

    node: str  # the recording's path: what FollowSource.watch takes
    host: str  # its samples' host (the file's name until one was read)
    gpus: tuple[int, ...]  # empty until one was read
    last_ts: float | None  # its newest sample read, seconds since the epoch
    grown_at: float | None  # when its files last grew (their mtime)
    stale: bool  # stopped growing for longer than the follower's threshold


@dataclass
class Reading:
    """What one call of a source returned: new samples (one per GPU for a live source; any
    number for a follower catching up) and the processes seen at the newest sample."""

    samples: list[GpuSample] = field(default_factory=list)
    processes: list[ProcessInfo] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. "node03: stale, last sample 40 s ago"
    # A follower's recordings, whenever one of them changed (None: unchanged, or no follower).
    nodes: list[NodeStatus] | None = None
    # Recordings whose samples here are their whole history, not only what is new.
    complete: set[str] = field(default_factory=set)

    def latest(self) -> dict[tuple[str, int], GpuSample]:
        out: dict[tuple[str, int], GpuSample] = {}
        for s in self.samples:
            if s.key not in out or s.ts >= out[s.key].ts:
                out[s.key] = s
        return out
