"""Command line: ``open`` (the TUI), ``report``, ``diff``, ``scaling``, ``cost`` and ``mig``
(headless), ``monitor`` and ``record`` (GPUs).

Errors a user can cause are printed as one line, ``roofscope: FILE: what is wrong (hint)``, with
exit code 2. pandas and Textual are never imported here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from roofscope import __version__
from roofscope.errors import RoofscopeError

if TYPE_CHECKING:
    from roofscope.monitor.source import GpuSource


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors already; keep its message to one line plus usage."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(2, f"roofscope: {message} (see roofscope {self.prog.split()[-1]} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="roofscope", description="GPU performance data explorer.")
    parser.add_argument("--version", action="version", version=f"roofscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    opener = sub.add_parser(
        "open",
        help="explore exports in the terminal UI (no FILE: a start screen)",
        description="Open ncu and nsys exports in the keyboard-driven TUI.",
    )
    opener.add_argument("files", nargs="*", metavar="FILE", help="exports, as for report")
    opener.add_argument(
        "--ascii",
        action="store_true",
        help="no braille or box characters (automatic without a UTF-8 locale)",
    )
    _add_load_options(opener)
    report = sub.add_parser(
        "report",
        help="summarise exports headless (table, JSON, CSV, Markdown)",
        description="Load Nsight Compute and Nsight Systems exports and print per-group "
        "numbers: roofline quantities from ncu, real timeline shares from nsys.",
    )
    report.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="ncu CSV (raw or details page, .csv.gz, .ncu-rep with ncu on PATH) or nsys export "
        "(.sqlite, parquetdir, stats CSV, .nsys-rep with nsys on PATH)",
    )
    _add_format(report)
    report.add_argument(
        "--by",
        choices=("group", "kernel", "launch"),
        default="group",
        help="rows per kernel group (default), kernel name or launch",
    )
    report.add_argument(
        "--top", type=int, default=None, metavar="N", help="only the N rows with the most time"
    )
    _add_load_options(report)
    _add_diff(sub)
    _add_scaling(sub)
    _add_cost(sub)
    _add_mig(sub)
    _add_monitor(sub)
    _add_record(sub)
    return parser


def _add_diff(sub: argparse._SubParsersAction) -> None:
    diff = sub.add_parser(
        "diff",
        help="compare two exports row by row (Δtime, Δ%% of roof, new/vanished kernels)",
        description="Compare AFTER with BEFORE: groups by name, kernels by name (then by the "
        "name without data types, base name), launches by launch order. Exit code 1 with "
        "--fail-if-slower when the summed kernel time grew by more than PCT percent.",
    )
    diff.add_argument("before", metavar="BEFORE", help="the baseline export")
    diff.add_argument("after", metavar="AFTER", help="the export to compare with it")
    _add_format(diff)
    diff.add_argument(
        "--by", choices=("group", "kernel", "launch"), default="group", help="rows to compare"
    )
    diff.add_argument(
        "--top", type=int, default=None, metavar="N", help="rows shown in table/md (default 20)"
    )
    diff.add_argument(
        "--fail-if-slower",
        type=float,
        default=None,
        metavar="PCT",
        help="exit 1 when AFTER's kernel time is more than PCT%% above BEFORE's (CI gate)",
    )
    _add_load_options(diff)


def _add_settings(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--batch", type=int, nargs="+", metavar="N", help="batch size per GPU")
    parser.add_argument("--gpus", type=int, nargs="+", metavar="N", help="GPUs per step")
    parser.add_argument(
        "--precision", nargs="+", metavar="P", help="label, e.g. fp32 tf32 bf16 fp16"
    )
    parser.add_argument(
        "--steps", type=int, nargs="+", metavar="N", help="training steps each export holds (1)"
    )


def _add_cost(sub: argparse._SubParsersAction) -> None:
    cost = sub.add_parser(
        "cost",
        help="what a training run costs on each profiled GPU ($/GPU-hour × measured step time)",
        description="Cost of a run: steps (or epochs × samples ÷ batch) × the measured step "
        "time × GPUs × $/GPU-hour of each report's GPU. Prices: --prices FILE, else "
        "~/.config/roofscope/prices.toml, else the shipped EXAMPLE table (dated, sourced, not "
        "quotes; print it with --example-prices).",
    )
    cost.add_argument("files", nargs="*", metavar="FILE", help="exports, one per GPU/setting")
    run = cost.add_mutually_exclusive_group()
    run.add_argument("--run-steps", type=int, metavar="N", help="training steps of the run")
    run.add_argument("--epochs", type=float, metavar="E", help="epochs of the run (with --samples)")
    cost.add_argument("--samples", type=int, metavar="N", help="samples per epoch")
    cost.add_argument("--prices", metavar="FILE", help="your price table (TOML)")
    cost.add_argument(
        "--usd-per-gpu-hour", type=float, metavar="USD", help="one price for every GPU instead"
    )
    cost.add_argument(
        "--example-prices", action="store_true", help="print the example price table and exit"
    )
    _add_settings(cost)
    _add_format(cost)
    _add_load_options(cost)


def _add_mig(sub: argparse._SubParsersAction) -> None:
    mig = sub.add_parser(
        "mig",
        help="which MIG slice a job needs, from a recording or from numbers you give",
        description="Suggest a MIG profile from measured utilisation, SM activity and peak "
        "memory: from roofscope recordings of the job on a whole GPU, or from --util, "
        "--sm-active and --memory with --gpu. The reasoning is printed with the answer.",
    )
    mig.add_argument("files", nargs="*", metavar="RECORDING", help="roofscope record output")
    mig.add_argument("--gpu", metavar="NAME", help="the GPU (default: the recording's)")
    mig.add_argument("--util", type=float, metavar="PCT", help="GPU busy %% (NVML utilisation)")
    mig.add_argument("--sm-active", type=float, metavar="PCT", help="SM active %% (GPM)")
    mig.add_argument("--memory", type=float, metavar="GB", help="peak GPU memory in GB")
    mig.add_argument(
        "--tolerance",
        type=float,
        default=1.10,
        metavar="X",
        help="largest acceptable slowdown against the whole GPU (default 1.10)",
    )
    _add_format(mig)


def _add_scaling(sub: argparse._SubParsersAction) -> None:
    scaling = sub.add_parser(
        "scaling",
        help="time per sample, FLOP/s and efficiency across batch sizes, precisions, GPU counts",
        description="One row per export of the same model at another setting. Batch size, "
        "precision and GPU count are read from file names (resnet50_bf16_b64_4gpu.csv) "
        "unless given here, one value per file or one for all.",
    )
    scaling.add_argument("files", nargs="+", metavar="FILE", help="exports, one per setting")
    _add_settings(scaling)
    _add_format(scaling)
    _add_load_options(scaling)


def _per_file(args: argparse.Namespace, name: str, count: int) -> list | None:
    """``--batch 8 16 32`` (one per file) or ``--batch 8`` (all files)."""
    values = getattr(args, name)
    if values is None:
        return None
    if len(values) not in (1, count):
        raise RoofscopeError(
            f"--{name} has {len(values)} values for {count} files",
            hint="give one value for all files or one per file, in the files' order",
        )
    if name != "precision" and any(v < 1 for v in values):
        raise RoofscopeError(f"--{name} needs positive whole numbers")
    return values * count if len(values) == 1 else list(values)


def _add_format(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    parser.add_argument(
        "--format", choices=("table", "json", "csv", "md"), default="table", help=help
    )


def _add_interval(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--interval", type=float, default=1.0, metavar="S", help="seconds between samples (0.1–10)"
    )


def _add_monitor(sub: argparse._SubParsersAction) -> None:
    monitor = sub.add_parser(
        "monitor",
        help="watch this node's GPUs live (NVML), or follow recordings of many nodes",
        description="Live GPU monitor: a card per GPU with history sparklines and the "
        "processes using it. On a login node, --follow shows what roofscope record writes on "
        "the job's nodes.",
    )
    monitor.add_argument(
        "--follow",
        nargs="+",
        metavar="GLOB",
        help="recordings to follow, e.g. '/scratch/job/node*.parquet' (quote the pattern)",
    )
    _add_interval(monitor)
    monitor.add_argument(
        "--once", action="store_true", help="print one sample of every GPU and exit"
    )
    _add_format(monitor, "with --once")
    monitor.add_argument("--ascii", action="store_true", help="no block characters")


def _add_record(sub: argparse._SubParsersAction) -> None:
    record = sub.add_parser(
        "record",
        help="record this node's GPUs to Parquet (headless), or summarise recordings",
        description="Record every GPU of this node to a folder of Parquet parts that stays "
        "readable while it grows (one per node on a shared file system), or summarise "
        "recordings per GPU.",
    )
    what = record.add_mutually_exclusive_group(required=True)
    what.add_argument("--out", metavar="FILE.parquet", help="where to write (appends if it exists)")
    what.add_argument(
        "--summary", nargs="+", metavar="FILE", help="per-GPU averages, energy and idle time"
    )
    _add_interval(record)
    record.add_argument(
        "--duration", type=float, default=None, metavar="S", help="stop after S seconds"
    )
    record.add_argument(
        "--flush",
        type=float,
        default=10.0,
        metavar="S",
        help="write to disk every S seconds: at most this much is lost in a crash (default 10)",
    )
    record.add_argument(
        "--rotate",
        type=float,
        default=600.0,
        metavar="S",
        help="start a new part every S seconds (default 600)",
    )
    _add_format(record, "with --summary")


def _add_load_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--gpu", metavar="NAME", help="GPU for datasheet ceilings when the export does not name it"
    )
    parser.add_argument("--ceilings", metavar="FILE", help="TOML file with [ceilings] values")
    parser.add_argument(
        "--fp16-convention",
        choices=("ncu", "nersc"),
        default="ncu",
        help="FP16 FLOPs: ncu = 2·hadd+2·hmul+4·hfma (default), nersc = hadd+hmul+2·hfma",
    )
    parser.add_argument(
        "--nvtx",
        choices=("innermost", "outermost"),
        default=None,
        help="group nsys kernels by the NVTX range they were launched in instead of name rules",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="do not read or write the cache database"
    )


def _axis(args: argparse.Namespace) -> str:
    return "rules" if args.nvtx is None else f"nvtx-{args.nvtx[:5]}"


def _open(args: argparse.Namespace) -> int:
    from roofscope.api import Options
    from roofscope.tui.app import RoofscopeApp

    for path in args.files:  # fail before the screen switches, with the one-line message
        if not Path(path).exists():
            raise RoofscopeError("no such file", path=path, hint="check the path")
    Options(args.gpu, args.ceilings, args.fp16_convention)  # validates the options first
    app = RoofscopeApp(
        list(args.files),
        ascii_only=args.ascii,
        gpu=args.gpu,
        ceilings=args.ceilings,
        fp16_convention=args.fp16_convention,
        use_cache=not args.no_cache,
        axis=_axis(args),
    )
    app.run()
    return 0


def _report(args: argparse.Namespace) -> int:
    from roofscope.output import render

    if args.top is not None and args.top < 1:
        raise RoofscopeError("--top needs a positive number", hint="e.g. --top 10")
    session = _load_session(args, args.files)
    try:
        doc = session.report_dict(by=args.by, top=args.top)
    finally:
        session.close()
    if args.format == "table":
        from rich.console import Console

        render(doc, "table", Console(soft_wrap=False))
        return 0
    text = render(doc, args.format)
    sys.stdout.write(text or "")
    return 0


def _load_session(args: argparse.Namespace, files: Sequence[str]):
    from roofscope.api import load

    return load(
        *files,
        gpu=args.gpu,
        ceilings=args.ceilings,
        fp16_convention=args.fp16_convention,
        use_cache=not args.no_cache,
        axis=_axis(args),
    )


def _diff(args: argparse.Namespace) -> int:
    from rich.console import Console

    from roofscope.api import JSON_SCHEMA_VERSION
    from roofscope.output.diff import render_diff

    if args.top is not None and args.top < 1:
        raise RoofscopeError("--top needs a positive number", hint="e.g. --top 10")
    if args.fail_if_slower is not None and args.fail_if_slower < 0:
        raise RoofscopeError("--fail-if-slower needs a percentage ≥ 0", hint="e.g. 5")
    session = _load_session(args, [args.before, args.after])
    try:
        diff = session.diff(0, 1, args.by)
    finally:
        session.close()
    doc = {"schema_version": JSON_SCHEMA_VERSION, **diff.to_dict()}
    sys.stdout.write(render_diff(doc, args.format, Console(soft_wrap=False), args.top))
    if args.fail_if_slower is not None and diff.slower_than(args.fail_if_slower):
        print(
            f"roofscope: slower by {diff.total['delta_time_pct']:.1f}% "
            f"(threshold {args.fail_if_slower:g}%)",
            file=sys.stderr,
        )
        return 1
    return 0


def _settings(args: argparse.Namespace) -> dict:
    """Each file's setting: the options given, else what its name says."""
    from roofscope.analysis.scaling import infer_setting

    n = len(args.files)
    given = {k: _per_file(args, k, n) for k in ("batch", "gpus", "precision", "steps")}
    settings = {}
    for i, path in enumerate(args.files):
        setting = infer_setting(path)
        for key, values in given.items():
            if values is not None:
                setattr(setting, key, values[i])
                setting.sources[key] = "option"
        settings[i] = setting
    return settings


def _scaling(args: argparse.Namespace) -> int:
    from rich.console import Console

    from roofscope.api import JSON_SCHEMA_VERSION
    from roofscope.output.scaling import render_scaling

    session = _load_session(args, args.files)
    try:
        doc = {"schema_version": JSON_SCHEMA_VERSION, **session.scaling(_settings(args))}
    finally:
        session.close()
    sys.stdout.write(render_scaling(doc, args.format, Console(soft_wrap=False)))
    return 0


def _cost(args: argparse.Namespace) -> int:
    from rich.console import Console

    from roofscope.analysis.cost import example_text, load_prices, one_price
    from roofscope.output.decide import render_cost

    if args.example_prices:
        sys.stdout.write(example_text())
        return 0
    if not args.files:
        raise RoofscopeError(
            "cost needs exports to measure", hint="roofscope cost FILE… --run-steps N"
        )
    if args.run_steps is None and (args.epochs is None or args.samples is None):
        raise RoofscopeError(
            "say how long the run is", hint="--run-steps N, or --epochs E --samples N"
        )
    for name in ("run_steps", "epochs", "samples", "usd_per_gpu_hour"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            raise RoofscopeError(f"--{name.replace('_', '-')} needs a positive number")
    settings = _settings(args)
    session = _load_session(args, args.files)
    try:
        table = load_prices(args.prices)
        if args.usd_per_gpu_hour is not None:
            table = one_price(session.gpu_keys(), args.usd_per_gpu_hour)
        out = session.cost(table, args.run_steps, args.epochs, args.samples, settings)
    finally:
        session.close()
    sys.stdout.write(render_cost(out, args.format, Console(soft_wrap=False)))
    return 0


def _mig(args: argparse.Namespace) -> int:
    from rich.console import Console

    from roofscope.analysis.mig import advise
    from roofscope.api import load
    from roofscope.hardware.specs import find_gpu
    from roofscope.output.decide import render_mig

    if args.tolerance < 1:
        raise RoofscopeError("--tolerance is a slowdown factor ≥ 1", hint="e.g. 1.10")
    if args.files:
        _check_recordings(args.files)
        session = load(*args.files)
        try:
            advice = session.mig_advice(find_gpu(args.gpu) if args.gpu else None, args.tolerance)
        finally:
            session.close()
    else:
        if args.util is None or args.memory is None or args.gpu is None:
            raise RoofscopeError(
                "give a recording, or --gpu, --util and --memory",
                hint="e.g. roofscope mig --gpu H100 --util 35 --sm-active 22 --memory 14",
            )
        for name in ("util", "sm_active"):
            value = getattr(args, name)
            if value is not None and not 0 <= value <= 100:
                raise RoofscopeError(f"--{name.replace('_', '-')} is a percentage, 0–100")
        sm = args.sm_active / 100 if args.sm_active is not None else None
        a = advise(find_gpu(args.gpu), args.util / 100, args.memory * 1e9, sm, args.tolerance)
        advice = [{"source": "given on the command line", **a.to_dict()}]
    doc = {"advice": advice}
    sys.stdout.write(render_mig(doc, args.format, Console(soft_wrap=False)))
    return 0


def _check_recordings(paths: Sequence[str]) -> None:
    """One-line errors for files that are missing or not recordings, before any loading."""
    from roofscope.monitor.recording import is_recording

    for path in paths:
        if not Path(path).exists():
            raise RoofscopeError("no such file", path=path, hint="check the path")
        if not is_recording(Path(path)):
            raise RoofscopeError(
                "not a roofscope recording",
                path=path,
                hint="recordings are written by roofscope record --out FILE.parquet",
            )


def _monitor(args: argparse.Namespace) -> int:
    from roofscope.monitor.follow import FollowSource
    from roofscope.monitor.recorder import check_interval

    check_interval(args.interval)
    if args.follow:
        source: GpuSource = FollowSource(list(args.follow))
    else:
        from roofscope.monitor.nvml import NvmlSource

        source = NvmlSource()  # fails here, with the one-line message, before any screen
    if args.once:
        return _once(source, args.format)
    from roofscope.tui.app import ascii_terminal
    from roofscope.tui.monitor_app import MonitorApp

    MonitorApp(
        lambda: source, interval=args.interval, ascii_only=args.ascii or ascii_terminal()
    ).run()
    return 0


def _once(source: GpuSource, fmt: str) -> int:
    import time

    from rich.console import Console

    from roofscope.output.gpu import render_reading

    try:
        reading = source.read()
        if source.live:  # GPM activities are rates: a second sample 0.2 s later has them
            time.sleep(0.2)
            reading = source.read()
    finally:
        source.close()
    if not reading.samples and not source.live:
        raise RoofscopeError(
            "no samples in the followed recordings", hint="check the pattern; quote it"
        )
    sys.stdout.write(render_reading(reading, fmt, Console(soft_wrap=False)))
    return 0


def _record(args: argparse.Namespace) -> int:
    if args.summary:
        return _record_summary(args)
    from roofscope.monitor.nvml import NvmlSource
    from roofscope.monitor.recorder import check_interval, record, stop_on_signals

    check_interval(args.interval)
    if args.duration is not None and args.duration <= 0:
        raise RoofscopeError("--duration needs a positive number of seconds")
    if args.flush <= 0 or args.rotate <= 0:
        raise RoofscopeError("--flush and --rotate need positive seconds")
    source = NvmlSource()
    stop = stop_on_signals()
    print(
        f"roofscope: recording {len(source.handles)} GPU(s) on {source.host} every "
        f"{args.interval:g} s to {args.out} (Ctrl+C or SIGTERM stops)",
        file=sys.stderr,
    )
    try:
        result = record(
            source,
            Path(args.out),
            interval=args.interval,
            duration=args.duration,
            flush_s=args.flush,
            rotate_s=args.rotate,
            stop=stop,
        )
    finally:
        source.close()
    print(
        f"roofscope: {result.samples} samples in {result.seconds:.1f} s "
        f"({result.skipped} ticks skipped) → {result.path}",
        file=sys.stderr,
    )
    return 0


def _record_summary(args: argparse.Namespace) -> int:
    from rich.console import Console

    from roofscope.analysis.recording import summarise
    from roofscope.api import load
    from roofscope.output.gpu import render_summary

    _check_recordings(args.summary)
    session = load(*args.summary)
    try:
        summaries = [g.to_dict() for g in summarise(session.con)]
    finally:
        session.close()
    sys.stdout.write(render_summary(summaries, args.format, Console(soft_wrap=False)))
    return 0


COMMANDS = {
    "open": _open,
    "report": _report,
    "diff": _diff,
    "scaling": _scaling,
    "cost": _cost,
    "mig": _mig,
    "monitor": _monitor,
    "record": _record,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return COMMANDS[args.command](args)
    except RoofscopeError as exc:
        print(exc.one_line(), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
