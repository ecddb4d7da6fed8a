"""Write small ncu exports in the real layouts, for tests that need known values.

The layouts (quoting, units row, identification columns) copy real ncu 2025.3.1 output
(shared/samples/generated); values are whatever the test needs.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from pathlib import Path

ID_NEW = (
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
)


def _id_values(i: int, kernel: str, cc: str, grid: str = "(1024, 1, 1)") -> list[str]:
    return [
        str(i),
        "1337",
        "app",
        "127.0.0.1",
        kernel,
        "1",
        "7",
        "(256, 1, 1)",
        grid,
        "0",
        cc,
    ]


def raw_page(
    launches: Sequence[tuple[str, Mapping[str, str]]],
    units: Mapping[str, str],
    cc: str = "9.0",
    preamble: str = "",
    trailer: str = "",
    grids: Sequence[str] = (),
) -> str:
    """A raw page: header, units row, one row per (kernel, {metric: value}); ``grids`` gives
    launch i its Grid Size (``(1024, 1, 1)`` beyond them)."""
    metrics = sorted({m for _, values in launches for m in values})
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow([*ID_NEW, *metrics])
    w.writerow([""] * len(ID_NEW) + [units.get(m, "") for m in metrics])
    for i, (kernel, values) in enumerate(launches):
        grid = grids[i] if i < len(grids) else "(1024, 1, 1)"
        w.writerow(_id_values(i, kernel, cc, grid) + [values.get(m, "") for m in metrics])
    return preamble + buf.getvalue() + trailer


def details_page(
    launches: Sequence[tuple[str, Mapping[str, tuple[str, str]]]],
    cc: str = "9.0",
    kernel_time: bool = False,
) -> str:
    """A details page; values are (unit, value). ``kernel_time`` gives the 2021 header."""
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    if kernel_time:
        head = [
            "ID",
            "Process ID",
            "Process Name",
            "Host Name",
            "Kernel Name",
            "Kernel Time",
            "Context",
            "Stream",
        ]
    else:
        head = list(ID_NEW)
    w.writerow([*head, "Section Name", "Metric Name", "Metric Unit", "Metric Value"])
    for i, (kernel, values) in enumerate(launches):
        if kernel_time:
            ids = [str(i), "30861", "app", "127.0.0.1", kernel, "2022-Aug-19 16:00:18", "1", "7"]
        else:
            ids = _id_values(i, kernel, cc)
        for metric, (unit, value) in values.items():
            w.writerow([*ids, "Command line profiler metrics", metric, unit, value])
    return buf.getvalue()


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
