"""Security (DESIGN.md §8): no shell from user text, no evaluation of report content, and user
regexes that cannot hang the UI."""

from __future__ import annotations

import ast
import csv
import threading
from pathlib import Path

import pytest

import roofscope
from roofscope.analysis.browse import Filter
from roofscope.errors import RoofscopeError
from roofscope.grouping import Grouper, Rule
from roofscope.regex import check_regex, search
from roofscope.tui.app import RoofscopeApp
from tests.conftest import SAMPLES
from tests.screen_text import screen_text
from tests.test_tui import opened, settle

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

SRC = Path(roofscope.__file__).parent
RESNET = SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"
HOSTILE = (
    "[bold red]x[/] [/] [link=https://example.com]y[/link] $(touch pwned) `id` "
    "'; DROP TABLE launches; -- \"q\" {__import__('os')} %s %(x)s \\x00"
)
_SERVERS = {"textual_serve", "socketserver", "http", "aiohttp", "flask", "fastapi"}
CATASTROPHIC = [r"(a+)+$", r"(a|aa)*c", r"(.*a){20}", r"(\w+\s?)+$", r"^(a?){30}a{30}$"]


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield node


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return f"{_name(func.value)}.{func.attr}"
    return func.id if isinstance(func, ast.Name) else ""


def test_no_shell_no_evaluation_and_no_server_anywhere_in_the_source():
    offences = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for call in _calls(tree):
            name = _name(call.func)
            where = f"{path.relative_to(SRC)}:{call.lineno} {name}"
            if name in {"eval", "exec", "os.system", "os.popen", "pickle.load", "pickle.loads"}:
                offences.append(where)
            if any(k.arg == "shell" for k in call.keywords):
                offences.append(f"{where} shell=")
            is_spawn = name.startswith("subprocess.") or name in {"Popen", "run", "check_output"}
            if is_spawn and call.args and isinstance(call.args[0], ast.Constant | ast.JoinedStr):
                offences.append(f"{where} with a command string")
            if name.endswith(".bind") or name.endswith(".listen"):
                offences.append(f"{where}: a listening socket")
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if any(n.split(".")[0] in _SERVERS for n in names):
                    offences.append(f"{path.relative_to(SRC)}:{node.lineno} imports a server")
    assert offences == []


def _run_bounded(fn, seconds: float = 10.0):
    """Run fn in a thread; a backtracking engine would still be running when we give up."""
    result: list = []
    thread = threading.Thread(target=lambda: result.append(fn()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "regex matching did not finish: catastrophic backtracking"
    return result[0]


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_pathological_regexes_finish_on_long_names(pattern):
    names = ["a" * 10_000 + "!", "a" * 40, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b"]
    hits = _run_bounded(lambda: search(pattern, names))
    assert len(hits) == len(names)
    grouper = Grouper([Rule(pattern, "hostile", "test")])
    decided = _run_bounded(lambda: grouper.match_all(names))
    assert [g for g, _ in decided][1] in {"hostile", "a" * 40}


def test_rules_re2_cannot_run_are_rejected_with_a_hint():
    with pytest.raises(RoofscopeError, match="not supported") as err:
        Grouper([Rule(r"(a)\1", "backref", "roofscope.toml")])
    assert "roofscope.toml" in err.value.one_line()
    with pytest.raises(RoofscopeError, match="invalid regular expression"):
        check_regex("(unclosed")


def _hostile_copy(tmp_path: Path) -> Path:
    with RESNET.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index("Kernel Name")
    first = rows[2][col]
    for row in rows[2:]:
        if row[col] == first:
            row[col] = HOSTILE
    out = tmp_path / "hostile.ncu-raw.csv"
    with out.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, quoting=csv.QUOTE_ALL).writerows(rows)
    return out


def test_report_text_is_data_never_code(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    session = roofscope.load(_hostile_copy(tmp_path))
    assert HOSTILE in {r["name"] for r in session.reports[0].rows("kernel")}
    assert session.con.execute("SELECT count(*) FROM launches").fetchone()[0] == 361
    assert not (tmp_path / "pwned").exists()
    hits = session.reports[0].rows("kernel", flt=Filter(regex=r"DROP TABLE"))
    assert [r["name"] for r in hits] == [HOSTILE]


async def test_tui_shows_markup_in_names_verbatim(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = RoofscopeApp([str(_hostile_copy(tmp_path))])
    async with app.run_test(size=(160, 50)) as pilot:
        await opened(app, pilot)
        for keys in ("/", *"(a+)+$", "enter", "escape", "/", *"DROP", "enter", "enter"):
            await pilot.press(keys)
        await settle(app, pilot)
        assert "[bold red]x[/] [/] [link=https://ex" in screen_text(app)
        await pilot.press("4")  # Detail of that launch: every value as text
        await settle(app, pilot)
        assert app.is_running and "launch 355" in screen_text(app)
    assert not (tmp_path / "pwned").exists()
