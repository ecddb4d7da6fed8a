"""Build the package's GPU spec table: shared/reference/gpu_specs.yaml plus the entries below.

The YAML is the researched source for the datacenter parts it lists (sources per entry). The
entries in ``ADDED`` extend it to the GeForce, laptop and workstation GPUs that people profile
on. The package ships JSON so that a user install needs no YAML parser.
Usage: python tools/make_gpu_specs.py PATH/TO/gpu_specs.yaml

Conventions of an added entry (the YAML's schema, plus ``sources`` and ``derivation``):
* ``sources`` names the document of every value that is printed in one (field -> source).
* ``derived`` lists the values computed here, and ``derivation`` says from what. A peak is
  SMs x the architecture's dense FLOP/clk/SM (from its whitepaper, below) x boost clock, or, for
  a part whose datasheet prints FP32 but no clock, the printed FP32 x the architecture's ratio.
  Every derived rate is checked against the whitepaper's own per-SKU figure where one exists
  (``_check``), so a wrong rate table fails the build.
* A value no NVIDIA document gives is left out and the ``note`` says so (e.g. a laptop GPU's
  memory data rate, which the laptop maker picks).
* Tensor peaks are dense; ``fp16_tensor`` is FP16 in with FP32 accumulate (half rate on GeForce
  and on the L40), ``*_fp16acc`` the FP16-accumulate rate where it differs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

# ---- documents (title, date, URL) ---------------------------------------------------------
TURING_WP = (
    "NVIDIA Turing GPU Architecture whitepaper WP-09183-001_v01 (2018), Appendix A tables; "
    "https://images.nvidia.com/aem-dam/en-zz/Solutions/design-visualization/technologies/"
    "turing-architecture/NVIDIA-Turing-Architecture-Whitepaper.pdf"
)
GA102_WP = (
    "NVIDIA Ampere GA102 GPU Architecture whitepaper v2.0 (2021), Appendix A tables; "
    "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf"
)
ADA_WP = (
    "NVIDIA Ada GPU Architecture whitepaper v2.1 (2023), Appendix A tables; "
    "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf"
)
BLACKWELL_WP = (
    "NVIDIA RTX Blackwell GPU Architecture whitepaper v1.0 (2025), Appendix A tables; "
    "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/"
    "nvidia-rtx-blackwell-gpu-architecture.pdf"
)
VOLTA_WP = (
    "NVIDIA Tesla V100 GPU Architecture whitepaper WP-08608-001_v1.1 (2017); "
    "https://images.nvidia.com/content/volta-architecture/pdf/volta-architecture-whitepaper.pdf"
)
PASCAL_WP = (
    "NVIDIA Tesla P100 whitepaper WP-08019-001_v01.1 (2016); "
    "https://images.nvidia.com/content/pdf/tesla/whitepaper/pascal-architecture-whitepaper.pdf"
)
RTX20_SPECS = (
    "NVIDIA GeForce RTX 20 series product pages, specs tab (2018-2019); "
    "https://www.nvidia.com/en-us/geforce/graphics-cards/compare/?section=compare-20"
)
RTX30_SPECS = (
    "NVIDIA GeForce RTX 30 series product pages, specs tab (2020-2022); "
    "https://www.nvidia.com/en-us/geforce/graphics-cards/compare/?section=compare-30"
)
RTX30_LAPTOP_SPECS = (
    "NVIDIA GeForce RTX 30 series laptops, specs table (2021-2022); "
    "https://www.nvidia.com/en-us/geforce/laptops/compare/30-series/"
)
RTX40_SPECS = (
    "NVIDIA GeForce RTX 40 series product pages, specs tab (2022-2024); "
    "https://www.nvidia.com/en-us/geforce/graphics-cards/compare/?section=compare-40"
)
RTX40_LAPTOP_SPECS = (
    "NVIDIA GeForce RTX 40 series laptops, specs table (CES 2023); "
    "https://www.nvidia.com/en-us/geforce/laptops/compare/"
)
RTX50_SPECS = (
    "NVIDIA GeForce RTX 50 series product pages, specs tab (2025); "
    "https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/"
)
NVBENCH = (
    "NVIDIA/nvbench:examples/outputs/nvbench.example.exec_tag_sync.list.md (device list "
    "printed by the CUDA driver: SMs, default SM clock, global memory bus peak)"
)


def _ds(title: str, url: str) -> str:
    return f"{title}; {url}"


A2_DS = _ds(
    "NVIDIA A2 Tensor Core GPU datasheet (Nov 2021)",
    "https://www.nvidia.com/content/dam/en-zz/Solutions/data-center/a2/pdf/a2-datasheet.pdf",
)
A16_DS = _ds(
    "NVIDIA A16 GPU datasheet (2021)",
    "https://images.nvidia.com/content/Solutions/data-center/vgpu-a16-datasheet.pdf",
)
L40_DS = _ds(
    "NVIDIA L40 GPU datasheet (Oct 2022)",
    "https://images.nvidia.com/content/Solutions/data-center/vgpu-L40-datasheet.pdf",
)
V100S_DS = _ds(
    "NVIDIA V100 Tensor Core GPU datasheet, V100S PCIe column (Jan 2020)",
    "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf",
)
P100_DS = _ds(
    "NVIDIA Tesla P100 datasheet (2016)",
    "https://images.nvidia.com/content/tesla/pdf/nvidia-tesla-p100-PCIe-datasheet.pdf",
)
GV100_DS = _ds(
    "NVIDIA Quadro GV100 datasheet (2018)",
    "https://www.nvidia.com/content/dam/en-zz/Solutions/design-visualization/productspage/"
    "quadro/quadro-desktop/quadro-volta-gv100-data-sheet-us-nvidia-704619-r3-web.pdf",
)
GP100_DS = _ds(
    "NVIDIA Quadro GP100 datasheet (2017)",
    "https://images.nvidia.com/content/pdf/quadro/data-sheets/192152-NV-DS-Quadro-GP100-US-NV-fnl-HR.pdf",
)
QRTX_DS = _ds(
    "NVIDIA Quadro RTX 4000/5000/6000/8000 datasheets (2018-2019)",
    "https://www.nvidia.com/en-us/design-visualization/quadro/ (Quadro RTX product pages)",
)
TITAN_RTX = _ds(
    "NVIDIA TITAN RTX product page (2018)",
    "https://www.nvidia.com/en-us/deep-learning-ai/products/titan-rtx/",
)
TITAN_V = _ds("NVIDIA TITAN V product page (2017)", "https://www.nvidia.com/en-us/titan/titan-v/")
RTXA_DS = _ds(
    "NVIDIA RTX A2000/A4000/A4500/A5000/A5500 datasheets (2021-2022)",
    "https://www.nvidia.com/en-us/design-visualization/desktop-graphics/ (RTX A-series pages)",
)
RTXADA_DS = _ds(
    "NVIDIA RTX 2000/4000/4000 SFF/4500/5000/6000 Ada Generation datasheets (2022-2024)",
    "https://www.nvidia.com/en-us/design-visualization/desktop-graphics/ (RTX Ada pages)",
)
RTXPRO_DS = _ds(
    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition datasheet (2025)",
    "https://www.nvidia.com/en-us/products/workstations/professional-desktop-gpus/rtx-pro-6000/",
)

# ---- dense FLOP (or OP) per clock per SM, per architecture, from the whitepapers -----------
_GA10X_PRO = {
    "fp64": 4,  # 1/64 of FP32 (GA102 whitepaper)
    "fp32": 256,
    "fp16": 256,
    "tf32_tensor": 512,
    "fp16_tensor": 1024,
    "bf16_tensor": 1024,
    "int8_tensor_tops": 2048,
}
_GA10X_GEFORCE = {
    **_GA10X_PRO,
    "tf32_tensor": 256,  # GeForce: FP32-accumulate tensor math at half rate
    "fp16_tensor": 512,
    "bf16_tensor": 512,
    "fp16_tensor_fp16acc": 1024,
}
RATES: dict[str, dict[str, int]] = {
    "pascal": {"fp64": 64, "fp32": 128, "fp16": 256},
    "volta": {"fp64": 64, "fp32": 128, "fp16": 256, "fp16_tensor": 1024},
    "turing_pro": {
        "fp64": 4,  # 1/32 of FP32 (Turing whitepaper)
        "fp32": 128,
        "fp16": 256,
        "fp16_tensor": 1024,
        "int8_tensor_tops": 2048,
    },
    "turing_geforce": {
        "fp64": 4,
        "fp32": 128,
        "fp16": 256,
        "fp16_tensor": 512,
        "fp16_tensor_fp16acc": 1024,
        "int8_tensor_tops": 2048,
    },
    "ampere_pro": _GA10X_PRO,
    "ampere_geforce": _GA10X_GEFORCE,
    "ada_pro": {**_GA10X_PRO, "fp8_tensor": 2048},
    "ada_geforce": {**_GA10X_GEFORCE, "fp8_tensor": 1024, "fp8_tensor_fp16acc": 2048},
    "ada_l40": {  # the L40 datasheet's own (half) tensor rates
        **_GA10X_PRO,
        "tf32_tensor": 256,
        "fp16_tensor": 512,
        "bf16_tensor": 512,
        "fp8_tensor": 1024,
        "int8_tensor_tops": 1024,
    },
    "blackwell_pro": {**_GA10X_PRO, "fp8_tensor": 2048},
    "blackwell_geforce": {**_GA10X_GEFORCE, "fp8_tensor": 1024, "fp8_tensor_fp16acc": 2048},
}
RATE_SOURCE = {
    "pascal": PASCAL_WP,
    "volta": VOLTA_WP,
    "turing_pro": TURING_WP,
    "turing_geforce": TURING_WP,
    "ampere_pro": GA102_WP,
    "ampere_geforce": GA102_WP,
    "ada_pro": ADA_WP,
    "ada_geforce": ADA_WP,
    "ada_l40": L40_DS,
    "blackwell_pro": BLACKWELL_WP,
    "blackwell_geforce": BLACKWELL_WP,
}
ARCH = {
    "pascal": ("pascal", 6.0),
    "volta": ("volta", 7.0),
    "turing": ("turing", 7.5),
    "ampere": ("ampere", 8.6),
    "ada": ("ada", 8.9),
    "blackwell": ("blackwell", 12.0),
}


def _round(x: float) -> float:
    return round(x, 1) if x >= 10 else round(x, 2)


def gpu(
    key: str,
    aliases: list[str],
    rates: str,
    sms: int,
    clock_mhz: float | None,
    mem_gb: float | list[float],
    mem_type: str,
    dram_bw_gbs: float | None,
    spec_source: str,
    *,
    printed: dict[str, float] | None = None,
    printed_source: str | None = None,
    bw_source: str | None = None,
    bw_rule: str | None = None,
    clock_source: str | None = None,
    clock_note: str | None = None,
    note: str | None = None,
    caveat: str | None = None,
) -> dict:
    """One entry: printed peaks as printed, the rest derived (and listed in ``derived``)."""
    printed = dict(printed or {})
    arch, cc = ARCH[rates.split("_")[0]]
    table = RATES[rates]
    peaks: dict[str, float | None] = {}
    derived: list[str] = []
    for field, per_sm in table.items():
        if field in printed:
            peaks[field] = printed[field]
        elif clock_mhz:
            peaks[field] = _round(sms * per_sm * clock_mhz / 1e6)
            derived.append(field)
        elif "fp32" in printed:
            peaks[field] = _round(printed["fp32"] * per_sm / table["fp32"])
            derived.append(field)
    for field, value in printed.items():
        if field not in table:
            raise ValueError(f"{key}: printed {field} has no rate")
        if clock_mhz:  # a printed figure must agree with SMs x rate x clock (catches typos)
            computed = sms * table[field] * clock_mhz / 1e6
            if abs(computed - value) > 0.02 * value:
                raise ValueError(f"{key}: printed {field} {value} but derived {computed:.2f}")
    sources: dict[str, str] = {"sms": spec_source, "mem_gb": spec_source}
    if clock_mhz:
        sources["clock_mhz"] = clock_source or spec_source
    for field in printed:
        sources[f"peaks_tflops.{field}"] = printed_source or spec_source
    if dram_bw_gbs is not None:
        if bw_rule:
            derived.append("dram_bw_gbs")
        else:
            sources["dram_bw_gbs"] = bw_source or spec_source
    rule = (
        f"derived peaks = SMs x dense FLOP/clk/SM of {rates} ({RATE_SOURCE[rates].split(';')[0]}) "
        "x boost clock"
        if clock_mhz
        else f"derived peaks = printed FP32 x the {rates} ratio to FP32 "
        f"({RATE_SOURCE[rates].split(';')[0]}); no boost clock is printed"
    )
    if bw_rule:
        rule += f"; dram_bw_gbs = {bw_rule}"
    entry: dict = {
        "name": key,
        "aliases": aliases,
        "arch": arch,
        "cc": cc,
        "sms": sms,
        "clock_mhz": clock_mhz,
        "peaks_tflops": peaks,
        "mem_gb": mem_gb,
        "mem_type": mem_type,
        "dram_bw_gbs": dram_bw_gbs,
        "derived": derived,
        "derivation": rule,
    }
    notes = [n for n in (clock_note, note) if n]
    if dram_bw_gbs is None:
        notes.append(
            "dram_bw_gbs left out: NVIDIA publishes the memory bus width but not the data rate "
            "(the laptop maker picks it)"
        )
    if notes:
        entry["note"] = "; ".join(notes)
    if caveat:
        entry["caveat"] = caveat
    entry["sources"] = sources
    entry["source"] = " ; ".join(
        dict.fromkeys([spec_source, *sources.values(), RATE_SOURCE[rates]])
    )
    return entry


def _bw(gbps: float, bits: int) -> str:
    return f"{gbps:g} Gbps x {bits}-bit / 8 (data rate and bus width from the specs page)"


LAPTOP_CLOCK = (
    "clock_mhz is the top of NVIDIA's published boost-clock range {lo}-{hi} MHz; the laptop "
    "maker sets the actual clock (and power limit) within it, so these peaks are upper bounds"
)


def _laptop(key, name, rates, sms, lo, hi, mem_gb, mem_type, source):
    return gpu(
        key,
        [name],
        rates,
        sms,
        hi,
        mem_gb,
        mem_type,
        None,
        source,
        clock_note=LAPTOP_CLOCK.format(lo=lo, hi=hi),
        caveat=f"laptop GPU: peaks at {hi} MHz, the top of NVIDIA's {lo}-{hi} MHz range; the "
        "laptop maker's clock may be lower",
    )


G = "GDDR6"
GX = "GDDR6X"
G7 = "GDDR7"
ADDED: list[dict] = [
    # ---------------- Pascal / Volta datacenter and workstation ----------------
    gpu(
        "p100-pcie-16gb",
        ["Tesla P100-PCIE-16GB"],
        "pascal",
        56,
        1303,
        16,
        "HBM2",
        732,
        P100_DS,
        printed={"fp64": 4.7, "fp32": 9.3, "fp16": 18.7},
    ),
    gpu(
        "p100-pcie-12gb",
        ["Tesla P100-PCIE-12GB"],
        "pascal",
        56,
        1303,
        12,
        "HBM2",
        549,
        P100_DS,
        printed={"fp64": 4.7, "fp32": 9.3, "fp16": 18.7},
    ),
    gpu(
        "p100-sxm2-16gb",
        ["Tesla P100-SXM2-16GB"],
        "pascal",
        56,
        1480,
        16,
        "HBM2",
        732,
        P100_DS,
        printed={"fp64": 5.3, "fp32": 10.6, "fp16": 21.2},
    ),
    gpu(
        "quadro-gp100",
        ["Quadro GP100"],
        "pascal",
        56,
        1442,
        16,
        "HBM2",
        732,
        NVBENCH,
        printed={"fp64": 5.2, "fp32": 10.3, "fp16": 20.7},
        printed_source=GP100_DS,
        note="SMs, clock and bandwidth (4096-bit at 715 MHz DDR) as the CUDA driver printed "
        "them in NVIDIA/nvbench's example output",
    ),
    gpu(
        "v100s-pcie-32gb",
        ["Tesla V100S-PCIE-32GB"],
        "volta",
        80,
        1597,
        32,
        "HBM2",
        1134,
        V100S_DS,
        printed={"fp64": 8.2, "fp32": 16.4, "fp16_tensor": 130},
    ),
    gpu(
        "quadro-gv100",
        ["Quadro GV100"],
        "volta",
        80,
        None,
        32,
        "HBM2",
        870,
        NVBENCH,
        printed={"fp64": 7.4, "fp32": 14.8, "fp16_tensor": 118.5},
        printed_source=GV100_DS,
        note="SMs and bandwidth as the CUDA driver printed them in NVIDIA/nvbench's example "
        "output; clock_mhz left out: the driver reports a 1627 MHz maximum SM clock while the "
        "datasheet's FP32 14.8 TFLOPS implies about 1445 MHz, so the datasheet figures are kept",
    ),
    gpu(
        "titan-v",
        ["NVIDIA TITAN V", "TITAN V"],
        "volta",
        80,
        1455,
        12,
        "HBM2",
        652.8,
        TITAN_V,
        note="the page's '110 TFLOPS deep learning' is below 80 SMs x 1024 x 1455 MHz = 119.2 "
        "(it assumes a lower clock); the derived boost-clock value is kept as the upper bound",
    ),
    # ---------------- Turing ----------------
    gpu(
        "quadro-rtx-8000",
        ["Quadro RTX 8000"],
        "turing_pro",
        72,
        1770,
        48,
        G,
        672,
        QRTX_DS,
        printed={"fp32": 16.3, "fp16_tensor": 130.5},
    ),
    gpu(
        "quadro-rtx-6000",
        ["Quadro RTX 6000"],
        "turing_pro",
        72,
        1770,
        24,
        G,
        672,
        QRTX_DS,
        printed={"fp32": 16.3, "fp16_tensor": 130.5},
        printed_source=TURING_WP,
    ),
    gpu(
        "quadro-rtx-5000",
        ["Quadro RTX 5000"],
        "turing_pro",
        48,
        1815,
        16,
        G,
        448,
        QRTX_DS,
        printed={"fp32": 11.2, "fp16_tensor": 89.2},
    ),
    gpu(
        "quadro-rtx-4000",
        ["Quadro RTX 4000"],
        "turing_pro",
        36,
        1545,
        8,
        G,
        416,
        QRTX_DS,
        printed={"fp32": 7.1, "fp16_tensor": 57.0},
    ),
    gpu(
        "titan-rtx",
        ["NVIDIA TITAN RTX", "TITAN RTX"],
        "turing_pro",
        72,
        1770,
        24,
        G,
        672,
        TITAN_RTX,
        note="TITAN RTX runs FP32-accumulate tensor math at full rate (130 TFLOPS on its page)",
    ),
    gpu(
        "rtx-2080-ti",
        ["NVIDIA GeForce RTX 2080 Ti"],
        "turing_geforce",
        68,
        1545,
        11,
        G,
        616,
        RTX20_SPECS,
        printed={"fp32": 13.4, "fp16_tensor": 53.8, "fp16_tensor_fp16acc": 107.6},
        clock_source=TURING_WP,
        printed_source=TURING_WP,
        bw_source=TURING_WP,
        note="reference boost clock; the Founders Edition boosts to 1635 MHz (Turing "
        "whitepaper: 14.2 TFLOPS FP32)",
    ),
    gpu(
        "rtx-2080-super",
        ["NVIDIA GeForce RTX 2080 SUPER"],
        "turing_geforce",
        48,
        1815,
        8,
        G,
        496,
        RTX20_SPECS,
        bw_rule=_bw(15.5, 256),
    ),
    gpu(
        "rtx-2080",
        ["NVIDIA GeForce RTX 2080"],
        "turing_geforce",
        46,
        1710,
        8,
        G,
        448,
        RTX20_SPECS,
        printed={"fp32": 10.1},
        printed_source=TURING_WP,
        bw_source=TURING_WP,
        note="reference boost clock; the Founders Edition boosts to 1800 MHz",
    ),
    gpu(
        "rtx-2070-super",
        ["NVIDIA GeForce RTX 2070 SUPER"],
        "turing_geforce",
        40,
        1770,
        8,
        G,
        448,
        RTX20_SPECS,
        bw_rule=_bw(14, 256),
    ),
    gpu(
        "rtx-2070",
        ["NVIDIA GeForce RTX 2070"],
        "turing_geforce",
        36,
        1620,
        8,
        G,
        448,
        RTX20_SPECS,
        printed={"fp32": 7.5},
        printed_source=TURING_WP,
        bw_source=TURING_WP,
        note="reference boost clock; the Founders Edition boosts to 1710 MHz",
    ),
    gpu(
        "rtx-2060-super",
        ["NVIDIA GeForce RTX 2060 SUPER"],
        "turing_geforce",
        34,
        1650,
        8,
        G,
        448,
        RTX20_SPECS,
        bw_rule=_bw(14, 256),
    ),
    gpu(
        "rtx-2060",
        ["NVIDIA GeForce RTX 2060"],
        "turing_geforce",
        30,
        1680,
        6,
        G,
        336,
        RTX20_SPECS,
        bw_rule=_bw(14, 192),
        caveat="the 12 GB RTX 2060 (2021, 34 SMs) reports the same name; these are the "
        "6 GB card's numbers",
    ),
    # ---------------- Ampere GA10x datacenter and workstation ----------------
    gpu(
        "a2",
        ["NVIDIA A2"],
        "ampere_pro",
        10,
        1770,
        16,
        G,
        200,
        A2_DS,
        printed={
            "fp32": 4.5,
            "tf32_tensor": 9,
            "fp16_tensor": 18,
            "bf16_tensor": 18,
            "int8_tensor_tops": 36,
        },
    ),
    gpu(
        "a16",
        ["NVIDIA A16"],
        "ampere_pro",
        10,
        1755,
        16,
        G,
        200,
        A16_DS,
        printed={
            "fp32": 4.5,
            "tf32_tensor": 9,
            "fp16_tensor": 17.9,
            "bf16_tensor": 17.9,
            "int8_tensor_tops": 35.9,
        },
        note="one of the four GPUs on an A16 board (the datasheet prints 4x per-GPU figures); "
        "each GPU appears to the driver as its own 'NVIDIA A16'",
    ),
    gpu(
        "rtx-a5500",
        ["NVIDIA RTX A5500"],
        "ampere_pro",
        80,
        None,
        24,
        G,
        768,
        RTXA_DS,
        printed={"fp32": 34.1},
    ),
    gpu(
        "rtx-a5000",
        ["NVIDIA RTX A5000"],
        "ampere_pro",
        64,
        None,
        24,
        G,
        768,
        RTXA_DS,
        printed={"fp32": 27.8},
    ),
    gpu(
        "rtx-a4500",
        ["NVIDIA RTX A4500"],
        "ampere_pro",
        56,
        None,
        20,
        G,
        640,
        RTXA_DS,
        printed={"fp32": 23.7},
    ),
    gpu(
        "rtx-a4000",
        ["NVIDIA RTX A4000"],
        "ampere_pro",
        48,
        None,
        16,
        G,
        448,
        RTXA_DS,
        printed={"fp32": 19.2},
    ),
    gpu(
        "rtx-a2000",
        ["NVIDIA RTX A2000", "NVIDIA RTX A2000 12GB"],
        "ampere_pro",
        26,
        None,
        [6, 12],
        G,
        288,
        RTXA_DS,
        printed={"fp32": 8.0},
    ),
    # ---------------- Ampere GeForce desktop ----------------
    gpu(
        "rtx-3090-ti",
        ["NVIDIA GeForce RTX 3090 Ti"],
        "ampere_geforce",
        84,
        1860,
        24,
        GX,
        1008,
        RTX30_SPECS,
        bw_rule=_bw(21, 384),
    ),
    gpu(
        "rtx-3080-ti",
        ["NVIDIA GeForce RTX 3080 Ti"],
        "ampere_geforce",
        80,
        1670,
        12,
        GX,
        912,
        RTX30_SPECS,
        bw_rule=_bw(19, 384),
    ),
    gpu(
        "rtx-3080",
        ["NVIDIA GeForce RTX 3080"],
        "ampere_geforce",
        68,
        1710,
        10,
        GX,
        760,
        RTX30_SPECS,
        printed={
            "fp32": 29.8,
            "tf32_tensor": 29.8,
            "fp16_tensor": 59.5,
            "fp16_tensor_fp16acc": 119,
            "int8_tensor_tops": 238,
        },
        clock_source=GA102_WP,
        printed_source=GA102_WP,
        bw_source=GA102_WP,
        caveat="the 12 GB RTX 3080 (2022: 70 SMs, 912 GB/s) reports the same name; "
        "these are the 10 GB card's numbers",
    ),
    gpu(
        "rtx-3080-12gb",
        [],
        "ampere_geforce",
        70,
        1710,
        12,
        GX,
        912,
        RTX30_SPECS,
        bw_rule=_bw(19, 384),
        note="reports as 'NVIDIA GeForce RTX 3080' like the 10 GB card; pick it with "
        "--gpu rtx-3080-12gb",
    ),
    gpu(
        "rtx-3070-ti",
        ["NVIDIA GeForce RTX 3070 Ti"],
        "ampere_geforce",
        48,
        1770,
        8,
        GX,
        608,
        RTX30_SPECS,
        bw_rule=_bw(19, 256),
    ),
    gpu(
        "rtx-3070",
        ["NVIDIA GeForce RTX 3070"],
        "ampere_geforce",
        46,
        1725,
        8,
        G,
        448,
        RTX30_SPECS,
        printed={"fp32": 20.3},
        clock_source=GA102_WP,
        printed_source=GA102_WP,
        bw_source=GA102_WP,
    ),
    gpu(
        "rtx-3060-ti",
        ["NVIDIA GeForce RTX 3060 Ti"],
        "ampere_geforce",
        38,
        1670,
        8,
        G,
        448,
        RTX30_SPECS,
        bw_rule=_bw(14, 256),
        caveat="the GDDR6X RTX 3060 Ti (2022, 608 GB/s) reports the same name; this is "
        "the GDDR6 card's bandwidth",
    ),
    gpu(
        "rtx-3060",
        ["NVIDIA GeForce RTX 3060"],
        "ampere_geforce",
        28,
        1780,
        12,
        G,
        360,
        RTX30_SPECS,
        bw_rule=_bw(15, 192),
        caveat="the 8 GB RTX 3060 (128-bit, 240 GB/s) reports the same name; this is the "
        "12 GB card's bandwidth",
    ),
    gpu(
        "rtx-3050",
        ["NVIDIA GeForce RTX 3050"],
        "ampere_geforce",
        20,
        1780,
        8,
        G,
        224,
        RTX30_SPECS,
        bw_rule=_bw(14, 128),
        caveat="the 6 GB RTX 3050 (2024, 18 SMs, 168 GB/s) reports the same name; these "
        "are the 8 GB card's numbers",
    ),
    # ---------------- Ampere GeForce laptop ----------------
    _laptop(
        "rtx-3080-ti-laptop",
        "NVIDIA GeForce RTX 3080 Ti Laptop GPU",
        "ampere_geforce",
        58,
        1125,
        1590,
        16,
        G,
        RTX30_LAPTOP_SPECS,
    ),
    _laptop(
        "rtx-3080-laptop",
        "NVIDIA GeForce RTX 3080 Laptop GPU",
        "ampere_geforce",
        48,
        1245,
        1710,
        [8, 16],
        G,
        RTX30_LAPTOP_SPECS,
    ),
    _laptop(
        "rtx-3070-ti-laptop",
        "NVIDIA GeForce RTX 3070 Ti Laptop GPU",
        "ampere_geforce",
        46,
        1035,
        1485,
        8,
        G,
        RTX30_LAPTOP_SPECS,
    ),
    _laptop(
        "rtx-3070-laptop",
        "NVIDIA GeForce RTX 3070 Laptop GPU",
        "ampere_geforce",
        40,
        1290,
        1620,
        8,
        G,
        RTX30_LAPTOP_SPECS,
    ),
    _laptop(
        "rtx-3060-laptop",
        "NVIDIA GeForce RTX 3060 Laptop GPU",
        "ampere_geforce",
        30,
        1283,
        1703,
        6,
        G,
        RTX30_LAPTOP_SPECS,
    ),
    _laptop(
        "rtx-3050-ti-laptop",
        "NVIDIA GeForce RTX 3050 Ti Laptop GPU",
        "ampere_geforce",
        20,
        1035,
        1695,
        4,
        G,
        RTX30_LAPTOP_SPECS,
    ),
    _laptop(
        "rtx-3050-laptop",
        "NVIDIA GeForce RTX 3050 Laptop GPU",
        "ampere_geforce",
        16,
        1057,
        1740,
        4,
        G,
        RTX30_LAPTOP_SPECS,
    ),
    # ---------------- Ada datacenter and workstation ----------------
    gpu(
        "l40",
        ["NVIDIA L40"],
        "ada_l40",
        142,
        2490,
        48,
        G,
        864,
        L40_DS,
        printed={
            "fp32": 90.5,
            "tf32_tensor": 90.5,
            "fp16_tensor": 181.05,
            "bf16_tensor": 181.05,
            "fp8_tensor": 362,
            "int8_tensor_tops": 362,
        },
        note="unlike the L40S, the L40 datasheet prints half-rate tensor figures (FP16 181.05 "
        "dense at 142 SMs, 2490 MHz), kept as printed",
    ),
    gpu(
        "rtx-6000-ada",
        ["NVIDIA RTX 6000 Ada Generation"],
        "ada_pro",
        142,
        2505,
        48,
        G,
        960,
        RTXADA_DS,
        printed={"fp32": 91.1},
    ),
    gpu(
        "rtx-5000-ada",
        ["NVIDIA RTX 5000 Ada Generation"],
        "ada_pro",
        100,
        2550,
        32,
        G,
        576,
        RTXADA_DS,
        printed={"fp32": 65.3},
    ),
    gpu(
        "rtx-4500-ada",
        ["NVIDIA RTX 4500 Ada Generation"],
        "ada_pro",
        60,
        2580,
        24,
        G,
        432,
        RTXADA_DS,
        printed={"fp32": 39.6},
    ),
    gpu(
        "rtx-4000-ada",
        ["NVIDIA RTX 4000 Ada Generation"],
        "ada_pro",
        48,
        2175,
        20,
        G,
        360,
        RTXADA_DS,
        printed={"fp32": 26.7},
    ),
    gpu(
        "rtx-4000-sff-ada",
        ["NVIDIA RTX 4000 SFF Ada Generation"],
        "ada_pro",
        48,
        1560,
        20,
        G,
        280,
        RTXADA_DS,
        printed={"fp32": 19.2},
    ),
    gpu(
        "rtx-2000-ada",
        ["NVIDIA RTX 2000 Ada Generation"],
        "ada_pro",
        22,
        2130,
        16,
        G,
        224,
        RTXADA_DS,
        printed={"fp32": 12.0},
    ),
    # ---------------- Ada GeForce desktop ----------------
    gpu(
        "rtx-4080-super",
        ["NVIDIA GeForce RTX 4080 SUPER"],
        "ada_geforce",
        80,
        2550,
        16,
        GX,
        736,
        RTX40_SPECS,
        bw_rule=_bw(23, 256),
    ),
    gpu(
        "rtx-4080",
        ["NVIDIA GeForce RTX 4080"],
        "ada_geforce",
        76,
        2505,
        16,
        GX,
        716.8,
        RTX40_SPECS,
        printed={"fp32": 48.7},
        clock_source=ADA_WP,
        printed_source=ADA_WP,
        bw_source=ADA_WP,
    ),
    gpu(
        "rtx-4070-ti-super",
        ["NVIDIA GeForce RTX 4070 Ti SUPER"],
        "ada_geforce",
        66,
        2610,
        16,
        GX,
        672,
        RTX40_SPECS,
        bw_rule=_bw(21, 256),
    ),
    gpu(
        "rtx-4070-ti",
        ["NVIDIA GeForce RTX 4070 Ti"],
        "ada_geforce",
        60,
        2610,
        12,
        GX,
        504,
        RTX40_SPECS,
        bw_rule=_bw(21, 192),
    ),
    gpu(
        "rtx-4070-super",
        ["NVIDIA GeForce RTX 4070 SUPER"],
        "ada_geforce",
        56,
        2480,
        12,
        GX,
        504,
        RTX40_SPECS,
        bw_rule=_bw(21, 192),
    ),
    gpu(
        "rtx-4070",
        ["NVIDIA GeForce RTX 4070"],
        "ada_geforce",
        46,
        2480,
        12,
        GX,
        504,
        RTX40_SPECS,
        bw_rule=_bw(21, 192),
        caveat="the GDDR6 RTX 4070 (2024, 480 GB/s) reports the same name; this is the "
        "GDDR6X card's bandwidth",
    ),
    gpu(
        "rtx-4060-ti",
        ["NVIDIA GeForce RTX 4060 Ti"],
        "ada_geforce",
        34,
        2540,
        [8, 16],
        G,
        288,
        RTX40_SPECS,
        bw_rule=_bw(18, 128),
    ),
    gpu(
        "rtx-4060",
        ["NVIDIA GeForce RTX 4060"],
        "ada_geforce",
        24,
        2460,
        8,
        G,
        272,
        RTX40_SPECS,
        bw_rule=_bw(17, 128),
    ),
    # ---------------- Ada GeForce laptop ----------------
    _laptop(
        "rtx-4090-laptop",
        "NVIDIA GeForce RTX 4090 Laptop GPU",
        "ada_geforce",
        76,
        1455,
        2040,
        16,
        G,
        RTX40_LAPTOP_SPECS,
    ),
    _laptop(
        "rtx-4080-laptop",
        "NVIDIA GeForce RTX 4080 Laptop GPU",
        "ada_geforce",
        58,
        1350,
        2280,
        12,
        G,
        RTX40_LAPTOP_SPECS,
    ),
    _laptop(
        "rtx-4070-laptop",
        "NVIDIA GeForce RTX 4070 Laptop GPU",
        "ada_geforce",
        36,
        1230,
        2175,
        8,
        G,
        RTX40_LAPTOP_SPECS,
    ),
    _laptop(
        "rtx-4060-laptop",
        "NVIDIA GeForce RTX 4060 Laptop GPU",
        "ada_geforce",
        24,
        1470,
        2370,
        8,
        G,
        RTX40_LAPTOP_SPECS,
    ),
    _laptop(
        "rtx-4050-laptop",
        "NVIDIA GeForce RTX 4050 Laptop GPU",
        "ada_geforce",
        20,
        1605,
        2370,
        6,
        G,
        RTX40_LAPTOP_SPECS,
    ),
    # ---------------- Blackwell (GB20x, CC 12.0) ----------------
    gpu(
        "rtx-pro-6000-blackwell",
        ["NVIDIA RTX PRO 6000 Blackwell Workstation Edition"],
        "blackwell_pro",
        188,
        None,
        96,
        G7,
        1792,
        RTXPRO_DS,
        printed={"fp32": 125},
        note="the Max-Q and Server Editions run at other power limits and are not covered",
    ),
    gpu(
        "rtx-5090",
        ["NVIDIA GeForce RTX 5090"],
        "blackwell_geforce",
        170,
        2407,
        32,
        G7,
        1792,
        RTX50_SPECS,
        printed={"fp32": 104.8},
        clock_source=BLACKWELL_WP,
        printed_source=BLACKWELL_WP,
        bw_source=BLACKWELL_WP,
    ),
    gpu(
        "rtx-5080",
        ["NVIDIA GeForce RTX 5080"],
        "blackwell_geforce",
        84,
        2620,
        16,
        G7,
        960,
        RTX50_SPECS,
        bw_source=BLACKWELL_WP,
    ),
    gpu(
        "rtx-5070-ti",
        ["NVIDIA GeForce RTX 5070 Ti"],
        "blackwell_geforce",
        70,
        2450,
        16,
        G7,
        896,
        RTX50_SPECS,
        bw_rule=_bw(28, 256),
    ),
    gpu(
        "rtx-5070",
        ["NVIDIA GeForce RTX 5070"],
        "blackwell_geforce",
        48,
        2510,
        12,
        G7,
        672,
        RTX50_SPECS,
        bw_rule=_bw(28, 192),
    ),
    gpu(
        "rtx-5060-ti",
        ["NVIDIA GeForce RTX 5060 Ti"],
        "blackwell_geforce",
        36,
        2570,
        [8, 16],
        G7,
        448,
        RTX50_SPECS,
        bw_rule=_bw(28, 128),
    ),
    gpu(
        "rtx-5060",
        ["NVIDIA GeForce RTX 5060"],
        "blackwell_geforce",
        30,
        2500,
        8,
        G7,
        448,
        RTX50_SPECS,
        bw_rule=_bw(28, 128),
    ),
]

# Per-SKU figures printed in NVIDIA documents that the rate table must reproduce from the
# entry's SMs and clock: (key, rate family, field, printed value, document).
_CHECKS = [
    ("rtx-3090", "ampere_geforce", "fp16_tensor", 71, GA102_WP),
    ("rtx-3090", "ampere_geforce", "int8_tensor_tops", 284, GA102_WP),
    ("rtx-4090", "ada_geforce", "fp16_tensor", 165.2, ADA_WP),
    ("rtx-4090", "ada_geforce", "fp8_tensor", 330.3, ADA_WP),
    ("a40", "ampere_pro", "fp16_tensor", 149.7, "A40 datasheet"),
    ("l40s", "ada_pro", "fp16_tensor", 362, "L40S datasheet"),
    ("l4", "ada_pro", "fp16_tensor", 121, "L4 datasheet"),
    ("t4", "turing_pro", "fp16_tensor", 65, "T4 datasheet"),
    ("rtx-5090", "blackwell_geforce", "fp32", 104.8, BLACKWELL_WP),
]


def _check(gpus: list[dict]) -> None:
    """Recompute printed figures of existing entries from the rate table."""
    by_key = {g["name"]: g for g in gpus}
    for key, family, field, printed, src in _CHECKS:
        g = by_key[key]
        computed = g["sms"] * RATES[family][field] * g["clock_mhz"] / 1e6
        if abs(computed - printed) > 0.02 * printed:  # L40S prints 362 at 2520 MHz (366)
            raise SystemExit(f"{key} {field}: rate table gives {computed:.1f}, {src} {printed}")


# YAML entries whose source reads "(as above)": the entry whose document they mean.
_SAME_DOCUMENT = {
    "a100-pcie-40gb": "a100-sxm4-40gb",
    "a100-sxm4-80gb": "a100-sxm4-40gb",
    "a100-pcie-80gb": "a100-sxm4-40gb",
    "h200-nvl-141gb": "h200-sxm-141gb",
    "gh200-144gb": "gh200-96gb",
}


def _resolve_as_above(gpus: list[dict]) -> None:
    """Give every entry its own citable source: a ceiling's label shows only this entry's."""
    by_key = {g["name"]: g for g in gpus}
    for key, parent in _SAME_DOCUMENT.items():
        g = by_key[key]
        if "http" not in g["source"]:
            url = by_key[parent]["source"].split(" ; ")[0]
            g["source"] = f"{g['source'].replace('(as above)', '').strip()} {url}"


def main(src: str) -> None:
    data = yaml.safe_load(Path(src).read_text(encoding="utf-8"))
    have = {g["name"] for g in data["gpus"]}
    for entry in ADDED:
        if entry["name"] in have:
            raise SystemExit(f"{entry['name']} is already in {src}")
        data["gpus"].append(entry)
    for g in data["gpus"]:
        if g.get("derived") and not g.get("derivation"):
            g["derivation"] = (
                "the YAML's rule: derived values are SMs x per-SM rate x clock (see its note)"
            )
    _resolve_as_above(data["gpus"])
    _check(data["gpus"])
    out = Path(__file__).resolve().parents[1] / "src/roofscope/data/gpu_specs.json"
    out.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"{len(data['gpus'])} GPUs -> {out}")


if __name__ == "__main__":
    main(sys.argv[1])
