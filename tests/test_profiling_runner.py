"""Presets, commands, progress parsing and the runner — against a stand-in ncu that replays the
``==PROF==`` lines of a real H100 run around the real step (on CPU) and exports a real CSV."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofscope
from roofscope.cli import main
from roofscope.errors import RoofscopeError
from roofscope.profiling import command, runs
from roofscope.profiling.command import RunSpec
from roofscope.profiling.presets import PRESETS, QUICK_METRICS
from roofscope.profiling.progress import LineSplitter, Progress
from roofscope.profiling.runner import Runner
from tests.conftest import DATA, SAMPLES

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

LOG = DATA / "ncu_stdout_resnet18_h100.log"
FAKE_NCU = DATA / "fake_ncu.py"
FAKE_PYTHON = DATA / "fake_python.py"


@pytest.fixture
def fake_ncu(monkeypatch: pytest.MonkeyPatch) -> Path:
    pytest.importorskip("torch")  # the stand-in runs the real step
    monkeypatch.setenv("ROOFSCOPE_NCU", str(FAKE_NCU))
    monkeypatch.setenv("FAKE_NCU_DELAY", "0")
    return FAKE_NCU


# -- presets and commands ------------------------------------------------------------------
def test_presets_are_argument_lists_with_the_expected_ncu_options():
    quick = PRESETS["quick"].args
    assert quick.count("--metrics") == 1  # ncu: "cannot be specified more than once"
    metrics = quick[quick.index("--metrics") + 1].split(",")
    assert set(metrics) == {*QUICK_METRICS, r"regex:^sm__ops_path_tensor_src_.*\.sum$"}
    for m in ("gpu__time_duration.sum", "dram__bytes_read.sum", "lts__t_bytes.sum",
              "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
              "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"):  # fmt: skip
        assert m in metrics
    roofline = PRESETS["roofline"].args
    sections = [roofline[i + 1] for i, a in enumerate(roofline) if a == "--section"]
    assert "SpeedOfLight_HierarchicalTensorRooflineChart" in sections and len(sections) == 6
    assert PRESETS["full"].args == ("--set", "full")
    assert PRESETS["time"].args == (
        "--metrics",
        "gpu__time_duration.sum,device__attribute_display_name",
    )
    assert PRESETS["nsys"].tool == "nsys" and "cudaProfilerApi" in PRESETS["nsys"].args
    for p in PRESETS.values():
        assert all(isinstance(a, str) and a for a in p.args)


def test_profile_command_wraps_the_step_with_the_options(tmp_path):
    spec = RunSpec("resnet50", batch=64, precision="bf16", preset="quick", clock_control="none",
                   launch_skip=10, launch_count=100, kernel_regex="gemm|conv")  # fmt: skip
    argv = command.profile_argv(spec, "/opt/ncu", tmp_path, python="/usr/bin/python3")
    assert argv[:3] == ["/opt/ncu", "--profile-from-start", "off"]
    joined = " ".join(argv)
    for piece in ("--clock-control none", "--launch-skip 10", "--launch-count 100",
                  "--kernel-name regex:gemm|conv", f"--export {tmp_path / 'report'}",
                  "/usr/bin/python3 -m roofscope.profiling.step resnet50 --batch 64 "
                  "--precision bf16 --mode train"):  # fmt: skip
        assert piece in joined
    assert argv[-2:] == ["--analytic-out", str(tmp_path / "analytic.json")]
    export, target = command.export_argv(spec, "/opt/ncu", tmp_path)
    assert export[1:3] == ["--import", str(tmp_path / "report.ncu-rep")]
    assert target.name == "resnet50_bf16_b64_quick.ncu-raw.csv"
    assert command.expected_kernels(spec, 361) == 100
    assert command.expected_kernels(RunSpec("mlp", launch_skip=5), 20) == 15


def test_compile_adds_the_ncu_option_the_environment_and_the_name(tmp_path):
    """--compile: ncu profiles only the step's own process and Inductor compiles in it (ncu
    following Inductor's compile workers crashed the run on the H100, issue 18)."""
    spec = RunSpec("bert", batch=8, precision="bf16", compile=True)
    argv = command.profile_argv(spec, "/opt/ncu", tmp_path, python="/usr/bin/python3")
    step = argv.index("/usr/bin/python3")
    i = argv.index("--target-processes")
    assert argv[i + 1] == "application-only" and i < step  # ncu's option, not the step's
    assert "--compile" in argv[step:]
    assert command.count_argv(spec)[-2:] == ["--compile", "--count-kernels"]
    assert command.step_env(spec) == {"TORCHINDUCTOR_COMPILE_THREADS": "1"}
    assert spec.slug == "bert_bf16_b8_compile"
    assert command.export_argv(spec, "ncu", tmp_path)[1].name == (
        "bert_bf16_b8_compile_roofline.ncu-raw.csv"
    )
    assert RunSpec.from_dict(spec.to_dict()) == spec
    eager = RunSpec("bert", batch=8, precision="bf16")
    assert command.step_env(eager) == {} and eager.slug == "bert_bf16_b8"
    assert "--compile" not in command.profile_argv(eager, "ncu", tmp_path)
    assert "--target-processes" not in command.profile_argv(eager, "ncu", tmp_path)
    infer = RunSpec("bert", precision="bf16", mode="infer", compile=True)
    assert infer.slug == "bert_bf16_b8_infer_compile"
    from roofscope.analysis.scaling import infer_setting

    setting = infer_setting(f"{spec.slug}_h100.ncu-raw.csv")
    assert (setting.batch, setting.precision) == (8, "bf16")


def test_channels_last_adds_the_step_option_and_the_name(tmp_path):
    """--channels-last: the count and the profiled step get the option, the folder and export
    names `_cl`, run.json keeps it; no ncu option or environment of its own."""
    spec = RunSpec("resnet18", batch=8, precision="bf16", channels_last=True)
    argv = command.profile_argv(spec, "/opt/ncu", tmp_path, python="/usr/bin/python3")
    step = argv.index("/usr/bin/python3")
    assert "--channels-last" in argv[step:] and "--target-processes" not in argv
    assert command.count_argv(spec)[-2:] == ["--channels-last", "--count-kernels"]
    assert command.step_env(spec) == {}
    assert spec.slug == "resnet18_bf16_b8_cl"
    assert command.export_argv(spec, "ncu", tmp_path)[1].name == (
        "resnet18_bf16_b8_cl_roofline.ncu-raw.csv"
    )
    assert RunSpec.from_dict(spec.to_dict()) == spec
    both = RunSpec("resnet18", batch=8, precision="bf16", channels_last=True, compile=True)
    assert both.slug == "resnet18_bf16_b8_cl_compile"
    assert command.step_argv(both)[-2:] == ["--channels-last", "--compile"]
    plain = RunSpec("resnet18", batch=8, precision="bf16")
    assert plain.slug == "resnet18_bf16_b8" and "--channels-last" not in command.step_argv(plain)
    from roofscope.analysis.scaling import infer_setting
    from roofscope.output.profiling import settings_text

    setting = infer_setting(f"{spec.slug}_h100.ncu-raw.csv")
    assert (setting.batch, setting.precision) == (8, "bf16")
    assert settings_text(spec.to_dict()).endswith("channels_last")
    with pytest.raises(RoofscopeError, match="no convolutions"):
        RunSpec("bert", channels_last=True)
    with pytest.raises(RoofscopeError, match="channels_last must be true or false"):
        RunSpec.from_dict({**spec.to_dict(), "channels_last": "yes"})


def test_nsys_preset_records_the_profiler_range(tmp_path):
    spec = RunSpec("mlp", preset="nsys")
    argv = command.profile_argv(spec, "nsys", tmp_path)
    assert argv[:2] == ["nsys", "profile"] and "--capture-range" in argv
    export, target = command.export_argv(spec, "nsys", tmp_path)
    assert export[:4] == ["nsys", "export", "--type", "sqlite"] and target.suffix == ".sqlite"


@pytest.mark.parametrize(
    "kwargs",
    [{"model": "alexnet"}, {"model": "mlp", "batch": 0}, {"model": "mlp", "precision": "fp8"},
     {"model": "mlp", "preset": "everything"}, {"model": "mlp", "kernel_regex": "gemm("},
     {"model": "mlp", "clock_control": "boost"}, {"model": "mlp", "launch_count": 0},
     {"model": "resnet18", "image_size": 10}, {"model": "bert", "seq_len": 1000}],
)  # fmt: skip
def test_bad_settings_are_one_line_errors(kwargs):
    from roofscope.errors import RoofscopeError

    with pytest.raises(RoofscopeError) as err:
        RunSpec(**kwargs)
    assert "\n" not in err.value.one_line()


# -- progress --------------------------------------------------------------------------------
def test_progress_reads_the_real_ncu_log():
    p = Progress(expected=361)
    for line in LOG.read_text().splitlines():
        p.feed(line)
    assert p.done == 361 and p.passes == 17 and p.index == 360
    assert p.current == "multi_tensor_apply_kernel" and p.fraction == 1.0
    assert p.report == "./art/resnet18_fp32.ncu-rep" and not p.errors


def test_progress_reads_a_compiled_run_log():
    """ncu's log of the --compile run on the H100 (application-only, one compile thread): every
    kernel profiled, Inductor's Triton kernels among them, each in its phase, no error."""
    p = Progress(expected=810)
    for line in (
        (DATA / "device" / "bert_bf16_b8_compile_h100.ncu-stdout.log").read_text().splitlines()
    ):
        p.feed(line)
    assert p.done == 810 and p.fraction == 1.0 and not p.errors
    assert p.phase_ranges() == [
        ("forward", 0, 278),
        ("backward", 279, 791),
        ("optimizer", 792, 809),
    ]
    assert p.facts["compile_s"] == "3.48" and p.report.endswith("report.ncu-rep")


def test_progress_reads_a_launch_count_log():
    """Under --launch-count ncu numbers each kernel ``- 4 (5/40):``; the H100 run of ResNet-18
    with --launch-count 40 was failed as "ncu profiled no kernels" before the parser knew it."""
    p = Progress(expected=40)
    log = DATA / "device" / "resnet18_bf16_b8_launch_count_40_h100.ncu-stdout.log"
    for line in log.read_text().splitlines():
        p.feed(line)
    assert p.done == 40 and p.passes == 17 and p.fraction == 1.0 and not p.errors
    assert p.phase_ranges() == [("forward", 0, 39)]
    assert p.current == "batch_norm_collect_statistics..."


def test_progress_follows_unfinished_lines_and_phases():
    p = Progress(expected=4)
    p.feed("==ROOFSCOPE== phase forward")
    p.feed('==PROF== Profiling "sm90_xmma_gemm" - 0: 0%....50%', complete=False)
    assert (p.done, p.percent, p.current, p.index) == (0, 50, "sm90_xmma_gemm", 0)
    p.feed('==PROF== Profiling "sm90_xmma_gemm" - 0: 0%....50%....100% - 17 passes')
    p.first_kernel_at = time.monotonic() - 10  # one kernel took 10 s
    assert p.done == 1 and p.percent == 0 and p.eta() == pytest.approx(30, abs=0.5)
    p.feed("==ROOFSCOPE== phase backward")
    p.feed('==PROF== Profiling "k" - 1: 0%....50%....100% - 17 passes')
    p.feed('==PROF== Profiling "k" - 2: 0%....50%....100% - 17 passes')
    assert p.phase_ranges() == [("forward", 0, 0), ("backward", 1, 2)]
    p.feed("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission")
    assert p.permission_denied()


def test_line_splitter_keeps_the_unfinished_tail():
    s = LineSplitter()
    assert s.feed(b"a\r\nb") == ["a"] and s.buffer == "b"
    assert s.feed(b"c\n\xff\n") == ["bc", "\ufffd"] and s.buffer == ""


# -- the runner ------------------------------------------------------------------------------
def test_runner_counts_profiles_exports_and_records_the_run(fake_ncu, tmp_path):
    seen: list[Progress] = []
    runner = Runner(RunSpec("mlp", batch=4, warmup=1), root=tmp_path, python=str(FAKE_PYTHON),
                    listener=lambda p: seen.append((p.done, p.eta())), tick=0)  # fmt: skip
    run = runner.start()
    assert run.status == runs.DONE, run.error
    assert run.kernels == 361 and run.expected_kernels == 361
    assert [p for p, *_ in run.phases] == ["forward", "backward", "optimizer"]
    assert run.phases[0][1] == 0 and run.phases[-1][2] == 360
    report = run.report_path
    assert report.name == "mlp_fp32_b4_roofline.ncu-raw.csv"
    assert report.read_bytes() == (SAMPLES / "resnet18_fp32_h100.ncu-raw.csv").read_bytes()
    assert "==PROF== Profiling" in run.log_path.read_text()
    assert {"count_s", "profile_s", "export_s"} <= set(run.timings)
    assert float(run.facts["step_time_s"]) > 0
    # progress went up, and the ETA came down to zero once the count was reached
    dones = [d for d, _ in seen]
    assert dones == sorted(dones) and dones[-1] == 361
    assert [e for d, e in seen if d == 361][-1] == 0
    again = runs.list_runs(tmp_path)[0]
    assert again.to_dict() == run.to_dict()
    assert again.analytic()["model"] == "mlp"
    _phases_add_up(run)


def test_full_preset_also_exports_the_details_page_with_ncu_rules(fake_ncu, tmp_path, monkeypatch):
    """--preset full: the raw page is the report, ncu's details page (its rule rows) is written
    beside it for `advise`; a details export that fails leaves the run done, and says so."""
    from roofscope.output.profiling import render_phases
    from roofscope.profiling.summary import run_summary

    spec = RunSpec("mlp", batch=4, warmup=1, preset="full")
    runner = Runner(spec, root=tmp_path, python=str(FAKE_PYTHON), tick=0, count=False)
    run = runner.start()
    assert run.status == runs.DONE, run.error
    assert run.report == "mlp_fp32_b4_full.ncu-raw.csv"
    assert run.details == "mlp_fp32_b4_full.ncu-details.csv"
    assert runs.Run.load(run.folder).details == run.details
    assert run_summary(run)["details"] == str(run.folder / run.details)
    assert f"roofscope advise {run.folder / run.details}" in render_phases(run_summary(run), "md")
    session = roofscope.load(str(run.folder / run.details))
    try:
        assert {a.source for a in session.reports[0].advice()} >= {"ncu"}
    finally:
        session.close()
    # the same run's export again, with a details page ncu cannot write (no second profile)
    monkeypatch.setenv("FAKE_NCU_DETAILS", "fail")
    (run.folder / run.details).unlink()
    run.details = None
    runner._export()
    assert run.status == runs.DONE and run.report == "mlp_fp32_b4_full.ncu-raw.csv"
    assert run.details is None and "not exported" in run.facts["details"]
    assert not list(run.folder.glob("*.ncu-details.csv*"))


def _phases_add_up(run: runs.Run) -> None:
    """Each phase's measured numbers sum to the report's; analytic FLOPs sit beside them."""
    from roofscope.profiling.summary import run_summary
    from roofscope.session import load

    summary = run_summary(run)
    rows = {r["phase"]: r for r in summary["phases"]}
    session = load(str(run.report_path))
    totals = session.reports[0].totals()
    session.close()
    assert rows["step"]["kernels"] == totals["launches"] == 361
    assert rows["step"]["time_s"] == pytest.approx(totals["time_s"])
    assert rows["step"]["flops"] == pytest.approx(sum(v or 0 for v in totals["flops"].values()))
    fwd = rows["forward"]
    assert fwd["analytic_flops"] == 2 * 4 * (784 * 256 + 256 * 128 + 128 * 10)
    assert fwd["measured_over_analytic"] == pytest.approx(fwd["flops"] / fwd["analytic_flops"])
    assert rows["optimizer"]["analytic_flops"] is None


_RECORDING_PYTHON = """#!{python}
import json, os, sys
with open({log!r}, "a") as f:
    f.write(json.dumps([sys.argv[1:], os.environ.get("TORCHINDUCTOR_COMPILE_THREADS")]) + "\\n")
if "--count-kernels" in sys.argv:
    print("==ROOFSCOPE== kernels 361", flush=True)
    sys.exit(0)
print("==ROOFSCOPE== compile_s 12.5", flush=True)
for phase in ("forward", "backward", "optimizer"):
    print("==ROOFSCOPE== phase " + phase, flush=True)
"""


@pytest.mark.parametrize("compiled", [True, False])
def test_runner_gives_compile_settings_to_the_count_and_the_profile(
    fake_ncu, tmp_path, monkeypatch, cli, compiled
):
    """The count and the profiled step get --compile and one Inductor compile thread; ncu gets
    --target-processes; the run folder, run.json and `roofscope runs` say it was compiled."""
    monkeypatch.delenv("TORCHINDUCTOR_COMPILE_THREADS", raising=False)
    log = tmp_path / "calls.jsonl"
    python = tmp_path / "python"
    python.write_text(_RECORDING_PYTHON.format(python=sys.executable, log=str(log)))
    python.chmod(0o755)
    root = tmp_path / "runs"
    spec = RunSpec("bert", batch=8, precision="bf16", compile=compiled)
    run = Runner(spec, root=root, python=str(python)).start()
    assert run.status == runs.DONE, run.error
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [("--count-kernels" in argv) for argv, _ in calls] == [True, False]
    for argv, threads in calls:
        assert ("--compile" in argv) == compiled
        assert threads == ("1" if compiled else None)
    assert ("--target-processes" in run.argv) == compiled
    slug = "bert_bf16_b8_compile" if compiled else "bert_bf16_b8"
    assert run.name.endswith(f"-{slug}-roofline") and run.report == f"{slug}_roofline.ncu-raw.csv"
    assert run.expected_kernels == 361 and run.kernels == 361
    assert run.facts["compile_s"] == "12.5"
    saved = json.loads((run.folder / "run.json").read_text())
    assert saved["spec"]["compile"] is compiled
    [listed] = runs.list_runs(root)
    assert listed.spec.compile is compiled
    table = cli("runs", "--runs-dir", str(root)).stdout
    assert ("bf16 b8 compile" in table) == compiled


def test_runner_gives_channels_last_to_the_count_and_the_profile(fake_ncu, tmp_path, cli):
    """The count and the profiled step get --channels-last; the run folder, run.json and
    `roofscope runs` say so."""
    log = tmp_path / "calls.jsonl"
    python = tmp_path / "python"
    python.write_text(_RECORDING_PYTHON.format(python=sys.executable, log=str(log)))
    python.chmod(0o755)
    root = tmp_path / "runs"
    spec = RunSpec("resnet18", batch=8, precision="bf16", channels_last=True)
    run = Runner(spec, root=root, python=str(python)).start()
    assert run.status == runs.DONE, run.error
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [("--channels-last" in argv) for argv, _ in calls] == [True, True]
    assert run.name.endswith("-resnet18_bf16_b8_cl-roofline")
    assert run.report == "resnet18_bf16_b8_cl_roofline.ncu-raw.csv"
    assert json.loads((run.folder / "run.json").read_text())["spec"]["channels_last"] is True
    [listed] = runs.list_runs(root)
    assert listed.spec.channels_last is True
    assert "bf16 b8 channels_last" in cli("runs", "--runs-dir", str(root)).stdout


def test_permission_error_fails_the_run_with_the_fix(fake_ncu, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_FAIL", "permission")
    run = Runner(RunSpec("mlp", batch=2), root=tmp_path, count=False).start()
    assert run.status == runs.FAILED
    assert "ERR_NVGPUCTRPERM" in run.error and "NVreg_RestrictProfilingToAdminUsers=0" in run.error
    assert run.report is None


def test_crashing_application_fails_the_run_and_keeps_the_log(fake_ncu, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_FAIL", "crash")
    run = Runner(RunSpec("mlp", batch=2, warmup=1), root=tmp_path, count=False).start()
    assert run.status == runs.FAILED and "error code (11)" in run.error
    assert 0 < run.kernels < 361 and "==PROF==" in run.log_path.read_text()


def test_cancel_stops_ncu_and_the_step(fake_ncu, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_DELAY", "0.05")
    started = threading.Event()

    def listen(p: Progress) -> None:
        if p.done >= 3:
            started.set()

    runner = Runner(RunSpec("mlp", batch=2, warmup=1), root=tmp_path, listener=listen,
                    count=False, tick=0)  # fmt: skip
    result: list[runs.Run] = []
    thread = threading.Thread(target=lambda: result.append(runner.start()))
    thread.start()
    assert started.wait(60)
    t0 = time.monotonic()
    runner.cancel()
    thread.join(30)
    assert not thread.is_alive() and time.monotonic() - t0 < 60  # a hang guard (~1 s)
    run = result[0]
    assert run.status == runs.CANCELLED and run.report is None
    assert 3 <= run.kernels < 361
    assert json.loads((run.folder / "run.json").read_text())["status"] == "cancelled"


def test_missing_ncu_is_a_one_line_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("ROOFSCOPE_NCU", str(tmp_path / "nowhere" / "ncu"))
    assert main(["profile", "mlp", "--no-open", "--runs-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("roofscope: ncu not found (") and "\n" not in err


# -- the CLI ---------------------------------------------------------------------------------
class _Result:
    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """``roofscope ARGS`` through the entry point, in this process (no interpreter start-up)."""

    def run(*args: str, env: dict[str, str] | None = None) -> _Result:
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        capsys.readouterr()
        code = main(list(args))
        out = capsys.readouterr()
        return _Result(code, out.out, out.err)

    return run


def test_profile_list_names_every_model(cli):
    out = cli("profile", "--list", "--format", "json")
    assert out.returncode == 0, out.stderr
    models = json.loads(out.stdout)["models"]
    assert [m["name"] for m in models][:2] == ["resnet50", "resnet18"] and len(models) == 14
    table = cli("profile", "--list")
    assert "MobileNetV2" in table.stdout and "96×128" in table.stdout


def test_dry_run_prints_the_exact_commands(tmp_path, cli):
    out = cli("profile", "resnet50", "--precision", "bf16", "--batch", "64", "--dry-run",
               "--runs-dir", str(tmp_path), env={"ROOFSCOPE_NCU": str(FAKE_NCU)})  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = [ln for ln in out.stdout.splitlines() if not ln.startswith("#")]
    assert lines[0].endswith("--count-kernels")
    assert lines[1].startswith(f"{FAKE_NCU} --profile-from-start off")
    assert "--section SpeedOfLight_RooflineChart" in lines[1]
    assert "roofscope.profiling.step resnet50 --batch 64 --precision bf16" in lines[1]
    assert lines[2].endswith("--csv --page raw --print-units base")
    assert not list(tmp_path.iterdir())  # nothing ran


def test_dry_run_with_compile_shows_the_environment_and_the_ncu_option(tmp_path, cli):
    out = cli("profile", "bert", "--precision", "bf16", "--compile", "--dry-run",
              "--runs-dir", str(tmp_path), env={"ROOFSCOPE_NCU": str(FAKE_NCU)})  # fmt: skip
    assert out.returncode == 0, out.stderr
    notes = [ln for ln in out.stdout.splitlines() if ln.startswith("#")]
    assert any("--compile" in n and "TORCHINDUCTOR_COMPILE_THREADS=1" in n for n in notes)
    count, profile, export = [ln for ln in out.stdout.splitlines() if not ln.startswith("#")]
    assert count.startswith("TORCHINDUCTOR_COMPILE_THREADS=1 ")
    assert count.endswith("--compile --count-kernels")
    assert profile.startswith(f"TORCHINDUCTOR_COMPILE_THREADS=1 {FAKE_NCU} --profile-from-start")
    assert "--target-processes application-only" in profile
    assert "bert_bf16_b8_compile-roofline" in profile and "--compile --analytic-out" in profile
    assert export.startswith(str(FAKE_NCU))  # the export runs no step
    assert not list(tmp_path.iterdir())


def test_dry_run_with_channels_last_shows_the_option_and_refuses_bert(tmp_path, cli):
    out = cli("profile", "resnet18", "--precision", "bf16", "--batch", "8", "--channels-last",
              "--dry-run", "--runs-dir", str(tmp_path),
              env={"ROOFSCOPE_NCU": str(FAKE_NCU)})  # fmt: skip
    assert out.returncode == 0, out.stderr
    notes = [ln for ln in out.stdout.splitlines() if ln.startswith("#")]
    assert any("--channels-last" in n and "channels_last" in n for n in notes)
    count, profile, export = [ln for ln in out.stdout.splitlines() if not ln.startswith("#")]
    assert count.endswith("--channels-last --count-kernels")
    assert "resnet18_bf16_b8_cl-roofline" in profile and "--channels-last --analytic-out" in profile
    assert "--channels-last" not in export
    refused = cli("profile", "bert", "--channels-last", "--dry-run", "--runs-dir",
                  str(tmp_path))  # fmt: skip
    assert refused.returncode == 2 and "no convolutions" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_profile_through_the_cli_prints_the_phase_summary(fake_ncu, tmp_path, cli):
    out = cli("profile", "mlp", "--batch", "4", "--warmup", "1", "--no-count", "--no-open",
               "--format", "json", "--runs-dir", str(tmp_path))  # fmt: skip
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["status"] == "done" and [r["phase"] for r in doc["phases"]][-1] == "step"
    listed = cli("runs", "--runs-dir", str(tmp_path), "--format", "json")
    [run] = json.loads(listed.stdout)["runs"]
    assert run["spec"]["model"] == "mlp" and run["status"] == "done" and run["kernels"] == 361


@pytest.mark.parametrize(
    "args",
    [["profile", "alexnet", "--dry-run"], ["profile", "mlp", "--kernel-regex", "a(", "--dry-run"],
     ["profile", "bert", "--image-size", "64", "--estimate"]],
)  # fmt: skip
def test_user_errors_exit_2_with_one_line(args, cli):
    out = cli(*args)
    assert out.returncode == 2 and out.stderr.startswith("roofscope: ")
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_estimate_prints_flops_and_memory_by_batch(cli):
    pytest.importorskip("torch")
    out = cli("profile", "resnet50", "--estimate", "--format", "json")
    doc = json.loads(out.stdout)
    assert doc["flops"]["gmac_per_sample"] == pytest.approx(4.089, rel=0.005)
    batches = [r["batch"] for r in doc["by_batch"]]
    assert batches == [1, 8, 32, 64, 128, 256]
    mem = [r["memory_bytes"] for r in doc["by_batch"]]
    assert mem == sorted(mem)


def test_doctor_without_a_gpu_names_each_fix(cli):
    out = cli("doctor", "--format", "json", env={"ROOFSCOPE_NCU": "/nowhere/ncu"})
    checks = {c["check"]: c for c in json.loads(out.stdout)["checks"]}
    assert out.returncode == 1
    assert checks["ncu"]["status"] == "fail" and "ROOFSCOPE_NCU" in checks["ncu"]["hint"]
    assert checks["runs folder"]["status"] == "ok"
    assert {"GPU and driver", "nsys", "counter permission", "torch"} <= set(checks)
    with_fake = cli("doctor", env={"ROOFSCOPE_NCU": str(FAKE_NCU)})
    assert "Version 2025.3.1.0" in with_fake.stdout


def test_doctor_reports_a_run_refused_counters(fake_ncu, tmp_path, monkeypatch, cli):
    monkeypatch.setenv("FAKE_NCU_FAIL", "permission")
    Runner(RunSpec("mlp", batch=2), root=tmp_path, count=False).start()
    out = cli("doctor", "--format", "json", env={"ROOFSCOPE_RUNS_DIR": str(tmp_path)})
    check = {c["check"]: c for c in json.loads(out.stdout)["checks"]}["counter permission"]
    assert check["status"] == "fail" and "NVreg_RestrictProfilingToAdminUsers" in check["hint"]


def test_ceilings_needs_a_gpu(cli):
    pytest.importorskip("torch")
    out = cli("ceilings")
    assert out.returncode == 2 and "torch sees no CUDA GPU" in out.stderr


def test_cli_and_tui_do_not_import_torch():
    code = ("import sys, roofscope.cli, roofscope.tui.app, roofscope.profiling.runner, "
            "roofscope.profiling.doctor; print('torch' in sys.modules)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


# -- the parser under hypothesis -----------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=120), max_size=20), st.booleans())
def test_progress_never_raises_on_arbitrary_output(lines, complete):
    p = Progress()
    for line in lines:
        p.feed(line, complete)
        p.feed("==PROF== " + line, complete)
        p.feed("==ROOFSCOPE== " + line, complete)
    assert p.done >= 0 and (p.fraction is None or 0 <= p.fraction <= 1)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters='\r\n"'), min_size=1, max_size=60),
       st.integers(0, 10**6), st.integers(1, 99))  # fmt: skip
def test_progress_reads_any_kernel_line(name, index, passes):
    p = Progress()
    p.feed(f'==PROF== Profiling "{name}" - {index}: 0%....50%....100% - {passes} passes')
    assert (p.current, p.index, p.passes, p.done) == (name, index, passes, 1)


def test_a_kernel_regex_that_looks_like_an_option_stays_one_argument():
    argv = command.count_argv(RunSpec("mlp", kernel_regex="-gemm"))
    assert argv[-1] == "--kernel-regex=-gemm"


def test_foreign_or_broken_run_folders_are_skipped_and_dead_runs_marked(tmp_path):
    good = runs.new_run(RunSpec("mlp"), tmp_path)
    good.facts["pid"] = "999999999"  # a roofscope that was killed mid-run
    good.save()
    for name, doc in (("a", {"spec": {"model": "mlp"}, "started": "yesterday"}),
                      ("b", {"spec": {"model": "mlp"}, "phases": [["forward", None, None]]}),
                      ("c", [1, 2]), ("d", {"spec": {"model": "alexnet"}})):  # fmt: skip
        (tmp_path / name).mkdir()
        (tmp_path / name / "run.json").write_text(json.dumps(doc))
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "run.json").write_text("{not json")
    [run] = runs.list_runs(tmp_path)
    assert run.name == good.name and run.status == runs.ABANDONED


def test_an_unwritable_runs_folder_is_a_one_line_error(tmp_path, cli):
    target = tmp_path / "file"
    target.write_text("x")
    out = cli("profile", "mlp", "--no-open", "--runs-dir", str(target / "runs"),
              env={"ROOFSCOPE_NCU": str(FAKE_NCU)})  # fmt: skip
    assert out.returncode == 2 and out.stderr.startswith("roofscope: ")
    assert "ROOFSCOPE_RUNS_DIR" in out.stderr and "\n" not in out.stderr.strip()


def test_estimate_without_a_model_is_an_error(cli):
    out = cli("profile", "--estimate")
    assert out.returncode == 2 and "need a MODEL" in out.stderr
