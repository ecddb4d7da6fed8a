"""Physics on top of the store: efficiency, bounds, grouping summaries, headroom ranking."""
