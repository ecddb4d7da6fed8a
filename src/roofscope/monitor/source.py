"""The protocol every GPU sample source implements: live NVML, a recording being followed,
a recording loaded in the store, and the synthetic source of the tests."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from roofscope.errors import RoofscopeError
from roofscope.telemetry.sample import Reading


class MonitorUnavailable(RoofscopeError):
    """No GPU data can be read here (no NVML library, no driver, no permission)."""


@runtime_checkable
class GpuSource(Protocol):
    """One :meth:`read` is one tick. ``live`` sources can change their sampling interval;
    the others replay what was recorded at its own pace."""

    label: str
    live: bool

    def read(self) -> Reading:
        """New samples since the last call. Raises MonitorUnavailable when the source dies."""
        ...

    def close(self) -> None: ...
