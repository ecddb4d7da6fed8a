"""``roofscope export --parquet``: a fleet's reports as one Hive-partitioned Parquet dataset
(docs/parquet.md). The bundled samples are exported once; a fleet of 1,000 reports is made by
linking their partitions under other report ids and GPU names, so DuckDB and pyarrow read a
real dataset's shape in a few seconds. Every number of a real sample is checked against
``roofscope report --format json``; Spark reads the same folders when it is installed."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from roofscope.output.parquet import (
    MARKER,
    PART,
    SCHEMAS,
    TABLES,
    gpu_partition,
    report_partition,
)
from tests.conftest import REPO, SAMPLES, run_cli
from tests.ncu_builder import raw_page, write
from tests.nsys_builder import H100, Export, Kernel

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

SMALL = (
    SAMPLES / "gemm4096_bf16_h100.ncu-raw.csv",
    SAMPLES / "cnn_tf32_b128_h100.ncu-raw.csv.gz",
    SAMPLES / "mlp_fp32_b128_h100.ncu-raw.csv",
)
FLEET = 1000
FLEET_GPUS = ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB", "Tesla V100-SXM2-16GB", None)
GPU_DIR = re.compile(r"^gpu=[a-z][a-z0-9.-]*$")
REPORT_DIR = re.compile(r"^report=[a-z][a-z0-9._-]*-[0-9a-f]{16}$")


def _json(path: Path, cwd: Path) -> dict:
    out = run_cli("report", str(path), "--format", "json", "--by", "launch", cwd=cwd)
    assert out.returncode == 0, out.stderr
    (report,) = json.loads(out.stdout)["reports"]
    return report


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The small samples exported once, with their ``report --format json`` documents."""
    root = tmp_path_factory.mktemp("parquet")
    with pytest.MonkeyPatch.context() as mp:  # this module's own cache: each sample ingested once
        mp.setenv("ROOFSCOPE_CACHE_DIR", str(root / "cache"))
        out = run_cli("export", "--parquet", str(root / "ds"), *map(str, SMALL), cwd=root)
        assert out.returncode == 0, out.stderr
        docs = {p.name: _json(p, root) for p in SMALL}
    return {"dir": root / "ds", "docs": docs, "stdout": out.stdout}


def _partitions(folder: Path, table: str = "reports") -> list[Path]:
    return sorted((folder / table).glob(f"*/*/{PART}"))


def _report_ids(folder: Path) -> dict[str, tuple[str, str]]:
    """file name → (gpu value, report value) of each exported report."""
    out = {}
    for part in _partitions(folder):
        name = pq.read_table(part).column("file_name")[0].as_py()
        out[name] = (part.parent.parent.name[4:], part.parent.name[7:])
    return out


@pytest.fixture(scope="module")
def fleet(exported: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,000 reports: the real samples' partitions, and links to them under 997 other report
    ids and four GPU names (one unknown), as a CI's exports of many runs would lie."""
    root = tmp_path_factory.mktemp("fleet") / "ds"
    shutil.copytree(exported["dir"], root)
    real = sorted(_report_ids(root).values())
    for i in range(FLEET - len(real)):
        gpu0, rid0 = real[i % len(real)]
        gpu = gpu_partition(FLEET_GPUS[i % len(FLEET_GPUS)])
        rid = report_partition(f"run{i:04d}.ncu-raw.csv", hashlib.sha256(b"%d" % i).hexdigest())
        for table in TABLES:
            src = root / table / f"gpu={gpu0}" / f"report={rid0}" / PART
            dst = root / table / f"gpu={gpu}" / f"report={rid}"
            dst.mkdir(parents=True)
            os.link(src, dst / PART)
    return root


def _sql(con: duckdb.DuckDBPyConnection, text: str, *args: object) -> list[tuple]:
    return con.execute(text, list(args)).fetchall()


def _scan(folder: Path, table: str) -> str:
    return f"read_parquet('{folder}/{table}/**/*.parquet', hive_partitioning = true)"


def test_duckdb_reads_1000_reports_as_one_table(fleet: Path, exported: dict):
    con = duckdb.connect()
    reports, groups, launches = (_scan(fleet, t) for t in ("reports", "groups", "launches"))
    # the Hive partition columns come back as text, one report id per report
    assert _sql(
        con, f"SELECT count(*), count(DISTINCT report), count(DISTINCT gpu) FROM {reports}"
    )[0] == (FLEET, FLEET, len(FLEET_GPUS))
    types = dict(
        _sql(con, f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM {groups})")
    )
    assert types["gpu"] == types["report"] == "VARCHAR"
    # rows: what each report says it has, summed over the fleet
    (n_groups, n_launches) = _sql(con, f"SELECT sum(groups), sum(launches) FROM {reports}")[0]
    assert _sql(con, f"SELECT count(*) FROM {groups}")[0][0] == n_groups
    assert _sql(con, f"SELECT sum(launches) FROM {launches}")[0][0] == n_launches
    # per report: the groups' and the launches' time and FLOPs add up to the report's
    off = _sql(
        con,
        f"WITH g AS (SELECT gpu, report, sum(time_s) t, sum(flops_total) f FROM {groups} "
        f"GROUP BY ALL), l AS (SELECT gpu, report, sum(time_s) t, count(*) n FROM {launches} "
        f"GROUP BY ALL) SELECT r.report FROM {reports} r JOIN g USING (gpu, report) "
        f"JOIN l USING (gpu, report) WHERE abs(g.t - r.time_s) > 1e-9 * r.time_s "
        f"OR abs(l.t - r.time_s) > 1e-9 * r.time_s OR abs(g.f - r.flops_total) > "
        f"1e-9 * r.flops_total",
    )
    assert off == [] and len(_sql(con, f"SELECT DISTINCT report FROM {launches}")) == FLEET
    # the real samples' totals are report --format json's, digit for digit
    ids = _report_ids(exported["dir"])
    for name, doc in exported["docs"].items():
        row = _sql(
            con,
            f"SELECT launches, kernels, time_s, flops_fp64, flops_fp32, flops_fp16, "
            f"flops_tensor, bytes_l1, bytes_l2, bytes_dram, format, gpu_name FROM {reports} "
            f"WHERE file_name = ? AND report = ?",
            name,
            ids[name][1],
        )
        assert row == [
            (
                doc["launches"],
                doc["kernels"],
                doc["time_s"],
                *doc["flops"].values(),
                *doc["bytes"].values(),
                doc["format"],
                doc["gpu"]["name"],
            )
        ]


def test_pyarrow_dataset_reads_the_fleet(fleet: Path):
    for table, schema in SCHEMAS.items():
        dataset = ds.dataset(fleet / table, format="parquet", partitioning="hive")
        assert dataset.schema.names == [*schema.names, "gpu", "report"]
        assert pa.types.is_string(dataset.schema.field("gpu").type)
        assert pa.types.is_string(dataset.schema.field("report").type)
    reports = ds.dataset(fleet / "reports", format="parquet", partitioning="hive").to_table(
        columns=["report", "gpu", "groups", "launches"]
    )
    assert reports.num_rows == FLEET and len(set(reports.column("report").to_pylist())) == FLEET
    groups = ds.dataset(fleet / "groups", format="parquet", partitioning="hive")
    assert groups.count_rows() == pa.compute.sum(reports.column("groups")).as_py()
    launches = ds.dataset(fleet / "launches", format="parquet", partitioning="hive")
    h100 = ds.field("gpu") == gpu_partition("NVIDIA H100 80GB HBM3")
    assert launches.count_rows(filter=h100) > 0  # partition pruning on the Hive column


def _row_of(row: dict, group_key: str) -> dict:
    """A JSON row as the dataset's columns (docs/parquet.md): flattened, group as group_name."""
    out = {k: v for k, v in row.items() if not isinstance(v, dict) and k not in ("name", "nsys")}
    out.pop("grp", None)
    out["group_name"] = row[group_key]
    for key in ("flops", "bytes", "ai"):
        out.update({f"{key}_{inner}": v for inner, v in row[key].items()})
    return out


def test_every_group_and_launch_is_the_json_row(exported: dict):
    """Not only totals: each group and launch row holds report --format json's numbers."""
    ids = _report_ids(exported["dir"])
    for name, doc in exported["docs"].items():
        gpu, rid = ids[name]
        where = Path(f"gpu={gpu}") / f"report={rid}" / PART
        groups = pq.read_table(exported["dir"] / "groups" / where).to_pylist()
        assert groups == [_row_of(g, "name") for g in doc["groups"]]
        launches = pq.read_table(exported["dir"] / "launches" / where).to_pylist()
        want = sorted(
            ({**_row_of(r, "grp"), "launch_id": r["name"]} for r in doc["rows"]),
            key=lambda r: r["launch_id"],
        )
        for row in want:
            row.pop("kernels")
        assert launches == want
        (report,) = pq.read_table(exported["dir"] / "reports" / where).to_pylist()
        assert report["precision"] == doc["precision"]
        assert report["ceilings"] == doc["ceilings"]
        assert report["potential_speedup"] == doc["efficiency"]["potential_speedup"]
        assert report["groups"] == len(groups) and report["path"].endswith(name)


def _guide_block(lang: str, after: str) -> str:
    """The first ``lang`` code block after ``after`` in the guide's export page."""
    text = GUIDE_PAGE.read_text(encoding="utf-8")
    start = text.index(after)
    return re.search(rf"```{lang}\n(.*?)```", text[start:], re.S).group(1)


GUIDE_PAGE = REPO / "docs" / "guide" / "export.md"
GUIDE_HEADING = "# A fleet's reports as one Parquet dataset"


def test_the_guide_duckdb_query_runs(fleet: Path):
    sql = _guide_block("sql", GUIDE_HEADING).replace("fleet/", f"{fleet}/")
    rows = duckdb.connect().execute(sql).fetchall()
    total = (
        duckdb.connect()
        .execute(f"SELECT sum(groups) FROM {_scan(fleet, 'reports')}")
        .fetchall()[0][0]
    )
    assert len(rows) == total
    assert rows[0][3] >= rows[-1][3]  # longest first


def _spark_sql() -> str:
    return re.search(r'spark\.sql\("""(.*?)"""\)', _guide_block("python", GUIDE_HEADING), re.S)[1]


@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")
@pytest.mark.filterwarnings("ignore::FutureWarning")  # pyspark's note about pandas 3
def test_spark_reads_the_groups_as_one_table(exported: dict, tmp_path: Path):
    """docs/guide/export.md's Spark SQL over the exported samples: the rows DuckDB reads."""
    # a broken install (py4j missing) skips too, not only an absent one
    pyspark_sql = pytest.importorskip("pyspark.sql", exc_type=ImportError)
    folder = exported["dir"]
    spark = (
        pyspark_sql.SparkSession.builder.master("local[1]")
        .appName("roofscope-parquet-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", f"-Djava.io.tmpdir={tmp_path}")
        .getOrCreate()
    )
    try:
        code = _guide_block("python", GUIDE_HEADING).replace("fleet/", f"{folder}/")
        assert f'spark.read.parquet("{folder}/groups")' in code
        exec(code, {"spark": spark})  # the page's lines as written: view, SQL, show()
        rows = [tuple(r) for r in spark.sql(_spark_sql()).collect()]
        reports = spark.read.parquet(f"{folder}/reports")
        assert dict(reports.dtypes)["gpu"] == dict(reports.dtypes)["report"] == "string"
        launches = spark.read.parquet(f"{folder}/launches").count()
    finally:
        spark.stop()
    sql = _guide_block("sql", GUIDE_HEADING).replace("fleet/", f"{folder}/")
    want = duckdb.connect().execute(sql).fetchall()
    assert sorted(rows, key=repr) == sorted(want, key=repr)
    assert launches == sum(d["launches"] for d in exported["docs"].values())


# -- through the entry point -----------------------------------------------------------------
GEMM = SAMPLES / "gemm4096_bf16_h100.ncu-raw.csv"


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


@pytest.mark.usefixtures("shared_sample_cache")
def test_export_again_replaces_the_partition(tmp_path: Path):
    out = tmp_path / "ds"
    first = run_cli("export", "--parquet", str(out), str(GEMM), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "1 report," in first.stdout and "replaced" not in first.stdout
    before = _files(out)
    assert before == [
        MARKER,
        *(f"{t}/{p}/{PART}" for t in sorted(TABLES) for p in _partition_of(out)),
    ]
    stamp = pq.read_table(out / before[-1]).column("exported_at")[0]
    again = run_cli("export", "--parquet", str(out), str(GEMM), str(GEMM), cwd=tmp_path)
    assert again.returncode == 0 and "1 report," in again.stdout and "1 replaced" in again.stdout
    assert _files(out) == before  # replaced, not duplicated, and no temporary file left
    assert pq.read_table(out / before[-1]).column("exported_at")[0] != stamp
    # another run under the same name is another report; the same bytes under the same name
    # in another folder are the same one
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    shutil.copy(GEMM, tmp_path / "a" / GEMM.name)
    (tmp_path / "b" / GEMM.name).write_text(GEMM.read_text() + "\n")
    more = run_cli(
        "export", "--parquet", str(out), f"a/{GEMM.name}", f"b/{GEMM.name}", cwd=tmp_path
    )
    assert more.returncode == 0, more.stderr
    assert "1 replaced" in more.stdout
    assert len(_partitions(out)) == 2


def _partition_of(folder: Path) -> list[str]:
    return [f"{p.parent.parent.name}/{p.parent.name}" for p in _partitions(folder)]


@pytest.mark.usefixtures("shared_sample_cache")
def test_a_report_under_another_gpu_value_is_moved_not_doubled(tmp_path: Path):
    out = tmp_path / "ds"
    assert run_cli("export", "--parquet", str(out), str(GEMM), cwd=tmp_path).returncode == 0
    (where,) = _partition_of(out)
    rid = where.split("/")[1]
    for table in TABLES:  # as an earlier export that named the GPU differently left it
        stale = out / table / "gpu=unknown" / rid
        stale.mkdir(parents=True)
        shutil.copy(out / table / where / PART, stale / PART)
    assert run_cli("export", "--parquet", str(out), str(GEMM), cwd=tmp_path).returncode == 0
    assert _partition_of(out) == [where]
    assert not any(any((out / t / "gpu=unknown").iterdir()) for t in TABLES)


HOSTILE_FILE = "..=x y\n\x1b[2J %2F..évil gpu=a.ncu-raw.csv"
HOSTILE_GPU = "../../../etc/x=y \x1b]0;t\x07 GPU"
HOSTILE_KERNELS = ["[/]", "k\x1b[2J\x1b]0;pwned\x07", "a/../../b=c", "'; DROP TABLE x; --"]


def test_hostile_names_stay_inside_and_are_data(tmp_path: Path):
    """A file name with ``..``, ``=``, a newline and escapes, a GPU name with ``../``, kernel
    names with SQL and markup: partition folders are safe components inside DIR, and every
    string reads back verbatim from the files."""
    units = {"gpu__time_duration.sum": "nsecond", "dram__bytes.sum": "byte"}
    ncu = write(
        tmp_path / HOSTILE_FILE,
        raw_page(
            [
                (k, {"gpu__time_duration.sum": "1000", "dram__bytes.sum": "5"})
                for k in HOSTILE_KERNELS
            ],
            units,
        ),
    )
    kernels = [
        Kernel(k, 1000 * (2 * i + 1), 1000 * (2 * i + 2)) for i, k in enumerate(HOSTILE_KERNELS)
    ]
    nsys = Export(kernels=kernels, gpu=(HOSTILE_GPU, *H100[1:])).write(tmp_path / "-rf .sqlite")
    out = tmp_path / "out dir" / "ds"
    result = run_cli("export", "--parquet", str(out), str(ncu), str(nsys), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1 and "2 reports," in result.stdout
    for path in out.rglob("*"):  # nothing outside DIR
        assert path.resolve().is_relative_to(out.resolve())
        assert not path.is_symlink()
    for table in TABLES:
        for gpu_dir in (out / table).iterdir():
            assert GPU_DIR.match(gpu_dir.name), gpu_dir.name
            for report_dir in gpu_dir.iterdir():
                assert REPORT_DIR.match(report_dir.name), report_dir.name
    assert set(os.listdir(tmp_path / "out dir")) == {"ds"}
    con = duckdb.connect()
    names = {r[0] for r in _sql(con, f"SELECT kernel FROM {_scan(out, 'launches')}")}
    assert names == set(HOSTILE_KERNELS)
    reports = _sql(con, f"SELECT file_name, gpu_name, gpu FROM {_scan(out, 'reports')} ORDER BY 1")
    assert reports[0][:2] == ("-rf .sqlite", HOSTILE_GPU)
    assert reports[0][2] == "etc-x-y-0-t-gpu"
    assert reports[1][0] == HOSTILE_FILE
    # an nsys report: times only, the roofline columns unknown (null), as in the JSON
    (row,) = _sql(
        con,
        f"SELECT flops_total, bound, efficiency FROM {_scan(out, 'reports')} r "
        f"JOIN (SELECT report, any_value(bound) bound, any_value(efficiency) efficiency "
        f"FROM {_scan(out, 'groups')} GROUP BY 1) USING (report) WHERE format LIKE 'nsys%'",
    )
    assert row[0] is None and row[2] is None


def test_partition_values_are_text_every_reader_keeps():
    assert gpu_partition("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3"
    assert gpu_partition(None, "h100-sxm5-80gb") == "h100-sxm5-80gb"
    assert gpu_partition(None) == gpu_partition("  ") == gpu_partition("..") == "unknown"
    for name in ("1080", "NaN", "inf", "true", "NULL", "2024-01-01"):
        value = gpu_partition(name)
        assert value.startswith("gpu-") and GPU_DIR.match(f"gpu={value}")
    digest = "0123456789abcdef" * 4
    assert report_partition("2024-01-01.csv", digest) == "report-2024-01-01.csv-0123456789abcdef"
    assert report_partition("...", digest) == "report-0123456789abcdef"
    assert report_partition("/x/Run 1.ncu-raw.csv", digest) == "run_1.ncu-raw.csv-0123456789abcdef"
    assert len(report_partition("a" * 400, digest)) <= 80


# -- errors a user can cause: one line, a hint, exit 2, nothing written ------------------------
def _error(result, tmp_path: Path, *, made: Path | None = None) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("roofscope: ")
    assert lines[0].endswith(")") and "(" in lines[0], "a hint in parentheses"
    if made is not None:
        assert not made.exists(), "nothing written"
    return lines[0]


def test_errors_are_one_line_exit_2(tmp_path: Path):
    out = tmp_path / "ds"
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    line = _error(run_cli("export", "--parquet", str(a_file), str(GEMM), cwd=tmp_path), tmp_path)
    assert "is a file, not a folder" in line
    line = _error(run_cli("export", "--parquet", str(out), cwd=tmp_path), tmp_path, made=out)
    assert "no files" in line
    line = _error(
        run_cli("export", "--parquet", str(out), str(GEMM), "nope.csv", cwd=tmp_path),
        tmp_path,
        made=out,
    )
    assert "nope.csv: no such file" in line
    bad = tmp_path / "binary.csv"
    bad.write_bytes(bytes(range(256)) * 64)
    _error(run_cli("export", "--parquet", str(out), str(bad), cwd=tmp_path), tmp_path, made=out)
    recording = SAMPLES / "h100_matmul.parquet"
    line = _error(
        run_cli("export", "--parquet", str(out), str(recording), cwd=tmp_path), tmp_path, made=out
    )
    assert "GPU recording" in line
    busy = tmp_path / "home"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    line = _error(run_cli("export", "--parquet", str(busy), str(GEMM), cwd=tmp_path), tmp_path)
    assert "not empty" in line and os.listdir(busy) == ["notes.txt"]
    (busy / "notes.txt").unlink()
    (busy / MARKER).write_text(json.dumps({"dataset": "roofscope-parquet", "version": 99}))
    line = _error(run_cli("export", "--parquet", str(busy), str(GEMM), cwd=tmp_path), tmp_path)
    assert "newer roofscope" in line
