"""``roofscope mcp``: the store's answers (groups, roofline, efficiency, advice) served to coding
agents over the Model Context Protocol. ``tools`` computes them without the SDK; ``server``
registers them with the official ``mcp`` SDK, imported only by this command."""
