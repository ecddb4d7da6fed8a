"""Progress of a profiling run, read from ncu's ``==PROF==`` lines and the step's markers.

ncu prints ``==PROF== Profiling "NAME" - 12: 0%....50%....100% - 17 passes`` per kernel
(``- 12 (13/40):`` under ``--launch-count 40``), the dots as the replay passes go (so a line is
often incomplete when read); ``==ERROR==`` and ``==WARNING==`` lines say what went wrong. The
ETA needs the number of kernels the step launches, which ``--count-kernels`` measures
beforehand (or ``--launch-count`` caps).
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass, field

from roofscope.profiling import markers

_PROFILING = re.compile(
    r'^==PROF== Profiling "(?P<name>.*)" - (?P<index>\d+)(?: \(\d+/\d+\))?: '
    r"(?P<bar>[0-9%.]*)"
    r"(?: - (?P<passes>\d+) pass(?:es)?)?"
)
_REPORT = re.compile(r"^==PROF== Report: (?P<path>.+)$")
PERMISSION = "ERR_NVGPUCTRPERM"


@dataclass
class Progress:
    """Everything the CLI line and the Runs pane show while a run goes."""

    expected: int | None = None
    done: int = 0
    current: str | None = None
    index: int | None = None
    percent: int = 0
    passes: int | None = None
    phase: str | None = None
    phases: list[list] = field(default_factory=list)  # [phase, first index, last index]
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)  # step markers: step_time_s, device…
    report: str | None = None
    started: float = field(default_factory=time.monotonic)
    first_kernel_at: float | None = None

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def eta(self, now: float | None = None) -> float | None:
        """Seconds left: kernels still to profile × mean seconds per profiled kernel."""
        if not self.expected or not self.done or self.first_kernel_at is None:
            return None
        now = time.monotonic() if now is None else now
        per_kernel = (now - self.first_kernel_at) / self.done
        return max(0.0, (self.expected - self.done - self.percent / 100) * per_kernel)

    @property
    def fraction(self) -> float | None:
        if not self.expected:
            return None
        return min(1.0, (self.done + self.percent / 100) / self.expected)

    def permission_denied(self) -> bool:
        return any(PERMISSION in e for e in self.errors)

    def feed(self, line: str, complete: bool = True) -> None:
        """One line of merged output (``complete=False``: the unfinished tail so far)."""
        line = line.rstrip("\r\n")
        m = _PROFILING.match(line)
        if m:
            self._kernel(m, complete)
            return
        if not complete:
            return
        mark = markers.parse(line)
        if mark:
            self._marker(*mark)
        elif line.startswith("==ERROR=="):
            self.errors.append(line[len("==ERROR==") :].strip())
        elif line.startswith("==WARNING=="):
            self.warnings.append(line[len("==WARNING==") :].strip())
        elif r := _REPORT.match(line):
            self.report = r.group("path").strip()

    def _kernel(self, m: re.Match, complete: bool) -> None:
        if self.first_kernel_at is None:
            self.first_kernel_at = time.monotonic()
        self.current, self.index = m.group("name"), int(m.group("index"))
        steps = re.findall(r"(\d+)%", m.group("bar"))
        self.percent = int(steps[-1]) if steps else 0
        if self.phases and self.phases[-1][1] is None:
            self.phases[-1][1] = self.index
        if self.phases:
            self.phases[-1][2] = self.index
        if m.group("passes") is not None and complete:
            self.passes = int(m.group("passes"))
            self.done += 1
            self.percent = 0

    def _marker(self, key: str, value: str) -> None:
        if key == "phase":
            self.phase = value
            self.phases.append([value, None, None])
        elif key == "kernels":
            with contextlib.suppress(ValueError):
                self.expected = int(value)
        else:
            self.facts[key] = value

    def phase_ranges(self) -> list[tuple[str, int, int]]:
        """(phase, first kernel index, last) for phases that launched kernels."""
        return [(p, a, b) for p, a, b in self.phases if a is not None]


class LineSplitter:
    """Bytes in, complete lines out, plus the unfinished tail (ncu's progress dots)."""

    def __init__(self) -> None:
        self.buffer = ""

    def feed(self, chunk: bytes) -> list[str]:
        self.buffer += chunk.decode("utf-8", errors="replace")
        *lines, self.buffer = re.split(r"\r?\n", self.buffer)
        return lines
