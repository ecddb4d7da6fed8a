"""Live GPU data: a sample-source protocol, the NVML(+GPM) source, a bounded history, the
recorder that writes Parquet on training nodes and the follower that reads it back.

Nothing here imports Textual: the Monitor pane, ``roofscope record`` and ``roofscope monitor
--once`` all read the same :class:`~roofscope.monitor.sample.Reading`.
"""
