"""The exact commands of a run: the step, ncu (or nsys) around it, and the export.

Argument lists only (``subprocess`` never gets a shell), so nothing a user types — a kernel
regex, a model name — is ever interpreted by a shell.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import sys
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from roofscope.errors import RoofscopeError
from roofscope.profiling.catalog import check_channels_last, check_size, model_info
from roofscope.profiling.presets import preset

PRECISIONS = ("fp32", "tf32", "bf16", "fp16")
MODES = ("train", "infer")
CLOCK_CONTROL = ("base", "none")
REPORT = "report"  # ncu writes report.ncu-rep, nsys report.nsys-rep
# With torch.compile, Inductor compiles in a pool of worker processes; ncu follows child
# processes by default and the run crashes (seen on the H100, issue 18). One compile thread
# keeps Inductor in the step's own process, and ncu profiles only the step it launched.
COMPILE_ENV = {"TORCHINDUCTOR_COMPILE_THREADS": "1"}
COMPILE_NCU_ARGS = ("--target-processes", "application-only")
_TOOL_ENV = {"ncu": "ROOFSCOPE_NCU", "nsys": "ROOFSCOPE_NSYS"}
_TOOL_GLOBS = {
    "ncu": (
        "/usr/local/cuda/bin/ncu",
        "/opt/nvidia/nsight-compute/*/ncu",
        "/usr/local/cuda-*/bin/ncu",
    ),
    "nsys": (
        "/usr/local/cuda/bin/nsys",
        "/opt/nvidia/nsight-systems/*/bin/nsys",
        "/usr/local/cuda-*/bin/nsys",
    ),
}


@dataclass(frozen=True)
class RunSpec:
    """What the user chose: model × precision × batch × preset, and ncu's options."""

    model: str
    batch: int | None = None
    precision: str = "fp32"
    mode: str = "train"
    preset: str = "roofline"
    optimizer: str = "sgd"
    image_size: int | None = None
    seq_len: int | None = None
    warmup: int = 2
    steps: int = 1
    clock_control: str | None = None
    launch_skip: int | None = None
    launch_count: int | None = None
    kernel_regex: str | None = None
    compile: bool = False  # torch.compile the model (Inductor); compiled in the warm-up
    channels_last: bool = False  # model and images in torch.channels_last (NHWC) memory format

    def __post_init__(self) -> None:
        info = model_info(self.model)
        if self.batch is None:
            object.__setattr__(self, "batch", info.default_batch)
        preset(self.preset)
        check_size(self.model, self.image_size, self.seq_len)
        _choice("precision", self.precision, PRECISIONS)
        _choice("mode", self.mode, MODES)
        _choice("optimizer", self.optimizer, ("sgd", "adam"))
        if self.clock_control is not None:
            _choice("clock control", self.clock_control, CLOCK_CONTROL)
        for name, value, low in (
            ("batch", self.batch, 1),
            ("warmup", self.warmup, 1),
            ("steps", self.steps, 1),
            ("launch skip", self.launch_skip, 0),
            ("launch count", self.launch_count, 1),
        ):
            if value is not None and value < low:
                raise RoofscopeError(f"{name} must be at least {low}, not {value}")
        for name, flag in (("compile", self.compile), ("channels_last", self.channels_last)):
            if not isinstance(flag, bool):  # a hand-edited run.json
                raise RoofscopeError(f"{name} must be true or false, not {flag!r}")
        if self.channels_last:
            check_channels_last(self.model)
        if self.kernel_regex is not None:
            try:
                re.compile(self.kernel_regex)
            except re.error as exc:
                raise RoofscopeError(
                    f"kernel regex {self.kernel_regex!r} does not compile: {exc}",
                    hint="e.g. --kernel-regex 'gemm|conv'",
                ) from None

    @property
    def slug(self) -> str:
        """File-name settings that ``roofscope scaling`` reads back (``…_bf16_b64…``), then
        ``_infer``, ``_cl`` (channels_last) and ``_compile`` when they apply."""
        mode = "" if self.mode == "train" else f"_{self.mode}"
        layout = "_cl" if self.channels_last else ""
        compiled = "_compile" if self.compile else ""
        return f"{self.model}_{self.precision}_b{self.batch}{mode}{layout}{compiled}"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> RunSpec:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})  # type: ignore[arg-type]


def _choice(what: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise RoofscopeError(
            f"unknown {what} {value!r}", hint=f"choose one of {', '.join(allowed)}"
        )


def find_tool(name: str) -> str | None:
    """``$ROOFSCOPE_NCU``/``$ROOFSCOPE_NSYS``, else PATH, else the usual install folders."""
    override = os.environ.get(_TOOL_ENV[name])
    if override:
        return override if Path(override).exists() else None
    found = shutil.which(name)
    if found:
        return found
    for pattern in _TOOL_GLOBS[name]:
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[-1]
    return None


def require_tool(name: str) -> str:
    path = find_tool(name)
    if path is None:
        raise RoofscopeError(
            f"{name} not found",
            hint=f"install Nsight {'Compute' if name == 'ncu' else 'Systems'}, put it on PATH "
            f"or set ${_TOOL_ENV[name]}; roofscope doctor checks",
        )
    return path


def step_argv(spec: RunSpec, python: str | None = None) -> list[str]:
    argv = [
        python or sys.executable,
        "-m",
        "roofscope.profiling.step",
        spec.model,
        "--batch",
        str(spec.batch),
        "--precision",
        spec.precision,
        "--mode",
        spec.mode,
        "--optimizer",
        spec.optimizer,
        "--warmup",
        str(spec.warmup),
        "--steps",
        str(spec.steps),
    ]
    if spec.image_size is not None:
        argv += ["--image-size", str(spec.image_size)]
    if spec.seq_len is not None:
        argv += ["--seq-len", str(spec.seq_len)]
    if spec.channels_last:
        argv.append("--channels-last")
    if spec.compile:
        argv.append("--compile")
    return argv


def step_env(spec: RunSpec) -> dict[str, str]:
    """What the count and the profiled run add to the environment (``--compile``: one
    Inductor compile thread, see ``COMPILE_ENV``)."""
    return dict(COMPILE_ENV) if spec.compile else {}


def profile_argv(spec: RunSpec, tool: str, run_dir: Path, python: str | None = None) -> list[str]:
    """The profiler around the step; the step also writes the analytic model beside it."""
    p = preset(spec.preset)
    out = str(run_dir / REPORT)
    step = [*step_argv(spec, python), "--analytic-out", str(run_dir / "analytic.json")]
    if p.tool == "nsys":
        return [tool, "profile", *p.args, "--force-overwrite", "true", "-o", out, *step]
    argv = [
        tool,
        "--profile-from-start",
        "off",
        "--nvtx",
        "--force-overwrite",
        "--export",
        out,
        *p.args,
    ]
    if spec.compile:
        argv += COMPILE_NCU_ARGS
    if spec.clock_control:
        argv += ["--clock-control", spec.clock_control]
    if spec.launch_skip is not None:
        argv += ["--launch-skip", str(spec.launch_skip)]
    if spec.launch_count is not None:
        argv += ["--launch-count", str(spec.launch_count)]
    if spec.kernel_regex:
        argv += ["--kernel-name", f"regex:{spec.kernel_regex}"]
    return [*argv, *step]


def export_argv(spec: RunSpec, tool: str, run_dir: Path) -> tuple[list[str], Path]:
    """(command, file it produces): the CSV roofscope opens, or nsys's SQLite."""
    if preset(spec.preset).tool == "nsys":
        target = run_dir / f"{spec.slug}.sqlite"
        return [
            tool,
            "export",
            "--type",
            "sqlite",
            "--force-overwrite",
            "true",
            "-o",
            str(target),
            str(run_dir / f"{REPORT}.nsys-rep"),
        ], target
    target = run_dir / f"{spec.slug}_{spec.preset}.ncu-raw.csv"
    return [
        tool,
        "--import",
        str(run_dir / f"{REPORT}.ncu-rep"),
        "--csv",
        "--page",
        "raw",
        "--print-units",
        "base",
    ], target


def details_argv(spec: RunSpec, tool: str, run_dir: Path) -> tuple[list[str], Path]:
    """(command, file): ncu's details page of the report, whose rule rows `advise` reads."""
    target = run_dir / f"{spec.slug}_{spec.preset}.ncu-details.csv"
    report = str(run_dir / f"{REPORT}.ncu-rep")
    return [tool, "--import", report, "--csv", "--page", "details", "--print-units", "base"], target


def count_argv(spec: RunSpec, python: str | None = None) -> list[str]:
    """The step under torch.profiler, without ncu: how many kernels the ETA waits for."""
    argv = [*step_argv(spec, python), "--count-kernels"]
    return argv + ([f"--kernel-regex={spec.kernel_regex}"] if spec.kernel_regex else [])


def expected_kernels(spec: RunSpec, counted: int) -> int:
    """What ncu will profile of ``counted`` kernels after ``--launch-skip/--launch-count``."""
    left = max(0, counted - (spec.launch_skip or 0))
    return min(left, spec.launch_count) if spec.launch_count is not None else left
