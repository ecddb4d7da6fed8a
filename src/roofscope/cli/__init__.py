"""Command line: ``open`` (the TUI), ``report``, ``diff``, ``scaling``, ``cost`` and ``mig``
(headless), ``monitor`` and ``record`` (GPUs), ``profile``, ``runs``, ``doctor`` and
``ceilings`` (profiling bundled models).

One package so the commands share one set of options (:mod:`~roofscope.cli.options`) and one
entry point, ``roofscope.cli:main``. Errors a user can cause are printed as one line,
``roofscope: FILE: what is wrong (hint)``, with exit code 2. pandas and Textual are never
imported here.
"""

from roofscope.cli.commands import build_parser, main

__all__ = ["build_parser", "main"]
