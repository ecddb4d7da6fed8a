"""`roofscope open` without files (start screen) and through the CLI entry point."""

from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
import sys

import pytest
from textual.widgets import OptionList

from roofscope.tui.app import RoofscopeApp, StartScreen, start_choices
from tests.conftest import REPO, SAMPLES
from tests.test_tui import groups, opened

SAMPLE = SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes


def test_start_choices_list_the_bundled_samples(in_tmp_cwd):
    names = [c.rsplit("/", 1)[-1] for c in start_choices()]
    assert "resnet18_fp32_h100.ncu-raw.csv" in names
    assert "h100_matmul.parquet" in names  # the recording opens in pane 5


def test_start_screen_shows_short_paths(tmp_path, monkeypatch):
    from pathlib import Path

    from roofscope.tui.app import _short_path

    monkeypatch.chdir(tmp_path)
    assert _short_path(str(tmp_path / "sample_reports" / "a.csv")) == "sample_reports/a.csv"
    assert _short_path(str(Path.home() / "x" / "b.csv")) in ("~/x/b.csv", "x/b.csv")
    assert _short_path("/elsewhere/c.csv") == "/elsewhere/c.csv"


async def test_start_screen_opens_the_chosen_report(in_tmp_cwd):
    app = RoofscopeApp([])
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.2)
        assert isinstance(app.screen, StartScreen)
        options = app.screen.query_one(OptionList)
        index = next(
            i
            for i in range(options.option_count)
            if str(options.get_option_at_index(i).id).endswith("resnet18_fp32_h100.ncu-raw.csv")
        )
        options.highlighted = index
        await pilot.press("enter")
        await opened(app, pilot)
        assert "conv fprop" in groups(app)


def test_open_with_a_missing_file_is_one_line_and_exit_2(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "roofscope", "open", str(tmp_path / "x.csv")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stderr.startswith("roofscope: ") and out.stderr.count("\n") == 1


def _pty_run():
    """tools/pty_run.py, which CI also drives README command 1 with (standard library only)."""
    spec = importlib.util.spec_from_file_location("pty_run", REPO / "tools" / "pty_run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pty_run"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


ENTRY = "import sys; from roofscope.cli import main; sys.exit(main())"
HIDE_NUMPY = (
    "import sys; sys.modules['numpy'] = None; from roofscope.cli import main; sys.exit(main())"
)


def test_open_in_a_real_terminal_draws_the_kernels_table_and_q_quits(tmp_path):
    env = {**os.environ, "ROOFSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    run = _pty_run().run_on_pty(
        [sys.executable, "-c", ENTRY, "open", str(SAMPLE)], until="conv fprop", keys="q", env=env
    )
    assert run.drawn_s is not None, run.text[-500:]
    assert run.exit_code == 0


def test_open_without_a_terminal_exits_2_in_one_line_pointing_to_report(tmp_path):
    env = {**os.environ, "ROOFSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    piped = subprocess.run(  # stdin from /dev/null, as in a batch job
        [sys.executable, "-c", ENTRY, "open", str(SAMPLE)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert piped.returncode == 2 and piped.stdout == ""
    assert piped.stderr.count("\n") == 1
    assert "standard input is not one" in piped.stderr and "roofscope report" in piped.stderr
    # a terminal to read keys from, but the screen goes into a pipe
    python = f"{shlex.quote(sys.executable)} -c {shlex.quote(ENTRY)}"
    command = f"set -o pipefail; {python} open {SAMPLE} | cat"
    run = _pty_run().run_on_pty(["bash", "-c", command], env=env)
    assert run.exit_code == 2
    assert "needs a terminal, and standard output is not one" in run.text


def test_an_error_in_the_app_is_one_line_and_debug_gives_the_traceback(tmp_path):
    """A package gone missing (a broken install) ends the app with one line, not Textual's
    traceback with every local; ``--debug`` brings the traceback back."""
    pty_run = _pty_run()
    for debug, code in ((False, 2), (True, 1)):
        env = {**os.environ, "ROOFSCOPE_CACHE_DIR": str(tmp_path / f"cache{debug}")}
        argv = [sys.executable, "-c", HIDE_NUMPY, *(["--debug"] if debug else []), "open"]
        run = pty_run.run_on_pty([*argv, str(SAMPLE)], env=env, timeout=120)
        assert run.exit_code == code, run.text[-800:]
        if debug:
            assert "Traceback" in run.text or "ModuleNotFoundError" in run.text
            continue
        assert "Traceback" not in run.text and "locals" not in run.text
        # one line says it; under load the screen's last frame can share its line in the
        # captured text, so look for the line rather than at the last one
        said = [line for line in run.text.splitlines() if "roofscope: the install is" in line]
        assert len(said) == 1, run.text[-800:]
        assert "roofscope: the install is broken: roofscope needs numpy" in said[0], said
