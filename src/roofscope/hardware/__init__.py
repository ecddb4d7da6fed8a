"""GPU facts: the datasheet table, device-name matching, and ceiling resolution."""

from roofscope.hardware.ceilings import Ceiling, resolve_ceilings
from roofscope.hardware.specs import GpuSpec, find_gpu, match_device_name

__all__ = ["Ceiling", "GpuSpec", "find_gpu", "match_device_name", "resolve_ceilings"]
