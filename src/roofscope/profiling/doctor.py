"""``roofscope doctor``: can this machine profile? Each check says what to do when it cannot.

GPU and driver (NVML), ncu and nsys (found, version), permission to read GPU performance
counters (the driver's ``RmProfilingAdminOnly`` and ncu's ``ERR_NVGPUCTRPERM``), torch with
CUDA, MIG mode, and a writable runs folder.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from roofscope.packages import OPTIONAL
from roofscope.profiling.command import find_tool
from roofscope.profiling.progress import PERMISSION
from roofscope.profiling.runner import PERMISSION_FIX
from roofscope.profiling.runs import list_runs, runs_root

OK, WARN, FAIL = "ok", "warn", "fail"
PARAMS = Path("/proc/driver/nvidia/params")


@dataclass
class Check:
    name: str
    status: str
    detail: str
    hint: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"check": self.name, "status": self.status, "detail": self.detail, "hint": self.hint}


def _gpus() -> tuple[list[Check], list[dict]]:
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded…
        return [
            Check(
                "GPU and driver",
                FAIL,
                f"NVML unavailable: {exc}",
                "run on a node with an NVIDIA GPU and driver (nvidia-smi should work)",
            )
        ], []
    try:
        driver = pynvml.nvmlSystemGetDriverVersion()
        driver = driver.decode() if isinstance(driver, bytes) else driver
        gpus = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            name = pynvml.nvmlDeviceGetName(h)
            name = name.decode() if isinstance(name, bytes) else name
            mem = pynvml.nvmlDeviceGetMemoryInfo(h).total
            try:
                mig = pynvml.nvmlDeviceGetMigMode(h)[0] == pynvml.NVML_DEVICE_MIG_ENABLE
            except pynvml.NVMLError:
                mig = None
            gpus.append({"index": i, "name": name, "memory_bytes": mem, "mig": mig})
    finally:
        pynvml.nvmlShutdown()
    if not gpus:
        return [
            Check(
                "GPU and driver",
                FAIL,
                f"driver {driver}, no GPU visible",
                "check CUDA_VISIBLE_DEVICES and the job's GPU allocation",
            )
        ], []
    names = ", ".join(
        f"{g['index']}: {g['name']} ({g['memory_bytes'] / 2**30:.0f} GiB)" for g in gpus
    )
    checks = [Check("GPU and driver", OK, f"driver {driver}; {names}")]
    on = [str(g["index"]) for g in gpus if g["mig"]]
    if on:
        checks.append(
            Check(
                "MIG mode",
                WARN,
                f"MIG enabled on GPU {', '.join(on)}",
                "ncu profiles one MIG instance and cannot lock clocks there; use a "
                "GPU with MIG off for comparable numbers (nvidia-smi -mig 0, admin)",
            )
        )
    else:
        checks.append(Check("MIG mode", OK, "off on every GPU"))
    return checks, gpus


def _version(tool: str) -> str:
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"? ({exc})"
    lines = [ln.strip() for ln in (out.stdout + out.stderr).splitlines() if ln.strip()]
    found = next((ln for ln in reversed(lines) if re.search(r"\d{4}\.\d", ln)), None)
    return found or (lines[-1] if lines else "?")


def _tool(name: str, title: str, needed_for: str) -> Check:
    path = find_tool(name)
    if path is None:
        return Check(
            name,
            FAIL if name == "ncu" else WARN,
            "not found",
            f"install Nsight {title}, put {name} on PATH or set "
            f"ROOFSCOPE_{name.upper()}; needed for {needed_for}",
        )
    return Check(name, OK, f"{path} — {_version(path)}")


def _permission() -> Check:
    """The driver's setting, and whether an earlier run was refused counters."""
    refused = [r.name for r in list_runs() if r.error and PERMISSION in r.error]
    admin_only = None
    try:
        m = re.search(r"RmProfilingAdminOnly:\s*(\d)", PARAMS.read_text())
        admin_only = m is not None and m.group(1) == "1"
    except OSError:
        pass
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    if refused:
        return Check(
            "counter permission",
            FAIL,
            f"ncu reported {PERMISSION} in run {refused[0]}",
            PERMISSION_FIX,
        )
    if admin_only and not root:
        return Check(
            "counter permission",
            FAIL,
            "the driver restricts GPU counters to admin users (RmProfilingAdminOnly: 1)",
            PERMISSION_FIX,
        )
    if admin_only is None:
        return Check(
            "counter permission",
            WARN,
            f"cannot read {PARAMS}",
            f"a profile will tell: ncu then fails with {PERMISSION}",
        )
    who = "running as root" if root else "RmProfilingAdminOnly: 0"
    return Check("counter permission", OK, f"counters readable ({who})")


def _torch() -> Check:
    try:
        import torch
    except ImportError:
        return Check(
            "torch",
            FAIL,
            "not installed",
            f"{OPTIONAL['torch'].install} (or a CUDA build of torch)",
        )
    if not torch.cuda.is_available():
        build = "a CPU-only build" if torch.version.cuda is None else f"CUDA {torch.version.cuda}"
        return Check(
            "torch",
            FAIL,
            f"torch {torch.__version__} ({build}) sees no GPU",
            "install a CUDA build of torch on the GPU node (pip index of pytorch.org)",
        )
    return Check(
        "torch",
        OK,
        f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.device_count()} GPU(s)",
    )


def _runs_folder() -> Check:
    root = runs_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = root / ".doctor-probe"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        return Check(
            "runs folder",
            FAIL,
            f"{root}: {exc.strerror}",
            "set ROOFSCOPE_RUNS_DIR (or --runs-dir) to a writable folder",
        )
    return Check("runs folder", OK, str(root))


def diagnose() -> list[Check]:
    gpu_checks, _ = _gpus()
    return [
        *gpu_checks,
        _tool("ncu", "Compute", "roofscope profile"),
        _tool("nsys", "Systems", "the nsys preset and .nsys-rep files"),
        _permission(),
        _torch(),
        _runs_folder(),
    ]
