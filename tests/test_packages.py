"""Every package roofscope imports is declared, and a missing one is one line.

A fresh ``pip install -e .`` once crashed on every ncu CSV because numpy was imported but
declared nowhere (CI's test extras pulled it in through pandas). Here every import under
``src/roofscope`` is parsed and checked against ``pyproject.toml`` through the one table of
:mod:`roofscope.packages`; an optional package (an extra) may be imported at module level only
by modules the CLI, TUI and Python API reach through :func:`roofscope.packages.needs`; and
with the extras hidden the commands still run, or say in one line which extra to install.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tomllib

import pytest

from roofscope.packages import CORE, OPTIONAL, missing_package_error
from tests.conftest import REPO, SAMPLES

SRC = REPO / "src"
SAMPLE = SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"
# where a run of the CLI, the TUI or ``roofscope.load()`` starts: none may need an extra
ENTRY_POINTS = (
    "roofscope",
    "roofscope.cli",
    "roofscope.cli.commands",
    "roofscope.session",
    "roofscope.tui.app",
    "roofscope.tui.monitor_app",
    "roofscope.mcp.tools",
    "roofscope.output",
)


def _normal(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    return _normal(re.split(r"[ <>=!~;\[]", requirement.strip(), maxsplit=1)[0])


def _module_name(path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.Module, module: str) -> tuple[set[str], set[str]]:
    """(every absolute module this file imports, those imported when the module itself is
    imported: at module level, outside ``if TYPE_CHECKING``, not inside a function)."""
    every: set[str] = set()
    at_import: set[str] = set()
    package = module if module.count(".") == 0 else module.rsplit(".", 1)[0]

    def names(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        if node.level:  # relative: from . import x
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            return [f"{base}.{node.module}" if node.module else base]
        assert node.module is not None
        return [node.module] + [f"{node.module}.{a.name}" for a in node.names]

    def walk(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                found = names(child)
                every.update(found)
                if top:
                    at_import.update(found)
            elif isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
            ) or _is_type_checking(child):
                walk(child, False)
            else:
                walk(child, top)

    walk(tree, True)
    return every, at_import


def _source_imports() -> dict[str, tuple[set[str], set[str]]]:
    found = {}
    for path in sorted((SRC / "roofscope").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found[_module_name(path)] = _imports(tree, _module_name(path))
    return found


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_every_third_party_import_is_declared_in_pyproject():
    project = _pyproject()
    core = {_requirement_name(r) for r in project["dependencies"]}
    extras = {
        extra: {_requirement_name(r) for r in requirements}
        for extra, requirements in project["optional-dependencies"].items()
    }
    third_party = {
        name.split(".")[0]
        for every, _ in _source_imports().values()
        for name in every
        if name.split(".")[0] not in sys.stdlib_module_names and not name.startswith("roofscope")
    }
    assert third_party, "the parser found no imports"
    undeclared = third_party - CORE.keys() - OPTIONAL.keys()
    assert not undeclared, (
        f"imported by src/roofscope, in no list of roofscope.packages: {undeclared}"
    )
    for module in sorted(third_party & CORE.keys()):
        assert _normal(CORE[module]) in core, (
            f"{module}: {CORE[module]} not in [project] dependencies"
        )
    for module in sorted(third_party & OPTIONAL.keys()):
        extra = OPTIONAL[module]
        assert extra.extra in extras, f"{module}: no extra [{extra.extra}] in pyproject.toml"
        assert _normal(extra.distribution) in extras[extra.extra], (
            f"{module}: {extra.distribution} not in the [{extra.extra}] extra"
        )
        assert _normal(extra.distribution) not in core, f"{module} is an extra, not a dependency"
    # and nothing is declared that nothing imports (the table is the whole truth)
    assert core == {_normal(d) for d in CORE.values()}


def test_the_table_names_the_distribution_each_module_comes_from():
    """Where a package is installed, its metadata says which distribution brings the module."""
    installed = importlib.metadata.packages_distributions()
    table = {**CORE, **{m: e.distribution for m, e in OPTIONAL.items()}}
    checked = 0
    for module, distribution in table.items():
        if module in installed:
            assert _normal(distribution) in {_normal(d) for d in installed[module]}, module
            checked += 1
    assert checked >= len(CORE)


def test_entry_points_reach_no_extra_at_import_time():
    """An extra imported at module level is fine only where every importer needs it too
    (torch in the bundled models, the MCP SDK in mcp/server.py): the CLI, TUI and
    ``roofscope.load()`` must import without any extra installed."""
    needs_extra = _needs_extra(_source_imports())
    assert needs_extra, "no module imports an extra at module level: the check checks nothing"
    assert not needs_extra & set(ENTRY_POINTS), sorted(needs_extra & set(ENTRY_POINTS))
    assert all(
        m.startswith(("roofscope.profiling.", "roofscope.mcp.server"))
        or m == "roofscope.ingest.ncu.report_worker"  # run as a process of its own (-m)
        for m in needs_extra
    ), sorted(needs_extra)


def _needs_extra(graph: dict[str, tuple[set[str], set[str]]]) -> set[str]:
    """Modules that import an extra when imported, directly or through another module."""
    found = {
        module
        for module, (_, at_import) in graph.items()
        if any(name.split(".")[0] in OPTIONAL for name in at_import)
    }
    changed = True
    while changed:
        changed = False
        for module, (_, at_import) in graph.items():
            if module not in found and any(
                name in found or name.rsplit(".", 1)[0] in found for name in at_import
            ):
                found.add(module)
                changed = True
    return found


def _guarded(node: ast.AST) -> bool:
    """``with needs(...):`` or ``try: … except ImportError``/``ModuleNotFoundError``."""
    if isinstance(node, ast.With):
        return any(
            isinstance(item.context_expr, ast.Call)
            and ast.unparse(item.context_expr.func).split(".")[-1] == "needs"
            for item in node.items
        )
    if isinstance(node, ast.Try):
        caught = " ".join(ast.unparse(h.type) for h in node.handlers if h.type is not None)
        return "ImportError" in caught or "ModuleNotFoundError" in caught
    return False


def test_an_extra_imported_in_a_function_says_which_extra_when_it_is_missing():
    """Where the CLI, TUI or Python API import an extra (or a module built on one) inside a
    function, it is under ``with needs(...)`` (or a ``try`` that catches the ImportError), so
    that a missing extra is one line naming it, never a traceback."""
    graph = _source_imports()
    extra = _needs_extra(graph)
    bare = []
    for path in sorted((SRC / "roofscope").rglob("*.py")):
        module = _module_name(path)
        if module in extra:  # it needs the extra itself; whoever imports it is checked
            continue

        def walk(node: ast.AST, in_function: bool, guarded: bool, module: str = module) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.Import | ast.ImportFrom) and in_function:
                    names = (
                        [a.name for a in child.names]
                        if isinstance(child, ast.Import)
                        else [child.module or ""]
                    )
                    needing = [
                        n
                        for n in names
                        if n.split(".")[0] in OPTIONAL or n in extra or n.rsplit(".", 1)[0] in extra
                    ]
                    if needing and not guarded:
                        bare.append(f"{module}:{child.lineno} {', '.join(needing)}")
                function = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                walk(
                    child,
                    in_function or function,
                    (guarded or _guarded(child)) and not _is_type_checking(child),
                )

        walk(ast.parse(path.read_text(encoding="utf-8")), False, False)
    assert not bare, bare


def test_a_missing_extra_names_it_and_a_missing_core_package_is_a_broken_install():
    line = missing_package_error(ModuleNotFoundError("x", name="pandas"), "s.groups()").one_line()
    assert line.startswith("roofscope: s.groups() needs the pandas package")
    assert "pip install 'roofscope[pandas]'" in line
    line = missing_package_error(ModuleNotFoundError("x", name="numpy.core")).one_line()
    assert "the install is broken" in line and "numpy" in line and "reinstall" in line
    assert "\n" not in line


HIDE = """
import sys
for name in {hidden!r}:
    sys.modules[name] = None  # as if not installed: importing it raises ImportError
"""


def _python(code: str, tmp_path, hidden: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    env = {"ROOFSCOPE_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-c", HIDE.format(hidden=hidden) + code],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={**env, "HOME": str(tmp_path), "PYTHONPATH": str(SRC)},
    )


@pytest.mark.slow
def test_without_the_extras_the_commands_run_and_the_frames_say_which_extra(tmp_path):
    code = f"""
from roofscope.cli import main
import roofscope, roofscope.tui.app
assert main(["report", {str(SAMPLE)!r}, "--format", "json"]) == 0
assert main(["advise", {str(SAMPLE)!r}]) == 0
for argv in (["mcp"], ["profile", "vgg11", "--estimate"]):
    assert main(argv) == 2, argv
s = roofscope.load({str(SAMPLE)!r})
try:
    s.groups()
except roofscope.RoofscopeError as exc:
    print(exc)
"""
    result = _python(code, tmp_path, tuple(OPTIONAL))
    assert result.returncode == 0, result.stderr[-3000:]
    err = result.stderr.splitlines()
    assert any("roofscope mcp needs the mcp package" in e and "roofscope[mcp]" in e for e in err)
    assert any("--estimate needs the torch package" in e and "roofscope[profile]" in e for e in err)
    assert "Session.groups() needs the pandas package" in result.stdout
    assert "pip install 'roofscope[pandas]'" in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_broken_install_is_one_line_and_debug_gives_the_traceback(tmp_path):
    code = f"""
from roofscope.cli import main
sys.exit(main([*sys.argv[1:], "report", {str(SAMPLE)!r}]))
"""
    result = _python(code, tmp_path, ("numpy",))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "the install is broken: roofscope needs numpy" in result.stderr
    code = code.replace("[*sys.argv[1:], ", '["--debug", ')
    result = _python(code, tmp_path / "again", ("numpy",))
    assert result.returncode == 1 and "Traceback" in result.stderr
    assert "ModuleNotFoundError" in result.stderr
