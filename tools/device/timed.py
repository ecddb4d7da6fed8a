"""Run a command; print its wall time and its peak memory (RSS of the largest child), in one
line to stderr: ``python3 tools/device/timed.py CMD…`` (GNU time is not on the GPU machine)."""

import resource
import subprocess
import sys
import time

start = time.perf_counter()
code = subprocess.call(sys.argv[1:])
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"timed: {wall:.2f} s, peak {peak:.0f} MiB, exit {code}", file=sys.stderr)
sys.exit(code)
