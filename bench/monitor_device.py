"""The Monitor's evidence run on a GPU machine: a recorder at 1 Hz and one at 10 Hz, and the
TUI at 1 Hz and 10 Hz (headless), all on the real NVML source, while ``gpu_load.py`` runs a
known load; then the monitor's own CPU cost per process, a follower reading the recording while
it grows, ``monitor --once`` beside ``nvidia-smi``, a recorder killed with SIGKILL (its
flushed parts must still read), and the recording's summary.

    python3 bench/monitor_device.py OUTDIR
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
RS = [sys.executable, "-m", "roofscope.cli"]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def run(cmd: list[str], out: Path | None = None) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    text = done.stdout + done.stderr
    if out is not None:
        out.write_text(text)
    return f"$ {' '.join(cmd)}  (exit {done.returncode})\n{text}"


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    log = []
    recording = out / (sys.argv[2] if len(sys.argv) > 2 else "h100_matmul.parquet")
    procs = {
        "record 1 Hz": [*RS, "record", "--out", str(recording), "--interval", "1", "--flush", "5"],
        "record 10 Hz": [*RS, "record", "--out", "/tmp/rec10.parquet", "--interval", "0.1"],
        "monitor TUI 1 Hz": [
            sys.executable,
            "bench/monitor_tui_probe.py",
            "80",
            str(out / "monitor_tui.svg"),
            "1",
        ],
        "monitor TUI 10 Hz": [
            sys.executable,
            "bench/monitor_tui_probe.py",
            "80",
            "/tmp/tui10.svg",
            "0.1",
        ],
    }
    running = {
        name: subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        for name, cmd in procs.items()
    }
    time.sleep(3)
    load = subprocess.Popen(
        [sys.executable, "bench/gpu_load.py", "--idle", "10", "--bf16", "30", "--fp32", "15"],
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(12)  # imports and NVML init are over: measure the steady state from here
    t0 = time.monotonic()
    c0 = {name: cpu_seconds(p.pid) for name, p in running.items()}
    time.sleep(15)  # inside the bf16 phase
    log.append(
        run(
            [
                "nvidia-smi",
                "--query-gpu=utilization.gpu,utilization.memory,memory.used,power.draw,temperature.gpu,clocks.sm",
                "--format=csv",
            ]
        )
    )
    log.append(run([*RS, "monitor", "--once", "--format", "json"], out / "once_bf16.json"))
    log.append(run([*RS, "monitor", "--follow", str(out / "*.parquet"), "--once"]))
    killed = subprocess.Popen(
        [*RS, "record", "--out", "/tmp/killed.parquet", "--flush", "2"], stderr=subprocess.DEVNULL
    )
    time.sleep(20)
    killed.kill()  # SIGKILL: no flush, no handler — what a node crash looks like
    killed.wait()
    log.append(run([*RS, "record", "--summary", "/tmp/killed.parquet"]))
    log.append(run(["ls", "-la", "/tmp/killed.parquet"]))
    time.sleep(13)
    t1 = time.monotonic()
    c1 = {name: cpu_seconds(p.pid) for name, p in running.items()}
    phases = json.loads(load.communicate()[0])
    for name in ("record 1 Hz", "record 10 Hz"):
        running[name].send_signal(signal.SIGTERM)
    for name, p in running.items():
        try:
            err = p.communicate(timeout=60)[1]
        except subprocess.TimeoutExpired:
            p.kill()
            err = "killed"
        log.append(f"{name}: exit {p.returncode}\n{err}")
    cost = {
        name: {
            "cpu_s": c1[name] - c0[name],
            "wall_s": t1 - t0,
            "core_pct": 100 * (c1[name] - c0[name]) / (t1 - t0),
        }
        for name in running
    }
    log.append(
        run([*RS, "record", "--summary", str(recording), "--format", "md"], out / "summary.md")
    )
    log.append(run([*RS, "record", "--summary", "/tmp/rec10.parquet"]))
    (out / "cpu.json").write_text(json.dumps({"cost": cost, "phases": phases}, indent=2))
    print("\n".join(log))
    print(f"{'process':<20}{'CPU s':>8}{'wall s':>8}{'% of a core':>13}")
    for name, c in cost.items():
        print(f"{name:<20}{c['cpu_s']:>8.2f}{c['wall_s']:>8.1f}{c['core_pct']:>13.2f}")
    print(json.dumps(phases))


if __name__ == "__main__":
    main()
