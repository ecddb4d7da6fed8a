"""GPU telemetry as data: the sample model, the bounded series history and the recording format.

A low layer: store, ingest, analysis, charts and output read these without importing the live
side (NVML, the recorder, the follower), which stays in :mod:`roofscope.monitor`.
"""
