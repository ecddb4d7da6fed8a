"""``profile``, ``runs``, ``doctor`` and ``ceilings``: profiling bundled models on this machine.

torch is imported only where a command needs it (``--estimate``, ``ceilings``, ``doctor``'s torch
check), inside ``roofscope.profiling``; listing models, dry runs and the runner do not.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Any

from roofscope.cli.options import add_format
from roofscope.errors import RoofscopeError
from roofscope.packages import needs
from roofscope.profiling.catalog import MODELS
from roofscope.profiling.command import CLOCK_CONTROL, MODES, PRECISIONS
from roofscope.profiling.presets import PRESETS


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "profile",
        help="profile a bundled PyTorch model with ncu (no MODEL: the Runs pane)",
        description="Run one training (or inference) step of a bundled model under ncu with a "
        "preset, show progress with an ETA (Ctrl+C cancels), export the report to CSV in a run "
        "folder and open it. Without MODEL, open the Runs pane of the TUI.",
    )
    p.add_argument(
        "model", nargs="?", metavar="MODEL", help=f"{', '.join(MODELS)} (--list describes them)"
    )
    p.add_argument("--list", action="store_true", help="list the bundled models")
    p.add_argument(
        "--batch", type=int, default=None, metavar="N", help="batch size (default per model)"
    )
    p.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="fp32",
        help="fp32 (TF32 off; the default), tf32, bf16 or fp16 autocast",
    )
    p.add_argument(
        "--mode", choices=MODES, default="train", help="training step (default) or inference"
    )
    p.add_argument(
        "--preset",
        choices=list(PRESETS),
        default="roofline",
        help="; ".join(f"{k}: {v.summary}" for k, v in PRESETS.items()) + " (default roofline)",
    )
    p.add_argument(
        "--optimizer",
        choices=("sgd", "adam"),
        default="sgd",
        help="optimizer of the training step (default sgd)",
    )
    p.add_argument(
        "--image-size",
        type=int,
        default=None,
        metavar="PX",
        help="image height (default per model)",
    )
    p.add_argument("--seq-len", type=int, default=None, metavar="N", help="bert: tokens (128)")
    p.add_argument(
        "--warmup", type=int, default=2, metavar="N", help="unprofiled steps first (default 2)"
    )
    p.add_argument("--steps", type=int, default=1, metavar="N", help="profiled steps (default 1)")
    p.add_argument(
        "--compile",
        action="store_true",
        help="torch.compile the model (Inductor; compiled in one extra unprofiled step before "
        "the warm-up); ncu gets --target-processes application-only and the step "
        "TORCHINDUCTOR_COMPILE_THREADS=1, since ncu following Inductor's compile workers "
        "crashes the run",
    )
    p.add_argument(
        "--channels-last",
        action="store_true",
        help="model and input images in torch.channels_last (NHWC), what the channels_last "
        "advice suggests; only for models with convolutions",
    )
    p.add_argument(
        "--clock-control",
        choices=CLOCK_CONTROL,
        default=None,
        help="ncu clock control (ncu's default: base, locked clocks)",
    )
    p.add_argument(
        "--launch-skip",
        type=int,
        default=None,
        metavar="N",
        help="ncu --launch-skip: kernels of the region left unprofiled first",
    )
    p.add_argument(
        "--launch-count",
        type=int,
        default=None,
        metavar="N",
        help="ncu --launch-count: profile at most N kernels",
    )
    p.add_argument("--kernel-regex", default=None, metavar="RE", help="profile only these kernels")
    p.add_argument(
        "--runs-dir",
        default=None,
        metavar="DIR",
        help="where run folders go ($ROOFSCOPE_RUNS_DIR, ~/.local/share/roofscope/runs)",
    )
    p.add_argument(
        "--no-count",
        action="store_true",
        help="skip counting kernels first (no ETA; saves one unprofiled run)",
    )
    p.add_argument("--no-open", action="store_true", help="do not open the TUI afterwards")
    p.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    p.add_argument(
        "--estimate",
        action="store_true",
        help="print analytic FLOPs and memory by batch size (torch, no GPU needed)",
    )
    add_format(p, help="for --list, --estimate and the summary after a run")
    runs = sub.add_parser(
        "runs",
        help="list past profiling runs",
        description="The run folders: model, settings, status, duration.",
    )
    runs.add_argument(
        "--runs-dir",
        default=None,
        metavar="DIR",
        help="run folders ($ROOFSCOPE_RUNS_DIR, ~/.local/share/roofscope/runs)",
    )
    add_format(runs)
    doctor = sub.add_parser(
        "doctor",
        help="check GPU, driver, ncu/nsys, counter permission, torch, MIG",
        description="Check that this machine can profile, with a fix for each problem. "
        "Exit code 1 when a check fails.",
    )
    add_format(doctor)
    ceilings = sub.add_parser(
        "ceilings",
        help="measure this GPU's roofs with torch (GEMM per dtype, copy bandwidth)",
        description="Measure GEMM FLOP/s per data type, device-copy (DRAM) and L2-resident copy "
        "bandwidth with torch, compare with the datasheet and save them as the 'measured on "
        "this machine' ceilings for reports of this GPU model.",
    )
    ceilings.add_argument(
        "--gemm-size",
        type=int,
        default=8192,
        metavar="N",
        help="N×N×N GEMMs (default 8192; at least 256)",
    )
    ceilings.add_argument("--no-save", action="store_true", help="only print")
    add_format(ceilings)


def _spec(args: argparse.Namespace):
    from roofscope.profiling.command import RunSpec

    return RunSpec(
        model=args.model,
        batch=args.batch,
        precision=args.precision,
        mode=args.mode,
        preset=args.preset,
        optimizer=args.optimizer,
        image_size=args.image_size,
        seq_len=args.seq_len,
        warmup=args.warmup,
        steps=args.steps,
        clock_control=args.clock_control,
        launch_skip=args.launch_skip,
        launch_count=args.launch_count,
        kernel_regex=args.kernel_regex,
        compile=args.compile,
        channels_last=args.channels_last,
    )


def _write(text: str) -> None:
    if text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def run_profile(args: argparse.Namespace) -> int:
    from roofscope.output import profiling as out

    if args.list:
        doc = {"models": [m.to_dict() for m in MODELS.values()]}
        _write(out.render_models(doc, args.format))
        return 0
    if args.model is None:
        if args.estimate or args.dry_run:
            raise RoofscopeError("--estimate and --dry-run need a MODEL", hint="see --list")
        from roofscope.tui.app import RoofscopeApp

        RoofscopeApp([], start_pane="runs", runs_dir=args.runs_dir).run()
        return 0
    spec = _spec(args)
    if args.estimate:
        if sys.stderr.isatty():  # importing torch takes seconds: say what is going on
            print("roofscope: counting FLOPs with torch on the meta device…", file=sys.stderr)
        _write(out.render_estimate(estimate_doc(spec), args.format))
        return 0
    root = Path(args.runs_dir) if args.runs_dir else None
    if args.dry_run:
        return _dry_run(spec, root, not args.no_count)
    return _run(spec, root, args)


def estimate_doc(spec: Any) -> dict[str, Any]:
    with needs("roofscope profile --estimate"):
        from roofscope.profiling.analytic import analytic, estimate_at

    doc = analytic(
        spec.model,
        spec.batch,
        spec.precision,
        spec.mode,
        spec.optimizer,
        spec.image_size,
        spec.seq_len,
    )
    per_sample = doc["flops"]["step"] / spec.batch
    batches = sorted({1, 8, 32, 64, 128, 256, spec.batch})
    doc["by_batch"] = [
        {"batch": b, "flops": per_sample * b, "memory_bytes": estimate_at(doc["memory"], b)}
        for b in batches
    ]
    return doc


def _dry_run(spec: Any, root: Path | None, count: bool) -> int:
    from roofscope.profiling import command
    from roofscope.profiling.presets import preset
    from roofscope.profiling.runs import runs_root

    found = command.find_tool(preset(spec.preset).tool)
    tool = found or preset(spec.preset).tool
    folder = (root or runs_root()) / f"<time>-{spec.slug}-{spec.preset}"
    env = [f"{k}={v}" for k, v in command.step_env(spec).items()]  # as a shell prefix
    lines = []
    if found is None:
        lines.append(f"# note: {tool} is not on PATH here (roofscope doctor says what is missing)")
    if spec.channels_last:
        lines.append(
            "# --channels-last: the step converts the model and its input images to "
            "torch.channels_last (NHWC) before its warm-up steps"
        )
    if spec.compile:
        lines.append(
            "# --compile: the step compiles the model before its warm-up steps; "
            f"{' '.join(env)} keeps Inductor's compile in the step's process"
        )
    if count:
        lines.append("# 1. count the kernels of the profiled region (for the ETA), without ncu")
        lines.append(shlex.join([*env, *command.count_argv(spec)]))
    lines.append("# 2. profile")
    lines.append(shlex.join([*env, *command.profile_argv(spec, tool, folder)]))
    export, target = command.export_argv(spec, tool, folder)
    lines.append(
        f"# 3. export (stdout → {target})" if preset(spec.preset).tool == "ncu" else "# 3. export"
    )
    lines.append(shlex.join(export))
    print("\n".join(lines))
    return 0


class _ProgressLine:
    """One status line on stderr: rewritten in place on a terminal, every 10 s otherwise."""

    def __init__(self, title: str):
        self.title = title
        self.tty = sys.stderr.isatty()
        self.last = 0.0

    def __call__(self, p: Any) -> None:
        if not self.tty and time.monotonic() - self.last < 10:
            return
        self.last = time.monotonic()
        line = f"{self.title}: {progress_text(p)}"
        if self.tty:
            sys.stderr.write("\r\x1b[2K" + line[:200])
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def end(self) -> None:
        if self.tty:
            sys.stderr.write("\n")


def progress_text(p: Any) -> str:
    """``kernel 120/361 (33%) · backward · 1:02 · ETA 2:05 · bn_bw_1C11…``"""
    from roofscope.present.units import clock  # not at import: roofscope --help needs none

    if p.first_kernel_at is None:
        return f"starting ({clock(p.elapsed)})"
    total = f"/{p.expected}" if p.expected else ""
    share = f" ({p.fraction:.0%})" if p.fraction is not None else ""
    eta = p.eta()
    parts = [
        f"kernel {p.done}{total}{share}",
        p.phase or "",
        clock(p.elapsed),
        f"ETA {clock(eta)}" if eta is not None else "",
        (p.current or "")[:40],
    ]
    return " · ".join(x for x in parts if x)


def _run(spec: Any, root: Path | None, args: argparse.Namespace) -> int:
    from roofscope.output.profiling import render_phases
    from roofscope.profiling.runner import Runner, raise_if_failed
    from roofscope.profiling.summary import run_summary

    extras = "".join(
        f" {word}" for word, on in (("cl", spec.channels_last), ("compile", spec.compile)) if on
    )
    line = _ProgressLine(f"{spec.model} {spec.precision} b{spec.batch}{extras} [{spec.preset}]")
    runner = Runner(spec, root=root, listener=line, count=not args.no_count)
    print(f"roofscope: run folder {runner.run.folder} (Ctrl+C cancels)", file=sys.stderr)
    # Ctrl+C and a job scheduler's kill cancel ncu too; the run is saved as cancelled
    _interrupt_on(signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    try:
        run = runner.start()
    except KeyboardInterrupt:
        runner.cancel()
        run = runner.run
        run.status, run.finished = "cancelled", time.time()
        run.save()
    finally:
        line.end()
    raise_if_failed(run)
    _write(render_phases(run_summary(run), args.format))
    if not args.no_open and sys.stdout.isatty() and run.report_path is not None:
        from roofscope.tui.app import RoofscopeApp

        RoofscopeApp([str(run.report_path)]).run()
    return 0


def _interrupt_on(*signals: signal.Signals) -> None:
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    for sig in signals:
        signal.signal(sig, interrupt)


def run_runs(args: argparse.Namespace) -> int:
    from roofscope.output.profiling import render_runs
    from roofscope.profiling.runs import list_runs, runs_root

    root = Path(args.runs_dir) if args.runs_dir else runs_root()
    doc = {"folder": str(root), "runs": [r.to_dict() for r in list_runs(root)]}
    _write(render_runs(doc, args.format))
    return 0


def run_doctor(args: argparse.Namespace) -> int:
    from roofscope.output.profiling import render_doctor
    from roofscope.profiling.doctor import FAIL, diagnose

    checks = diagnose()
    _write(render_doctor({"checks": [c.to_dict() for c in checks]}, args.format))
    return 1 if any(c.status == FAIL for c in checks) else 0


# A library path far below the datasheet measures the library, not the unit (torch._int_mm on
# an H100 reached 7% of the int8 tensor peak): such a roof is shown but never saved.
TOO_LOW = 0.25


def run_ceilings(args: argparse.Namespace) -> int:
    from roofscope.hardware.ceilings import datasheet_ceilings
    from roofscope.hardware.measured import save_measured
    from roofscope.hardware.specs import match_device_name
    from roofscope.output.profiling import render_ceilings

    with needs("roofscope ceilings"):
        from roofscope.profiling.ceilings_bench import measure
    if args.gemm_size < 256:
        raise RoofscopeError("--gemm-size must be at least 256")
    result = measure(gemm_n=args.gemm_size)
    spec = match_device_name(result["device"])
    sheet = datasheet_ceilings(spec) if spec else {}
    rows, keep = [], {}
    for name, entry in result["ceilings"].items():
        datasheet = sheet[name].value if name in sheet else None
        share = entry["value"] / datasheet if datasheet else None
        saved = share is None or share >= TOO_LOW
        if saved:
            keep[name] = entry
        rows.append(
            {"name": name, "value": entry["value"], "spec": datasheet, "of_spec": share,
             "saved": saved, "method": entry["method"]}
        )  # fmt: skip
    path = None if args.no_save else save_measured(result["device"], {**result, "ceilings": keep})
    doc = {
        "device": result["device"],
        "torch": result["torch"],
        "saved_to": str(path or ""),
        "ceilings": rows,
    }
    _write(render_ceilings(doc, args.format))
    return 0


COMMANDS = {
    "profile": run_profile,
    "runs": run_runs,
    "doctor": run_doctor,
    "ceilings": run_ceilings,
}
