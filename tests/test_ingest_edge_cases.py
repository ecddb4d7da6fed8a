"""Noise, truncation, locales, summary pages and other things real exports do."""

from __future__ import annotations

import pytest

import roofscope
from tests.conftest import shared
from tests.ncu_builder import details_page, raw_page, write

UNITS = {"gpu__time_duration.sum": "us", "dram__bytes.sum": "Mbyte"}


def _launches(n: int) -> list[tuple[str, dict[str, str]]]:
    return [
        (
            f"kernel_{i % 3}(float *)",
            {"gpu__time_duration.sum": f"{i + 1}.500000", "dram__bytes.sum": "1,234.5"},
        )
        for i in range(n)
    ]


def test_noise_before_inside_and_after_the_table(tmp_path, in_tmp_cwd):
    text = raw_page(
        _launches(4),
        UNITS,
        preamble="==PROF== Connected to process 1\nloss, acc = 0.5, 0.9\n\x00\n",
        trailer="==PROF== Disconnected from process 1\ndone inf\n",
    )
    lines = text.splitlines(keepends=True)
    lines.insert(4, "==WARNING== Some metrics were not collected\n")
    session = roofscope.load(write(tmp_path / "noisy.csv", "".join(lines)), use_cache=False)
    totals = session.reports[0].totals()
    assert totals["launches"] == 4
    assert totals["time_s"] == pytest.approx((1.5 + 2.5 + 3.5 + 4.5) * 1e-6)
    assert totals["bytes"]["dram"] == pytest.approx(4 * 1234.5e6)
    assert any("skipped" in w and "not ncu rows" in w for w in session.warnings)


def test_truncated_last_row_is_skipped_with_a_warning(tmp_path, in_tmp_cwd):
    text = raw_page(_launches(5), UNITS)
    cut = text[: text.rindex('"1,234.5"') + 4]  # stop inside the last row's last value
    session = roofscope.load(write(tmp_path / "cut.csv", cut), use_cache=False)
    assert session.reports[0].totals()["launches"] == 4
    assert any("truncated" in w for w in session.warnings)


def test_european_locale_numbers(tmp_path, in_tmp_cwd):
    page = details_page(
        [
            (
                "k",
                {
                    "gpu__time_duration.sum": ("ns", "27.595.520"),
                    "dram__bytes.sum": ("byte", "65,77"),
                },
            )
        ]
    )
    session = roofscope.load(write(tmp_path / "eu.csv", page), use_cache=False)
    totals = session.reports[0].totals()
    assert totals["time_s"] == pytest.approx(27_595_520e-9)
    assert totals["bytes"]["dram"] == pytest.approx(65.77)


def test_na_nan_empty_and_instances_values(tmp_path, in_tmp_cwd):
    launches = [
        ("a", {"gpu__time_duration.sum": "n/a", "dram__bytes.sum": "1"}),
        ("b", {"gpu__time_duration.sum": "nan", "dram__bytes.sum": ""}),
        ("c", {"gpu__time_duration.sum": "65,536 (0; 0; 65,536)", "dram__bytes.sum": "2"}),
    ]
    session = roofscope.load(
        write(
            tmp_path / "v.csv",
            raw_page(launches, {"gpu__time_duration.sum": "ns", "dram__bytes.sum": "byte"}),
        ),
        use_cache=False,
    )
    frame = session.launches().set_index("kernel")
    assert frame.loc["a", "time_s"] != frame.loc["a", "time_s"]  # NULL → NaN in pandas
    assert frame.loc["b", "time_s"] != frame.loc["b", "time_s"]
    assert frame.loc["c", "time_s"] == pytest.approx(65_536e-9)
    assert frame.loc["c", "dram"] == 2


def test_unknown_unit_on_an_unused_metric_is_a_warning(tmp_path, in_tmp_cwd):
    launches = [("k", {"gpu__time_duration.sum": "5", "my__odd_metric.sum": "3"})]
    path = write(
        tmp_path / "u.csv",
        raw_page(launches, {"gpu__time_duration.sum": "ns", "my__odd_metric.sum": "parsecs"}),
    )
    session = roofscope.load(path, use_cache=False)
    assert session.reports[0].totals()["time_s"] == pytest.approx(5e-9)
    assert any("unknown units" in w and "parsecs" in w for w in session.warnings)


@pytest.mark.slow
def test_per_kernel_summary_page_totals(in_tmp_cwd):
    raw = roofscope.load(shared("generated", "ncu_2025.3.1_h100", "app_metrics_raw.csv"))
    summary = roofscope.load(
        shared("generated", "ncu_2025.3.1_h100", "app_metrics_summary_per_kernel.csv")
    )
    assert summary.reports[0].totals()["launches"] == raw.reports[0].totals()["launches"] == 6
    # Invocations × Average reproduces the per-launch sums (2-decimal rounding aside)
    assert summary.reports[0].totals()["time_s"] == pytest.approx(
        raw.reports[0].totals()["time_s"], rel=1e-3
    )
    assert summary.reports[0].totals()["flops"]["fp32"] == pytest.approx(
        raw.reports[0].totals()["flops"]["fp32"], rel=1e-3
    )
    assert any("per-kernel summary" in w for w in summary.warnings)


@pytest.mark.slow
def test_details_labels_map_to_metric_names(in_tmp_cwd):
    by_label = roofscope.load(shared("generated", "ncu_2025.3.1_h100", "app_full_details.csv"))
    by_name = roofscope.load(
        shared("generated", "ncu_2025.3.1_h100", "app_full_details_metricname.csv")
    )
    assert by_label.reports[0].totals()["time_s"] == pytest.approx(
        by_name.reports[0].totals()["time_s"]
    )
    assert by_label.reports[0].totals()["time_s"] > 0
    frame = by_label.launches()
    assert frame["util_dram"].notna().all()


def test_kernel_names_with_commas_and_quotes(tmp_path, in_tmp_cwd):
    name = 'void f<at::Array<char *, (int)3>>(int, "T2", T3)'
    session = roofscope.load(
        write(
            tmp_path / "n.csv",
            raw_page([(name, {"gpu__time_duration.sum": "1"})], {"gpu__time_duration.sum": "ns"}),
        ),
        use_cache=False,
    )
    assert session.launches()["kernel"].tolist() == [name]
    assert session.reports[0].rows("group")[0]["name"] == "f"


def test_name_that_defeats_the_fast_split_falls_back(tmp_path, in_tmp_cwd):
    name = 'weird<"a","b">(int)'  # contains "," once escaped: the split would misalign
    session = roofscope.load(
        write(
            tmp_path / "w.csv",
            raw_page(
                [(name, {"gpu__time_duration.sum": "7", "zz__last.sum": "1"})],
                {"gpu__time_duration.sum": "ns"},
            ),
        ),
        use_cache=False,
    )
    assert session.launches()["kernel"].tolist() == [name]
    assert session.reports[0].totals()["time_s"] == pytest.approx(7e-9)


@pytest.mark.slow
def test_fast_split_and_csv_reader_agree_on_the_resnet_sample(in_tmp_cwd, monkeypatch):
    from roofscope.ingest.ncu import pages as ncu_csv
    from tests.conftest import SAMPLES

    path = SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"
    fast = roofscope.load(path, use_cache=False).launches()
    monkeypatch.setattr(ncu_csv, "_all_quoted", lambda sn: False)
    slow = roofscope.load(path, use_cache=False).launches()
    assert fast.columns.tolist() == slow.columns.tolist()
    assert fast.fillna(-1).equals(slow.fillna(-1))


def test_truncated_gzip_keeps_the_complete_rows(tmp_path, in_tmp_cwd):
    import gzip

    data = gzip.compress(raw_page(_launches(50), UNITS).encode())
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(data[: len(data) - 40])  # lose the gzip trailer and some of the data
    session = roofscope.load(path, use_cache=False)
    launches = session.reports[0].totals()["launches"]
    assert 0 < launches < 50
    assert any("truncated" in w for w in session.warnings)


def test_a_row_the_fast_split_misreads_is_not_lost(tmp_path, in_tmp_cwd):
    """A space after a comma makes the ``","`` split swallow fields into the ID; the row must
    go to the CSV parser instead of being dropped as noise."""
    launches = [(f"k{i}(float *, int)", {"gpu__time_duration.sum": f"{i + 1}"}) for i in range(4)]
    lines = raw_page(launches, {"gpu__time_duration.sum": "ns"}).splitlines(keepends=True)
    lines[3] = lines[3].replace('","', '", "', 2)  # launch 1
    session = roofscope.load(write(tmp_path / "s.csv", "".join(lines)), use_cache=False)
    assert session.launches()["kernel"].tolist() == [f"k{i}(float *, int)" for i in range(4)]
    assert session.reports[0].totals()["time_s"] == pytest.approx(10e-9)
