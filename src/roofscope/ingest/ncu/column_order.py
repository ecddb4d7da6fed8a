"""ncu's column order, and a copy in it of a page whose columns were moved.

ncu writes a raw or details page with its identification columns first, in one order (``ID``,
``Process ID`` … ``CC``), then the metrics. Pipelines move columns: a pandas round trip sorts
or drops nothing but can put ``ID`` anywhere (a ``df[cols]`` selection, a merge), and turns the
integer columns into floats (``12.0``) because the units row leaves them empty. The readers
find every metric by name; a few steps (the launch-ID check of each row, Detail's look-up of a
launch in a large page) find the identification columns where ncu puts them. Rather than teach
each of those steps, a page whose columns are not in ncu's order is read from a copy put back
in it — the rest of the columns keep their relative order — with the float-typed integers
written as integers again. Only such pages pay for the copy, streamed row by row.
"""

from __future__ import annotations

import csv
import re
import tempfile
from pathlib import Path

from roofscope.ingest.sniff import Sniffed, open_text

ID_COLUMNS = (
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Kernel Time",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
)
INTEGER_COLUMNS = ("ID", "Process ID", "Context", "Stream", "Device")
_FLOAT_INTEGER = re.compile(r"^\s*(\d+)\.0*\s*$")  # "12.0", as pandas writes an int column


BEFORE_NVTX = ID_COLUMNS[: ID_COLUMNS.index("Kernel Name")]  # ID … Host Name


def nvtx_columns(header: list[str]) -> list[int]:
    """Where ``--nvtx`` columns are (``thread Domain:Push/Pop_Range:…``, found by name, as ncu
    puts them between ``Host Name`` and ``Kernel Name``, where the readers look for them)."""
    return [i for i, c in enumerate(header) if "Domain:" in c and "_Range:" in c]


def in_ncu_order(header: list[str]) -> list[int]:
    """The positions of ``header``'s columns in ncu's order: the identification columns as
    ncu orders them, the NVTX columns after ``Host Name``, then every other column in the
    order it has."""
    nvtx = nvtx_columns(header)
    first = [header.index(c) for c in BEFORE_NVTX if c in header]
    then = [header.index(c) for c in ID_COLUMNS if c in header and c not in BEFORE_NVTX]
    placed = set(first) | set(nvtx) | set(then)
    return first + nvtx + then + [i for i in range(len(header)) if i not in placed]


def needs_reorder(sniffed: Sniffed) -> bool:
    """Are the page's columns out of ncu's order, or its launch IDs written as floats?"""
    order = in_ncu_order(sniffed.header)
    if order != list(range(len(sniffed.header))):
        return True
    at = sniffed.header.index("ID") if "ID" in sniffed.header else None
    return at is not None and any(
        len(row) > at and _FLOAT_INTEGER.match(row[at]) for row in sniffed.sample_rows
    )


def reordered_copy(sniffed: Sniffed) -> Path:
    """A temporary copy of the page from its header on, its columns in ncu's order and the
    float-typed integer columns as integers; a row of another width (a log line, a damaged
    row) is copied as it is, for the reader to judge. The caller removes the file."""
    order = in_ncu_order(sniffed.header)
    width = len(order)
    header = [sniffed.header[i] for i in order]
    integers = [header.index(c) for c in INTEGER_COLUMNS if c in header]
    with (
        tempfile.NamedTemporaryFile(
            "w",
            newline="",
            encoding="utf-8",
            prefix="roofscope-order-",
            suffix=".csv",
            delete=False,
        ) as out,
        open_text(sniffed.path) as src,
    ):
        for _ in range(sniffed.header_line + 1):
            src.readline()
        writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(header)
        for row in csv.reader(src):
            if len(row) != width:
                writer.writerow(row)
                continue
            moved = [row[i] for i in order]
            for i in integers:
                if match := _FLOAT_INTEGER.match(moved[i]):
                    moved[i] = match.group(1)
            writer.writerow(moved)
    return Path(out.name)
