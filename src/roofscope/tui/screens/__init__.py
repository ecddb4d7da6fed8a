"""Modal and full screens: help, start, rule editor, export, filter."""
