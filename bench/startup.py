"""Start-up: ``roofscope --help``, a cached ``roofscope report`` and the TUI's first paint, each
in a fresh process, beside the interpreter and import floors, interleaved, printed as a table.

Every case runs ``--runs`` times; the rounds visit the cases in a shuffled order, so that the
machine's drift (other jobs on a shared VM) falls on all of them alike. Medians and p90s.

* ``roofscope --help`` and ``report`` run as the console script does (``from roofscope.cli
  import main``), with ``PYTHONPATH`` set to the tree measured; ``report`` is the bundled sample
  with its cache built beforehand (one cache folder per tree), output to a pipe.
* First paint: ``roofscope open SAMPLE`` on a pseudo-terminal of 160×50, from starting the
  process to the first output in which the Kernels table shows a group row (``batch norm``,
  the second row) — what a user sees, through Textual's real driver. The process is then
  killed. Two cases: a re-open, whose first screen an earlier open kept beside the cache
  (``tui/first_screen.py``; one untimed open that runs until it is kept comes first), and the
  first open after ``report`` built the cache (the kept screens removed before each run).
* Beside them, ``bench/bare_table.py``: a bare Textual app drawing one table with the same
  marker, timed the same way (issue 31: roofscope's first paint within 1.3× of it).
* Each tree's ``src`` is byte-compiled first (``compileall``), as an installed package is.
* For each first-paint case, its ratio to the bare app per round (the two ran near in time),
  as a median and range: the VM's neighbours move single timings by ±20%.

Usage: python3 bench/startup.py [--base OTHER_SRC] [--runs N]
  OTHER_SRC: the ``src`` of another checkout, measured beside this one (``before``), e.g.
  ``git worktree add /tmp/base main`` then ``--base /tmp/base/src``.
"""

from __future__ import annotations

import argparse
import compileall
import fcntl
import os
import platform
import pty
import random
import re
import resource
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HERE = REPO / "src"
SAMPLE = REPO / "sample_reports" / "resnet18_fp32_h100.ncu-raw.csv"
# what the ``roofscope`` console script runs (setuptools' entry point)
ENTRY = "import re, sys; from roofscope.cli import main; sys.exit(main())"
MARKER = b"batch norm"  # the Kernels table's second row: the table is drawn
_ESCAPES = re.compile(rb"\x1b\[[0-9;?$]*[A-Za-z]|\x1b\][^\x07]*\x07")


def _env(src: str | None, cache: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLUMNS", "LINES")}
    if src is not None:
        env["PYTHONPATH"] = src
    if cache is not None:
        env["ROOFSCOPE_CACHE_DIR"] = cache
    return env


def _cpu() -> float:
    """CPU seconds (user + system) of the children waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds from starting the process to its exit (it must succeed), and its CPU seconds."""
    cpu, start = _cpu(), time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{argv}: exit {done.returncode}: {done.stderr.decode()[-400:]}")
    return elapsed, _cpu() - cpu


def kept_screens(cache: str) -> list[Path]:
    return sorted(Path(cache).glob("*.first-screen.json"))


def warm_open(argv: list[str], env: dict[str, str], cache: str, timeout: float = 30.0) -> None:
    """Run ``argv`` (an open) on a pseudo-terminal until its first screen is kept in
    ``cache``, then kill it: the re-opens timed after it find the screen there."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
    proc = subprocess.Popen(
        argv, env={**env, "TERM": "xterm-256color"}, stdin=slave, stdout=slave, stderr=slave
    )
    os.close(slave)
    start = time.perf_counter()
    try:
        while not kept_screens(cache):
            if time.perf_counter() - start > timeout or proc.poll() is not None:
                raise SystemExit(f"{argv}: kept no first screen in {cache} within {timeout} s")
            if select.select([master], [], [], 0.05)[0]:
                os.read(master, 1 << 16)  # drained, so the app never blocks on its writes
    finally:
        proc.kill()
        proc.wait()
        os.close(master)


def without_kept(cache: str, run: Callable[[], tuple[float, float]]) -> tuple[float, float]:
    for kept in kept_screens(cache):
        kept.unlink()
    return run()


def reopen(argv: list[str], env: dict[str, str], cache: str) -> tuple[float, float]:
    """First paint of a re-open: the screen kept by an earlier open (one made first if none)."""
    if not kept_screens(cache):
        warm_open(argv, env, cache)
    return first_paint(argv, env)


def first_paint(argv: list[str], env: dict[str, str], timeout: float = 30.0) -> tuple[float, float]:
    """Seconds from starting ``argv`` on a 160×50 pseudo-terminal to the first output showing
    MARKER (escape sequences removed), and the CPU seconds the process had used when killed
    right after (all its threads, DuckDB's included)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))

    def controlling_tty() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    env = {**env, "TERM": "xterm-256color"}
    cpu, start = _cpu(), time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, stdin=slave, stdout=slave, stderr=slave, preexec_fn=controlling_tty
    )
    os.close(slave)
    seen = b""
    painted = None
    try:
        while time.perf_counter() - start < timeout:
            ready, _, _ = select.select([master], [], [], 0.05)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                seen += os.read(master, 1 << 16)
            except OSError:
                break
            if MARKER in _ESCAPES.sub(b"", seen):
                painted = time.perf_counter() - start
                break
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
    if painted is not None:
        return painted, _cpu() - cpu
    text = _ESCAPES.sub(b"", seen).decode(errors="replace")[-400:]
    raise SystemExit(f"{argv}: no Kernels table within {timeout} s: {text!r}")


Case = tuple[str, str, Callable[[], tuple[float, float]]]


def cases(trees: dict[str, str]) -> list[Case]:
    py = sys.executable
    base = _env(None, None)
    out: list[Case] = [
        ("python3 -c pass", "", lambda: timed([py, "-c", "pass"], base)),
        ("python3 -S -c pass", "", lambda: timed([py, "-S", "-c", "pass"], base)),
        ("import duckdb", "", lambda: timed([py, "-c", "import duckdb"], base)),
        ("import duckdb, pyarrow", "", lambda: timed([py, "-c", "import duckdb, pyarrow"], base)),
        (
            "import duckdb, textual.app",
            "",
            lambda: timed([py, "-c", "import duckdb, textual.app"], base),
        ),
        (  # issue 31's floor: first paint within 1.3× of it
            "bare Textual app, one table: first paint",
            "",
            lambda: first_paint([py, str(REPO / "bench" / "bare_table.py")], base),
        ),
    ]
    for name, src in trees.items():
        cache = tempfile.mkdtemp(prefix=f"roofscope-startup-{name}-")
        env = _env(src, cache)
        report = [py, "-c", ENTRY, "report", str(SAMPLE)]
        timed(report, env)  # builds this tree's cache: every timed run below reads it
        opened = [py, "-c", ENTRY, "open", str(SAMPLE)]
        out += [
            ("roofscope --help", name, lambda e=env: timed([py, "-c", ENTRY, "--help"], e)),
            ("roofscope report (cached)", name, lambda r=report, e=env: timed(r, e)),
            (
                "roofscope open: first paint (cached, no kept screen)",
                name,
                lambda o=opened, e=env, c=cache: without_kept(c, lambda: first_paint(o, e)),
            ),
            (
                "roofscope open: first paint (re-open: screen kept)",
                name,
                lambda o=opened, e=env, c=cache: reopen(o, e, c),
            ),
        ]
    return out


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="src folder of another checkout, measured as 'before'")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    trees = {"before": args.base, "after": str(HERE)} if args.base else {"this": str(HERE)}
    for src in trees.values():
        compileall.compile_dir(src, quiet=1)
    todo = cases(trees)
    wall: dict[int, list[float]] = {i: [] for i in range(len(todo))}
    cpu: dict[int, list[float]] = {i: [] for i in range(len(todo))}
    order = list(range(len(todo)))
    shuffle = random.Random(20).shuffle
    for _ in range(args.runs):
        shuffle(order)
        for i in order:
            w, c = todo[i][2]()
            wall[i].append(w)
            cpu[i].append(c)
    print(
        f"{platform.node()}: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{args.runs} runs each, interleaved; load average at the end "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}\n"
    )
    print("| case | tree | median s | p90 s | CPU s (median) |")
    print("|---|---|---:|---:|---:|")
    for i, (name, tree, _) in enumerate(todo):
        print(
            f"| {name} | {tree} | {statistics.median(wall[i]):.3f} | {p90(wall[i]):.3f} "
            f"| {statistics.median(cpu[i]):.3f} |"
        )
    names = [name for name, _, _ in todo]
    bare = names.index("bare Textual app, one table: first paint")
    for i, (name, tree, _) in enumerate(todo):
        if name.startswith("roofscope open: first paint"):
            # each round ran every case once, near in time: the ratio per round is the
            # comparison least moved by the VM's drift (issue 31's goal: ≤ 1.3×)
            ratios = sorted(w / b for w, b in zip(wall[i], wall[bare], strict=True))
            print(
                f"\n{name} ({tree}) ÷ bare app, per round: median "
                f"{statistics.median(ratios):.2f}×, range {ratios[0]:.2f}–{ratios[-1]:.2f}×"
            )
    floor = statistics.median(wall[0])
    for i, (name, tree, _) in enumerate(todo):
        if name == "roofscope --help":
            own = statistics.median(wall[i]) - floor
            print(f"\nroofscope --help ({tree}) over python3 -c pass: {own:+.3f} s")


if __name__ == "__main__":
    main()
