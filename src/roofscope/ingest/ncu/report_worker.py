"""Read a binary ``.ncu-rep`` with NVIDIA's ``ncu_report`` module, in a process of its own.

``python -m roofscope.ingest.ncu.report_worker REPORT OUT`` writes, into the folder OUT:

* ``raw.csv`` — the report's raw page as ``ncu --import REPORT --csv --page raw --print-units
  base`` writes it: the identification columns, the NVTX column when a launch ran inside a
  push/pop range, every metric as a column (names sorted) with its unit on the second row, one
  row per launch in report order, so that the CSV reader (and its tests) read it as they read
  ncu's own export;
* ``rules.csv`` — ncu's rule results as a details page lists them (``ID``, ``Section Name``,
  ``Rule Name``, ``Rule Type``, ``Rule Description``, ``Estimated Speedup Type``,
  ``Estimated Speedup``);
* ``sources.csv`` — where the report holds source counters: each launch's hottest SASS
  instructions by sampled warp stalls (``ID``, ``address``, ``instruction``, ``samples``,
  ``share``);
* ``meta.json`` — how many ranges and launches, and warnings.

A process of its own, because ``ncu_report`` is a proprietary native library: a crash or a
report that takes gigabytes stays out of the TUI's process. Standard library and
``ncu_report`` only: the module may come from an Nsight Compute install rather than from the
``roofscope[ncu-rep]`` extra (``PYTHONPATH`` set by :mod:`roofscope.ingest.ncu.binary`).
"""

from __future__ import annotations

import csv
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import ncu_report

from roofscope.ncu_nvtx import column_text

ID_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name")
AFTER_NAME = ("Context", "Stream", "Block Size", "Grid Size", "Device", "CC")
NVTX_COLUMN = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
RULE_COLUMNS = (
    "ID",
    "Section Name",
    "Rule Name",
    "Rule Type",
    "Rule Description",
    "Estimated Speedup Type",
    "Estimated Speedup",
)
RULE_TYPES = {  # ncu_report's MsgType as the details page spells it
    ncu_report.MsgType_OK: "INF",
    ncu_report.MsgType_OPTIMIZATION: "OPT",
    ncu_report.MsgType_WARNING: "WRN",
    ncu_report.MsgType_ERR: "ERR",
}
SPEEDUP_TYPES = {ncu_report.SpeedupType_LOCAL: "local", ncu_report.SpeedupType_GLOBAL: "global"}
SAMPLES = "smsp__pcsamp_sample_count"  # warp samples per SASS instruction (source counters)
HOTTEST = 10  # instructions kept per launch


def _number(value: Any) -> str:
    if isinstance(value, float):
        return repr(value) if value == value else ""
    return str(value)


def _value(action: Any, name: str) -> tuple[str, str]:
    """(value as text, unit) of one metric of a launch; empty where it has none."""
    metric = action.metric_by_name(name)
    if metric is None or not metric.has_value():
        return "", ""
    value = metric.value()
    text = value if isinstance(value, str) else _number(value)
    return text, metric.unit() or ""


def _dims(action: Any, prefix: str) -> str:
    dims = [_value(action, f"{prefix}_{axis}")[0] for axis in "xyz"]
    if not all(dims):
        return ""
    return "(" + ", ".join(str(int(float(d))) for d in dims) + ")"


def _nvtx(action: Any) -> str:
    """The push/pop ranges open on the launching thread, outermost first, in ncu's CSV form
    (the module gives no thread ID: 0)."""
    state = action.nvtx_state()
    if state is None:
        return ""
    ranges = []
    for domain_id in state.domains():
        domain = state.domain_by_id(domain_id)
        ranges += [(domain.name(), name) for name in domain.push_pop_ranges()]
    return column_text("0", ranges)


def _identity(action: Any, launch_id: int) -> dict[str, str]:
    major = _value(action, "device__attribute_compute_capability_major")[0]
    minor = _value(action, "device__attribute_compute_capability_minor")[0]
    return {
        "ID": str(launch_id),
        "Process ID": "",
        "Process Name": "",
        "Host Name": "",
        "Kernel Name": action.name(ncu_report.IAction.NameBase_DEMANGLED) or action.name(),
        "Context": _integer(_value(action, "launch__context_id")[0]),
        "Stream": _integer(_value(action, "launch__stream_id")[0]),
        "Block Size": _dims(action, "launch__block_dim"),
        "Grid Size": _dims(action, "launch__grid_dim"),
        "Device": _integer(_value(action, "launch__device_id")[0]),
        "CC": f"{major}.{minor}" if major and minor else "",
    }


def _integer(text: str) -> str:
    try:
        return str(int(float(text)))
    except ValueError:
        return text


_SECTION_LINK = re.compile(r"@section:[^:@]*:([^@]*)@")
_URL_LINK = re.compile(r"@url:([^:@]*):([^@]*)@")


def _plain_text(message: str) -> str:
    """A rule's message as the details page prints it: ``@section:Id:Title@`` reads
    ``Title``, ``@url:Title:address@`` reads ``Title (address)``."""
    return _URL_LINK.sub(r"\1 (\2)", _SECTION_LINK.sub(r"\1", message))


def _rules(action: Any, launch_id: int) -> list[list[str]]:
    rows = []
    for rule in action.rule_results_as_dicts():
        message = rule.get("rule_message") or {}
        if not message.get("message"):  # a rule that said nothing: the details page omits it
            continue
        speedup = rule.get("speedup_estimation") or {}
        value = speedup.get("speedup")
        rows.append(
            [
                str(launch_id),
                rule.get("section_identifier") or "",
                rule.get("rule_identifier") or "",
                RULE_TYPES.get(message.get("type"), ""),
                _plain_text(message.get("message") or ""),
                SPEEDUP_TYPES.get(speedup.get("type"), "") if value is not None else "",
                _number(float(value)) if value is not None else "",
            ]
        )
    return rows


def _hottest(action: Any, launch_id: int) -> list[list[str]]:
    """The instructions with the most warp samples, where the report sampled them."""
    if action.metric_by_name(SAMPLES) is None:
        return []
    try:
        correlated = action.metric_by_name(SAMPLES)
        if not correlated.has_correlation_ids():
            return []
        ids = correlated.correlation_ids()
        pcs = [ids.as_uint64(i) for i in range(ids.num_instances())]
        counts = [correlated.as_uint64(i) for i in range(correlated.num_instances())]
    except Exception:  # a report without source counters, or an older layout of them
        return []
    total = sum(counts)
    if not total:
        return []
    ranked = sorted(zip(pcs, counts, strict=False), key=lambda pc: -pc[1])[:HOTTEST]
    return [
        [str(launch_id), hex(pc), action.sass_by_pc(pc) or "", str(count), repr(count / total)]
        for pc, count in ranked
    ]


CHUNK = 500  # launches a process reads per load of the report: its memory stays bounded
RULES, HOT = ".rules", ".hot"  # beside each part: its rule rows, its hottest instructions
HOT_COLUMNS = ("ID", "address", "instruction", "samples", "share")


def _actions(context: Any) -> list[tuple[int, int]]:
    """(range, action) of every launch, in report order."""
    return [
        (r, a)
        for r in range(context.num_ranges())
        for a in range(context.range_by_idx(r).num_actions())
    ]


def _survey(report: str, where: list[tuple[int, int]]) -> tuple[list[str], list[int], bool]:
    """The metric names of these launches, in the order first seen; the launches (by their
    place in ``where``) that have none at all, as NVIDIA's reader returns a cut report's last
    launch, without an error; and whether any ran inside an NVTX push/pop range."""
    context = ncu_report.load_report(report)
    seen: dict[str, None] = {}
    bare = []
    nvtx = False
    for i, (r, a) in enumerate(where):
        action = context.range_by_idx(r).action_by_idx(a)
        names = action.metric_names()
        if not len(names):
            bare.append(i)
        for name in names:
            if ":" not in name:  # breakdown: and group: entries are no metrics
                seen.setdefault(name)
        nvtx = nvtx or bool(_nvtx(action))
    return list(seen), bare, nvtx


def _header(with_nvtx: bool) -> list[str]:
    return [*ID_COLUMNS, *([NVTX_COLUMN] if with_nvtx else []), "Kernel Name", *AFTER_NAME]


def _part(job: tuple[str, list[tuple[int, int]], int, list[str], str, bool]) -> dict[str, str]:
    """Write the rows of one slice of launches (numbered from ``first``) to ``part`` (its rule
    rows and hottest instructions beside it); the units of the metrics it saw come back (a
    unit is the same for every launch)."""
    report, where, first, names, part, with_nvtx = job
    context = ncu_report.load_report(report)
    units: dict[str, str] = {}
    header = _header(with_nvtx)
    with (
        open(part, "w", newline="", encoding="utf-8") as raw,
        open(part + RULES, "w", newline="", encoding="utf-8") as rule_file,
        open(part + HOT, "w", newline="", encoding="utf-8") as hot_file,
    ):
        rows = csv.writer(raw, quoting=csv.QUOTE_ALL, lineterminator="\n")
        rules = csv.writer(rule_file, lineterminator="\n")
        hot = csv.writer(hot_file, lineterminator="\n")
        for offset, (r, a) in enumerate(where):
            action = context.range_by_idx(r).action_by_idx(a)
            launch_id = first + offset
            identity = _identity(action, launch_id)
            if with_nvtx:
                identity[NVTX_COLUMN] = _nvtx(action)
            row = [identity[c] for c in header]
            for name in names:
                metric = action.metric_by_name(name)
                value = metric.value() if metric is not None else None
                if value is None:
                    row.append("")
                    continue
                row.append(value if isinstance(value, str) else _number(value))
                if name not in units:
                    units[name] = metric.unit() or ""
            rows.writerow(row)
            rules.writerows(_rules(action, launch_id))
            hot.writerows(_hottest(action, launch_id))
    return units


def _jobs() -> int:
    """Processes for the slices: the cores this process may use, at most four (each holds a
    slice of the report in memory)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 4))


def convert(report: Path, out: Path) -> dict[str, Any]:
    """The four files for ``report`` in ``out``; slices of launches are read by up to four
    processes, each loading the report for its own slice (the module loads lazily: what a
    process holds is its slice)."""
    context = ncu_report.load_report(str(report))
    where = _actions(context)
    ranges = context.num_ranges()
    del context
    warnings = []
    if ranges > 1:
        warnings.append(
            f"the report holds {ranges} ranges (several ncu sessions or --replay-mode "
            f"application passes): the launches of all of them are read, numbered in report "
            f"order"
        )
    slices = [where[i : i + CHUNK] for i in range(0, len(where), CHUNK)]
    firsts = [i * CHUNK for i in range(len(slices))]
    parts = [str(out / f"part{i:05d}.csv") for i in range(len(slices))]
    pool = _pool(len(slices))
    try:
        surveys = list(pool.map(_survey, [str(report)] * len(slices), slices))
        names = sorted({name for found, _, _ in surveys for name in found})
        bare = [
            first + i for first, (_, gone, _) in zip(firsts, surveys, strict=True) for i in gone
        ]
        with_nvtx = any(nvtx for _, _, nvtx in surveys)
        jobs = [
            (str(report), launches, first, names, part, with_nvtx)
            for launches, first, part in zip(slices, firsts, parts, strict=True)
        ]
        units: dict[str, str] = {}
        for found_units in pool.map(_part, jobs):
            for name, unit in found_units.items():
                units.setdefault(name, unit)
    finally:
        pool.shutdown()
    header = _header(with_nvtx)
    head = [[*header, *names], [""] * len(header) + [units.get(n, "") for n in names]]
    _join(out / "raw.csv", parts, head, "", quote_all=True)
    _join(out / "rules.csv", parts, [list(RULE_COLUMNS)], RULES)
    _join(out / "sources.csv", parts, [list(HOT_COLUMNS)], HOT)
    meta = {"ranges": ranges, "launches": len(where), "without_metrics": bare, "warnings": warnings}
    (out / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return meta


class _Serial:
    """``map`` in this process: a report of one slice needs no pool."""

    def map(self, fn: Any, *args: Any) -> Any:
        return map(fn, *args)

    def shutdown(self) -> None:
        pass


def _pool(slices: int) -> Any:
    jobs = min(_jobs(), slices)
    if jobs <= 1:
        return _Serial()
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"))


def _join(
    target: Path, parts: list[str], head: list[list[str]], suffix: str, quote_all: bool = False
) -> None:
    """The header rows, then each part's rows in order (each part removed once copied)."""
    with open(target, "w", newline="", encoding="utf-8") as fh:
        quoting = csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL
        csv.writer(fh, quoting=quoting, lineterminator="\n").writerows(head)
        for part in parts:
            name = part + suffix
            with open(name, encoding="utf-8", newline="") as src:
                while chunk := src.read(1 << 20):
                    fh.write(chunk)
            os.unlink(name)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: python -m roofscope.ingest.ncu.report_worker REPORT OUT")
    convert(Path(sys.argv[1]), Path(sys.argv[2]))
