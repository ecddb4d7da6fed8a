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


MIN_SLICE = 250  # launches: a smaller report is read by one process (a load costs seconds)
GROWTH_BUDGET = 128 << 20  # bytes a reading process may grow by before it hands on the rest
RULES, HOT = ".rules", ".hot"  # beside each part: its rule rows, its hottest instructions
HOT_COLUMNS = ("ID", "address", "instruction", "samples", "share")


def _actions(context: Any) -> list[tuple[int, int]]:
    """(range, action) of every launch, in report order."""
    return [
        (r, a)
        for r in range(context.num_ranges())
        for a in range(context.range_by_idx(r).num_actions())
    ]


def _header(with_nvtx: bool) -> list[str]:
    return [*ID_COLUMNS, *([NVTX_COLUMN] if with_nvtx else []), "Kernel Name", *AFTER_NAME]


def _survey(
    context: Any, where: list[tuple[int, int]], budget: int
) -> tuple[list[str], list[int], bool, int, int]:
    """The metric names of these launches, sorted; the launches (by their place in ``where``)
    that have none at all, as NVIDIA's reader returns a cut report's last launch, without an
    error; whether any ran inside an NVTX push/pop range; how many launches were surveyed (at
    least one, then until the process grew by half the budget); and the bytes it held after
    the first launch (the module reads what it needs of the report then)."""
    seen: dict[str, None] = {}
    bare = []
    nvtx = False
    count = base = 0
    for i, (r, a) in enumerate(where):
        if i == 1:
            base = _held()
        elif i and _held() > base + budget // 2:
            break
        action = context.range_by_idx(r).action_by_idx(a)
        names = action.metric_names()
        if not len(names):
            bare.append(i)
        for name in names:
            if ":" not in name:  # breakdown: and group: entries are no metrics
                seen.setdefault(name)
        nvtx = nvtx or bool(_nvtx(action))
        count = i + 1
    return sorted(seen), bare, nvtx, count, base


def _held() -> int:
    """Bytes this process holds now (its resident set); 0 where /proc is not there."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _slice(job: tuple[str, list[tuple[int, int]], int, str, int]) -> dict[str, Any]:
    """Read launches of one contiguous slice (numbered from ``first``) in one load of the
    report: a survey of their metric names, then their rows, written to ``part`` with its rule
    rows and hottest instructions beside it. The part's columns are its own (its names, its
    NVTX column where it saw one); what comes back says which, with the units it saw (a unit
    is the same for every launch), the launches without metrics and how many launches it
    read. It stops early where the process grew by ``budget`` bytes: PyPI's ncu-report
    2026.3.1 keeps what every call allocated until the process ends (0.3 MiB a launch of the
    basic set, 7 MiB of the full set), so the rest of the slice goes to a fresh process;
    Nsight Compute 2025.3.1's module stays flat and reads a slice in one go."""
    report, where, first, part, budget = job
    context = ncu_report.load_report(report)
    names, bare, with_nvtx, surveyed, base = _survey(context, where, budget)
    where = where[:surveyed]
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
        read = 0
        for offset, (r, a) in enumerate(where):
            if offset and _held() > base + budget:
                break
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
            read = offset + 1
    return {
        "first": first,
        "read": read,
        "part": part,
        "names": names,
        "nvtx": with_nvtx,
        "units": units,
        "bare": [first + i for i in bare if i < read],
    }


def _jobs() -> int:
    """Processes for the slices: the cores this process may use, at most four (each holds a
    slice of the report in memory)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 4))


def convert(report: Path, out: Path) -> dict[str, Any]:
    """The four files for ``report`` in ``out``, from the parts :func:`_read` wrote."""
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
    slices = _read(str(report), where, out)
    names = sorted({name for got in slices for name in got["names"]})
    with_nvtx = any(got["nvtx"] for got in slices)
    units: dict[str, str] = {}
    for got in slices:
        for name, unit in got["units"].items():
            units.setdefault(name, unit)
    header = _header(with_nvtx)
    head = [[*header, *names], [""] * len(header) + [units.get(n, "") for n in names]]
    with open(out / "raw.csv", "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(head)
        for got in slices:
            if got["names"] == names and got["nvtx"] == with_nvtx:
                _copy(got["part"], fh)
            else:
                _widen(got["part"], got["names"], got["nvtx"], names, with_nvtx, fh)
    parts = [got["part"] for got in slices]
    _join(out / "rules.csv", parts, [list(RULE_COLUMNS)], RULES)
    _join(out / "sources.csv", parts, [list(HOT_COLUMNS)], HOT)
    bare = [launch for got in slices for launch in got["bare"]]
    meta = {"ranges": ranges, "launches": len(where), "without_metrics": bare, "warnings": warnings}
    (out / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return meta


def _copy(part: str, target: Any) -> None:
    """Append a part's rows to ``target`` as they are, and remove the part."""
    with open(part, encoding="utf-8", newline="") as src:
        while chunk := src.read(1 << 20):
            target.write(chunk)
    os.unlink(part)


def _widen(
    part: str, names: list[str], nvtx: bool, all_names: list[str], all_nvtx: bool, target: Any
) -> None:
    """Append a part whose slice saw fewer metrics (or no NVTX range) than the report: each
    row put in the report's columns, empty where its launch has no value; then remove it."""
    identity = len(_header(nvtx))
    place = len(ID_COLUMNS)  # where the NVTX column stands
    writer = csv.writer(target, quoting=csv.QUOTE_ALL, lineterminator="\n")
    with open(part, encoding="utf-8", newline="") as src:
        for row in csv.reader(src):
            head = row[:identity]
            if all_nvtx and not nvtx:
                head.insert(place, "")
            values = dict(zip(names, row[identity:], strict=True))
            writer.writerow([*head, *(values.get(name, "") for name in all_names)])
    os.unlink(part)


def _read(report: str, where: list[tuple[int, int]], out: Path) -> list[dict[str, Any]]:
    """Every launch of ``where`` read into parts, what each part holds in launch order. The
    launches are cut into one contiguous slice per process (at most four, none smaller than
    ``MIN_SLICE`` but the last): a load of a large report costs seconds with Nsight Compute's
    module, so each slice is read in one load where the process's memory allows; a slice
    read only in part goes on in a fresh process (one task per process)."""
    if not where:
        return []
    count = max(1, min(_jobs(), -(-len(where) // MIN_SLICE)))
    size = -(-len(where) // count)

    def job(first: int, end: int) -> tuple[str, list[tuple[int, int]], int, str, int]:
        part = str(out / f"part{first:09d}.csv")
        return report, where[first:end], first, part, GROWTH_BUDGET

    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    read = []
    # spawned, never forked: once ncu_report has read launches its native threads hold
    # locks, and a forked child waits on them for ever (seen with the PyPI module)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(count, mp_context=context, max_tasks_per_child=1) as pool:
        ends = {first: min(first + size, len(where)) for first in range(0, len(where), size)}
        running = {pool.submit(_slice, job(first, end)): end for first, end in ends.items()}
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                end = running.pop(future)
                got = future.result()
                read.append(got)
                rest = got["first"] + got["read"]
                if rest < end:
                    running[pool.submit(_slice, job(rest, end))] = end
    return sorted(read, key=lambda got: got["first"])


def _join(target: Path, parts: list[str], head: list[list[str]], suffix: str) -> None:
    """The header rows, then each part's rows in order (each part removed once copied)."""
    with open(target, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(head)
        for part in parts:
            _copy(part + suffix, fh)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: python -m roofscope.ingest.ncu.report_worker REPORT OUT")
    convert(Path(sys.argv[1]), Path(sys.argv[2]))
