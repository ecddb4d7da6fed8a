"""Which third-party package each import of roofscope needs, which extra of ``pyproject.toml``
brings it, and the one line a missing one gives.

One table, so that the CLI, the TUI, the Python API and the test that checks every import is
declared (``tests/test_packages.py``) agree. A package in :data:`CORE` comes with
``pip install roofscope``; one missing means the install is broken. A package in
:data:`OPTIONAL` comes with an extra and is imported only by the command that needs it,
through :func:`needs`, so that a user without the extra gets
``roofscope: … needs pandas (pip install 'roofscope[pandas]')`` instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from roofscope.errors import RoofscopeError, debug

# import name → distribution on PyPI, for ``[project] dependencies``
CORE: dict[str, str] = {
    "adbc_driver_manager": "adbc-driver-manager",
    "adbc_driver_sqlite": "adbc-driver-sqlite",
    "duckdb": "duckdb",
    "numpy": "numpy",
    "platformdirs": "platformdirs",
    "plotext": "plotext",
    "pyarrow": "pyarrow",
    "pynvml": "nvidia-ml-py",
    "rich": "rich",
    "textual": "textual",
}


@dataclass(frozen=True)
class Extra:
    """An optional package: its distribution and the extra of roofscope that installs it."""

    distribution: str
    extra: str

    @property
    def install(self) -> str:
        return f"pip install 'roofscope[{self.extra}]'"


# import name → the extra that brings it
OPTIONAL: dict[str, Extra] = {
    "pandas": Extra("pandas", "pandas"),
    "torch": Extra("torch", "profile"),
    "mcp": Extra("mcp", "mcp"),
    "ncu_report": Extra("ncu-report", "ncu-rep"),
}


def missing_package_error(exc: ImportError, what: str | None = None) -> RoofscopeError:
    """The one line for an import that failed: an extra to install, or a broken install.

    ``what`` names the command or call that needed the package (``s.groups()``, ``roofscope
    mcp``); without it the sentence says only which package is missing."""
    name = (exc.name or "").split(".")[0]
    needed = f"{what} needs" if what else "roofscope needs"
    if name in OPTIONAL:
        extra = OPTIONAL[name]
        return RoofscopeError(
            f"{needed} the {extra.distribution} package, which is not installed",
            hint=f"{extra.install}, or pip install -e '.[{extra.extra}]' in a clone",
        )
    package = CORE.get(name, name or "a module")
    detail = "" if exc.name else f" ({' '.join(str(exc).split())[:120]})"
    return RoofscopeError(
        f"the install is broken: {needed} {package}, which cannot be imported{detail}",
        hint="reinstall: python3 -m pip install --force-reinstall roofscope, or "
        "python3 -m pip install -e . in a clone",
    )


@contextmanager
def needs(what: str) -> Iterator[None]:
    """Import a package (or a roofscope module built on one) for ``what``; a missing package
    becomes :func:`missing_package_error`'s one line. Other errors pass through."""
    try:
        yield
    except ImportError as exc:
        if debug():
            raise
        raise missing_package_error(exc, what) from None
