"""Fuzz the CSV reader: whatever the bytes, only RoofscopeError may escape."""

from __future__ import annotations

import os
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roofscope.errors import RoofscopeError
from roofscope.store import open_store
from tests.ncu_builder import raw_page

VALID = raw_page(
    [
        ("k(int)", {"gpu__time_duration.sum": "1,234", "dram__bytes.sum": "5.5"}),
        ("void g<1, 2>(float *, int)", {"gpu__time_duration.sum": "n/a", "dram__bytes.sum": "7"}),
    ],
    {"gpu__time_duration.sum": "ns", "dram__bytes.sum": "Kbyte"},
)

pieces = st.sampled_from(
    [
        '"',
        ",",
        "\n",
        "\r\n",
        "\x00",
        "==PROF== x\n",
        '"ID","Process ID"',
        "n/a",
        "nan",
        "1,234.5",
        "Kbyte",
        "",
        "(",
        ")",
        '""',
        "\ufeff",
        "ü",
        "\t",
        ";",
    ]
)


def _load_bytes(data: bytes) -> None:
    fd, name = tempfile.mkstemp(suffix=".csv")
    os.write(fd, data)
    os.close(fd)
    try:
        store = open_store([name], use_cache=False)
        store.con.close()
    except RoofscopeError:
        pass
    finally:
        os.unlink(name)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_random_bytes(data):
    _load_bytes(data)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(VALID)), st.integers(0, len(VALID)), st.lists(pieces, max_size=6))
def test_mutated_valid_export(cut, at, inserts):
    text = VALID[: max(cut, 1)] if cut < len(VALID) // 2 else VALID
    at = min(at, len(text))
    mutated = text[:at] + "".join(inserts) + text[at:]
    _load_bytes(mutated.encode("utf-8", errors="replace"))
