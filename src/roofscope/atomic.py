"""Files other processes may read while we write them: write beside, then ``os.replace``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from roofscope.jsonout import dumps


def write_json(path: Path, doc: Any) -> None:
    """A reader sees the old file or the new one, never half of either (OSError propagates)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dumps(doc, indent=1))  # strict: NaN becomes null, never ``NaN``
    os.replace(tmp, path)
