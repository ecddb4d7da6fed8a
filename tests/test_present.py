"""present/: the one set of number formats and the one column registry of both front ends."""

from __future__ import annotations

import pytest

from roofscope.analysis.browse import LAUNCH_KEYS
from roofscope.output.render import _columns as report_columns
from roofscope.present import columns as cols
from roofscope.present import units as u
from roofscope.quantities import QUANTITIES
from roofscope.tui.panes import kernels


# -- formats -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [
        ((0.00392, "s"), {}, "3.92 ms"),
        ((8.37e10, "FLOP"), {}, "83.7 GFLOP"),
        ((2.5e-9, "s"), {}, "2.5 ns"),
        ((None, "s"), {}, "—"),
        ((0, "s"), {}, "0 s"),
        ((0,), {}, "0"),
        ((999_999,), {}, "1 M"),  # not "1e+03 k"
        ((-4.2e12, "B/s"), {}, "-4.2 TB/s"),
        ((12.0,), {}, "12"),
        ((2e12,), {"compact": True}, "2T"),
        ((0.5,), {"compact": True}, "0.5"),  # no milli in compact
        ((0,), {"compact": True}, "0"),
        ((1.5e15, "FLOP/s"), {"compact": True}, "1.5 PFLOP/s"),  # a unit: one format
        ((999_999,), {"compact": True}, "1M"),
        ((4.03e-11, "s"), {}, "40.3 ps"),  # an estimated gain of a tiny kernel
        ((1.5e18, "FLOP/s"), {}, "1.5 EFLOP/s"),
    ],
)
def test_si(args, kwargs, expected):
    assert u.si(*args, **kwargs) == expected


def test_a_number_with_a_unit_reads_one_way_and_a_count_agrees_with_its_noun():
    """``164 GFLOP/s`` beside ``164GFLOP/s`` on one screen, and ``1 launches`` (issue 28)."""
    for value in (1.64e11, 3.2e13, 0.0, 5.0):
        assert u.si(value, "FLOP/s", compact=True) == u.si(value, "FLOP/s")
    assert [u.counted(n, "launch") for n in (0, 1, 2, 12_345)] == [
        "0 launches",
        "1 launch",
        "2 launches",
        "12,345 launches",
    ]
    assert (u.counted(1, "kernel"), u.counted(3, "metric"), u.counted(2, "box")) == (
        "1 kernel",
        "3 metrics",
        "2 boxes",
    )


# four cuDNN kernels of the ResNet-18 sample's conv wgrad group: one family, differing in the
# tile size (middle) and the variant (end)
CUDNN = [
    "sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize"
    f"{tile}_warpgroupsize1x1x1_g1_execute_{variant}_kernel__5x_cudnn"
    for tile, variant in (
        ("64x64x32", "segment_k_on"),
        ("64x64x32", "split_k"),
        ("128x64x32", "segment_k_on"),
        ("128x128x32", "segment_k_off"),
    )
]


def test_cut_kernel_names_keep_what_tells_them_apart():
    """A launch table cuts a long name to its head and the words where it differs from its
    neighbours, never to one text for two kernels."""
    for width in (16, 20, 32, 48, 80):
        cut = u.distinct(CUDNN, width)
        assert all(len(text) <= width for text in cut.values()), cut
        assert len(set(cut.values())) == len(CUDNN), cut
    cut = u.distinct(CUDNN, 32)
    assert "128x128x32" in cut[CUDNN[3]] and "128x64x32" in cut[CUDNN[2]]
    assert "split" in cut[CUDNN[1]]
    assert all(text.startswith("sm90_xmma") for text in cut.values())
    assert u.distinct(CUDNN, 200) == {n: n for n in CUDNN}
    for pair in (["a" * 40, "a" * 39 + "b"], ["abc" * 20, "abc" * 20 + "x"]):  # in one word
        assert len(set(u.distinct(pair, 10).values())) == 2, u.distinct(pair, 10)


def test_cut_cpp_names_lead_with_the_kernel_s_own_name():
    """``void engines_precompiled::nchwToNhwcKernel<…0…>`` and ``<…2…>`` beside
    ``nhwcToNchwKernel``: the return type and namespace go, the kernel's name and the
    template argument that differs stay."""
    args = "(engines_precompiled::TensorDescriptor, const float *, float *, float, float)"
    names = [
        f"void engines_precompiled::{kernel}<float, float, float, {mode}, 1, 0>{args}"
        for kernel, mode in (
            ("nchwToNhwcKernel", 0),
            ("nchwToNhwcKernel", 2),
            ("nhwcToNchwKernel", 0),
        )
    ]
    for width in (24, 32, 48):
        cut = u.distinct(names, width)
        assert len(set(cut.values())) == 3, cut
        assert all(len(text) <= width for text in cut.values())
        assert [text[:16] for text in cut.values()] == [n[26:42] for n in names], cut


def test_plain_numbers_never_read_in_exponent_notation():
    assert [u.num(v) for v in (0.391, 97.6, 143.0, 1160.0, 2.5e6, None)] == [
        "0.391",
        "97.6",
        "143",
        "1.16k",
        "2.5M",
        "—",
    ]


def test_raw_values_keep_their_digits_without_exponents():
    assert [u.raw_number(v) for v in (1081344.0, 12, 0.5, 123456.7, 3.25e-7, 2e17)] == [
        "1,081,344",
        "12",
        "0.5",
        "123,457",
        "3.25e-07",
        "2e+17",
    ]


def _old_roofline_si(value: float) -> str:
    """charts/roofline.py's own SI formatter before present/units.si(compact=True) replaced it."""
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{prefix}"
    return f"{value:.3g}"


def test_compact_si_reads_as_the_roofline_chart_did():
    """Axis decades and roof values read as before; only the old "1e+03k" rounding differs."""
    values = [10.0**t for t in range(-6, 19)]
    values += [v * m for v in (1e3, 1e9, 1e12) for m in (1.0, 1.5, 3.35, 989.0, 0.02)]
    values += [0.0, 0.3, 7.0, 42.0, 3.35e12, 989.4e12, 1979e12, 50e12]
    for v in values:
        old = _old_roofline_si(v)
        if "e+" not in old:
            assert u.si(v, compact=True) == old, v


def test_percentages_clock_cut_and_cells():
    assert (u.pct(22.61), u.pct(None), u.pct(5, 0)) == ("22.6%", "—", "5%")
    assert (u.ratio_pct(0.456), u.ratio_pct(None)) == ("46%", "—")
    assert (u.clock(202), u.clock(4000), u.clock(None), u.clock(59.6)) == (
        "3:22",
        "1:06:40",
        "?",
        "1:00",
    )
    assert (u.cut("abcdef", 4), u.cut("abcd", 4)) == ("abc…", "abcd")
    assert (u.time(1.5e-6), u.rate(3.2e13), u.num(0.29812), u.num(None)) == (
        "1.5 µs",
        "32 TFLOP/s",
        "0.298",
        "—",
    )
    assert u.share is u.pct and u.frac is u.ratio_pct
    assert u.text("a\x1b[31mb") == "a\\x1b[31mb" and u.text(None) == "—"
    assert (u.exact(1_234_567), u.exact(None)) == ("1,234,567", "—")


@pytest.mark.parametrize(
    ("n", "width", "expected"),
    [
        (999, 6, "999"),
        (1234, 6, "1,234"),
        (1_000_000, 6, "1M"),
        (123_456_789, 6, "123M"),
        (1_234_567, 8, "1.23M"),
        (12_345, 4, "12k"),
        (None, 6, "—"),
    ],
)
def test_count_fits_its_width(n, width, expected):
    assert u.count(n, width) == expected
    assert len(u.count(n, width)) <= width


# -- one column registry -----------------------------------------------------------------------
NCU = {"format": "ncu-raw", "family": "ncu"}
JOINED = {"format": "ncu-raw", "family": "ncu", "nsys_join": {"nsys_report": "run.sqlite"}}
NSYS = {"format": "nsys-sqlite", "family": "nsys"}


def _registered(columns) -> bool:
    return all(any(c is r for r in cols.COLUMNS) for c in columns)


@pytest.mark.parametrize(
    ("report", "pane"),
    [
        (NCU, kernels.GROUP_COLUMNS),
        (JOINED, kernels.GROUP_COLUMNS + kernels.JOINED_COLUMNS),
        (NSYS, kernels.NSYS_COLUMNS),
    ],
    ids=["ncu", "joined", "nsys"],
)
def test_kernels_pane_and_report_read_one_column_registry(report, pane):
    """The pane's group columns and `report`'s table and Markdown columns are records of one
    registry: the quantities both show have the same titles, in the same order."""
    table = report_columns(report, cols.TABLE)
    md = report_columns(report, cols.MARKDOWN)
    assert _registered(pane) and _registered(table) and _registered(md)
    shared = [c for c in pane if any(c is t for t in table)]
    assert [t for t in table if any(t is c for c in shared)] == shared  # the same order
    assert [t.title for t in table if t in shared] == [c.title for c in shared]
    pane_only = {c.title for c in pane} - {c.title for c in shared}
    table_only = {c.title for c in table} - {c.title for c in shared}
    # the names (the report titles them by its --by), the full roofline label (the report's
    # table shows the short roof, its Markdown the full one), nsys time beside the ncu time
    assert pane_only <= {"group", "bound", "nsys time"} and table_only <= {"AI L2", "roof"}
    assert len(shared) >= 7


def test_report_titles_agree_with_the_pane():
    """Markdown said "AI dram" where the pane and the table said "AI DRAM": one title now."""
    md = [c.long_title for c in report_columns(NCU, cols.MARKDOWN)]
    table = [c.title for c in report_columns(NCU, cols.TABLE)]
    assert md == [
        *("launches", "time", "% time", "FLOP/s", "AI DRAM", "AI L2", "bound", "eff"),
        "headroom",
    ]
    assert table == ["n", "time", "%", "FLOP/s", "AI DRAM", "AI L2", "roof", "eff", "headroom"]
    assert [c.title for c in kernels.GROUP_COLUMNS] == [
        *("group", "n", "time", "%", "FLOP/s", "AI DRAM", "bound", "eff", "headroom"),
    ]
    joined = report_columns(JOINED, cols.MARKDOWN)[-2:]
    assert [c.long_title for c in joined] == ["nsys % time", "FLOP/s real"]
    assert [c.title for c in kernels.JOINED_COLUMNS] == ["nsys %", "nsys time", "FLOP/s real"]


def test_column_titles_are_the_quantity_records():
    for c in cols.COLUMNS:
        q = QUANTITIES.get(c.key.removeprefix(cols.NSYS_KEY))
        if q is None or c.title == "roof":
            continue
        assert q.short_title in c.title or q.title in c.title, c
        assert q.title in c.long_title, c


def test_pane_widths_hold_80_columns_of_groups():
    """The widths the pane had before the registry (its 80-column snapshot depends on them)."""
    assert [c.width for c in kernels.GROUP_COLUMNS] == [24, 6, 9, 6, 13, 8, 15, 5, 9]
    assert [c.width for c in kernels.NSYS_COLUMNS] == [26, 8, 9, 6, 9, 9, 9, 9]
    assert [c.width for c in kernels.JOINED_COLUMNS] == [7, 9, 13]
    assert [c.width for c in kernels.LAUNCH_COLUMNS] == [8, 36, 9, 13, 8, 5, 6, 5, 5, 14, 12]


def test_launch_columns_follow_the_pagers_row_order():
    assert tuple(c.key for c in kernels.LAUNCH_COLUMNS) == LAUNCH_KEYS
    assert cols.column_set(cols.LAUNCH, cols.PANE) == kernels.LAUNCH_COLUMNS
    assert [c.title for c in kernels.LAUNCH_COLUMNS] == [
        *("ID", "kernel", "time", "FLOP/s", "AI DRAM", "eff", "tensor", "FP32", "DRAM", "grid"),
        "block",
    ]
    left = [c.key for c in kernels.LAUNCH_COLUMNS if c.left]
    assert left == ["kernel", "grid_size", "block_size"]


def test_values_and_cells():
    row = {
        "launches": 1_234_567,
        "ai": {"dram": 0.5, "l2": None},
        "nsys": {"time_pct": 84.2},
        "bound": "memory (dram)",
    }
    assert cols.value(row, "ai_dram") == 0.5 and cols.value(row, "ai_l2") is None
    assert cols.value(row, "nsys.time_pct") == 84.2
    assert cols.value(row, "nsys.flop_per_s") is None
    assert cols.value({"nsys": None}, "nsys.time_pct") is None
    assert cols.value({"ai_dram": 2.0}, "ai_dram") == 2.0  # a flat (CSV) row
    (n,) = (c for c in kernels.GROUP_COLUMNS if c.key == "launches")
    assert (n.fmt(row["launches"]), n.full(row["launches"])) == ("1.23M", "1,234,567")
    (roof,) = (c for c in cols.COLUMNS if c.title == "roof")
    assert roof.full("memory (dram)") == "DRAM" and roof.full("compute (tensor)") == "tensor"
    assert roof.full("unknown") == "unknown"
