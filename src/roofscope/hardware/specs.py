"""The GPU spec table (package data built by tools/make_gpu_specs.py) and name matching.

Device names come from ncu (``device__attribute_display_name``), NVML or the user. They carry
a ``NVIDIA `` prefix on newer drivers only (``Tesla V100-PCIE-32GB``) and a `` MIG 3g.40gb``
suffix on MIG slices, so both are normalised away before the alias lookup.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources

from roofscope.errors import RoofscopeError
from roofscope.hardware.gpu_spec import GpuSpec
from roofscope.hardware.mig import profiles_for, total_slices

# `` MIG 3g.40gb`` (a GPU instance) or `` MIG 1c.3g.40gb`` (a compute instance of 1 of its slices)
_MIG = re.compile(r"\s+MIG\s+(?:(\d+)c\.)?(\d+)g\.(\d+)gb.*$", re.IGNORECASE)


def _normalise(name: str) -> str:
    text = name.strip().casefold()
    text = re.sub(r"^nvidia\s+", "", text)
    return re.sub(r"[\s_]+", " ", text)


@lru_cache(maxsize=1)
def load_specs() -> tuple[GpuSpec, ...]:
    text = resources.files("roofscope.data").joinpath("gpu_specs.json").read_text("utf-8")
    out = []
    for g in json.loads(text)["gpus"]:
        peaks = {k: v * 1e12 for k, v in (g.get("peaks_tflops") or {}).items() if v is not None}
        mem = g.get("mem_gb")
        out.append(
            GpuSpec(
                key=g["name"],
                aliases=tuple(g.get("aliases") or ()),
                cc=str(g.get("cc")),
                sms=int(g["sms"]),
                clock_mhz=g.get("clock_mhz"),
                peaks=peaks,
                dram_bw=g["dram_bw_gbs"] * 1e9 if g.get("dram_bw_gbs") else None,
                mem_gb=float(mem[-1] if isinstance(mem, list) else mem) if mem else None,
                source=_source_label(g),
            )
        )
    return tuple(out)


def _source_label(entry: dict) -> str:
    """The entry's first document, plus its caveat (a name several cards share, a laptop clock)."""
    label = str(entry.get("source", "")).split(" ; ")[0]
    caveat = entry.get("caveat")
    return f"{label} (caveat: {caveat})" if caveat else label


def _with_mig(
    spec: GpuSpec, slices: int, mem_gb: int, suffix: str, compute_slices: int | None = None
) -> GpuSpec:
    """The share of a MIG slice: its profile's SMs where known, else its share of the GPU's
    compute slices (7, or 4 on an A30), as analysis/mig.py counts them."""
    profiles = profiles_for(spec)
    total = total_slices(profiles) if profiles else 7
    used = compute_slices if compute_slices else slices
    profile = next((p for p in profiles if p.slices == slices and p.mem_gb == mem_gb), None)
    if profile and profile.sms and spec.sms and not compute_slices:
        sm_fraction = min(1.0, profile.sms / spec.sms)
    else:
        sm_fraction = min(1.0, used / total)
    mem_fraction = min(1.0, mem_gb / spec.mem_gb) if spec.mem_gb else sm_fraction
    return GpuSpec(
        **{
            **spec.__dict__,
            "mig_slice": suffix,
            "sm_fraction": sm_fraction,
            "mem_fraction": mem_fraction,
        }
    )


def match_device_name(name: str | None) -> GpuSpec | None:
    """Exact alias match of a device name as a driver reports it (None when unknown)."""
    if not name:
        return None
    mig = _MIG.search(name)
    base = _MIG.sub("", name)
    wanted = _normalise(base)
    for spec in load_specs():
        if wanted in {_normalise(a) for a in spec.aliases} or wanted == _normalise(spec.key):
            if mig:
                return _with_mig(
                    spec,
                    int(mig.group(2)),
                    int(mig.group(3)),
                    mig.group(0).strip().split(None, 1)[1],
                    int(mig.group(1)) if mig.group(1) else None,
                )
            return spec
    return None


def find_gpu(name: str) -> GpuSpec:
    """Resolve a user-typed ``--gpu`` name: exact alias/key, else a unique partial match."""
    exact = match_device_name(name)
    if exact:
        return exact
    token = _normalise(_MIG.sub("", name)).replace(" ", "")
    hits = [
        s
        for s in load_specs()
        if token in s.key.replace("-", "")
        or any(token in _normalise(a).replace(" ", "") for a in s.aliases)
    ]
    if len(hits) == 1:
        return hits[0]
    known = ", ".join(s.key for s in load_specs())
    if hits:
        raise RoofscopeError(
            f"GPU name {name!r} is ambiguous ({', '.join(s.key for s in hits)})",
            hint="pass one of those names to --gpu",
        )
    raise RoofscopeError(f"unknown GPU {name!r}", hint=f"known GPUs: {known}")
