"""numpy vectors as Arrow arrays, and back, through their buffers.

``pa.array``, ``pa.scalar``, ``fill_null``, ``to_numpy`` and ``Schema.empty_table`` each import
pandas (0.26-0.3 s) when it is installed; the readers that hand numpy to Arrow and read Arrow
into numpy on a first open use these instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa


def arrow_array(
    values: np.ndarray, kind: pa.DataType, present: np.ndarray | None = None
) -> pa.Array:
    """``values`` as an Arrow array of ``kind`` (a boolean or fixed-width type), NULL where
    ``present`` is false."""
    import pyarrow as pa

    if kind.equals(pa.bool_()):
        data = pa.py_buffer(np.packbits(np.asarray(values, dtype=bool), bitorder="little"))
    else:
        data = pa.py_buffer(np.ascontiguousarray(values, dtype=kind.to_pandas_dtype()))
    validity = None
    if present is not None and not present.all():
        validity = pa.py_buffer(np.packbits(present, bitorder="little"))
    return pa.Array.from_buffers(kind, len(values), [validity, data])


def slots(values: pa.Array, dtype: type[np.generic]) -> np.ndarray:
    """A fixed-width Arrow array's slots as numpy, NULL slots as they lie."""
    return np.frombuffer(values.buffers()[1], dtype=dtype)[
        values.offset : values.offset + len(values)
    ]


def bits(bitmap: pa.Buffer, offset: int, n: int) -> np.ndarray:
    """An Arrow bitmap as numpy booleans."""
    packed = np.frombuffer(bitmap, dtype=np.uint8)
    return np.unpackbits(packed, bitorder="little")[offset : offset + n].astype(bool)


def valid(values: pa.Array) -> np.ndarray:
    """Which values are not NULL."""
    if values.null_count == 0:
        return np.ones(len(values), dtype=bool)
    return bits(values.buffers()[0], values.offset, len(values))


def flags(values: pa.Array) -> np.ndarray:
    """A boolean Arrow array as numpy, NULL as false."""
    out = bits(values.buffers()[1], values.offset, len(values))
    return out & valid(values) if values.null_count else out
