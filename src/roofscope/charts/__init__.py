"""Terminal charts: pure functions of data and size, returning text (no Textual here)."""
