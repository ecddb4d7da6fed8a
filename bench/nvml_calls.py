"""Cost of one NVML(+GPM) call of each kind on this machine's GPU 0, and of one whole
NvmlSource.read(): where the Monitor's per-tick CPU goes.

    python3 bench/nvml_calls.py
"""

from __future__ import annotations

import contextlib
import resource
import time

import pynvml as nv

from roofscope.monitor.nvml import NvmlSource

N = 300


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(label: str, fn, *args) -> None:
    w0, c0 = time.perf_counter(), cpu()
    for _ in range(N):
        with contextlib.suppress(nv.NVMLError):
            fn(*args)
    w1, c1 = time.perf_counter(), cpu()
    print(f"{label:<42}{1e6 * (w1 - w0) / N:>10.1f}{1e6 * (c1 - c0) / N:>10.1f}")


def main() -> None:
    source = NvmlSource()
    h = source.handles[0]
    print(f"{'call':<42}{'wall µs':>10}{'CPU µs':>10}")
    timed("NvmlSource.read() (everything, 1 GPU)", source.read)
    timed("nvmlDeviceGetUtilizationRates", nv.nvmlDeviceGetUtilizationRates, h)
    timed("nvmlDeviceGetMemoryInfo", nv.nvmlDeviceGetMemoryInfo, h)
    timed("nvmlDeviceGetPowerUsage", nv.nvmlDeviceGetPowerUsage, h)
    timed("nvmlDeviceGetEnforcedPowerLimit", nv.nvmlDeviceGetEnforcedPowerLimit, h)
    timed("nvmlDeviceGetTemperature", nv.nvmlDeviceGetTemperature, h, 0)
    timed("nvmlDeviceGetClockInfo (SM)", nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_SM)
    timed("nvmlDeviceGetTotalEnergyConsumption", nv.nvmlDeviceGetTotalEnergyConsumption, h)
    timed("nvmlDeviceGetCurrentClocksEventReasons", nv.nvmlDeviceGetCurrentClocksEventReasons, h)
    timed("nvmlDeviceGetMigMode", nv.nvmlDeviceGetMigMode, h)
    timed("nvmlDeviceGetComputeRunningProcesses", nv.nvmlDeviceGetComputeRunningProcesses, h)
    timed("nvmlDeviceGetGraphicsRunningProcesses", nv.nvmlDeviceGetGraphicsRunningProcesses, h)
    sample = nv.nvmlGpmSampleAlloc()
    timed("nvmlGpmSampleGet", nv.nvmlGpmSampleGet, h, sample)
    timed("nvmlDeviceGetPcieThroughput (TX)", nv.nvmlDeviceGetPcieThroughput, h, 0)
    nv.nvmlGpmSampleFree(sample)
    source.close()


if __name__ == "__main__":
    main()
