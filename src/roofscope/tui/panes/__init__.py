"""One pane per view, each reachable by a number key."""
