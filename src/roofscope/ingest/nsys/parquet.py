"""Recognise ``nsys export --type parquetdir`` folders (one Parquet file per SQLite table)."""

from __future__ import annotations

from pathlib import Path


def is_parquet_dir(path: Path) -> bool:
    return path.is_dir() and (path / "StringIds.parquet").is_file()
