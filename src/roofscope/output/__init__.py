"""Headless renderings of a session's report dict: rich table, JSON, CSV, Markdown."""

from roofscope.output.render import FORMATS, render

__all__ = ["FORMATS", "render"]
