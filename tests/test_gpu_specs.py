"""The GPU spec table: every value has a source, driver names resolve to the right entry, and
spot values match the NVIDIA documents they cite (issue 16 item 7)."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from roofscope.hardware.ceilings import datasheet_ceilings
from roofscope.hardware.specs import find_gpu, load_specs, match_device_name


def _entries() -> list[dict]:
    text = resources.files("roofscope.data").joinpath("gpu_specs.json").read_text("utf-8")
    return json.loads(text)["gpus"]


def _value_fields(entry: dict) -> list[str]:
    fields = [f for f in ("sms", "clock_mhz", "mem_gb", "dram_bw_gbs") if entry.get(f)]
    peaks = entry.get("peaks_tflops") or {}
    return fields + [k for k, v in peaks.items() if v is not None]


# A source is a URL, or an `owner/repo:path` reference, or a document title with its year.
_CITED = re.compile(r"https?://|\b[\w.-]+/[\w.-]+:[\w./-]+|\b(19|20)\d\d\b")


@pytest.mark.parametrize("entry", _entries(), ids=lambda e: e["name"])
def test_every_value_has_a_source(entry: dict) -> None:
    """A value is either printed in a cited document or listed as derived with its rule."""
    assert _CITED.search(entry.get("source", "")), entry["name"]
    derived = set(entry.get("derived") or ())
    sources = entry.get("sources") or {}
    for field in _value_fields(entry):
        if field in derived:
            assert entry.get("derivation") or entry.get("note"), (entry["name"], field)
            continue
        cited = sources.get(field) or sources.get(f"peaks_tflops.{field}") or entry["source"]
        assert _CITED.search(cited), (entry["name"], field)
    for field in sources:  # an added entry names a document for each printed value
        assert _CITED.search(sources[field]), (entry["name"], field)


def test_added_entries_cite_every_printed_value() -> None:
    """Entries with a per-value ``sources`` map leave no value uncited and none unexplained."""
    added = [e for e in _entries() if "sources" in e]
    assert len(added) >= 60
    for entry in added:
        derived = set(entry["derived"])
        for field in _value_fields(entry):
            named = field in entry["sources"] or f"peaks_tflops.{field}" in entry["sources"]
            assert named or field in derived, (entry["name"], field)


def test_keys_and_aliases_are_unique() -> None:
    """One driver name must never be claimed by two entries (first match would win silently)."""
    keys = [e["name"] for e in _entries()]
    assert len(keys) == len(set(keys))
    seen: dict[str, str] = {}
    for entry in _entries():
        for alias in entry.get("aliases") or ():
            norm = re.sub(r"^nvidia\s+", "", alias.casefold())
            assert seen.get(norm, entry["name"]) == entry["name"], (alias, seen[norm])
            seen[norm] = entry["name"]


# Device names as NVML / ncu / nsys printed them in real exports, and the intended entry.
SEEN_IN_EXPORTS = {
    "Quadro GP100": "quadro-gp100",
    "Quadro RTX 6000": "quadro-rtx-6000",
    "NVIDIA GeForce RTX 3050 Laptop GPU": "rtx-3050-laptop",
    "NVIDIA GeForce RTX 3060": "rtx-3060",
    "NVIDIA GeForce RTX 3080": "rtx-3080",
    "NVIDIA GeForce RTX 3090": "rtx-3090",
    "NVIDIA RTX A4500": "rtx-a4500",
    "Tesla V100-PCIE-32GB": "v100-pcie",
    "Tesla T4": "t4",
    "NVIDIA A30": "a30",
    "NVIDIA B200": "b200",
    "NVIDIA GeForce RTX 5070": "rtx-5070",
    # the same names as other drivers spell them
    "GeForce RTX 3080": "rtx-3080",
    "NVIDIA Quadro RTX 6000": "quadro-rtx-6000",
    "NVIDIA GeForce RTX 2080 SUPER": "rtx-2080-super",
    "NVIDIA RTX 6000 Ada Generation": "rtx-6000-ada",
    "NVIDIA RTX A6000": "rtx-a6000",
    "NVIDIA RTX 4500 Ada Generation": "rtx-4500-ada",
    "Tesla V100S-PCIE-32GB": "v100s-pcie-32gb",
    "Quadro GV100": "quadro-gv100",
}


@pytest.mark.parametrize(("name", "key"), SEEN_IN_EXPORTS.items())
def test_driver_names_resolve(name: str, key: str) -> None:
    spec = match_device_name(name)
    assert spec is not None and spec.key == key, (name, spec and spec.key)


LOOKALIKES = [
    ("NVIDIA GeForce RTX 3080", "NVIDIA GeForce RTX 3080 Laptop GPU"),
    ("NVIDIA GeForce RTX 3080 Ti", "NVIDIA GeForce RTX 3080 Ti Laptop GPU"),
    ("NVIDIA GeForce RTX 3070", "NVIDIA GeForce RTX 3070 Laptop GPU"),
    ("NVIDIA GeForce RTX 3060", "NVIDIA GeForce RTX 3060 Laptop GPU"),
    ("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090 Laptop GPU"),
    ("NVIDIA GeForce RTX 4080", "NVIDIA GeForce RTX 4080 Laptop GPU"),
    ("NVIDIA GeForce RTX 4070", "NVIDIA GeForce RTX 4070 Laptop GPU"),
    ("NVIDIA GeForce RTX 4060", "NVIDIA GeForce RTX 4060 Laptop GPU"),
    ("NVIDIA RTX A4500", "NVIDIA RTX 4500 Ada Generation"),
    ("Quadro RTX 6000", "NVIDIA RTX 6000 Ada Generation"),
    ("Quadro RTX 6000", "NVIDIA RTX A6000"),
    ("NVIDIA RTX A6000", "NVIDIA RTX 6000 Ada Generation"),
    ("NVIDIA GeForce RTX 4070 Ti", "NVIDIA GeForce RTX 4070 Ti SUPER"),
]


@pytest.mark.parametrize(("a", "b"), LOOKALIKES)
def test_lookalike_names_stay_apart(a: str, b: str) -> None:
    """Desktop vs Laptop GPU, Ampere vs Ada workstation: different chips, different roofs."""
    sa, sb = match_device_name(a), match_device_name(b)
    assert sa is not None and sb is not None
    assert sa.key != sb.key
    assert sa.peaks["fp32"] != sb.peaks["fp32"]


def test_every_laptop_name_is_a_laptop_entry() -> None:
    for spec in load_specs():
        for alias in spec.aliases:
            assert ("Laptop" in alias) == spec.key.endswith("-laptop"), (alias, spec.key)


def test_laptop_peaks_are_flagged_as_upper_bounds() -> None:
    """A laptop's clock is the top of NVIDIA's range; the entry must say so, not pretend."""
    for entry in _entries():
        if entry["name"].endswith("-laptop"):
            assert "boost-clock range" in entry["note"], entry["name"]
            assert entry["dram_bw_gbs"] is None  # data rate not published
    spec = match_device_name("NVIDIA GeForce RTX 4060 Laptop GPU")
    assert spec is not None
    assert "laptop" in datasheet_ceilings(spec)["fp32"].source


def test_mig_names_resolve_to_the_parent_with_its_slice_share() -> None:
    """A30 has 4 compute slices (not 7): a 1g slice is a quarter of the GPU."""
    a30 = match_device_name("NVIDIA A30 MIG 1g.6gb")
    assert a30 is not None and a30.key == "a30" and a30.mig_slice == "1g.6gb"
    assert a30.sm_fraction == pytest.approx(1 / 4)
    assert a30.mem_fraction == pytest.approx(6 / 24)
    h100 = match_device_name("NVIDIA H100 80GB HBM3 MIG 1g.10gb")
    assert h100 is not None and h100.sm_fraction == pytest.approx(16 / 132)  # profile SMs
    ci = match_device_name("NVIDIA A100-SXM4-80GB MIG 1c.3g.40gb")
    assert ci is not None and ci.key == "a100-sxm4-80gb" and ci.sm_fraction == pytest.approx(1 / 7)


def test_shared_name_carries_its_caveat_into_the_ceiling_source() -> None:
    """'NVIDIA GeForce RTX 3060' is two cards (12 GB 360 GB/s, 8 GB 240 GB/s): flagged."""
    spec = match_device_name("NVIDIA GeForce RTX 3060")
    assert spec is not None
    dram = datasheet_ceilings(spec)["dram"]
    assert dram.value == pytest.approx(360e9)
    assert "8 GB" in dram.source and "caveat" in dram.source


def test_the_other_3080_is_reachable_by_key() -> None:
    assert find_gpu("rtx-3080-12gb").sms == 70


# Spot values: (name, peak key, TFLOPS or TB/s, tolerance) as printed in the cited document.
SPOT = [
    # GA102 whitepaper v2 (2021), Appendix A, RTX 3080 column
    ("NVIDIA GeForce RTX 3080", "fp32", 29.8),
    ("NVIDIA GeForce RTX 3080", "fp16_tensor", 59.5),
    ("NVIDIA GeForce RTX 3080", "dram", 0.760),
    # Turing whitepaper (2018), Appendix A, Quadro RTX 6000 column
    ("Quadro RTX 6000", "fp16_tensor", 130.5),
    ("Quadro RTX 6000", "fp32", 16.3),
    # Turing whitepaper, RTX 2080 Ti reference: 107.6 FP16-acc, 53.8 FP32-acc tensor
    ("NVIDIA GeForce RTX 2080 Ti", "fp16_tensor", 53.8),
    # NVIDIA L40 datasheet (2022): FP16 tensor 181.05 dense, 864 GB/s
    ("NVIDIA L40", "fp16_tensor", 181.05),
    ("NVIDIA L40", "dram", 0.864),
    # NVIDIA A2 datasheet (2021): FP32 4.5, TF32 9 dense, 200 GB/s
    ("NVIDIA A2", "tf32_tensor", 9.0),
    # Quadro GP100 datasheet (2017): FP64 5.2, FP32 10.3
    ("Quadro GP100", "fp64", 5.2),
    # V100 datasheet, V100S PCIe column: 1134 GB/s, FP32 16.4
    ("Tesla V100S-PCIE-32GB", "dram", 1.134),
    # RTX Blackwell whitepaper (2025): RTX 5090 FP32 104.8
    ("NVIDIA GeForce RTX 5090", "fp32", 104.8),
]


@pytest.mark.parametrize(("name", "peak", "value"), SPOT)
def test_spot_values_match_the_documents(name: str, peak: str, value: float) -> None:
    spec = match_device_name(name)
    assert spec is not None
    got = spec.dram_bw / 1e12 if peak == "dram" else spec.peaks[peak] / 1e12
    assert got == pytest.approx(value, rel=0.01)


def test_laptop_3050_peak_is_the_derivation_it_claims() -> None:
    """16 SMs x 256 FLOP/clk x 1740 MHz (top of 1057-1740 MHz) = 7.13 TFLOPS FP32."""
    spec = match_device_name("NVIDIA GeForce RTX 3050 Laptop GPU")
    assert spec is not None and spec.sms == 16 and spec.clock_mhz == 1740
    assert spec.peaks["fp32"] == pytest.approx(16 * 256 * 1740e6, rel=0.005)
