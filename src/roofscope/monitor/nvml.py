"""The live source: NVML through nvidia-ml-py (``import pynvml``), plus GPM on Hopper and later.

Every field is read on its own and a field NVML does not support stays ``None``, so one missing
counter (a consumer card without PCIe counters, power on a MIG child) never costs the others.
GPM activities are rates between two GPM samples, so the first tick has none; on GPUs without
GPM ``gpm_status`` says so instead of showing zeros.
"""

from __future__ import annotations

import socket
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from roofscope.hardware.specs import match_device_name
from roofscope.monitor.estimate import fill_estimate
from roofscope.monitor.source import GpuSource, MonitorUnavailable
from roofscope.telemetry.sample import GPM_KEYS, GpuSample, ProcessInfo, Reading

# nvmlDeviceGetTotalEnergyConsumption costs ~4 ms of CPU per call on an H100 (bench/nvml_calls.py),
# 80% of a whole sample; MIG mode 0.14 ms. Read them (and the power limit) this often only.
SLOW_FIELDS_EVERY_S = 10.0
GPM_NOT_SUPPORTED = "GPM not supported on this GPU (Hopper and later have it)"
_UNAVAILABLE_HINT = (
    "run on a node with an NVIDIA GPU and driver, or watch recordings with "
    "roofscope monitor --follow 'node*.parquet'"
)
# GPM metric id (nvmlGpmMetricId_t) → GpuSample field; NVML reports percentages.
_GPM_METRICS = {
    2: "sm_active",  # NVML_GPM_METRIC_SM_UTIL: fraction of SMs busy
    3: "sm_occupancy",
    5: "tensor_active",  # NVML_GPM_METRIC_ANY_TENSOR_UTIL
    6: "dmma_active",  # NVML_GPM_METRIC_DFMA_TENSOR_UTIL (fp64 tensor, the older id)
    7: "hmma_active",  # NVML_GPM_METRIC_HMMA_TENSOR_UTIL
    8: "dmma_active",  # NVML_GPM_METRIC_DMMA_TENSOR_UTIL: wins over 6 where the driver has it
    9: "imma_active",  # NVML_GPM_METRIC_IMMA_TENSOR_UTIL
    10: "dram_bw_util",
    11: "fp64_active",
    12: "fp32_active",
    13: "fp16_active",
    20: "pcie_tx_bps",  # MiB/s
    21: "pcie_rx_bps",
}
assert set(_GPM_METRICS.values()) >= set(GPM_KEYS)
# The ids every GPM driver knows: asked alone where a driver refuses the whole request for an
# id it does not know (the per-pipe tensor ids came later than the others).
_GPM_BASE = (2, 3, 5, 10, 11, 12, 13, 20, 21)
_THROTTLE = {
    0x1: "idle",
    0x2: "app clocks",
    0x4: "sw power cap",
    0x8: "hw slowdown",
    0x10: "sync boost",
    0x20: "sw thermal",
    0x40: "hw thermal",
    0x80: "power brake",
}


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _mig_summary(names: list[str]) -> str:
    """ "NVIDIA H100 80GB HBM3 MIG 1g.10gb" ×4 → "1g.10gb×4"."""
    counts = Counter(n.split(" MIG ")[-1] for n in names)
    return ", ".join(p if c == 1 else f"{p}×{c}" for p, c in sorted(counts.items()))


class NvmlSource:
    """Every GPU NVML can see on this host. Raises MonitorUnavailable when NVML cannot start."""

    live = True

    def __init__(self, gpm: bool = True, clock: Callable[[], float] = time.time):
        try:
            import pynvml
        except ImportError as exc:  # pragma: no cover - nvidia-ml-py is a dependency
            raise MonitorUnavailable(
                "nvidia-ml-py is not installed", hint="pip install nvidia-ml-py"
            ) from exc
        self.nv = pynvml
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError as exc:
            raise MonitorUnavailable(
                f"NVML unavailable: {_text(exc)}", hint=_UNAVAILABLE_HINT
            ) from exc
        self.clock = clock
        self.host = socket.gethostname().split(".")[0]
        self.label = f"NVML · {self.host}"
        self.handles = [
            pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())
        ]
        if not self.handles:
            self.close()
            raise MonitorUnavailable("NVML sees no GPU on this host", hint=_UNAVAILABLE_HINT)
        self.names = [_text(pynvml.nvmlDeviceGetName(h)) for h in self.handles]
        self.uuids = [self._get(pynvml.nvmlDeviceGetUUID, h) for h in self.handles]
        self.specs = [match_device_name(n) for n in self.names]  # peaks for the estimates
        self._gpm_ids: tuple[int, ...] = tuple(_GPM_METRICS)
        self.gpm_status: list[str | None] = [
            self._gpm_support(h) if gpm else "GPM off" for h in self.handles
        ]
        self._gpm_prev: list[Any] = [None] * len(self.handles)
        self._gpm_bufs: list[list[Any]] = [[] for _ in self.handles]
        self._process_names: dict[int, str] = {}
        self._slow: list[dict[str, Any]] = [{} for _ in self.handles]
        self._slow_at: list[float] = [-1e18] * len(self.handles)

    # -- helpers -----------------------------------------------------------------------------
    def _get(self, fn: Callable[..., Any], *args: Any) -> Any:
        """One NVML call; None when the GPU or driver does not support it."""
        try:
            return fn(*args)
        except self.nv.NVMLError:
            return None

    def _gpm_support(self, handle: Any) -> str | None:
        support = self._get(self.nv.nvmlGpmQueryDeviceSupport, handle)
        if support is None or not support.isSupportedDevice:
            return GPM_NOT_SUPPORTED
        return None

    def _gpm(self, index: int, handle: Any, sample: GpuSample) -> None:
        nv = self.nv
        if self.gpm_status[index] is not None and self.gpm_status[index] != "warming up":
            sample.gpm_status = self.gpm_status[index]
            return
        try:
            # Two buffers per GPU, used in turn: no allocation per tick.
            if not self._gpm_bufs[index]:
                self._gpm_bufs[index] = [nv.nvmlGpmSampleAlloc(), nv.nvmlGpmSampleAlloc()]
            current = self._gpm_bufs[index][0]
            nv.nvmlGpmSampleGet(handle, current)
        except nv.NVMLError as exc:
            self.gpm_status[index] = f"GPM unavailable: {_text(exc)}"
            sample.gpm_status = self.gpm_status[index]
            return
        previous, self._gpm_prev[index] = self._gpm_prev[index], current
        self._gpm_bufs[index].reverse()
        if previous is None:
            self.gpm_status[index] = sample.gpm_status = "warming up"  # a rate needs two samples
            return
        self.gpm_status[index] = None
        try:
            request = self._gpm_request(previous, current)
        except nv.NVMLError as exc:
            sample.gpm_status = f"GPM read failed: {_text(exc)}"
            return
        for slot, metric_id in enumerate(self._gpm_ids):
            metric = request.metrics[slot]
            if metric.nvmlReturn != 0:
                continue
            field, value = _GPM_METRICS[metric_id], float(metric.value)
            if field.startswith("pcie_"):
                setattr(sample, field, value * 1024 * 1024)
            else:
                setattr(sample, field, value / 100.0)

    def _gpm_request(self, previous: Any, current: Any) -> Any:
        """One nvmlGpmMetricsGet of every id; once with the base ids alone if a driver refuses
        the whole request (those drivers then never get the per-pipe ids again)."""
        nv = self.nv
        while True:
            request = nv.c_nvmlGpmMetricsGet_t()
            request.version = nv.NVML_GPM_METRICS_GET_VERSION
            request.numMetrics = len(self._gpm_ids)
            request.sample1, request.sample2 = previous, current
            for slot, metric_id in enumerate(self._gpm_ids):
                request.metrics[slot].metricId = metric_id
            try:
                nv.nvmlGpmMetricsGet(request)
                return request
            except nv.NVMLError:
                if self._gpm_ids == _GPM_BASE:
                    raise
                self._gpm_ids = _GPM_BASE

    def _processes(self, index: int, handle: Any) -> list[ProcessInfo]:
        nv = self.nv
        seen: dict[int, ProcessInfo] = {}
        for fn in (
            nv.nvmlDeviceGetComputeRunningProcesses,
            nv.nvmlDeviceGetGraphicsRunningProcesses,
        ):
            for proc in self._get(fn, handle) or []:
                used = getattr(proc, "usedGpuMemory", None)
                seen[proc.pid] = ProcessInfo(
                    index, proc.pid, self._process_name(proc.pid), used, self.host
                )
        return list(seen.values())

    def _process_name(self, pid: int) -> str:
        if pid not in self._process_names:
            name = self._get(self.nv.nvmlSystemGetProcessName, pid)
            if not name:
                try:
                    with open(f"/proc/{pid}/comm") as fh:
                        name = fh.read().strip()
                except OSError:
                    name = "?"  # another container's PID namespace
            self._process_names[pid] = _text(name).rsplit("/", 1)[-1]
        return self._process_names[pid]

    # -- the protocol --------------------------------------------------------------------------
    def read(self) -> Reading:
        nv = self.nv
        reading = Reading()
        now = self.clock()
        for i, handle in enumerate(self.handles):
            s = GpuSample(ts=now, host=self.host, gpu=i, name=self.names[i], uuid=self.uuids[i])
            util = self._get(nv.nvmlDeviceGetUtilizationRates, handle)
            if util is not None:
                s.util_gpu, s.util_mem = util.gpu / 100.0, util.memory / 100.0
            mem = self._get(nv.nvmlDeviceGetMemoryInfo, handle)
            if mem is not None:
                s.mem_used, s.mem_total = float(mem.used), float(mem.total)
            power = self._get(nv.nvmlDeviceGetPowerUsage, handle)
            s.power_w = None if power is None else power / 1000.0
            s.temp_c = self._get(nv.nvmlDeviceGetTemperature, handle, nv.NVML_TEMPERATURE_GPU)
            for attr, clock in (
                ("sm_clock_hz", nv.NVML_CLOCK_SM),
                ("mem_clock_hz", nv.NVML_CLOCK_MEM),
            ):
                mhz = self._get(nv.nvmlDeviceGetClockInfo, handle, clock)
                setattr(s, attr, None if mhz is None else mhz * 1e6)
            self._slow_fields(i, handle, s, now)
            reasons = self._get(nv.nvmlDeviceGetCurrentClocksEventReasons, handle)
            if reasons is not None:
                s.throttle = ", ".join(n for bit, n in _THROTTLE.items() if reasons & bit) or None
            self._gpm(i, handle, s)
            if s.pcie_rx_bps is None and self.gpm_status[i] == GPM_NOT_SUPPORTED:
                # Without GPM: NVML's 20 ms PCIe counters, in KB/s.
                for attr, counter in (
                    ("pcie_tx_bps", nv.NVML_PCIE_UTIL_TX_BYTES),
                    ("pcie_rx_bps", nv.NVML_PCIE_UTIL_RX_BYTES),
                ):
                    kbps = self._get(nv.nvmlDeviceGetPcieThroughput, handle, counter)
                    setattr(s, attr, None if kbps is None else kbps * 1000.0)
            fill_estimate(s, self.specs[i])
            reading.samples.append(s)
            reading.processes += self._processes(i, handle)
        return reading

    def _slow_fields(self, index: int, handle: Any, s: GpuSample, now: float) -> None:
        """Energy counter (only on the samples that read it), MIG and power limit (carried
        forward between reads)."""
        nv = self.nv
        slow = self._slow[index]
        if now - self._slow_at[index] >= SLOW_FIELDS_EVERY_S:
            self._slow_at[index] = now
            energy = self._get(nv.nvmlDeviceGetTotalEnergyConsumption, handle)
            s.energy_j = None if energy is None else energy / 1000.0
            limit = self._get(nv.nvmlDeviceGetEnforcedPowerLimit, handle)
            slow["power_limit_w"] = None if limit is None else limit / 1000.0
            self._mig(handle, s)
            slow["mig_mode"], slow["mig"] = s.mig_mode, s.mig
        s.power_limit_w = slow.get("power_limit_w")
        s.mig_mode, s.mig = slow.get("mig_mode"), slow.get("mig")

    def _mig(self, handle: Any, s: GpuSample) -> None:
        nv = self.nv
        mode = self._get(nv.nvmlDeviceGetMigMode, handle)
        s.mig_mode = None if mode is None else bool(mode[0])
        if not s.mig_mode:
            return
        names = []
        for j in range(self._get(nv.nvmlDeviceGetMaxMigDeviceCount, handle) or 0):
            child = self._get(nv.nvmlDeviceGetMigDeviceHandleByIndex, handle, j)
            if child is not None:
                names.append(_text(self._get(nv.nvmlDeviceGetName, child) or "MIG ?"))
        s.mig = _mig_summary(names) if names else "no instances"

    def close(self) -> None:
        for buffers in self._gpm_bufs:
            for sample in buffers:
                self._get(self.nv.nvmlGpmSampleFree, sample)
        self._gpm_bufs = [[] for _ in self._gpm_bufs]
        self._gpm_prev = [None] * len(self._gpm_prev)
        self._get(self.nv.nvmlShutdown)


def read_settled(source: GpuSource) -> Reading:
    """One reading of every GPU; a live source is read twice 0.2 s apart, because GPM
    activities are rates and only a second sample has them."""
    reading = source.read()
    if source.live:
        time.sleep(0.2)
        reading = source.read()
    return reading
