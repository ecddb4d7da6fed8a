"""Files other processes may read while we write them: write beside, then ``os.replace``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_json(path: Path, doc: Any) -> None:
    """A reader sees the old file or the new one, never half of either (OSError propagates)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    os.replace(tmp, path)
