"""Names read from exports and user files are data (issue 16 item 8): every output shows them
verbatim, never as Rich/Textual markup, with control characters written visibly, so a kernel
named ``[/]`` cannot crash a table and ``ESC [2J`` cannot clear the user's terminal."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from roofscope.present.text import shown
from roofscope.tui.app import RoofscopeApp
from roofscope.tui.panes.kernels import KernelsPane
from tests.conftest import run_cli
from tests.ncu_builder import raw_page, write
from tests.nsys_builder import Export, Kernel
from tests.screen_text import screen_text
from tests.test_tui import opened, settle

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

NAMES = [
    "[/]",
    "[link=http://x]k[/link]",
    "[fp32] gemm",
    "k\x1b[2J\x1b]0;pwned\x07",
    "\x9b31m",
    "tab\there\x01",
]
# what a terminal must show for each: verbatim, control characters escaped
VISIBLE = [shown(n) for n in NAMES]
RAW = ("\x1b", "\x9b", "\x07", "\x01")
RULE_NAME = "[b]grp[/b] \x1b]0;t\x07"  # a grouping rule's name, from roofscope.toml
UNITS = {
    "gpu__time_duration.sum": "nsecond",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "inst",
    "dram__bytes.sum": "byte",
}


def hostile_ncu(folder: Path) -> Path:
    launches = [
        (
            name,
            {
                "gpu__time_duration.sum": str(1000 * (i + 1)),
                "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "1000000",
                "dram__bytes.sum": "1000000",
            },
        )
        for i, name in enumerate(NAMES)
    ]
    return write(folder / "hostile.ncu-raw.csv", raw_page(launches, UNITS))


def hostile_nsys(folder: Path) -> Path:
    """Kernels and an NVTX range with the same names, on a real nsys schema."""
    us = 1000
    kernels = [Kernel(n, (10 + 20 * i) * us, (20 + 20 * i) * us) for i, n in enumerate(NAMES)]
    ranges = [(0, 500 * us, NAMES[0]), (1 * us, 400 * us, NAMES[3])]
    return Export(kernels=kernels, ranges=ranges).write(folder / "hostile.sqlite")


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """In-process (the CLI's own output path, bytes as written); a wide terminal so that no
    name is shortened."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COLUMNS", "250")
        return run_cli(*args, cwd=cwd)


@pytest.mark.parametrize("fmt", ["table", "md", "csv", "json"])
def test_report_shows_hostile_kernel_names_verbatim(fmt, tmp_path):
    path = hostile_ncu(tmp_path)
    out = _run("report", str(path), "--by", "kernel", "--format", fmt, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    if fmt == "json":  # the real strings: JSON escapes control characters itself
        names = {r["name"] for r in json.loads(out.stdout)["reports"][0]["rows"]}
        assert names == set(NAMES)
        return
    assert not any(c in out.stdout for c in RAW), "a control character reached the terminal"
    for name in VISIBLE:
        assert name in out.stdout, name


@pytest.mark.parametrize("fmt", ["table", "md", "csv"])
def test_nvtx_ranges_and_rule_names_are_data(fmt, tmp_path):
    (tmp_path / "roofscope.toml").write_text(
        f'[[groups]]\npattern = "gemm"\nname = {json.dumps(RULE_NAME)}\n', encoding="utf-8"
    )
    nsys = hostile_nsys(tmp_path)
    out = _run("report", str(nsys), "--nvtx", "innermost", "--format", fmt, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert not any(c in out.stdout for c in RAW)
    assert VISIBLE[3] in out.stdout  # the innermost range
    rules = _run("report", str(hostile_ncu(tmp_path)), "--format", fmt, cwd=tmp_path)
    assert rules.returncode == 0, rules.stderr
    assert shown(RULE_NAME) in rules.stdout and "\x1b" not in rules.stdout


def _no_raw_controls(app: RoofscopeApp) -> str:
    text = screen_text(app)
    assert not any(c in text for c in RAW), "a control character reached the screen"
    return text


async def test_every_pane_shows_hostile_names_verbatim(tmp_path, monkeypatch):
    """Kernels (groups and launches), Detail, Roofline, Efficiency, Compare, Timeline,
    the palette and the rule editor: nothing crashes and the names read as written."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "roofscope.toml").write_text(
        f'[[groups]]\npattern = "gemm"\nname = {json.dumps(RULE_NAME)}\n', encoding="utf-8"
    )
    ncu, nsys = hostile_ncu(tmp_path), hostile_nsys(tmp_path)
    other = write(tmp_path / "other.ncu-raw.csv", ncu.read_text(encoding="utf-8"))
    app = RoofscopeApp([str(ncu), str(other), str(nsys)])
    async with app.run_test(size=(160, 50)) as pilot:
        await opened(app, pilot)
        text = _no_raw_controls(app)
        assert shown(RULE_NAME) in text and "[/]" in text
        # grouped by base name: its launch has the full name
        app.query_one(KernelsPane).jump_to("k")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert "[link=http://x]k[/link]" in _no_raw_controls(app)
        await pilot.press("escape")
        for name in ("[/]", "[fp32] gemm"):
            app.query_one(KernelsPane).jump_to(name if name == "[/]" else RULE_NAME)
            await settle(app, pilot)
        for key in "4237":  # Detail, Roofline, Efficiency, Compare
            await pilot.press(key)
            await settle(app, pilot)
            text = _no_raw_controls(app)
            assert app.is_running, key
        assert shown(RULE_NAME) in text or "[/]" in text  # Compare rows
        await pilot.press("full_stop", "full_stop", "8")  # the nsys report: Timeline
        await settle(app, pilot)
        _no_raw_controls(app)
        app.query_one(KernelsPane).set_axis("nvtx-inner")
        await pilot.press("1")
        await settle(app, pilot)
        assert VISIBLE[3] in _no_raw_controls(app)
        app.notify(f"note about {NAMES[3]} {NAMES[0]}")
        await pilot.press("ctrl+p", *"Group")
        await settle(app, pilot)
        assert VISIBLE[3] in _no_raw_controls(app)
        await pilot.press("escape", "question_mark")
        await settle(app, pilot)
        assert app.is_running
    assert app.return_code in (None, 0)


# -- numbers are never cut to a prefix (issue 16 item 4g) -------------------------------------
def test_group_columns_fit_large_numbers_without_cutting():
    """1,000,000 launches read "1,000," in a 6-wide column: now a compact 1M."""
    from roofscope.tui.panes.kernels import GROUP_COLUMNS, NSYS_COLUMNS

    for columns in (GROUP_COLUMNS, NSYS_COLUMNS):
        (fmt, width) = next((c.fmt, c.width) for c in columns if c.key == "launches")
        for n, expect in ((999, "999"), (1_000_000, "1M"), (123_456_789, "123M")):
            text = fmt(n)
            assert len(text) <= width and (text == expect or text == f"{n:,}"), (n, text)


async def test_a_table_cell_wider_than_its_column_widens_it():
    """Any number in a PlainTable keeps every digit: the column grows, names are cut."""
    from textual.app import App

    from roofscope.tui.widgets.plain import PlainTable

    class One(App[None]):
        def compose(self):
            table = PlainTable(id="t", squeeze=("name",))
            table.add_column("name", width=6)
            table.add_column("n", width=4)
            yield table

        def on_mount(self) -> None:
            self.query_one(PlainTable).add_row("a very long kernel name", "1,000,000")

    app = One()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "1,000,000" in text and "a ver…" in text
