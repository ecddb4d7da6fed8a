"""What one ingested export contributed, whatever its format."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ReportInfo:
    """What one ingested export contributed, for the ``reports`` table and warnings."""

    report_id: int
    path: str
    layout: str
    launches: int = 0
    gpu_name: str | None = None
    cc: str | None = None
    sm_count: int | None = None
    decimal: str = "."
    raw_values: str = "table"  # "source": too large to copy; read from the export on demand
    warnings: list[str] = field(default_factory=list)
