"""CPU cost of the Monitor TUI per sampling rate, without a GPU: the app runs headless on the
synthetic source of the tests (same protocol as NVML) for a while, and its process CPU time is
read from /proc. ``--idle`` runs the same app with sampling stopped, the baseline of Textual
itself. The real-NVML numbers come from bench/monitor_device.py on the GPU machine.

    python3 bench/monitor_cpu.py --seconds 30
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
CHILD = """
import sys
sys.path.insert(0, "tests")
from gpu_fakes import SyntheticSource
from roofscope.tui.monitor_app import MonitorApp
interval, gpus, seconds = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
source = SyntheticSource(gpus=gpus, step=interval)
app = MonitorApp(lambda: source, interval=interval if interval > 0 else 1.0, autostart=interval > 0)
app.call_later(lambda: app.set_timer(seconds, app.exit))
app.run(headless=True, size=(100, 32))
"""


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def measure(interval: float, gpus: int, seconds: float) -> float:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(interval), str(gpus), str(seconds + 8)]
    )
    time.sleep(5)  # past imports and the first paint
    c0, t0 = cpu_seconds(proc.pid), time.monotonic()
    time.sleep(seconds)
    c1, t1 = cpu_seconds(proc.pid), time.monotonic()
    proc.wait()
    return 100 * (c1 - c0) / (t1 - t0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--gpus", type=int, default=1)
    args = parser.parse_args()
    print(f"{'sampling':<12}{'GPUs':>6}{'% of a core':>14}")
    for interval in (0.0, 1.0, 0.1):
        pct = measure(interval, args.gpus, args.seconds)
        label = "idle" if interval == 0 else f"{1 / interval:g} Hz"
        print(f"{label:<12}{args.gpus:>6}{pct:>14.2f}", flush=True)


if __name__ == "__main__":
    main()
