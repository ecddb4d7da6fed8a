"""The tools CI walks the README with: what tools/readme.py reads out of README.md is what a
new user copies, and tools/pty_run.py reads a screen's text out of what a program wrote."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.conftest import REPO


def _tool(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_the_readme_s_two_commands_are_what_ci_runs():
    readme = _tool("readme")
    install, tests = readme.commands()
    assert install.startswith("python3 -m pip install -e . && roofscope open sample_reports/")
    assert "[" not in install.split("&&")[0], "command 1 installs no extras"
    assert tests == "python3 -m pip install -e '.[test,profile]' && python3 -m pytest -q"
    assert (REPO / install.split()[-1]).is_file()
    snippet = readme.block("From Python", "python")
    assert "roofscope.load(" in snippet and "s.groups()" in snippet
    assert "pip install -e '.[pandas]'" in readme.block("From Python", "bash")


def test_commands_join_continued_lines_and_headings_in_code_are_code():
    readme = _tool("readme")
    text = (
        "## Quick start\n```bash\n# 1. install\npython3 -m pip install -e . && \\\n"
        "  roofscope open a.csv\n## a comment, not a heading\npython3 -m pytest -q\n```\n"
        "## From Python\n```python\nprint(1)\n```\n"
    )
    assert readme.commands(text) == [
        "python3 -m pip install -e . && roofscope open a.csv",
        "python3 -m pytest -q",
    ]
    assert readme.block("From Python", "python", text) == "print(1)\n"


def test_the_screen_text_is_what_was_written_without_escapes():
    pty_run = _tool("pty_run")
    written = b"\x1b[?1049h\x1b[1;1H\x1b[38;2;255;0;0mconv \x1b[0mfprop\x1b]0;title\x07 \x1b(B"
    assert pty_run.plain(written) == "conv fprop "
