"""ncu pages read by pyarrow's CSV reader: every core, only the wanted columns.

DuckDB's ``read_csv`` binds all of a raw page's 300-2,200 columns before it reads a row
(0.2-0.4 s a file, however short) and tokenises ncu's all-quoted rows on one thread, and
details pages went through a Python pass row by row; pyarrow parses blocks on every core and
converts only the columns asked for (docs/performance.md, "ncu raw ingest").

It takes only files it reads exactly. pyarrow's quoting is lenient, so the rows it gives are
counted against the lines of the file: a value that crossed a line (an unbalanced quote that
swallowed the next row), a row of another width, a header that is not where the sniffer
found it, and it gives up (``None``); the readers that name such damage take over.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from roofscope.ingest.sniff import Sniffed, duckdb_name

if TYPE_CHECKING:
    import pyarrow as pa

BLOCK_BYTES = 8 << 20  # per parsing task: 1.3 s at 4-16 MiB for 1.1 GB, 2.8 s and 1 GiB at 64
# a streamed page's blocks are handed on in groups of about this much text: each group's
# columns are parsed into numbers by a few calls whose cost does not grow with the group
STREAM_GROUP_BYTES = 32 << 20
_CHUNK = 1 << 20
_COUNT_CHUNK = 16 << 20
_HEAD_LIMIT = 64 << 20  # the sniffer finds a header within its head; no further is looked


def read_page(fd: int, sn: Sniffed, names: list[str], wanted: list[str] | None) -> pa.Table | None:
    """The rows under the header (the units row and noise lines included, empty lines not,
    as DuckDB's reader gives them) as text columns named ``names``, empty fields null; only
    ``wanted`` when given. ``None`` when the file is not one this reader reads exactly."""
    import pyarrow as pa

    source = duckdb_name(fd)  # the file already opened and checked, never the user's name
    try:
        offset = _data_offset(_open(source, sn.compressed), sn)
        if offset is None:
            return None
        # pyarrow's quoting is lenient: an unbalanced quote can swallow a line break and the
        # next row, and still give a row of the header's width. One row per line proves that
        # no value crossed a line, so nothing was swallowed; but a quote left open on the
        # last line takes in only the final line break. The lines are counted while the rows
        # are parsed (the count releases the GIL).
        with ThreadPoolExecutor(1) as pool:
            lines = pool.submit(_lines, _open(source, sn.compressed), offset, sn.compressed)
            table = _parse(source, offset, sn.compressed, names, wanted)
            count, empty = lines.result()
            same = table.num_rows == count - empty and not _open_at_the_end(table)
            return table if same else None
    except (pa.ArrowException, OSError):
        return None


class PageStream:
    """A page read a block at a time, each group of blocks handed on as ``convert`` makes
    it: the text of a million launches is never held at once (2.1 GB at 1M launches when it
    was). pyarrow tokenises the next blocks on a thread of their own while ``convert`` and
    DuckDB take the last group, so on two cores the three overlap.

    Read ``reader()`` to its end, then ask ``exact()``: whether the rows read are the file's
    lines, as ``read_page`` checks before it gives a table. Until then nothing read may be
    trusted; a caller that stored the rows drops them when it is False. ``close()`` always."""

    def __init__(
        self,
        source: str,
        offset: int,
        sn: Sniffed,
        names: list[str],
        wanted: list[str] | None,
        convert: Callable[[pa.Table], pa.Table],
    ) -> None:
        self._source, self._offset, self._sn = source, offset, sn
        self._names, self._wanted, self._convert = names, wanted, convert
        self._rows = 0
        self._last: pa.RecordBatch | None = None
        self._pool = ThreadPoolExecutor(2)  # the line count; the tokeniser
        self._lines: Future[tuple[int, int]] | None = None
        self._groups: queue.Queue[Any] = queue.Queue(maxsize=1)
        self._stop = threading.Event()
        # an error of roofscope's own while converting (not the file's): DuckDB reports any
        # error of the stream as its own, which the caller would take for a bad file
        self.failure: BaseException | None = None

    def reader(self) -> pa.RecordBatchReader:
        """The converted batches, for DuckDB to scan; the lines are counted meanwhile."""
        import pyarrow as pa
        import pyarrow.csv as pacsv

        compressed = self._sn.compressed
        self._lines = self._pool.submit(
            _lines, _open(self._source, compressed), self._offset, compressed
        )
        stream = _open(self._source, compressed)
        try:
            _skip(stream, self._offset, compressed)
            page = pacsv.open_csv(  # reads and parses the first block
                stream,
                # one thread: the parse and DuckDB have the other core; pyarrow's own pool
                # beside them made a million launches 0.5 s slower on two cores
                read_options=_read_options(self._names, BLOCK_BYTES, threads=False),
                parse_options=_parse_options(),
                convert_options=_convert_options(self._names, self._wanted),
            )
            # built from empty columns: ``Schema.empty_table`` imports pandas (0.3 s)
            empty = pa.Table.from_arrays(
                [pa.nulls(0, f.type) for f in page.schema], schema=page.schema
            )
            schema = self._convert(empty).schema
        except BaseException:
            stream.close()
            raise
        self._pool.submit(self._tokenise, page, stream)

        def batches() -> Iterator[pa.RecordBatch]:
            while (group := self._next_group()) is not _END:
                try:
                    if isinstance(group, BaseException):
                        raise group
                    converted = self._convert(group)
                except (pa.ArrowException, OSError):
                    raise  # the file: the DuckDB readers take it
                except BaseException as exc:  # a fault of ours: not hidden by a fallback
                    self.failure = exc
                    raise
                yield from converted.to_batches()

        return pa.RecordBatchReader.from_batches(schema, batches())

    def _next_group(self) -> Any:
        """The next group, or the end once the stream was closed (a reader abandoned by its
        consumer must not wait for ever on a tokeniser that stopped)."""
        while True:
            try:
                return self._groups.get(timeout=0.1)
            except queue.Empty:
                if self._stop.is_set():
                    return _END

    def _tokenise(self, page: Any, stream: Any) -> None:
        """Blocks into groups of about ``STREAM_GROUP_BYTES`` of text, onto the queue."""
        import pyarrow as pa

        try:
            with stream:
                group: list[pa.RecordBatch] = []
                size = 0
                for batch in page:
                    if self._stop.is_set():  # the reader was given up on
                        return
                    self._rows += batch.num_rows
                    if batch.num_rows:
                        self._last = batch.slice(batch.num_rows - 1)
                    group.append(batch)
                    size += batch.nbytes
                    if size >= STREAM_GROUP_BYTES:
                        self._put(pa.Table.from_batches(group))
                        group, size = [], 0
                if group:
                    self._put(pa.Table.from_batches(group))
            self._put(_END)
        except BaseException as exc:  # handed to the reader, which raises it to DuckDB
            self._put(exc)

    def _put(self, item: Any) -> None:
        while not self._stop.is_set():
            try:
                self._groups.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def exact(self) -> bool:
        """After the reader was read to its end: one row per line, the last one closed."""
        if self._lines is None:
            return False
        count, empty = self._lines.result()
        last = self._last
        return self._rows == count - empty and not (last is not None and _open_at_the_end(last))

    def close(self) -> None:
        """Stop the tokeniser (a reader given up on before its end) and the count."""
        self._stop.set()
        self._pool.shutdown(wait=True)


_END = object()  # the last group was queued


def stream_page(
    fd: int,
    sn: Sniffed,
    names: list[str],
    wanted: list[str] | None,
    convert: Callable[[pa.Table], pa.Table],
) -> PageStream | None:
    """``read_page`` a block at a time (``PageStream``); ``None`` when the header is not
    where the sniffer found it."""
    import pyarrow as pa

    source = duckdb_name(fd)
    try:
        offset = _data_offset(_open(source, sn.compressed), sn)
    except (pa.ArrowException, OSError):
        return None
    if offset is None:
        return None
    return PageStream(source, offset, sn, names, wanted, convert)


def _open_at_the_end(table: pa.Table | pa.RecordBatch) -> bool:
    """Whether a value of the last row holds a line break (its quote never closed)."""
    if table.num_rows == 0:
        return False
    last = table.slice(table.num_rows - 1).to_pylist()[0].values()
    return any(v is not None and ("\n" in v or "\r" in v) for v in last)


def _parse(
    source: str, offset: int, compressed: bool, names: list[str], wanted: list[str] | None
) -> pa.Table:
    import pyarrow.csv as pacsv

    with _open(source, compressed) as stream:
        _skip(stream, offset, compressed)
        return pacsv.read_csv(
            stream,
            read_options=_read_options(names, BLOCK_BYTES),
            parse_options=_parse_options(),
            convert_options=_convert_options(names, wanted),
        )


def _read_options(names: list[str], block: int, threads: bool = True) -> Any:
    import pyarrow.csv as pacsv

    return pacsv.ReadOptions(column_names=names, block_size=block, use_threads=threads)


def _parse_options() -> Any:
    import pyarrow.csv as pacsv

    return pacsv.ParseOptions(quote_char='"', double_quote=True, ignore_empty_lines=True)


def _convert_options(names: list[str], wanted: list[str] | None) -> Any:
    """Every column as text, empty fields NULL."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    return pacsv.ConvertOptions(
        include_columns=wanted or names,
        column_types=dict.fromkeys(wanted or names, pa.string()),
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
        null_values=[""],
    )


def _open(source: str, compressed: bool) -> Any:
    import pyarrow as pa

    raw = pa.OSFile(source)  # memory-mapped, a 1.1 GB page counted 1.1 GB against the peak
    return pa.CompressedInputStream(raw, "gzip") if compressed else raw


def _data_offset(stream: Any, sn: Sniffed) -> int | None:
    """Bytes before the line after the header, counted by ``\\n`` as the sniffer counts
    lines; ``None`` unless the line found there is the header the sniffer read."""
    with stream:
        buffer, base, line_start, lines = b"", 0, 0, 0  # base: the file offset of buffer[0]
        search = 0
        while True:
            cut = buffer.find(b"\n", search)
            if cut < 0:
                chunk = stream.read(_CHUNK)
                if not chunk or base + len(buffer) > _HEAD_LIMIT:
                    return None
                buffer, base = buffer[line_start:] + chunk, base + line_start
                search, line_start = len(buffer) - len(chunk), 0
                continue
            if lines == sn.header_line:
                line = buffer[line_start:cut].replace(b"\x00", b"")
                found = line.decode("utf-8", errors="replace").lstrip("\ufeff").rstrip("\r")
                return base + cut + 1 if found == sn.raw_header_line else None
            lines += 1
            line_start = search = cut + 1


def _lines(stream: Any, offset: int, compressed: bool) -> tuple[int, int]:
    """Lines from ``offset`` to the end as pyarrow splits them (``\\n``, ``\\r\\n`` and a lone
    ``\\r`` end one; so does the end of the file), and how many of them are empty (which
    pyarrow skips): one vectorised pass, 0.4 s for 1.1 GB, and a second over files that hold
    any ``\\r``. A line is empty when its end starts right after the previous line's end: a
    ``\\n`` after a ``\\n``, or a ``\\r`` after either (``\\r\\n`` is one end)."""
    import numpy as np

    with stream:
        _skip(stream, offset, compressed)
        count, empty, previous = 0, 0, 10  # the byte before the chunk: a line break before it
        while chunk := stream.read_buffer(_COUNT_CHUNK):
            view = np.frombuffer(chunk, dtype=np.uint8)
            newline = view == 10
            count += int(np.count_nonzero(newline))
            empty += int(newline[0] and previous == 10)
            empty += int(np.count_nonzero(newline[1:] & newline[:-1]))
            returns = int(np.count_nonzero(view == 13))
            if returns:  # \r\n is one line end, counted at its \n
                ret = view == 13
                pairs = np.count_nonzero(ret[:-1] & newline[1:])
                count += returns - int(pairs)
                ends = newline | ret
                empty += int(ret[0] and previous in (10, 13))
                empty += int(np.count_nonzero(ret[1:] & ends[:-1]))
            count -= int(previous == 13 and view[0] == 10)  # a pair split between chunks
            previous = int(view[-1])
        return count + (previous not in (10, 13)), empty


def _skip(stream: Any, offset: int, compressed: bool) -> None:
    if not compressed:
        stream.seek(offset)
        return
    left = offset
    while left > 0:
        got = len(stream.read(min(left, _CHUNK)))
        if got == 0:
            raise OSError("the file ended before its header")
        left -= got
