"""The TUI's floor plan holds by construction: one pane base, one registry, no per-pane code in
the app, and a help screen made from the bindings (so a new key cannot be missing from it)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import roofscope.tui.panes as panes_package
from roofscope.tui.app import APP_KEYS, HELP_TAIL, RoofscopeApp
from roofscope.tui.help import help_text
from roofscope.tui.monitor_app import MonitorApp
from roofscope.tui.panes.base import Pane
from roofscope.tui.panes.registry import PANES, pane_classes

APP_SOURCE = Path(inspect.getfile(RoofscopeApp)).read_text()


def _pane_classes() -> set[type[Pane]]:
    found = set()
    for module in pkgutil.iter_modules(panes_package.__path__):
        mod = importlib.import_module(f"roofscope.tui.panes.{module.name}")
        for _, obj in inspect.getmembers(mod, inspect.isclass):
            if issubclass(obj, Pane) and obj is not Pane and obj.__module__ == mod.__name__:
                found.add(obj)
    return found


def test_every_pane_subclasses_the_base_and_is_registered_once():
    assert set(pane_classes()) == _pane_classes()
    keys = [entry.KEY for entry in PANES]
    assert len(set(keys)) == len(keys)
    assert all(entry.TITLE for entry in PANES)


def test_each_registry_entry_says_what_its_class_says():
    """The registry names each pane before its module is imported: the names must agree."""
    for entry in PANES:
        cls = entry.load()
        assert (entry.KEY, entry.TITLE, entry.NEEDS_REPORT) == (
            cls.KEY,
            cls.TITLE,
            cls.NEEDS_REPORT,
        ), cls.__name__


def test_the_app_has_no_per_pane_code_and_no_type_ignores():
    assert "type: ignore" not in APP_SOURCE
    for cls in pane_classes():
        assert cls.__name__ not in APP_SOURCE, f"app.py names {cls.__name__}"
        assert not re.search(rf"[\"']{cls.KEY}[\"']", APP_SOURCE), f"app.py spells {cls.KEY!r}"


def test_no_pane_or_dialog_reaches_into_the_app():
    for path in Path(panes_package.__path__[0]).parent.rglob("*.py"):
        if path.name != "app.py":
            source = path.read_text()
            assert "tui.app" not in source and not re.search(r"\brapp\b", source), path


def _described(binding) -> str:
    what = binding.tooltip or binding.description
    return what[1:]  # the help may lower-case the first letter


def test_help_lists_every_binding_of_every_pane():
    app_bindings = [b for b in RoofscopeApp.BINDINGS if "show_pane" not in b.action]
    help_shown = help_text("roofscope", pane_classes(), app_bindings, APP_KEYS, HELP_TAIL).plain
    text = " ".join(help_shown.split())  # wrapped lines joined
    for number, cls in enumerate(pane_classes(), start=1):
        assert f"{number}  {cls.TITLE}" in help_shown
        for binding in cls.BINDINGS:
            assert _described(binding) in text, (cls.__name__, binding)
        for key, what in cls.KEYS:
            assert f"  {key}" in help_shown and what in text
    for binding in app_bindings:
        assert _described(binding) in text
    assert max(len(line) for line in help_shown.splitlines()) <= 80


def test_monitor_help_is_its_pane_without_numbers():
    text = help_text("roofscope monitor", [PANES[4].load()], MonitorApp.BINDINGS).plain
    assert "Monitor (GPUs)" in text and "5  Monitor" not in text
