"""Command-line pieces every command shares: load options, output format, loading a session,
checking recordings — so each command module builds its parser the same way."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


def add_format(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    parser.add_argument(
        "--format",
        choices=("table", "json", "csv", "md"),
        default="table",
        help="table (default), json, csv or md" + (f"; {help}" if help else ""),
    )


def add_load_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--gpu",
        metavar="NAME",
        help="GPU for datasheet ceilings when the export does not name it, e.g. "
        "h100-sxm5-80gb, a100-sxm4-40gb or a name as nvidia-smi prints it",
    )
    parser.add_argument(
        "--ceilings",
        metavar="FILE",
        help="TOML file with [ceilings] values you measured (docs/ceilings.md)",
    )
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


def axis(args: argparse.Namespace) -> str:
    return "rules" if args.nvtx is None else f"nvtx-{args.nvtx[:5]}"


def load_session(args: argparse.Namespace, files: Sequence[str]):
    from roofscope.session import load

    return load(
        *files,
        gpu=args.gpu,
        ceilings=args.ceilings,
        fp16_convention=args.fp16_convention,
        use_cache=not args.no_cache,
        axis=axis(args),
    )


def check_recordings(paths: Sequence[str]) -> None:
    """One-line errors for files that are missing or not recordings, before any loading."""
    from roofscope.telemetry.recording import require_recording

    for path in paths:
        require_recording(Path(path))
