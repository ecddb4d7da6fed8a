"""ncu's NVTX column (``--nvtx``): the push/pop ranges open on the launching thread.

One definition for the CSV reader (which fills ``launch_nvtx``, so that ``--nvtx innermost``
groups an ncu report as it groups an nsys one), the ``.ncu-rep`` reader (which writes the
column as ncu's CSV export does) and the model-FLOPs advice (which matches layers by range).
"""

from __future__ import annotations

import re

# one range: Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg, two spaces
# apart, after the thread ID; a second column (start/stop ranges) follows after " | "
_RANGE = re.compile(r"(?:^|\s{2})[^:]*:([^:]*):(?:[^:\s]*:){5}[^:\s|]*")
FIELDS = "none:none:none:none:none:none"  # the six fields after a range's name, as ncu writes


def push_pop_ranges(text: str | None) -> list[str]:
    """Range names of ncu's NVTX column, outermost first (the first thread's)."""
    return _RANGE.findall((text or "").split(" | ")[0])


def column_text(thread: str, ranges: list[tuple[str, str]]) -> str:
    """The column as ncu writes it for (domain, range) pairs, outermost first: ``559
    "<default domain>:step:none:…"  "<default domain>:compute:none:…" ``; empty for none."""
    if not ranges:
        return ""
    return f"{thread}  " + "  ".join(f'"{d}:{r}:{FIELDS}"' for d, r in ranges) + " "
