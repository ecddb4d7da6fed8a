#!/usr/bin/env python3
"""A stand-in for ncu in tests: it runs the real step (on CPU), prints the ``==PROF==`` lines of
a real H100 run (tests/data/ncu_stdout_resnet18_h100.log) spread over the step's phases, with
the progress dots written in pieces as ncu does, and ``--import`` prints a real exported CSV.

Knobs (environment): FAKE_NCU_FAIL=permission|crash, FAKE_NCU_DELAY (seconds per kernel),
FAKE_NCU_CSV (the CSV ``--import --page raw`` prints), FAKE_NCU_DETAILS (``--page details``;
"fail" exits 1).
"""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOG = HERE / "ncu_stdout_resnet18_h100.log"
SAMPLES = HERE.parents[1] / "sample_reports"
CSV = Path(os.environ.get("FAKE_NCU_CSV", SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"))
DETAILS = os.environ.get("FAKE_NCU_DETAILS", str(SAMPLES / "resnet18_fp32_h100.ncu-details.csv"))


def out(text: str, end: str = "\n") -> None:
    sys.stdout.write(text + end)
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    if "--version" in argv:
        out("NVIDIA (R) Nsight Compute Command Line Profiler")
        out("Version 2025.3.1.0 (build 36398880) (public-release)")
        return 0
    if "--import" in argv:
        if argv[argv.index("--page") + 1] == "details":
            if DETAILS == "fail":
                sys.stderr.write("==ERROR== could not export the details page\n")
                return 1
            sys.stdout.write(Path(DETAILS).read_text())
            return 0
        sys.stdout.write(CSV.read_text())
        return 0
    report = Path(argv[argv.index("--export") + 1] + ".ncu-rep")
    step = argv[argv.index("roofscope.profiling.step") - 2 :]  # PYTHON -m roofscope.profiling.step
    kernels = [ln for ln in LOG.read_text().splitlines() if ln.startswith("==PROF== Profiling")]
    out("==PROF== Connected to process 4242 (" + step[0] + ")")
    if os.environ.get("FAKE_NCU_FAIL") == "permission":
        out(
            "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
            "Performance Counters on the target device 0."
        )
        return 1
    child = subprocess.Popen(step, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    delay = float(os.environ.get("FAKE_NCU_DELAY", "0"))
    shares = {"forward": 0.3, "backward": 0.69, "optimizer": 1.0}
    sent = 0
    for line in child.stdout:
        out(line.rstrip("\n"))
        m = re.match(r"==ROOFSCOPE== phase (\w+)", line)
        if not m:
            continue
        upto = int(len(kernels) * shares.get(m.group(1), 1.0))
        for k in kernels[sent:upto]:
            head, _, tail = k.partition("0%")
            out(head + "0%....50%", end="")  # ncu writes the dots as replay passes go
            time.sleep(delay)
            out("....100%" + tail.split("100%", 1)[1])
        sent = upto
        if os.environ.get("FAKE_NCU_FAIL") == "crash" and m.group(1) == "backward":
            out("==ERROR== The application returned an error code (11).")
            child.kill()
            return 11
    code = child.wait()
    out("==PROF== Disconnected from process 4242")
    report.write_bytes(b"NCU-REP stand-in")
    out(f"==PROF== Report: {report}")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
