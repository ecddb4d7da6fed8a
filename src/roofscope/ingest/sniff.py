"""Find the table inside an export: skip noise, recognise the page, refuse what is not ncu.

ncu CSVs rarely start at line 1: ``==PROF==`` lines, the profiled application's own stdout
(sometimes with a NUL byte) and nsys banners come first. The header is found by content, never
by position, and the page layout is decided from the header's columns.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import re
import stat
import zlib
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from roofscope.errors import RoofscopeError

HEAD_BYTES = 4 << 20
MAX_HEAD_BYTES = 64 << 20
GZIP_MAGIC = b"\x1f\x8b"
NCU_REP_MAGIC = b"NVIDIA Nsight Compute"
PARQUET_MAGIC = b"PAR1"
SQLITE_MAGIC = b"SQLite format 3\x00"
# ncu's widest page (--set full, raw) has ~2,300 columns; far wider is a damaged file or a
# "CSV bomb", refused before DuckDB spends minutes planning a scan of it.
MAX_COLUMNS = 10_000

RAW = "ncu-raw"
DETAILS = "ncu-details"
SUMMARY = "ncu-summary"

EXPORT_HINT = "export it with: ncu --import REPORT.ncu-rep --csv --page raw > REPORT.csv"
# Lines of a head without an ncu header that the error message looks at (a head of 64 MB of
# blank lines is 67 million of them).
ERROR_SCAN_LINES = 200_000
# A field of the table may be long (demangled names, --print-metric-instances lists) but not
# unbounded: a stray quote that swallows the rest of a file stops here.
FIELD_LIMIT = 64 << 20
csv.field_size_limit(max(csv.field_size_limit(), FIELD_LIMIT))
_FD_DIRS = ("/proc/self/fd", "/dev/fd")


def check_input(path: Path) -> None:
    """Refuse at once what no reader can take: a missing file, a symlink loop, or something
    that is not a regular file or a directory (a FIFO or ``<(cmd)`` pipe blocks forever,
    ``/dev/zero`` never ends), or a name that is not UTF-8. Reads nothing, so it cannot
    block."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _stat_error(path, exc) from exc
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise _not_regular(path, st.st_mode)
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        # The name's bytes are not UTF-8 (Python keeps them as surrogates): the cache stores
        # names as text, and DuckDB refuses such a string deep inside the build.
        raise RoofscopeError(
            "the file name is not valid UTF-8",
            path=str(path),
            hint="rename it to a UTF-8 name (e.g. mv -- NAME report.csv) or link it: "
            "ln -s NAME report.csv",
        ) from None


def _stat_error(path: Path, exc: OSError) -> RoofscopeError:
    if exc.errno == errno.ELOOP:
        return RoofscopeError(
            "is a symlink loop (the link leads back to itself)",
            path=str(path),
            hint="fix the link: ls -l shows where it points",
        )
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        if os.path.islink(path):
            return RoofscopeError(
                f"is a broken symbolic link (to {os.readlink(path)!r}, which does not exist)",
                path=str(path),
                hint="fix the link or pass the file it should point to",
            )
        return RoofscopeError("no such file", path=str(path), hint="check the path")
    if exc.errno == errno.EACCES:
        return RoofscopeError(
            "cannot be read (permission denied)",
            path=str(path),
            hint="check the file's permissions, or copy it somewhere you can read",
        )
    return RoofscopeError(
        f"cannot be read ({exc.strerror or exc})", path=str(path), hint="check the path"
    )


def _not_regular(path: Path, mode: int) -> RoofscopeError:
    if stat.S_ISFIFO(mode):
        where = str(path)
        if where.startswith(_FD_DIRS):
            what = "is a pipe (as <(command) gives), not a regular file"
        else:
            what = "is a pipe (FIFO), not a regular file"
        return RoofscopeError(
            what,
            path=where,
            hint="roofscope reads an export more than once; save it to a file first "
            "(command > report.csv) and pass that",
        )
    if stat.S_ISCHR(mode):
        what = "is a character device, not a regular file"
    elif stat.S_ISBLK(mode):
        what = "is a block device, not a regular file"
    elif stat.S_ISSOCK(mode):
        what = "is a socket, not a regular file"
    else:
        what = "is not a regular file"
    return RoofscopeError(what, path=str(path), hint="pass an export file written by ncu or nsys")


def is_sqlite(path: Path) -> bool:
    """An SQLite database (an nsys export) by its first 16 bytes; here, not in the nsys reader,
    so that detecting one costs no pyarrow import."""
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == SQLITE_MAGIC
    except OSError:
        return False


SIDECARS = ("-wal", "-journal")  # data SQLite must apply before the main file reads right


def sidecars(path: Path) -> list[Path]:
    """The non-empty ``-wal``/``-journal`` files beside ``path``: commits not yet written back
    (WAL), or the undo log of a transaction a writer did not finish (a hot journal)."""
    found = []
    for suffix in SIDECARS:
        side = path.with_name(path.name + suffix)
        try:
            if side.is_file() and side.stat().st_size > 0:
                found.append(side)
        except OSError:
            continue
    return found


def open_input(path: Path) -> int:
    """A read-only descriptor of the regular file ``path`` (refused at once when it is not
    one: opening is non-blocking, so a FIFO cannot hang here)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise _directory_error(path) from exc
        raise _stat_error(path, exc) from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise _directory_error(path)
        raise _not_regular(path, mode)
    os.set_blocking(fd, True)
    return fd


def duckdb_name(fd: int) -> str:
    """The name under which DuckDB reads exactly the file open as ``fd``.

    DuckDB's readers (``read_csv``, ``read_parquet``, …) expand ``*``, ``?`` and ``[…]`` in a
    file name as a glob pattern, so ``r[1].csv`` would read ``r1.csv`` instead; a user's file
    name must never reach them. ``/proc/self/fd/N`` has no pattern characters and names the
    file already opened (and checked) here.
    """
    for folder in _FD_DIRS:
        if os.path.isdir(folder):
            return f"{folder}/{fd}"
    raise RoofscopeError(
        "cannot be handed to DuckDB by descriptor on this system (no /proc/self/fd or /dev/fd)",
        hint="run roofscope on Linux or macOS",
    )


def _directory_error(path: Path) -> RoofscopeError:
    return RoofscopeError(
        "is a directory, not an export",
        path=str(path),
        hint="a directory must be an nsys parquetdir export or a recording of roofscope record",
    )


@dataclass
class Sniffed:
    """What the head of a file says about its table."""

    path: Path
    layout: str
    header: list[str]
    header_line: int  # 0-based physical line index of the header
    units: list[str] | None = None  # raw page only
    compressed: bool = False
    decimal: str = "."  # "." (C locale) or "," (European locale exports)
    noise_lines_before: int = 0
    raw_header_line: str = ""  # the header exactly as written (quoting included)
    notes: list[str] = field(default_factory=list)
    nul_after_header: int = 0  # NUL bytes inside the table (in the head read)
    errors: list[str] = field(default_factory=list)  # ncu's own ==ERROR== lines (in the head)
    sample_rows: list[list[str]] = field(default_factory=list)  # rows just under the header


def read_head(path: Path, size: int = HEAD_BYTES) -> tuple[bytes, bool]:
    """First ``size`` bytes of the file, transparently gunzipped."""
    with open(open_input(path), "rb") as fh:
        magic = fh.read(2)
    compressed = magic == GZIP_MAGIC
    if not compressed:
        with open(path, "rb") as fh:
            return fh.read(size), False
    return _gunzip_prefix(path, size), True


def _gunzip_prefix(path: Path, size: int) -> bytes:
    """Up to ``size`` bytes of a gzip file, tolerating a truncated stream (whose rows the
    loader then reports as cut) but not data that is not gzip at all."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = bytearray()
    try:
        with open(path, "rb") as fh:
            while len(out) < size:
                chunk = fh.read(1 << 16)
                if not chunk:
                    break
                out += inflater.decompress(chunk, size - len(out))
                if inflater.unconsumed_tail:
                    break
    except zlib.error as exc:
        raise RoofscopeError(
            f"gzip data is damaged ({exc})", path=str(path), hint="re-compress or export again"
        ) from exc
    return bytes(out)


def split_line(line: str) -> list[str]:
    try:
        return next(csv.reader([line]))
    except (csv.Error, StopIteration):
        return []


def _is_header(fields: list[str]) -> str | None:
    names = [f.strip() for f in fields]
    if "Kernel Name" not in names:
        return None
    long_form = {"Metric Name", "Metric Unit"} <= set(names)
    # by name, not place: a pipeline may have moved the ID column (ingest/ncu/column_order.py)
    if "ID" in names:
        if long_form and "Metric Value" in names:
            return DETAILS
        return None if "Metric Name" in names else RAW
    summary = {"Invocations", "Minimum", "Maximum", "Average"}
    if "Process ID" in names and long_form and summary <= set(names):
        return SUMMARY
    return None


VOTES = 4000  # sample values the decimal mark is voted on (a wide raw page has ~50,000)
_EU_NUMBER = re.compile(r"^-?\d{1,3}(\.\d{3}){2,}(,\d+)?$|^-?\d+,\d{1,2}$")
_US_NUMBER = re.compile(r"^-?\d{1,3}(,\d{3})+(\.\d+)?$|^-?\d+\.(\d{1,2}|\d{4,})$")


def detect_decimal(values: list[str]) -> str:
    """Decimal mark of a file: ncu follows the OS locale, so vote over sample values."""
    us = sum(1 for v in values if _US_NUMBER.match(v))
    eu = sum(1 for v in values if _EU_NUMBER.match(v))
    return "," if eu > us else "."


def _refuse_non_ncu(path: Path, head: bytes, text: str) -> None:
    stripped = text.lstrip()
    if not head:
        raise RoofscopeError(
            "file is empty (0 bytes)",
            path=str(path),
            hint="the export did not finish or the copy failed; export it again",
        )
    if NCU_REP_MAGIC in head[:4096] or path.suffix == ".ncu-rep":
        raise RoofscopeError("is a binary .ncu-rep report", path=str(path), hint=EXPORT_HINT)
    if head.startswith(PARQUET_MAGIC):
        raise RoofscopeError(
            "is a Parquet file, not a CSV export",
            path=str(path),
            hint="open recordings and nsys parquetdir folders as they are, not as CSV",
        )
    if _is_utf32(head):
        raise RoofscopeError(
            "is UTF-32 text; ncu writes UTF-8",
            path=str(path),
            hint="convert it: iconv -f UTF-32 -t UTF-8 FILE > FILE.utf8.csv",
        )
    if _is_utf16(head):
        raise RoofscopeError(
            "is UTF-16 text (as PowerShell's > writes it); ncu writes UTF-8",
            path=str(path),
            hint="convert it: iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8.csv, or use ncu --log-file",
        )
    sample = head[:65536]
    if sample.count(b"\x00") > len(sample) // 100 + 1 or _mostly_binary(sample):
        raise RoofscopeError("is a binary file, not a CSV export", path=str(path), hint=EXPORT_HINT)
    low = stripped[:2048].lower()
    if low.startswith(("<!doctype html", "<html", "<?xml")) or "<html" in low[:512]:
        raise RoofscopeError(
            "is an HTML/XML page, not a CSV export",
            path=str(path),
            hint="download the raw file, not the web page that shows it",
        )


def _is_utf32(head: bytes) -> bool:
    """A UTF-32 byte-order mark, or ASCII text with three of every four bytes NUL."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return True
    sample = head[: 400 - 400 % 4]
    for offset in (0, 3):  # little-endian: the character first; big-endian: last
        chars = sample[offset::4]
        zeros = bytes(b for i, b in enumerate(sample) if i % 4 != offset)
        if len(chars) >= 8 and not any(zeros) and all(c >= 32 or c in b"\t\n\r" for c in chars):
            return True
    return False


def _is_utf16(head: bytes) -> bool:
    """A byte-order mark, or ASCII text with every other byte NUL."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    sample = head[:400]
    for zeros, chars in ((sample[1::2], sample[0::2]), (sample[0::2], sample[1::2])):
        if len(zeros) >= 8 and not any(zeros) and all(c >= 32 or c in b"\t\n\r" for c in chars):
            return True
    return False


def _mostly_binary(sample: bytes) -> bool:
    if not sample:
        return False
    text_bytes = bytes(range(32, 127)) + b"\n\r\t\x0c\x08\x1b"
    odd = sum(1 for b in sample[:8192] if b not in text_bytes and b < 128)
    return odd > len(sample[:8192]) * 0.1


def _analytic_error(path: Path) -> RoofscopeError:
    """``analytic.json`` (a model's FLOPs by layer, which ``roofscope profile`` writes beside
    its export) is read with the export, not on its own: name the export to open instead."""
    stem = path.name.split(".")[0]
    try:  # in a run folder (analytic.json) any export; beside one (x.analytic.json) x's
        exports = sorted(
            p.name
            for p in path.parent.iterdir()
            if ".ncu" in p.name and (stem == "analytic" or p.name.split(".")[0] == stem)
        )
    except OSError:
        exports = []
    return RoofscopeError(
        "is a model's analytic FLOPs (roofscope profile writes it beside its export), not a report",
        path=str(path),
        hint=f"open the export beside it, {exports[0]}; its advice reads this file"
        if exports
        else "open the ncu export of the same run; its advice reads this file",
    )


def _no_header_error(path: Path, text: str, complete: bool) -> RoofscopeError:
    lines = text.split("\n", ERROR_SCAN_LINES)[:ERROR_SCAN_LINES]
    content = [x.strip() for x in lines if x.strip()]
    if content and all(x.startswith(("==PROF==", "==WARNING==", "==ERROR==")) for x in content):
        return RoofscopeError(
            "holds only ncu's ==PROF== log lines, no CSV table",
            path=str(path),
            hint="did the application launch any kernel, and was ncu given --csv? " + EXPORT_HINT,
        )
    if complete and content and content[0][:1] in "[{":
        try:
            document = json.loads(text)
        except ValueError:
            pass
        else:
            if isinstance(document, dict) and {"layers", "flops"} <= document.keys():
                return _analytic_error(path)
            return RoofscopeError(
                "is a JSON document, not an ncu CSV or an nsys stats export",
                path=str(path),
                hint="nsys stats JSON is written by nsys stats --format json and named "
                "NAME_cuda_gpu_kern_sum.json",
            )
    for line in lines[:2000]:
        if re.match(r'^"?ID"?\s*[;\t|]\s*"?Process ID', line):
            sep = re.match(r'^"?ID"?\s*([;\t|])', line).group(1)  # type: ignore[union-attr]
            shown = {"\t": "tab", ";": "';'", "|": "'|'"}[sep]
            return RoofscopeError(
                f"uses {shown} as the delimiter; ncu writes commas",
                path=str(path),
                hint="export again with ncu --csv, or convert the delimiter to ','",
            )
        if re.match(r'^"?Session Attribute"?,|^"?Launch Attribute"?,', line):
            return RoofscopeError(
                "is the ncu session page, which has no per-kernel metrics",
                path=str(path),
                hint=EXPORT_HINT,
            )
        if re.search(r"Time ?\(%\)|Start \(\w+\)", line):
            return RoofscopeError(
                "is nsys stats output in a human-readable format, not CSV",
                path=str(path),
                hint="export with: nsys stats --format csv --output NAME REPORT.nsys-rep",
            )
    if any(re.match(r'^"\d+","\d+",', line) for line in lines[:5000]):
        return RoofscopeError(
            "has ncu data rows but no header line (the file was cut at the top?)",
            path=str(path),
            hint='export again; the first line must start with "ID","Process ID"',
        )
    where = "found" if complete else f"in its first {MAX_HEAD_BYTES >> 20} MB"
    return RoofscopeError(
        f"is not an Nsight Compute CSV export (no header with ID/Kernel Name columns {where})",
        path=str(path),
        hint=EXPORT_HINT,
    )


def sniff(path: str | Path) -> Sniffed:
    """Locate the header and classify the page. Raises RoofscopeError for non-ncu input."""
    path = Path(path)
    size = HEAD_BYTES
    while True:
        head, compressed = read_head(path, size)
        text = head.replace(b"\x00", b"").decode("utf-8", errors="replace")
        if size == HEAD_BYTES:
            _refuse_non_ncu(path, head, text)
        complete = len(head) < size
        # The last line may be cut by the read limit; only trust it when the file ended.
        scan = text if complete else text[: text.rfind("\n") + 1]
        found = _find_header(path, scan, compressed)
        if found is not None:
            parts = head.split(b"\n", found.header_line + 1)
            if len(parts) > found.header_line + 1:
                found.nul_after_header = parts[-1].count(b"\x00")
            _nul_in_header(found, parts[found.header_line])
            found.errors = [x.strip() for x in re.findall(r"^==ERROR==.*$", scan, re.M)]
        # A raw header without its units row yet: read more, the row may be past the limit.
        if found is not None and (found.layout != RAW or found.units is not None or complete):
            return found
        if complete or size >= MAX_HEAD_BYTES:
            if found is not None:
                return found
            raise _no_header_error(path, text, complete)
        size *= 4


def _nul_in_header(found: Sniffed, line: bytes) -> None:
    """NUL bytes inside the header's names are dropped with the others, which changes a
    column's name: say which (NULs before the first field, application output written
    without a line break, change nothing)."""
    start = line.find(b'"')
    body = line[start if start >= 0 else len(line) - len(line.lstrip(b"\x00")) :]
    if b"\x00" not in body:
        return
    names = [f.strip() for f in split_line(body.decode("utf-8", errors="replace"))]
    hit = [n.replace("\x00", "") for n in names if "\x00" in n]
    shown = ", ".join(repr(n) for n in hit[:3]) + (", …" if len(hit) > 3 else "")
    count = body.count(b"\x00")
    found.notes.append(
        f"the header (line {found.header_line + 1:,}) holds {count} NUL byte(s) "
        f"inside column name(s) {shown or '(between fields)'}; they were dropped and the names "
        f"read as shown: check the header, or export again"
    )


def _lines_after(text: str, pos: int, count: int) -> list[str]:
    """Up to ``count`` lines of ``text`` from offset ``pos`` (without splitting the rest)."""
    out = []
    while len(out) < count and pos <= len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        out.append(text[pos:end])
        pos = end + 1
    return out


def _find_header(path: Path, text: str, compressed: bool) -> Sniffed | None:
    """The first header line in ``text``: only lines holding ``Kernel Name`` are looked at,
    found by ``str.find``, so a head of millions of blank or log lines costs one scan."""
    pos = 0
    while (hit := text.find("Kernel Name", pos)) >= 0:
        start = text.rfind("\n", 0, hit) + 1
        end = text.find("\n", hit)
        end = len(text) if end < 0 else end
        pos = end + 1
        stripped = text[start:end].lstrip("\ufeff").rstrip("\r")
        fields = split_line(stripped)
        layout = _is_header(fields)
        if layout is None:
            continue
        if len(fields) > MAX_COLUMNS:
            raise RoofscopeError(
                f"has a header of {len(fields):,} columns; ncu pages have a few thousand at most",
                path=str(path),
                hint="the file is damaged or was not written by ncu; export it again",
            )
        before = text[:start]
        sniffed = Sniffed(
            path=path,
            layout=layout,
            header=[f.strip() for f in fields],
            header_line=before.count("\n"),
            raw_header_line=stripped,
            compressed=compressed,
            noise_lines_before=len(re.findall(r"^[^\S\n]*\S", before, re.M)),
        )
        body = [split_line(x.rstrip("\r")) for x in _lines_after(text, end + 1, 39)]
        if layout == RAW:
            # The units row is the first full-width row after the header (noise may sit
            # between them); its identification fields are empty.
            full = [row for row in body if len(row) == len(fields)]
            at = sniffed.header.index("ID")
            if full and full[0][at].strip() == "":
                sniffed.units = [u.strip() for u in full[0]]
                body = full[1:]
        sniffed.sample_rows = body
        names = sniffed.header
        if layout == DETAILS:
            value_cols = [names.index("Metric Value")]
        elif layout == SUMMARY:
            value_cols = [names.index(c) for c in ("Minimum", "Maximum", "Average")]
        else:
            ids = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context"}
            ids |= {"Stream", "Block Size", "Grid Size", "Device", "CC", "Kernel Time"}
            value_cols = [i for i, n in enumerate(names) if n not in ids]
        values = (
            row[i] for row in body for i in value_cols if i < len(row) and row[i][:1].isdigit()
        )
        sniffed.decimal = detect_decimal(list(islice(values, VOTES)))
        return sniffed
    return None


class Gunzip(io.RawIOBase):
    """The inflated bytes of a gzip file that end quietly where a truncated file ends, with
    ``truncated`` set, instead of raising and losing what was inflated last (``gzip.open``
    drops up to a read buffer of complete rows before its EOFError)."""

    def __init__(self, path: Path):
        self._fh = open(path, "rb")  # noqa: SIM115 (closed by close(), as a stream is)
        self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._out = b""
        self.truncated = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        while not self._out:
            z = self._inflater
            if z.eof:  # concatenated members (cat a.gz b.gz) continue after one ends
                rest = z.unused_data or self._fh.read(1 << 16)
                if not rest:
                    return 0
                self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
                self._out = self._inflater.decompress(rest, 1 << 20)
                continue
            data = z.unconsumed_tail or self._fh.read(1 << 16)
            if not data:
                self.truncated = True
                return 0
            self._out = z.decompress(data, 1 << 20)
        n = min(len(buffer), len(self._out))
        buffer[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def close(self) -> None:
        self._fh.close()
        super().close()


def open_text(path: Path) -> io.TextIOWrapper:
    """Text stream over the whole file (gzip aware), NUL bytes left for the caller to drop.
    For a gzip file, ``stream.buffer.raw`` is a :class:`Gunzip` that says whether it was cut."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == GZIP_MAGIC:
        return io.TextIOWrapper(
            io.BufferedReader(Gunzip(path)), encoding="utf-8", errors="replace", newline=""
        )
    return open(path, encoding="utf-8", errors="replace", newline="")
