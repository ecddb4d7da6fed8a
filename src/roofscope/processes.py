"""Whether a process of this host still runs: a run's roofscope (profiling/runs.py), a spill
folder's owner (store.py). Signal 0 only asks; another user's process answers "not yours",
which means it runs."""

from __future__ import annotations

import os


def running(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (never true for 0 or a negative pid)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
