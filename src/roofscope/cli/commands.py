"""The parser, ``open`` (the TUI), ``report``, ``advise``, ``export``, ``monitor`` and ``record``
(GPUs), and ``main``, which dispatches to these and to the commands of :mod:`~roofscope.cli.compare`
(``diff``, ``scaling``, ``cost``, ``mig``) and :mod:`~roofscope.cli.profile` (``profile``, ``runs``,
``doctor``, ``ceilings``).

Errors a user can cause are printed as one line, ``roofscope: FILE: what is wrong (hint)``, with
exit code 2. pandas and Textual are never imported here.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from roofscope.cli import compare as compare_commands
from roofscope.cli import profile as profile_commands
from roofscope.cli.exits import OutputFailed, Surroundings
from roofscope.cli.options import (
    add_format,
    add_load_options,
    axis,
    check_recordings,
    load_session,
)
from roofscope.errors import DEBUG_ENV, RoofscopeError, debug, internal_error
from roofscope.packages import missing_package_error, needs
from roofscope.present.units import counted
from roofscope.version import __version__

if TYPE_CHECKING:
    from roofscope.monitor.source import GpuSource
    from roofscope.session import Session
    from roofscope.tui.fatal import OneLineErrors


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors already; keep its message to one line plus usage."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        command = " ".join(self.prog.split()[1:])  # "" for roofscope itself
        self.exit(
            2, f"roofscope: {message} (see roofscope {command + ' ' if command else ''}--help)\n"
        )


START_HERE = """start here:
  roofscope open                  a start screen: the bundled samples, recent reports
  roofscope open FILE…            explore exports in the terminal UI (? lists the keys)
  roofscope report FILE…          the same numbers headless: table, JSON, CSV, Markdown
  roofscope advise FILE…          what to change first: ncu's rules over the whole step
  roofscope diff BEFORE AFTER     what changed between two exports
  roofscope COMMAND --help        the options of one command
"""


_CONFIG_EPILOG = "grouping rules from here: "


class _PathEpilog(argparse.HelpFormatter):
    """Wraps the description as usual, but prints the config epilog as it is: a path broken
    at its hyphens cannot be copied."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(_CONFIG_EPILOG):
            return indent + text
        return super()._fill_text(text, width, indent)


def config_epilog() -> str:
    """Which rules files apply from the working directory, for ``--help``: a
    ``roofscope.toml`` lying in the folder changes the groups, so help says so."""
    from roofscope.grouping import config_files, user_config_path

    try:
        files = config_files()
    except OSError:  # the working directory was removed under the shell
        return f"{_CONFIG_EPILOG}unknown (the working directory cannot be read)\n"
    if files:
        return _CONFIG_EPILOG + ", ".join(str(f) for f in files) + "\n"
    return (
        f"{_CONFIG_EPILOG}built-in only (no ./roofscope.toml, no {user_config_path()}; "
        "docs/guide/grouping.md)\n"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="roofscope",
        description="GPU performance data explorer: Nsight Compute and Nsight Systems\n"
        "exports, live GPUs (NVML), profiling bundled PyTorch models.",
        epilog=START_HERE + "\n" + config_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"roofscope {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help=f"show the traceback of an unexpected error instead of one line (also {DEBUG_ENV}=1)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    opener = sub.add_parser(
        "open",
        help="explore exports in the terminal UI (no FILE: a start screen)",
        description="Open ncu and nsys exports in the keyboard-driven TUI. With no FILE, a "
        "start screen lists the bundled samples and the reports opened before. In the TUI, ? "
        "lists every key, 1–9 switch panes, q quits.",
    )
    opener.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="ncu CSV or nsys export, as for roofscope report (see its --help); two or more "
        "are compared in pane 7, . steps through them",
    )
    opener.add_argument(
        "--ascii",
        action="store_true",
        help="no braille or box characters (automatic without a UTF-8 locale)",
    )
    add_load_options(opener)
    report = sub.add_parser(
        "report",
        help="summarise exports headless (table, JSON, CSV, Markdown)",
        description="Load Nsight Compute and Nsight Systems exports and print per-group "
        "numbers: roofline quantities from ncu, real timeline shares from nsys.",
        epilog=config_epilog(),
        formatter_class=_PathEpilog,
    )
    report.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="ncu CSV (raw or details page, .csv.gz, .ncu-rep with ncu on PATH) or nsys export "
        "(.sqlite, parquetdir, stats CSV, .nsys-rep with nsys on PATH)",
    )
    add_format(report)
    report.add_argument(
        "--by",
        choices=("group", "kernel", "launch"),
        default="group",
        help="rows per kernel group (default), kernel name or launch",
    )
    report.add_argument(
        "--top", type=int, default=None, metavar="N", help="only the N rows with the most time"
    )
    add_load_options(report)
    _add_advise(sub)
    _add_export(sub)
    compare_commands.add_parsers(sub)
    _add_monitor(sub)
    _add_record(sub)
    profile_commands.add_parsers(sub)
    return parser


def _add_advise(sub: argparse._SubParsersAction) -> None:
    advise = sub.add_parser(
        "advise",
        help="what to change first: ncu's rules over the whole step, ranked by estimated gain",
        description="Roll ncu's rule results (a details page collected with sections, e.g. "
        "ncu --set full … then --csv --page details) up over every launch: for each rule, the "
        "launches and groups it fires on, their share of the step, and the step time ncu's "
        "Estimated Speedups claim, with the step's speedup (Amdahl). Ranked by estimated gain; "
        "rules without an estimate last. JSON: docs/json.md (advice).",
    )
    advise.add_argument(
        "files", nargs="+", metavar="FILE", help="ncu details-page CSV (.csv, .csv.gz)"
    )
    advise.add_argument(
        "--format",
        choices=("table", "json", "md"),
        default="table",
        help="table (default), json or md",
    )
    advise.add_argument(
        "--top", type=int, default=None, metavar="N", help="only the first N items per report"
    )
    add_load_options(advise)


def _add_export(sub: argparse._SubParsersAction) -> None:
    export = sub.add_parser(
        "export",
        help="write many reports as one Parquet dataset (DuckDB, pyarrow, Spark read it)",
        description="Write each report's launches, groups and totals into one Hive-partitioned "
        "Parquet dataset (DIR/{reports,groups,launches}/gpu=GPU/report=ID/part-0.parquet), "
        "with the numbers and units of report --format json. ID is the file name and a hash of "
        "its content: exporting a file again replaces its partition. Each file is loaded on "
        "its own (no ncu/nsys pairing). Columns: docs/parquet.md.",
    )
    export.add_argument(
        "--parquet",
        required=True,
        metavar="DIR",
        help="the dataset folder: made if missing; an existing one is added to",
    )
    export.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="ncu or nsys exports, as for roofscope report (not GPU recordings)",
    )
    add_load_options(export)


def _add_interval(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--interval",
        type=float,
        default=1.0,
        metavar="S",
        help="seconds between samples, 0.1–10 (default 1)",
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
    monitor.add_argument(
        "--stale-after",
        type=float,
        default=None,
        metavar="S",
        help="with --follow: a node whose recording has not grown for S seconds is stale "
        "(default: the largest of 30 s, 3 of its flush intervals and 5 of its samples)",
    )
    _add_interval(monitor)
    monitor.add_argument(
        "--once", action="store_true", help="print one sample of every GPU and exit"
    )
    add_format(monitor, "with --once")
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
    add_format(record, "with --summary")
    mcp = sub.add_parser(
        "mcp",
        help="serve reports to coding agents (Model Context Protocol, stdio)",
        description="A Model Context Protocol server over stdio: summary, groups, launches, "
        "launch_detail, roofline, advice, diff and monitor_snapshot, as compact JSON with units "
        "and provenance. Only files under the --root folders can be opened (symlinks are "
        "followed first); nothing is written but roofscope's cache. Needs the mcp package: "
        "pip install 'roofscope[mcp]'. Register it with a client as the command "
        "'roofscope mcp --root DIR' (docs/guide/mcp.md).",
    )
    mcp.add_argument(
        "--root",
        action="append",
        metavar="DIR",
        help="a folder whose files may be opened (repeat for more; default: the working directory)",
    )


def _mcp(args: argparse.Namespace) -> int:
    from roofscope.mcp.tools import Workspace

    workspace = Workspace(args.root or [Path.cwd()])  # a bad root fails here, in one line
    with needs("roofscope mcp"):
        from roofscope.mcp.server import serve  # the SDK: an optional extra
    serve(workspace)
    return 0


def _open(args: argparse.Namespace) -> int:
    for path in args.files:  # fail before the screen switches, with the one-line message
        if not Path(path).exists():
            raise RoofscopeError("no such file", path=path, hint="check the path")
    need_terminal("open", "the same numbers without one: roofscope report FILE --format json")
    options = {
        "gpu": args.gpu,
        "ceilings": args.ceilings,
        "fp16_convention": args.fp16_convention,
        "use_cache": not args.no_cache,
        "axis": axis(args),
    }
    app = opening = None
    try:
        with _imports_settled():
            from roofscope.tui import first_screen

            # The Kernels pane's screen kept from an earlier open of the same unchanged cache:
            # drawn before DuckDB is imported, the session loading behind it
            # (tui/first_screen.py). The options are those it was made with, checked then.
            first = first_screen.read(list(args.files), options) if args.files else None
            if first is None:
                from roofscope.session import Options, load_in_thread

                Options(args.gpu, args.ceilings, args.fp16_convention)  # checks the options
                # The reports open while Textual is imported: the first screen ~0.1 s sooner
                opening = load_in_thread(*args.files, **options) if args.files else None
            from roofscope.tui.app import RoofscopeApp

            app = RoofscopeApp(
                list(args.files), ascii_only=args.ascii, opening=opening, first=first, **options
            )
        code = _run_app(app)
    except Exception as exc:
        if opening is None or opening.done():
            raise
        code = report_error(exc)  # printed now: the process must not wait for the load
    loading = app.loading if app is not None else opening
    if loading is not None and not loading.done():
        _leave_now(code)
    return code


@contextmanager
def _imports_settled() -> Iterator[None]:
    """No garbage collection while Textual and the panes are imported, and what they made
    moved out of the collector's way after: the imports leave ~54,000 objects the collector
    tracks, living as long as the process, and a full collection over them during the first
    paint cost 20–40 ms of it on the 2-core VM (issue 31; the app freezes what it holds again
    once drawn)."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def _leave_now(code: int) -> NoReturn:
    """Exit without finalising the interpreter: a load still running in its daemon thread
    (the user quit first, or Textual failed to import) is inside DuckDB, which aborts the
    process (exit 134, "terminate called…") when the interpreter is torn down under it. The
    cache is built in a temporary file and renamed, so nothing half-written is left."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def need_terminal(command: str, instead: str) -> None:
    """A full-screen app with no terminal to draw on or read keys from (a batch job, a pipe,
    ``</dev/null``) would wait for ever: refuse at once and say what works there."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        side = "standard input" if not sys.stdin.isatty() else "standard output"
        raise RoofscopeError(f"{command} needs a terminal, and {side} is not one", hint=instead)


def _run_app(app: OneLineErrors) -> int:
    """Run a full-screen app; the line of an error that ended it is printed after the terminal
    is given back, as the CLI's own errors are."""
    app.run()
    if app.fatal_line:
        print(app.fatal_line, file=sys.stderr)
    return app.return_code or 0


def _report(args: argparse.Namespace) -> int:
    if args.top is not None and args.top < 1:
        raise RoofscopeError("--top needs a positive number", hint="e.g. --top 10")
    if args.by == "launch":
        return _report_streamed(args)
    doc = _report_doc(args)
    if args.format == "json":  # what render() writes for JSON, without importing rich
        from roofscope.jsonout import dumps

        sys.stdout.write(dumps(doc))
        return 0
    from roofscope.output.render import render

    if args.format == "table":
        from roofscope.present.text import console as plain_console

        render(doc, "table", plain_console(soft_wrap=False))
        return 0
    text = render(doc, args.format)
    sys.stdout.write(text or "")
    return 0


def _report_streamed(args: argparse.Namespace) -> int:
    """``--by launch``: rows the size of the trace, streamed from the store as they are
    written (output/streamed.py), never held or kept beside the cache (``report_memo``)."""
    session = load_session(args, args.files)
    try:
        _write_launch_rows(args, session)
    finally:
        session.close()
    return 0


def _write_launch_rows(args: argparse.Namespace, session: Session) -> None:
    """The document and the rows under ``ROWS_MEMORY_LIMIT``, lower than the report's cap:
    the rows' staged table and sort spill, and so do the document's timeline and advice, so
    the process stays under 1 GB at ten million launches (at the report's 1 GB cap the
    document's part alone peaked at 1,005 MiB)."""
    from roofscope.output.streamed import refuse_long_table, write_report
    from roofscope.store import ROWS_MEMORY_LIMIT

    reports = session.reports
    if args.format == "table":
        for r in reports:
            refuse_long_table(r.row_count("launch"), args.top)
    with session.memory_capped(ROWS_MEMORY_LIMIT):
        doc = session.report_dict(
            by="launch", top=args.top, advice=args.format == "json", rows=False
        )
    with session.memory_capped(ROWS_MEMORY_LIMIT):
        if args.format == "table":
            from roofscope.output.render import render
            from roofscope.present.text import console as plain_console

            for r, entry in zip(reports, doc["reports"], strict=True):
                entry["rows"] = list(r.iter_rows("launch", args.top))
            render(doc, "table", plain_console(soft_wrap=False))
            return
        write_report(
            doc,
            args.format,
            lambda i, _report: reports[i].iter_rows("launch", args.top),
            lambda i: reports[i].empty_row("launch"),
            sys.stdout,
        )


def _report_doc(args: argparse.Namespace) -> dict:
    """The report document: kept from an earlier ask about the same unchanged cache
    (``report_memo``: no DuckDB at all), else computed and kept. Both ways it is the document
    as JSON reads it back, so every format prints the same either way."""
    import json

    from roofscope import report_memo

    # advice is JSON's alone (roofscope advise prints it): its rules are not run for the rest
    advice = args.format == "json"
    options = {
        "gpu": args.gpu,
        "ceilings": args.ceilings,
        "fp16_convention": args.fp16_convention,
        "axis": axis(args),
        "by": args.by,
        "top": args.top,
        "advice": advice,
    }
    if not args.no_cache and (kept := report_memo.read(args.files, options)) is not None:
        return kept
    session = load_session(args, args.files)
    try:
        with session.memory_capped():
            doc = session.report_dict(by=args.by, top=args.top, advice=advice)
        on_disk = session.store.path is not None
    finally:
        session.close()
    from roofscope.jsonout import dumps

    doc = json.loads(dumps(doc, indent=None))
    if on_disk:
        report_memo.write(args.files, options, doc)
    return doc


def _advise(args: argparse.Namespace) -> int:
    from roofscope.output.advise import render_advise
    from roofscope.present.text import console as plain_console
    from roofscope.quantities import TIME_S
    from roofscope.session import JSON_SCHEMA_VERSION

    if args.top is not None and args.top < 1:
        raise RoofscopeError("--top needs a positive number", hint="e.g. --top 5")
    session = load_session(args, args.files)
    try:
        with session.memory_capped():
            reports = [
                {
                    "path": r.path,
                    "format": r.layout,
                    "family": r.kind.family,
                    "gpu": r.gpu_name,
                    TIME_S: r.totals()[TIME_S],
                    "advice": [a.to_dict() for a in r.advice()[: args.top]],
                    "ncu_rules_together": r.ncu_rules_together(),
                }
                for r in session.reports
            ]
        warnings = list(session.warnings)
    finally:
        session.close()
    doc = {"schema_version": JSON_SCHEMA_VERSION, "reports": reports, "warnings": warnings}
    sys.stdout.write(render_advise(doc, args.format, plain_console(soft_wrap=False)))
    return 0


def _export(args: argparse.Namespace) -> int:
    from roofscope.errors import escape_controls
    from roofscope.output.parquet import ParquetDataset

    if not args.files:
        raise RoofscopeError("export: no files given", hint="roofscope export --parquet DIR FILE…")
    dataset = ParquetDataset(args.parquet)  # checks the folder, makes nothing yet
    for path in args.files:  # every missing file before anything is written
        if not Path(path).exists():
            raise RoofscopeError("no such file", path=path, hint="check the path")
    done: dict[str, int] = {}  # report id → launches (a file given twice is one report)
    groups = replaced = 0
    for path in args.files:
        session = load_session(args, [path])
        try:
            written = dataset.write(session, path)
        finally:
            session.close()
        if written.report not in done:
            groups += written.groups
            replaced += written.replaced
        done[written.report] = written.launches
    again = f", {replaced} replaced" if replaced else ""
    print(
        f"roofscope: {counted(len(done), 'report')}, {counted(sum(done.values()), 'launch')}, "
        f"{counted(groups, 'group')} "
        f"→ {escape_controls(str(dataset.root))}{again}"
    )
    return 0


def _monitor(args: argparse.Namespace) -> int:
    from roofscope.monitor.follow import FollowSource
    from roofscope.monitor.recorder import check_interval

    check_interval(args.interval)
    if args.stale_after is not None and (not args.follow or args.stale_after <= 0):
        raise RoofscopeError(
            "--stale-after needs --follow and a positive number of seconds",
            hint="e.g. --follow '/scratch/job/*.parquet' --stale-after 120",
        )
    if args.follow:
        source: GpuSource = FollowSource(list(args.follow), stale_after=args.stale_after)
    else:
        from roofscope.monitor.nvml import NvmlSource

        source = NvmlSource()  # fails here, with the one-line message, before any screen
    if args.once:
        return _once(source, args.format)
    try:  # after the GPUs are found: no NVML is the first thing to fix
        need_terminal(
            "monitor", "without one: roofscope monitor --once, or roofscope record --out FILE"
        )
    except RoofscopeError:
        source.close()
        raise
    from roofscope.tui.app import ascii_terminal
    from roofscope.tui.monitor_app import MonitorApp

    return _run_app(
        MonitorApp(
            lambda: source, interval=args.interval, ascii_only=args.ascii or ascii_terminal()
        )
    )


def _once(source: GpuSource, fmt: str) -> int:
    from roofscope.monitor.nvml import read_settled
    from roofscope.output.gpu import render_reading
    from roofscope.present.text import console as plain_console

    try:
        reading = read_settled(source)
    finally:
        source.close()
    if not reading.samples and not source.live:
        raise RoofscopeError(
            "no samples in the followed recordings", hint="check the pattern; quote it"
        )
    sys.stdout.write(render_reading(reading, fmt, plain_console(soft_wrap=False)))
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
        f"roofscope: recording {counted(len(source.handles), 'GPU')} on {source.host} every "
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
            warn=lambda message: print(f"roofscope: warning: {message}", file=sys.stderr),
        )
    finally:
        source.close()
    print(
        f"roofscope: {counted(result.samples, 'sample')} in {result.seconds:.1f} s "
        f"({result.skipped} ticks skipped) → {result.path}",
        file=sys.stderr,
    )
    return 0


def _record_summary(args: argparse.Namespace) -> int:
    from roofscope.output.gpu import render_summary
    from roofscope.present.text import console as plain_console
    from roofscope.session.recordings import recording_summaries

    check_recordings(args.summary)
    summaries, warnings = recording_summaries(list(args.summary))
    if args.format != "json":  # the JSON carries them
        for warning in warnings:
            print(f"roofscope: warning: {warning}", file=sys.stderr)
    console = plain_console(soft_wrap=False)
    sys.stdout.write(render_summary(summaries, args.format, console, warnings))
    return 0


COMMANDS = {
    "open": _open,
    "report": _report,
    "advise": _advise,
    "export": _export,
    **compare_commands.COMMANDS,
    "monitor": _monitor,
    "record": _record,
    "mcp": _mcp,
    **profile_commands.COMMANDS,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Whatever ends it, the user sees at most one line: a Ctrl+C is exit
    code 130, a failed write to standard output 141 (its reader went away) or 2 (closed,
    full), as :mod:`~roofscope.cli.exits` decides."""
    with Surroundings() as surroundings:
        try:
            try:
                code = _dispatch(argv, surroundings)
            except SystemExit:  # argparse: --help printed, or a usage error
                surroundings.flush()
                raise
            surroundings.flush()
        except OutputFailed as exc:
            return surroundings.output_exit(exc)
        except KeyboardInterrupt:
            return surroundings.interrupt_exit()
        except Exception:  # an interrupt DuckDB turned into its own error
            if not surroundings.interrupted:
                raise
            return surroundings.interrupt_exit()
        if surroundings.interrupted:  # an interrupt a fallback swallowed: the run is not whole
            return surroundings.interrupt_exit()
        return code


def _dispatch(argv: Sequence[str] | None, surroundings: Surroundings) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.debug:
        os.environ[DEBUG_ENV] = "1"  # readers below the CLI look at the environment
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return COMMANDS[args.command](args)
    except (OutputFailed, KeyboardInterrupt):
        raise
    except Exception as exc:
        if surroundings.interrupted:  # e.g. DuckDB's "Query interrupted": not a bug
            raise KeyboardInterrupt from exc
        return report_error(exc)


def report_error(exc: Exception) -> int:
    """Print what ended a command as one line and return the exit code: 2 for what the user
    can fix (bad input, a damaged cache, a missing extra, a broken install), 1 for a bug.
    With ``--debug`` the exception is raised again instead, traceback and all."""
    if isinstance(exc, OutputFailed):
        raise exc  # main decides: a closed or full standard output
    if isinstance(exc, RoofscopeError):
        print(exc.one_line(), file=sys.stderr)
        return 2
    damaged = _damaged_cache_error(exc)
    if damaged is not None:
        print(damaged.one_line(), file=sys.stderr)
        return 2
    if debug():
        raise exc
    if isinstance(exc, ImportError):  # a missing extra or a broken install: what to install
        print(missing_package_error(exc).one_line(), file=sys.stderr)
        return 2
    print(internal_error(exc).one_line(), file=sys.stderr)
    return 1


def _damaged_cache_error(exc: Exception) -> RoofscopeError | None:
    """The line for a cache that rotted under a command, None for anything else (also when
    the store itself cannot be imported: that is the error being reported)."""
    try:
        from roofscope.store import damaged_error, is_damaged
    except Exception:
        return None
    return damaged_error() if is_damaged(exc) else None
