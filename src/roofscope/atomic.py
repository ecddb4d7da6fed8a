"""Files other processes may read while we write them: write beside, then ``os.replace``."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from roofscope.jsonout import dumps


def write_json(path: Path, doc: Any) -> None:
    """A reader sees the old file or the new one, never half of either (OSError propagates).
    The temporary file's name is this writer's own: two processes writing the same file (two
    ``roofscope report`` of one report) never write into each other's."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8") as fh:  # the umask's permissions, as before
            fh.write(dumps(doc, indent=1))  # strict: NaN becomes null, never ``NaN``
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
