"""`roofscope open` without files (start screen) and through the CLI entry point."""

from __future__ import annotations

import subprocess
import sys

from textual.widgets import OptionList

from roofscope.tui.app import RoofscopeApp, StartScreen, start_choices
from tests.test_tui import groups, opened


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
