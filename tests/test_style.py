"""Project gates that run with the tests: ruff, and the layering contracts of DESIGN.md §3."""

from __future__ import annotations

import re
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


def test_no_import_circles():
    """No two modules of roofscope import each other, directly or around a circle (Tarjan's
    strongly connected components over grimp's graph): hardware/mig ↔ specs and the session's
    core ↔ contract/decisions/frames were the last two."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("roofscope", include_external_packages=False)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    circles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on.add(module)
        for other in graph.find_modules_directly_imported_by(module):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            circle = []
            while True:
                other = stack.pop()
                on.discard(other)
                circle.append(other)
                if other == module:
                    break
            if len(circle) > 1:
                circles.append(sorted(circle))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    assert not circles, circles


LAYOUT_NAME = re.compile(
    r"\.layout\.startswith|\.layout ==|\"(ncu|nsys)-[a-z]+\"|\"gpu-recording\""
)


def test_nothing_above_ingest_tests_a_layout_name():
    """A report's kind is its reader's Layout record (family, timeline, counters…): a format
    added by a reader module and a registry line needs no branch above ingest/."""
    found = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in sorted((REPO / "src" / "roofscope").rglob("*.py"))
        if "ingest" not in path.relative_to(REPO / "src" / "roofscope").parts[:1]
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if LAYOUT_NAME.search(line) and "Extra(" not in line
    ]
    assert not found, found
