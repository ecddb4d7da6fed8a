"""``diff``, ``scaling``, ``cost`` and ``mig``: comparing exports and deciding from them
(parsers and handlers; the numbers come from :mod:`roofscope.session`)."""

from __future__ import annotations

import argparse
import math
import sys

from roofscope.cli.options import add_format, add_load_options, check_recordings, load_session
from roofscope.errors import RoofscopeError


def add_diff(sub: argparse._SubParsersAction) -> None:
    diff = sub.add_parser(
        "diff",
        help="compare two exports row by row (Δtime, Δ%% of roof, new/vanished kernels)",
        description="Compare AFTER with BEFORE: groups by name, kernels by name (then by the "
        "name without data types, base name), launches by launch order. Exit code 1 with "
        "--fail-if-slower when the summed kernel time grew by more than PCT percent.",
    )
    diff.add_argument("before", metavar="BEFORE", help="the baseline export")
    diff.add_argument("after", metavar="AFTER", help="the export to compare with it")
    add_format(diff)
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
    add_load_options(diff)


def add_settings(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--batch", type=int, nargs="+", metavar="N", help="batch size per GPU")
    parser.add_argument("--gpus", type=int, nargs="+", metavar="N", help="GPUs per step")
    parser.add_argument(
        "--precision", nargs="+", metavar="P", help="label, e.g. fp32 tf32 bf16 fp16"
    )
    parser.add_argument(
        "--steps", type=int, nargs="+", metavar="N", help="training steps each export holds (1)"
    )


def add_cost(sub: argparse._SubParsersAction) -> None:
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
    add_settings(cost)
    add_format(cost)
    add_load_options(cost)


def add_mig(sub: argparse._SubParsersAction) -> None:
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
    add_format(mig)


def add_scaling(sub: argparse._SubParsersAction) -> None:
    scaling = sub.add_parser(
        "scaling",
        help="time per sample, FLOP/s and efficiency across batch sizes, precisions, GPU counts",
        description="One row per export of the same model at another setting. Batch size, "
        "precision and GPU count are read from file names (resnet50_bf16_b64_4gpu.csv) "
        "unless given here, one value per file or one for all.",
    )
    scaling.add_argument("files", nargs="+", metavar="FILE", help="exports, one per setting")
    add_settings(scaling)
    add_format(scaling)
    add_load_options(scaling)


def per_file(args: argparse.Namespace, name: str, count: int) -> list | None:
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


def run_diff(args: argparse.Namespace) -> int:
    from roofscope.output.diff import render_diff
    from roofscope.present.text import console as plain_console
    from roofscope.session import JSON_SCHEMA_VERSION

    if args.top is not None and args.top < 1:
        raise RoofscopeError("--top needs a positive number", hint="e.g. --top 10")
    if args.fail_if_slower is not None and not 0 <= args.fail_if_slower < math.inf:
        raise RoofscopeError("--fail-if-slower needs a percentage ≥ 0", hint="e.g. 5")
    session = load_session(args, [args.before, args.after])
    try:
        diff = session.diff(0, 1, args.by)
    finally:
        session.close()
    doc = {"schema_version": JSON_SCHEMA_VERSION, **diff.to_dict()}
    sys.stdout.write(render_diff(doc, args.format, plain_console(soft_wrap=False), args.top))
    if args.fail_if_slower is not None and diff.slower_than(args.fail_if_slower):
        print(
            f"roofscope: slower by {diff.total['delta_time_pct']:.1f}% "
            f"(threshold {args.fail_if_slower:g}%)",
            file=sys.stderr,
        )
        return 1
    return 0


def settings_from(args: argparse.Namespace) -> dict:
    """Each file's setting: the options given, else what its name says."""
    from roofscope.analysis.scaling import infer_setting

    n = len(args.files)
    given = {k: per_file(args, k, n) for k in ("batch", "gpus", "precision", "steps")}
    settings = {}
    for i, path in enumerate(args.files):
        setting = infer_setting(path)
        for key, values in given.items():
            if values is not None:
                setattr(setting, key, values[i])
                setting.sources[key] = "option"
        settings[i] = setting
    return settings


def run_scaling(args: argparse.Namespace) -> int:
    from roofscope.output.scaling import render_scaling
    from roofscope.present.text import console as plain_console
    from roofscope.session import JSON_SCHEMA_VERSION

    session = load_session(args, args.files)
    try:
        doc = {"schema_version": JSON_SCHEMA_VERSION, **session.scaling(settings_from(args))}
    finally:
        session.close()
    sys.stdout.write(render_scaling(doc, args.format, plain_console(soft_wrap=False)))
    return 0


def run_cost(args: argparse.Namespace) -> int:
    from roofscope.analysis.cost import example_text, load_prices, one_price
    from roofscope.output.decide import render_cost
    from roofscope.present.text import console as plain_console

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
        if value is not None and not 0 < value < math.inf:
            raise RoofscopeError(f"--{name.replace('_', '-')} needs a positive number")
    settings = settings_from(args)
    table = load_prices(args.prices)  # a bad price file is refused before the exports load
    session = load_session(args, args.files)
    try:
        if args.usd_per_gpu_hour is not None:
            table = one_price(session.gpu_keys(), args.usd_per_gpu_hour)
        out = session.cost(table, args.run_steps, args.epochs, args.samples, settings)
    finally:
        session.close()
    sys.stdout.write(render_cost(out, args.format, plain_console(soft_wrap=False)))
    return 0


def run_mig(args: argparse.Namespace) -> int:
    from roofscope.analysis.mig import advise
    from roofscope.hardware.mig import profiles_for
    from roofscope.hardware.specs import find_gpu
    from roofscope.output.decide import render_mig
    from roofscope.present.text import console as plain_console
    from roofscope.session import JSON_SCHEMA_VERSION, load

    if not 1 <= args.tolerance < math.inf:
        raise RoofscopeError("--tolerance is a slowdown factor ≥ 1", hint="e.g. 1.10")
    spec = find_gpu(args.gpu) if args.gpu else None
    if spec is not None and not profiles_for(spec):
        raise RoofscopeError(
            f"{spec.label} has no MIG profiles", hint="MIG exists on A30, A100, H100, H200, B200"
        )
    if args.files:
        check_recordings(args.files)
        session = load(*args.files)
        try:
            advice = session.mig_advice(spec, args.tolerance)
        finally:
            session.close()
    else:
        if args.util is None or args.memory is None or args.gpu is None:
            raise RoofscopeError(
                "give a recording, or --gpu, --util and --memory",
                hint="e.g. roofscope mig --gpu h100-sxm5-80gb --util 35 --sm-active 22 --memory 14",
            )
        for name in ("util", "sm_active"):
            value = getattr(args, name)
            if value is not None and not 0 <= value <= 100:
                raise RoofscopeError(f"--{name.replace('_', '-')} is a percentage, 0–100")
        if not 0 < args.memory < math.inf:
            raise RoofscopeError("--memory needs a positive number of GB", hint="e.g. 14")
        sm = args.sm_active / 100 if args.sm_active is not None else None
        a = advise(spec, args.util / 100, args.memory * 1e9, sm, args.tolerance)
        advice = [{"source": "given on the command line", **a.to_dict()}]
    doc = {"schema_version": JSON_SCHEMA_VERSION, "advice": advice}
    sys.stdout.write(render_mig(doc, args.format, plain_console(soft_wrap=False)))
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    add_diff(sub)
    add_scaling(sub)
    add_cost(sub)
    add_mig(sub)


COMMANDS = {"diff": run_diff, "scaling": run_scaling, "cost": run_cost, "mig": run_mig}
