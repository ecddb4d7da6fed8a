"""Headless renderings of a session's report dict: rich table, JSON, CSV, Markdown
(``output.render.render``), and the files the TUI exports (``output.export``).

Nothing is imported here: the TUI imports ``output.export`` on its way to the first screen,
and ``render`` would bring rich's console and the analysis modules (~10 ms) with it.
"""
