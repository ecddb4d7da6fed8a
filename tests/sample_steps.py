"""A sample report's step as the advice rules read it, and its launches in launch order: loaded
once per test session (the advice-model tests read each sample several times)."""

from __future__ import annotations

from functools import cache

import roofscope
from roofscope.analysis.advice.evidence import Step
from tests.conftest import SAMPLES


@cache
def launches(name: str) -> tuple:
    """``Report.kernel_times(per_launch=True)`` of ``sample_reports/NAME``."""
    session = roofscope.load(SAMPLES / name)
    try:
        return tuple(session.reports[0].kernel_times(per_launch=True))
    finally:
        session.close()


@cache
def step(name: str) -> Step:
    """``Step.of`` the report ``sample_reports/NAME`` (its analytic.json beside it read too)."""
    session = roofscope.load(SAMPLES / name)
    try:
        return Step.of(session.reports[0])
    finally:
        session.close()
