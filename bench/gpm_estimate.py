"""Validate the Monitor's live estimates (hardware/pipes.py) against a known load.

Samples this machine's GPU 0 through roofscope's NVML source every 0.5 s while
``gpu_load.py`` runs bf16 matmuls, fp32 matmuls (TF32 off) and DRAM-bound copies, writes the
samples as a recording, then compares each phase's mean estimate with the rate torch achieved:
est. FLOP/s against the matmuls' 2·n³·count / time, est. DRAM B/s against the copies' bytes read
and written / time (a matmul's DRAM traffic is not known to torch: only its floor, 3·n² elements
per product, is printed). The edges of each phase (2 s in, 1 s out) are left out.

    python3 bench/gpm_estimate.py OUTDIR
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from roofscope.monitor.nvml import NvmlSource
from roofscope.telemetry.recording import RecordingWriter

N = 8192
FIELDS = (
    "est_flops",
    "est_dram_bps",
    "hmma_active",
    "dmma_active",
    "imma_active",
    "tensor_active",
    "fp32_active",
    "fp16_active",
    "fp64_active",
    "dram_bw_util",
    "sm_active",
    "sm_clock_hz",
    "power_w",
)


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    source = NvmlSource()
    writer = RecordingWriter(out / "gpm_estimate.parquet")
    load = subprocess.Popen(
        [sys.executable, "bench/gpu_load.py", "--idle", "6", "--bf16", "25", "--fp32", "20",
         "--copy", "15"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    samples = []
    while load.poll() is None:
        reading = source.read()
        writer.add(reading)
        samples += [s for s in reading.samples if s.gpu == 0]
        time.sleep(0.5)
    writer.flush()
    source.close()
    phases = json.loads(load.stdout.read().strip().splitlines()[-1])
    edges = {
        "bf16": (phases["bf16_start"], phases["fp32_start"], phases["bf16_flop_per_s"], None),
        "fp32": (phases["fp32_start"], phases["copy_start"], phases["fp32_flop_per_s"], None),
        "copy": (phases["copy_start"], phases["idle_start"], None, phases["copy_bytes_per_s"]),
        "idle": (phases["idle_start"], phases["end"], 0.0, None),
    }
    floor_bytes = {"bf16": 3 * N * N * 2, "fp32": 3 * N * N * 4}
    report = {"device": samples[0].name if samples else None, "phases": {}}
    for name, (start, end, flops, bps) in edges.items():
        inside = [s for s in samples if start + 2.0 <= s.ts <= end - 1.0]
        means = {f: _mean([getattr(s, f) for s in inside]) for f in FIELDS}
        row = {"samples": len(inside), "achieved_flop_per_s": flops, "achieved_bytes_per_s": bps}
        row.update(means)
        if flops and means["est_flops"] is not None:
            row["flops_error"] = means["est_flops"] / flops - 1.0
        if bps and means["est_dram_bps"] is not None:
            row["dram_error"] = means["est_dram_bps"] / bps - 1.0
        if name in floor_bytes and flops:
            row["dram_floor_bytes_per_s"] = floor_bytes[name] * flops / (2.0 * N**3)
        row["est_status"] = sorted({s.est_status for s in inside if s.est_status})
        row["gpm_status"] = sorted({s.gpm_status for s in inside if s.gpm_status})
        report["phases"][name] = row
    (out / "gpm_estimate.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    for name, row in report["phases"].items():
        print(
            f"{name:5} n={row['samples']:3} est {row['est_flops'] or 0:.4g} FLOP/s vs "
            f"{row['achieved_flop_per_s'] or 0:.4g} ({row.get('flops_error', float('nan')):+.1%}); "
            f"est DRAM {row['est_dram_bps'] or 0:.4g} B/s vs "
            f"{row['achieved_bytes_per_s'] or 0:.4g} "
            f"({row.get('dram_error', float('nan')):+.1%}); HMMA {row['hmma_active']}, "
            f"FP32 {row['fp32_active']}, DRAM {row['dram_bw_util']}, clock {row['sm_clock_hz']}"
        )


if __name__ == "__main__":
    main()
