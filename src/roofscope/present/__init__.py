"""How values read, for every front end: number formats, display text, and the column registry.

Below ``output/`` (the headless report), ``charts/`` and ``tui/`` (the panes), above
``quantities``: it imports neither front end nor any layer that computes (docs/decisions.md).
"""
