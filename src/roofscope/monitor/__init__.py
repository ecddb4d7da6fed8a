"""Live GPU data: a sample-source protocol, the NVML(+GPM) source, the recorder that writes
Parquet on training nodes and the follower that reads it back.

Nothing here imports Textual: the Monitor pane, ``roofscope record`` and ``roofscope monitor
--once`` all read the same :class:`~roofscope.telemetry.sample.Reading`. The sample model, the
history and the recording format are data, not live code: they live in :mod:`roofscope.telemetry`.
"""
