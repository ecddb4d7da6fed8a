"""Roofline ceilings, each labelled with where it came from.

Order (DESIGN.md §4): the report's own peak metrics (``*.peak_sustained`` × the matching clock,
the same locked clock the kernels ran at), else what ``roofscope ceilings`` measured on this
machine for the same GPU model, else the GPU spec table (datasheet, boost clock), else what the
user gives. A ``--ceilings FILE.toml`` value is explicit and wins for the ceilings it
names; ``--gpu NAME`` picks the spec-table entry when the export does not name its GPU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from roofscope import metric_names as mn
from roofscope.errors import RoofscopeError
from roofscope.hardware.measured import load_measured
from roofscope.hardware.specs import GpuSpec
from roofscope.quantities import LEVELS, LEVELS_OUTERMOST_FIRST, PRECISIONS, SCALAR_PRECISIONS
from roofscope.sqlutil import memo_one, quote_ident
from roofscope.tomlfile import check_keys, positive_float, quoted, read_toml

if TYPE_CHECKING:
    import duckdb

COMPUTE = "compute"
MEMORY = "memory"

# ops_path family prefix -> spec-table peak key
_TENSOR_SPEC_KEYS = (
    ("tf32", "tf32_tensor"),
    ("bf16", "bf16_tensor"),
    ("fp16", "fp16_tensor"),
    ("fp8", "fp8_tensor"),
    ("fp64", "fp64_tensor"),
    ("int8", "int8_tensor_tops"),
)


@dataclass(frozen=True)
class Ceiling:
    """One roof: a compute peak (FLOP/s) or a memory bandwidth (B/s)."""

    name: str
    kind: str
    value: float
    unit: str
    source: str

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "kind": self.kind,
            "value": self.value,
            "unit": self.unit,
            "source": self.source,
        }


def _kind(name: str) -> str:
    return MEMORY if name in LEVELS else COMPUTE


def _unit(name: str) -> str:
    return "B/s" if _kind(name) == MEMORY else "FLOP/s"


def _family(aggregate: str) -> str:
    """``sm__ops_path_tensor_src_bf16_dst_fp32.sum`` -> ``bf16``."""
    rest = aggregate[len(mn.TENSOR_OPS_PREFIX) :].split(".")[0]
    return rest.split("_")[0]


# Tensor data types with 2:4 structured sparsity (Ampere and later); FP64 (DMMA) and INT1 have
# none, and their aggregate peaks match the dense datasheet rate (256 FP64 ops/clk/SM on H100).
SPARSE_FAMILIES = frozenset({"fp16", "bf16", "tf32", "fp8", "int8", "int4"})


def _sparse_capable(cc: str | None, family: str) -> bool:
    try:
        return family in SPARSE_FAMILIES and cc is not None and float(cc) >= 8.0
    except ValueError:
        return False


def _measured_formulas(
    metrics: set[str], cc: str | None, traffic_levels: frozenset[str] = frozenset()
) -> dict[str, tuple[str, str]]:
    """name -> (per-launch SQL, formula text) for the peaks an export carries.

    An aggregate ``sm__ops_path_tensor_src_<t>.sum.peak_sustained`` (no ``_sparsity_`` split)
    is the 2:4-sparse rate on GPUs with sparsity (CC >= 8.0): on an H100 a 4096³ bf16 GEMM
    counted exactly 2·N³ ops at 90% tensor-pipe utilisation, which is 45% of that peak
    (tests/data/h100_gemm). The dense roof is therefore half of it.
    """
    out: dict[str, tuple[str, str]] = {}

    def col(m: str) -> str:
        return quote_ident(m)

    sm_clock = next((c for c in (mn.SM_CLOCK, mn.GPC_CLOCK, mn.SMSP_CLOCK) if c in metrics), None)
    if sm_clock:
        for name, op, factor in (("fp64", "dfma", 2), ("fp32", "ffma", 2), ("fp16", "hfma", 4)):
            peak = mn.sass_op(op, "sm") + ".peak_sustained"
            if peak in metrics:
                out[name] = (
                    f"{factor} * {col(peak)} * {col(sm_clock)}",
                    f"{factor} × {peak} × {sm_clock}",
                )
        for agg in mn.tensor_aggregates(metrics, ".peak_sustained"):
            if "_sparsity_on" in agg:
                continue  # the dense roof is the _sparsity_off counter's
            name = f"tensor_{_family(agg)}"
            if "_sparsity_off" not in agg and _sparse_capable(cc, _family(agg)):
                out[name] = (
                    f"0.5 * {col(agg)} * {col(sm_clock)}",
                    f"½ × {agg} × {sm_clock} (ncu's aggregate peak is the 2:4-sparse "
                    f"rate; dense = ½)",
                )
            else:
                out[name] = (f"{col(agg)} * {col(sm_clock)}", f"{agg} × {sm_clock}")
    chart = {
        "l2": [(mn.L2_LTS2XBAR, 32)],
        "l1": [(mn.L1_WRITEBACK_LGDS, 128), (mn.L1_WRITEBACK_LG, 128)],
    }
    # the spellings the points' bytes are read with (metric_names), so a sector-counted
    # export gets the matching sector roof
    traffic = {
        "l2": [(s.metric, s.factor) for s in mn.L2_SPELLINGS],
        "l1": [(s.metric, s.factor) for s in mn.L1_SPELLINGS],
    }
    clocks = {"dram": mn.DRAM_CLOCK, "l2": mn.LTS_CLOCK, "l1": mn.L1_CLOCK}
    for level in LEVELS_OUTERMOST_FIRST:
        # the roof must measure the same bytes as the points: traffic roofs for traffic bytes
        if level == "dram":
            options = [(s.metric, s.factor, "") for s in mn.DRAM_SPELLINGS]
        elif level in traffic_levels:
            options = [(m, f, "") for m, f in traffic[level]] + [
                (m, f, " (chart-convention roof; the bytes are traffic)") for m, f in chart[level]
            ]
        else:
            options = [(m, f, "") for m, f in chart[level]] + [
                (m, f, " (traffic-convention roof; the bytes are chart)") for m, f in traffic[level]
            ]
        clock = clocks[level]
        for counter, factor, note in options:
            peak = counter + ".peak_sustained"
            if peak in metrics and clock in metrics:
                lead = f"{factor} × " if factor != 1 else ""
                out[level] = (
                    f"{factor} * {col(peak)} * {col(clock)}",
                    f"{lead}{peak} × {clock}{note}",
                )
                break
    return out


def tensor_ops_by_type(
    con: duckdb.DuckDBPyConnection, report_id: int, metrics: set[str]
) -> dict[str, float]:
    """Tensor-path ops of the report per data type (``{"tf32": 1.9e10}``) from the aggregate
    ``sm__ops_path_tensor_src_<type>`` counters; empty when the export has none."""
    aggs = mn.tensor_aggregates(metrics)
    weight = "l.invocations"  # a summary row stands for Invocations launches
    if not aggs:
        aggs = mn.tensor_aggregates(metrics, ".per_second")
        if mn.TIME not in metrics:
            return {}
        weight = f"l.invocations * v.{quote_ident(mn.TIME)}"  # rates × time = ops
    if not aggs:
        return {}
    sums = ", ".join(f"sum(v.{quote_ident(a)} * {weight})" for a in aggs)
    row = memo_one(
        con,
        f"SELECT {sums} FROM values_r{report_id} v JOIN launches l "
        f"ON l.launch_id = v.launch_id AND l.report_id = {report_id}",
    )
    totals: dict[str, float] = {}
    for agg, total in zip(aggs, row or (), strict=False):
        fam = _family(agg)
        totals[fam] = totals.get(fam, 0.0) + (total or 0.0)
    return totals


def _dominant_tensor_family(
    con: duckdb.DuckDBPyConnection, report_id: int, metrics: set[str]
) -> str | None:
    """The tensor data type with the most ops in the report (whose roof the points meet)."""
    totals = tensor_ops_by_type(con, report_id, metrics)
    if not totals:
        return None
    best = max(totals, key=lambda f: totals[f])
    return best if totals[best] > 0 else None


def _from_report(
    con: duckdb.DuckDBPyConnection,
    report_id: int,
    metrics: set[str],
    cc: str | None,
    traffic_levels: frozenset[str],
) -> dict[str, Ceiling]:
    formulas = _measured_formulas(metrics, cc, traffic_levels)
    if not formulas:
        return {}
    exprs = ", ".join(f"median({sql})" for sql, _ in formulas.values())
    row = memo_one(con, f"SELECT count(*), {exprs} FROM values_r{report_id}")
    launches = row[0] if row else 0
    out = {}
    for (name, (_, text)), value in zip(formulas.items(), (row or ())[1:], strict=True):
        if value is None or value <= 0:
            continue
        over = "its one launch" if launches == 1 else f"median over {launches} launches"
        source = f"report: {text} ({over}; ncu's locked clock)"
        out[name] = Ceiling(name, _kind(name), float(value), _unit(name), source)
    return out


def datasheet_ceilings(spec: GpuSpec) -> dict[str, Ceiling]:
    out = {}
    note = f"datasheet {spec.label} (boost clock)"
    if spec.mig_slice:
        note += f", scaled to the MIG slice ({spec.sm_fraction:.2f} of SMs)"
    for name in SCALAR_PRECISIONS:
        if name in spec.peaks:
            out[name] = Ceiling(
                name,
                COMPUTE,
                spec.peaks[name] * spec.sm_fraction,
                "FLOP/s",
                f"{note}: {spec.source}",
            )
    for fam, key in _TENSOR_SPEC_KEYS:
        if key in spec.peaks and f"tensor_{fam}" not in out:
            out[f"tensor_{fam}"] = Ceiling(
                f"tensor_{fam}",
                COMPUTE,
                spec.peaks[key] * spec.sm_fraction,
                "FLOP/s",
                f"{note}, dense: {spec.source}",
            )
    if spec.dram_bw:
        out["dram"] = Ceiling(
            "dram", MEMORY, spec.dram_bw * spec.mem_fraction, "B/s", f"{note}: {spec.source}"
        )
    return out


def _from_machine(spec: GpuSpec) -> dict[str, Ceiling]:
    doc = load_measured(spec)
    if doc is None:
        return {}
    out = {}
    for name, entry in doc["ceilings"].items():
        kind = MEMORY if name in LEVELS else COMPUTE
        source = (
            f"measured on this machine by roofscope ceilings ({doc.get('measured_at', '?')}, "
            f"{doc.get('device', spec.label)}): {entry.get('method', '')}"
        )
        out[name] = Ceiling(name, kind, float(entry["value"]), _unit(name), source)
    return out


_QUANTITY = re.compile(
    r"^\s*([0-9.eE+-]+)\s*([kKMGTP]?)\s*(FLOP/s|FLOPS|flop/s|flops|B/s|byte/s|bytes/s|OP/s)?\s*$"
)
_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
# A roof outside these is a typo (a missing prefix, an extra exponent digit), not a GPU.
PLAUSIBLE = {"FLOP/s": (1e6, 1e18), "B/s": (1e6, 1e16)}


def _unit_of(written: str) -> str:
    return "B/s" if written.lower().startswith("b") else "FLOP/s"


def parse_quantity(
    value: object, where: str, unit: str = "FLOP/s", path: str | None = None
) -> float:
    """``60e12``, ``"60 TFLOP/s"`` or ``"3.35 TB/s"`` -> a positive base-SI number in ``unit``
    (FLOP/s for a compute roof, B/s for a memory one): a unit of the other quantity, a
    non-finite, non-positive or implausible number raises a one-line error."""
    example = '"60 TFLOP/s"' if unit == "FLOP/s" else '"3.35 TB/s"'
    hint = f"write a positive number in {unit}, e.g. {where} = {example}"

    def refuse(problem: str) -> RoofscopeError:
        return RoofscopeError(f"ceiling {where} = {quoted(value)}: {problem}", path=path, hint=hint)

    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise refuse("not a number")
    if isinstance(value, int | float):
        number = positive_float(value, refuse)
    else:
        m = _QUANTITY.match(value)
        if m is None:
            raise refuse("not a number with a unit")
        if m.group(3) and _unit_of(m.group(3)) != unit:
            raise refuse(f"{_unit_of(m.group(3))} given where the roof is in {unit}")
        try:
            number = float(m.group(1)) * _SI[m.group(2)]
        except ValueError:
            raise refuse("not a number") from None
        number = positive_float(number, refuse)
    lo, hi = PLAUSIBLE[unit]
    if not lo <= number <= hi:
        raise refuse(f"outside {lo:.0e}–{hi:.0e} {unit}, no GPU has that roof")
    return number


CEILINGS_HINT = "see docs/ceilings.md for the format"


def load_ceilings_file(path: str | Path) -> dict[str, float]:
    """A TOML file with a ``[ceilings]`` table (or the same keys at its top): name -> value
    (base SI or with a unit). A name no roof has is refused with the nearest one."""
    p = Path(path)
    data = read_toml(p, "ceilings file", CEILINGS_HINT)
    if "ceilings" in data:
        check_keys(data, ("ceilings",), "the file", p, CEILINGS_HINT)
    table = data.get("ceilings", data)
    if not isinstance(table, dict):
        raise RoofscopeError(
            "[ceilings] must be a table of name = value", path=str(p), hint="see docs/ceilings.md"
        )
    known = [*PRECISIONS, *LEVELS, *(f"tensor_{f}" for f, _ in _TENSOR_SPEC_KEYS)]
    check_keys(table, known, "[ceilings]", p, CEILINGS_HINT)
    return {name: parse_quantity(value, name, _unit(name), str(p)) for name, value in table.items()}


def resolve_ceilings(
    con: duckdb.DuckDBPyConnection,
    report_id: int,
    metrics: set[str],
    spec: GpuSpec | None,
    user: dict[str, float] | None = None,
    user_source: str = "user",
    cc: str | None = None,
    traffic_levels: frozenset[str] = frozenset(),
) -> list[Ceiling]:
    """All ceilings of one report, preferring measured over datasheet, user file overriding."""
    chosen: dict[str, Ceiling] = {}
    if spec is not None:
        chosen.update(datasheet_ceilings(spec))
        chosen.update(_from_machine(spec))
    chosen.update(_from_report(con, report_id, metrics, cc, traffic_levels))
    for name, value in (user or {}).items():
        chosen[name] = Ceiling(name, _kind(name), value, _unit(name), user_source)
    if "tensor" not in chosen:
        family = _dominant_tensor_family(con, report_id, metrics)
        pick = (
            f"tensor_{family}"
            if family
            else next(
                (f"tensor_{f}" for f in ("fp16", "bf16", "tf32") if f"tensor_{f}" in chosen), None
            )
        )
        if pick and pick in chosen:
            c = chosen[pick]
            why = "data type with the most tensor ops" if family else "default FP16 roof"
            chosen["tensor"] = Ceiling(
                "tensor", COMPUTE, c.value, c.unit, f"{pick} ({why}); {c.source}"
            )
    order = [*PRECISIONS, *LEVELS]
    return sorted(
        chosen.values(),
        key=lambda c: (order.index(c.name) if c.name in order else len(order), c.name),
    )
