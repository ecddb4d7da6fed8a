"""Print the distinct kernel names in real profiler exports, one ``name<TAB>file`` per line.

Reads Nsight Compute CSVs (raw, details and summary pages: the ``Kernel Name`` column, after any
``==PROF==`` or app-output lines), Nsight Systems stats/trace CSVs and TSVs (the ``Name`` column
of kernel tables) and Nsight Systems SQLite exports (``CUPTI_ACTIVITY_KIND_KERNEL`` joined to
``StringIds`` on ``demangledName``, else ``shortName``); ``.gz`` copies of any of these too.
Standard library only, so the name table in ``tests/data/kernel_groups.csv`` can be regenerated:

    python3 tools/kernel_names.py sample_reports ../shared/samples > /tmp/names.tsv

A name is printed once, with the first file (in sorted path order) it was seen in.

``--table`` prints instead a draft of the table's real rows as CSV (``name,group,source``), with
the group today's rules give (review every group before committing it): every Inductor/Triton
name, at most ``--per-group`` (25) names of each other group and 20 names no rule matches.
``../shared/samples/wild`` is left out of the table on purpose: its SOURCES.md asks that
nothing from those files be copied into the repository.

    PYTHONPATH=src python3 tools/kernel_names.py --table --per-group 40 sample_reports \\
        tests/data ../shared/samples/h100 ../shared/samples/generated ../shared/samples/public

then append the table's ``synthetic:`` rows, which no export holds. The committed table uses
``--per-group 40``: with 25, the names of a newer sample (the sorted path order reads
``sample_reports`` first) pushed older real names of the same group out of the table.
"""

from __future__ import annotations

import csv
import gzip
import io
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

csv.field_size_limit(1 << 30)

# nsys tables whose Name column holds memory operations and API calls, not kernels
_NOT_KERNELS = ("cuda_api", "mem_size", "mem_time", "nvtx", "osrt", "cuda_gpu_sum")


def _text(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace").replace("\x00", "")


def _csv_names(path: Path) -> Iterator[str]:
    """Names from every table in the file whose header has a kernel-name column.

    ``nsys stats`` run over several reports writes one table per report, each after a
    ``Processing [...] with [.../<report>.py]`` line; tables of non-kernel reports are skipped.
    """
    if any(tag in path.name for tag in _NOT_KERNELS):
        return
    delimiter = "\t" if ".tsv" in path.name else ","
    report = ""
    table: list[str] = []
    for line in [*_text(path).lstrip("\ufeff").splitlines(), ""]:
        if line.startswith("Processing ["):
            report = line
        if table:
            if line.strip():
                table.append(line)
                continue
            if not any(tag in report for tag in _NOT_KERNELS):
                yield from _table_names(table, delimiter)
            table = []
        elif _is_header(line, delimiter):
            table = [line]


def _is_header(line: str, delimiter: str) -> bool:
    """ncu's ``"Kernel Name"`` column, nsys stats' last column ``Name``, or the Nsight Systems
    GUI's Events View, which starts with ``Name``."""
    text = line.lstrip("\ufeff").rstrip()
    return "Kernel Name" in text or text.endswith(delimiter + "Name") or text.startswith("Name,")


def _table_names(lines: list[str], delimiter: str) -> Iterator[str]:
    reader = csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter)
    header = [h.strip().strip("\ufeff") for h in next(reader)]
    column = "Kernel Name" if "Kernel Name" in header else "Name"
    if column not in header:
        return
    index = header.index(column)
    for row in reader:
        if len(row) > index:
            name = row[index].strip()
            # units rows, nsys memory operations ("[CUDA memcpy ...]"), blank cells
            if name and not name.startswith("[") and name not in ("Kernel Name", "Name"):
                yield name


def _sqlite_names(path: Path) -> Iterator[str]:
    with tempfile.TemporaryDirectory() as tmp:
        source = path
        if path.suffix == ".gz":
            source = Path(tmp) / path.stem
            source.write_bytes(gzip.decompress(path.read_bytes()))
        db = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
            if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables or "StringIds" not in tables:
                return
            columns = {r[1] for r in db.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")}
            key = "demangledName" if "demangledName" in columns else "shortName"
            query = (
                f"SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                f"JOIN StringIds s ON s.id = k.{key}"
            )
            yield from (r[0] for r in db.execute(query) if r[0])
        finally:
            db.close()


def names(path: Path) -> Iterator[str]:
    suffixes = "".join(path.suffixes).lower()
    if ".sqlite" in suffixes:
        yield from _sqlite_names(path)
    elif ".csv" in suffixes or ".tsv" in suffixes:
        yield from _csv_names(path)


def distinct(roots: list[str]) -> dict[str, str]:
    """Each distinct name -> the first file it was seen in."""
    seen: dict[str, str] = {}
    for root in roots:
        base = Path(root)
        files = sorted(base.rglob("*")) if base.is_dir() else [base]
        for path in files:
            if not path.is_file():
                continue
            try:
                found = list(names(path))
            except (sqlite3.DatabaseError, OSError, csv.Error, StopIteration) as exc:
                print(f"# skipped {path}: {exc}", file=sys.stderr)
                continue
            for name in found:
                seen.setdefault(name, str(path))
    return seen


def table(seen: dict[str, str], per_group: int = 25, unmatched: int = 20) -> None:
    from roofscope.grouping import BUILTIN_RULES, Grouper

    names = list(seen)
    taken: dict[str, int] = {}
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["name", "group", "source"])
    for name, (group, why) in zip(names, Grouper(BUILTIN_RULES).match_all(names), strict=True):
        key = "(base name)" if why == "base name" else group
        limit = unmatched if why == "base name" else per_group
        if not name.startswith("triton_") and taken.get(key, 0) >= limit:
            continue
        taken[key] = taken.get(key, 0) + 1
        out.writerow([name, group, seen[name].replace("../shared/", "shared/")])


def main(args: list[str]) -> None:
    as_table = "--table" in args
    per_group = 25
    if "--per-group" in args:
        per_group = int(args[args.index("--per-group") + 1])
        args = [a for a in args if a != str(per_group)]
    roots = [a for a in args if not a.startswith("--")]
    seen = distinct(roots or ["sample_reports", "../shared/samples"])
    if as_table:
        table(seen, per_group)
        return
    for name, path in seen.items():
        print(f"{name}\t{path}")


if __name__ == "__main__":
    main(sys.argv[1:])
