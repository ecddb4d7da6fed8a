"""Project gates that run with the tests: ruff, and the layering contracts of DESIGN.md §3."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import REPO


def _tool(name: str) -> str:
    exe = shutil.which(name)
    if exe is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return exe


@pytest.mark.parametrize("args", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff(args):
    out = subprocess.run(
        [_tool("ruff"), *args, "src", "tests", "bench", "tools"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_import_layering_contracts():
    """Lower layers never import Textual; only profiling/ imports torch (pyproject contracts)."""
    out = subprocess.run(
        [_tool("lint-imports")], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "broken" not in out.stdout.lower().replace("0 broken", "")
