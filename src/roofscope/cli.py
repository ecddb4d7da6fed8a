"""Command line: ``roofscope open FILE…`` (the TUI) and ``roofscope report FILE…`` (headless).

Errors a user can cause are printed as one line, ``roofscope: FILE: what is wrong (hint)``, with
exit code 2. pandas and Textual are never imported here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from roofscope import __version__
from roofscope.errors import RoofscopeError


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
    report.add_argument("--format", choices=("table", "json", "csv", "md"), default="table")
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
    return parser


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
    from roofscope.api import load
    from roofscope.output import render

    if args.top is not None and args.top < 1:
        raise RoofscopeError("--top needs a positive number", hint="e.g. --top 10")
    session = load(
        *args.files,
        gpu=args.gpu,
        ceilings=args.ceilings,
        fp16_convention=args.fp16_convention,
        use_cache=not args.no_cache,
        axis=_axis(args),
    )
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return _open(args) if args.command == "open" else _report(args)
    except RoofscopeError as exc:
        print(exc.one_line(), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
