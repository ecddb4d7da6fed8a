"""Binary ``.ncu-rep`` reports read without Nsight Compute, through NVIDIA's ``ncu_report``
module in a worker process (issue 29).

Every real report of ``../shared/samples/ncurep/`` (other people's, licensed) and of
``tests/data/ncurep/`` (made on the project's H100) is checked against an independent reading
(``tests/oracle.py`` ``read_ncu_rep``: NVIDIA's module read directly, the oracle's own formulas,
no roofscope code); the H100 reports also against ncu's own CSV export of the same report.
Tests skip where the module is absent (the ``test`` extra installs it).
"""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import roofscope
from roofscope.cli import main
from roofscope.errors import RoofscopeError
from roofscope.ingest.ncu import binary as ncu_rep
from tests import oracle
from tests.conftest import DATA, SHARED
from tests.test_oracle import differences, roofscope_totals

pytestmark = pytest.mark.slow  # each report runs NVIDIA's reader in a process of its own
ncu_report = pytest.importorskip("ncu_report")

OURS = DATA / "ncurep"


def reports() -> list[Path]:
    """Other people's reports (shared samples) and ours (gzipped, as pipelines keep them)."""
    found = sorted((SHARED / "ncurep").glob("*.ncu-rep")) + sorted(OURS.glob("*.ncu-rep.gz"))
    return found or [pytest.param(None, marks=pytest.mark.skip("no .ncu-rep here"))]  # type: ignore[list-item]


def plain(path: Path, tmp_path: Path) -> Path:
    """The report as ncu wrote it: NVIDIA's module reads no gzip (the oracle reads that)."""
    if not path.name.endswith(".gz"):
        return path
    out = tmp_path / path.name.removesuffix(".gz")
    out.write_bytes(gzip.decompress(path.read_bytes()))
    return out


@pytest.fixture
def no_ncu(monkeypatch, tmp_path):
    """No ncu on PATH: what a login node has."""
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.delenv("ROOFSCOPE_NCU", raising=False)


@pytest.mark.parametrize("path", reports(), ids=lambda p: p.name if p else "none")
def test_totals_agree_with_nvidia_s_reader_read_apart(path, no_ncu, tmp_path):
    warnings: list[str] = []
    got = roofscope_totals(path, warnings)
    want = oracle.read_ncu_rep(plain(path, tmp_path)).as_dict()
    assert got["launches"] == want["launches"]
    assert not differences(want, got), differences(want, got)


@pytest.mark.parametrize(
    "path", sorted(OURS.glob("*.ncu-rep.gz")) or [None], ids=lambda p: p.name if p else "none"
)
def test_totals_agree_with_ncu_s_own_csv_export_of_the_same_report(path, no_ncu):
    """tests/data/ncurep/X.ncu-rep.gz beside X.ncu-raw.csv.gz, which ncu --import --csv --page
    raw --print-units base wrote on the GPU machine: the binary and the CSV give one report."""
    if path is None:
        pytest.skip("no report made on the GPU machine here")
    export = path.with_name(path.name.replace(".ncu-rep.gz", ".ncu-raw.csv.gz"))
    assert export.is_file(), f"{export.name} beside {path.name}"
    got, want = roofscope_totals(path), roofscope_totals(export)
    assert got["launches"] == want["launches"]
    assert not differences(want, got, rel=1e-6), differences(want, got, rel=1e-6)


@pytest.mark.parametrize("preset", ["roofline", "full"])
def test_the_known_work_of_our_kernels(preset, no_ncu):
    """tools/device/kernels.cu does known work: 4,194,304 threads × 64 FMAs × 2 FLOP in FP32
    and in FP64, 1,024 warps × 256 × 16·16·16·2 FLOP on the tensor cores; and its launches ran
    inside the NVTX ranges the program pushed."""
    session = roofscope.load(OURS / f"kernels5_{preset}_h100.ncu-rep.gz", axis="nvtx-inner")
    try:
        t = session.reports[0].totals()
        assert t["launches"] == 5
        assert t["flops"]["fp32"] == pytest.approx(536_870_912, rel=1e-9)
        assert t["flops"]["fp64"] == pytest.approx(536_870_912, rel=1e-9)
        assert t["flops"]["tensor"] == pytest.approx(2_147_483_648, rel=1e-9)
        groups = {r["name"] for r in session.reports[0].rows("group")}
        assert {"compute", "step"} <= groups, groups
    finally:
        session.close()


def test_our_full_report_gives_the_rules_of_its_details_page(no_ncu):
    """The rule rows read from the binary are those ncu's details page of the same report
    lists: per launch the same section, rule, type, text and estimate (which the page rounds
    to two decimals)."""

    def rules(path: Path) -> set[tuple]:
        session = roofscope.load(path)
        try:
            return set(
                session.con.execute(
                    "SELECT launch_id, section, rule, type, description, speedup_type, "
                    "round(speedup_pct, 2) FROM ncu_rules"
                ).fetchall()
            )
        finally:
            session.close()

    binary = rules(OURS / "kernels5_full_h100.ncu-rep.gz")
    details = rules(OURS / "kernels5_full_h100.ncu-details.csv.gz")
    assert binary and binary == details


def test_advise_lists_ncu_s_rules_and_detail_the_hottest_instructions(no_ncu, capsys):
    path = SHARED / "ncurep" / "sglang-h800-5kernels.ncu-rep"
    if not path.exists():
        pytest.skip("shared samples absent")
    assert main(["advise", str(path)]) == 0
    out = capsys.readouterr().out
    assert "LaunchConfiguration" in out and "ncu" in out
    session = roofscope.load(path)
    try:
        rows = session.reports[0].launch_detail(0)
    finally:
        session.close()
    sass = [r for r in rows if r.kind == "sass"]
    assert len(sass) == 10 and sass[0].name.startswith("0x")
    assert all(0 < r.value <= 1 for r in sass)
    assert sum(r.value for r in sass) <= 1.0
    assert any(r.kind == "raw" and r.name == "gpu__time_duration.sum" for r in rows)


def test_an_odd_file_name_gives_the_same_totals(no_ncu, tmp_path):
    path = SHARED / "ncurep" / "esmm-a10g-roofline-4kernels.ncu-rep"
    if not path.exists():
        pytest.skip("shared samples absent")
    odd = tmp_path / "a [b]*? $(x).ncu-rep"
    shutil.copyfile(path, odd)
    assert roofscope_totals(odd) == roofscope_totals(path)


def test_without_a_reader_or_ncu_one_line_names_both_ways(no_ncu, monkeypatch, tmp_path):
    path = tmp_path / "x.ncu-rep"
    path.write_bytes(b"NVIDIA Nsight Compute" + bytes(100))
    monkeypatch.setenv(ncu_rep.READER_ENV, "off")
    with pytest.raises(RoofscopeError) as caught:
        roofscope.load(path)
    line = caught.value.one_line()
    assert "pip install 'roofscope[ncu-rep]'" in line and "ncu" in line
    assert "\n" not in line


def test_a_file_the_reader_finds_nothing_in_is_refused_not_read_as_empty(no_ncu, tmp_path, capsys):
    """NVIDIA's reader returns no range, without an error, for garbage and for a report cut in
    half: both are refused in one line, never shown as a report of 0 launches."""
    garbage = tmp_path / "garbage.ncu-rep"
    garbage.write_bytes(b"NVIDIA Nsight Compute" + os.urandom(4096))
    cases = [(garbage, "does not start with ncu's NVR header")]
    real = SHARED / "ncurep" / "esmm-a10g-roofline-4kernels.ncu-rep"
    if real.exists():  # cut where the reader finds no range, then where it finds launches
        data = real.read_bytes()
        for fraction, says in ((0.3, "the file is cut or damaged"), (0.9, "is cut or damaged")):
            cut = tmp_path / f"cut{fraction}.ncu-rep"
            cut.write_bytes(data[: int(len(data) * fraction)])
            cases.append((cut, says))
    for path, says in cases:
        assert main(["report", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and says in err, err


def test_the_reader_is_found_in_an_nsight_compute_install(monkeypatch, tmp_path):
    """No module on this Python's path: the copy beside ncu (``extras/python``) is used."""
    install = tmp_path / "nsight-compute" / "2025.3.1"
    (install / "extras" / "python").mkdir(parents=True)
    (install / "extras" / "python" / "ncu_report.py").write_text("")
    ncu = install / "ncu"
    ncu.write_text("#!/bin/sh\n")
    ncu.chmod(ncu.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(install))
    monkeypatch.setattr(ncu_rep.importlib.util, "find_spec", lambda name: None)
    assert ncu_rep.find_reader() == str(install / "extras" / "python")
    monkeypatch.setenv("PATH", str(tmp_path / "none"))
    monkeypatch.setattr(ncu_rep, "INSTALL_GLOBS", ())
    assert ncu_rep.find_reader() is None


SLICED = [
    # 12 launches of one metric set: three slices of 4, joined as they are
    ("esmm-a10g-12kernels.ncu-rep", 4, 3, 1 << 40),
    # two metric sets among 5 launches: a slice of one launch lacks the other set's columns
    ("sglang-h800-5kernels.ncu-rep", 1, 4, 1 << 40),
    # 4 of 5 launches inside NVTX ranges: a slice without one gets the NVTX column put back
    ("kernels5_full_h100.ncu-rep.gz", 1, 4, 1 << 40),
    # a process that grew by its budget hands the rest of its slice to a fresh one: here
    # every process reads one launch, as a process of PyPI's module would on a large report
    ("kernels5_full_h100.ncu-rep.gz", 5, 1, 1),
    ("esmm-a10g-12kernels.ncu-rep", 6, 2, 1),
]


CONVERT = """
import sys
from pathlib import Path
from roofscope.ingest.ncu import report_worker as worker
if __name__ == "__main__":
    worker.MIN_SLICE = int(sys.argv[3])
    worker._jobs = lambda: int(sys.argv[4])
    worker.GROWTH_BUDGET = int(sys.argv[5])
    worker.convert(Path(sys.argv[1]), Path(sys.argv[2]))
"""


@pytest.mark.parametrize(("name", "min_slice", "jobs", "budget"), SLICED)
def test_the_page_is_the_same_read_in_slices_by_several_processes(
    tmp_path, name, min_slice, jobs, budget
):
    """Large reports are read in slices by up to four processes, one load each: the files
    they join into are those of one process reading every launch, also where one slice saw
    fewer metrics or no NVTX range. Each reading runs in a fresh process, as the worker does:
    NVIDIA's module gives a derived metric's unit as ``inst`` or ``thread`` depending on what
    the process loaded before (ncu's own exports differ the same way; both are counts)."""
    path = (OURS if name.endswith(".gz") else SHARED / "ncurep") / name
    if not path.exists():
        pytest.skip("shared samples absent")
    if name.endswith(".gz"):
        plain = tmp_path / name.removesuffix(".gz")
        plain.write_bytes(gzip.decompress(path.read_bytes()))
        path = plain
    whole, sliced = tmp_path / "whole", tmp_path / "sliced"
    cuts = (str(min_slice), str(jobs), str(budget))
    for out, args in ((whole, ("250", "1", str(1 << 40))), (sliced, cuts)):
        out.mkdir()
        subprocess.run(
            [sys.executable, "-c", CONVERT, str(path), str(out), *args], check=True, timeout=300
        )
    for part in ("raw.csv", "rules.csv", "sources.csv", "meta.json"):
        assert (whole / part).read_bytes() == (sliced / part).read_bytes(), part
    assert sorted(p.name for p in sliced.iterdir()) == sorted(p.name for p in whole.iterdir())


def test_the_worker_loads_no_native_library_before_nvidias_reader(tmp_path):
    """Nsight Compute 2025.3.1's ``ncu_report`` crashes (SIGSEGV in ``IMetric.unit``) in a
    process that loaded DuckDB or pyarrow before it: seen on the GPU machine for every report,
    never when it was imported first (tools/device/ncu_rep_unit_probe.py). The worker's
    imports up to NVIDIA's module, package ``__init__`` files included, stay native-free."""
    stand_in = tmp_path / "reader"
    stand_in.mkdir()
    (stand_in / "ncu_report.py").write_text(
        "import sys\n"
        "native = {'duckdb', 'pyarrow', 'numpy', 'pandas', 'textual'}\n"
        "print('before ncu_report:', sorted({m.split('.')[0] for m in sys.modules} & native))\n"
        "sys.exit(3)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(stand_in), *sys.path]))
    argv = [sys.executable, "-m", "roofscope.ingest.ncu.report_worker", "r", str(tmp_path)]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.strip() == "before ncu_report: []"


def test_a_reader_that_crashes_falls_back_to_ncu_and_says_so(tmp_path, monkeypatch):
    """NVIDIA's reader is native code: seen crashing on the GPU machine (a segmentation
    fault). Where ncu is installed, the report is read through ``ncu --import`` instead, with a
    warning that names the signal; the totals are those of ncu's own export."""
    report = OURS / "kernels5_roofline_h100.ncu-rep.gz"
    export = OURS / "kernels5_roofline_h100.ncu-raw.csv.gz"
    crashing = tmp_path / "reader"
    crashing.mkdir()
    (crashing / "ncu_report.py").write_text(
        "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ncu = bin_dir / "ncu"  # prints the export ncu made of this report on the GPU machine
    ncu.write_text(f"#!/bin/sh\nexec gzip -dc '{export}'\n")
    ncu.chmod(ncu.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("ROOFSCOPE_NCU", raising=False)
    monkeypatch.setattr(ncu_rep, "find_reader", lambda: str(crashing))
    warnings: list[str] = []
    got = roofscope_totals(report, warnings)
    assert got == roofscope_totals(export)
    assert any("NVIDIA's report reader failed" in w and "signal 11" in w for w in warnings), (
        warnings
    )
