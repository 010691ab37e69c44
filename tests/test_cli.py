"""The command line, run as `python -m tcplab` in a subprocess."""

import json
import os
import subprocess
import sys
import time
import tomllib

import polars as pl
import pytest


def tcplab(*args, cwd):
    """Run `python -m tcplab ARGS` and return the completed process."""
    return subprocess.run(
        [sys.executable, "-m", "tcplab", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_run_writes_the_output_directory(smoke_path, tmp_path):
    out = tmp_path / "out"
    proc = tcplab("run", smoke_path, "--out", out, "--set", "trace.events=true", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for heading in ["flow", "from→to", "goodput", "Mbps", "delivered", "retx", "timeouts"]:
        assert heading in proc.stdout
    for name in ["bulk.0", "bulk.1", "sw1->emu", "enqueued", "dropped"]:
        assert name in proc.stdout
    assert "…" not in proc.stdout
    files = set(os.listdir(out))
    assert {"summary.json", "scenario.toml", "metadata.json", "events.parquet"} <= files
    summary = json.loads((out / "summary.json").read_text())
    assert summary["wall_time_s"] > 0
    assert tomllib.loads((out / "scenario.toml").read_text())["name"] == summary["scenario_name"]
    metadata = json.loads((out / "metadata.json").read_text())
    assert metadata["scenario_hash"] == summary["scenario_hash"]
    assert metadata["seed"] == summary["seed"]
    events = pl.read_parquet(out / "events.parquet")
    assert {"time_s", "flow", "kind", "seq", "kind_name", "flow_name"} <= set(events.columns)
    for trace in metadata["traces"]:
        assert f"{trace}.parquet" in files
    assert os.listdir(tmp_path) == ["out"]


def test_a_long_flow_table_shows_its_ends_and_where_the_rest_is(smoke_path, tmp_path):
    out = tmp_path / "out"
    short = ("--set", 'run.duration="1ms"', "--set", 'run.stop="duration"')
    many = ("--set", "flows.0.count=199", *short)
    proc = tcplab("run", smoke_path, "--quiet", "--out", out, *many, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) < 80
    shown = [line.split("│")[1].strip() for line in proc.stdout.splitlines()
             if line.startswith("│ bulk.") or line.startswith("│ cbr")]
    assert shown == [f"bulk.{i}" for i in range(30)] + [f"bulk.{i}" for i in range(190, 199)] + [
        "cbr"
    ]
    assert "│ all 200 " in proc.stdout  # the totals row
    assert f"… 160 more flows; the full table is in {out / 'summary.json'}" in proc.stdout
    assert len(json.loads((out / "summary.json").read_text())["flows"]) == 200

    proc = tcplab("run", smoke_path, "--quiet", *many, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "… 160 more flows; give --out DIR to keep the full table (DIR/summary.json)" in (
        proc.stdout
    )

    # Up to 40 flows: the whole table, no totals row.
    proc = tcplab("run", smoke_path, "--quiet", "--set", "flows.0.count=39", *short, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "│ bulk.38 " in proc.stdout and "…" not in proc.stdout and "│ all " not in proc.stdout


def test_a_long_queue_table_is_cut_the_same_way():
    from tcplab.cli.run import _queue_table

    queues = [{"name": f"q{i}", "enqueued": i, "dropped": 0, "max_packets": 1} for i in range(100)]
    table, omitted = _queue_table(queues)
    assert omitted == 60
    assert table.row_count == 30 + 1 + 10
    assert _queue_table(queues[:40])[1] == 0


def test_set_and_seed(smoke_path, tmp_path):
    out = tmp_path / "out"
    proc = tcplab(
        "run",
        smoke_path,
        "--quiet",
        "--seed",
        "5",
        "--set",
        "name=renamed",
        "--out",
        out,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] == 5
    assert summary["scenario_name"] == "renamed"


def test_runs_are_identical_across_processes(smoke_path, tmp_path):
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        proc = tcplab(
            "run",
            smoke_path,
            "--quiet",
            "--out",
            out,
            "--set",
            "trace.throughput_interval=10ms",
            "--set",
            "trace.queues=all",
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr
    summaries = []
    for out in outs:
        summary = json.loads((out / "summary.json").read_text())
        del summary["wall_time_s"]
        summaries.append(summary)
    assert summaries[0] == summaries[1]
    assert (outs[0] / "scenario.toml").read_bytes() == (outs[1] / "scenario.toml").read_bytes()
    for name in ["throughput.parquet", "queue.parquet"]:
        assert pl.read_parquet(outs[0] / name).equals(pl.read_parquet(outs[1] / name))


@pytest.mark.parametrize(
    ("override", "path"),
    [
        ("flows.0.bogus=1", "flows[0].bogus"),
        ("run.duration=5parsecs", "run.duration"),
        ("flows.9.tcp.mss=9000", "flows.9: index out of range"),
    ],
)
def test_bad_scenario_exits_2_without_output(smoke_path, tmp_path, override, path):
    out = tmp_path / "out"
    proc = tcplab("run", smoke_path, "--set", override, "--out", out, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ")
    assert path in proc.stderr
    assert "Traceback" not in proc.stderr
    assert os.listdir(tmp_path) == []


def test_foreign_output_directory_exits_2_before_running(smoke_path, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    proc = tcplab("run", smoke_path, "--quiet", "--out", out, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (
        f"error: out: {out}: holds 'notes.txt', which tcplab did not write; choose another "
        "output directory or remove it (tcplab only replaces its own earlier output)\n"
    )
    assert proc.stdout == ""  # refused before the run
    assert os.listdir(tmp_path) == ["mine"]
    assert os.listdir(out) == ["notes.txt"]


def test_rerun_keeps_plots_and_user_files(smoke_path, tmp_path):
    out = tmp_path / "out"
    assert tcplab("run", smoke_path, "--quiet", "--out", out, cwd=tmp_path).returncode == 0
    (out / "plots").mkdir()
    (out / "plots" / "throughput.png").write_bytes(b"figure")
    before = sorted(os.listdir(out))
    proc = tcplab("run", smoke_path, "--quiet", "--seed", "2", "--out", out, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: out: {out}: holds 'plots', which tcplab did not")
    assert "choose another output directory or remove it" in proc.stderr
    assert sorted(os.listdir(out)) == before
    assert (out / "plots" / "throughput.png").read_bytes() == b"figure"
    assert json.loads((out / "summary.json").read_text())["seed"] == 1
    assert os.listdir(tmp_path) == ["out"]


def test_output_under_a_file_exits_2_before_running(smoke_path, tmp_path):
    (tmp_path / "file").write_text("in the way")
    proc = tcplab("run", smoke_path, "--quiet", "--out", tmp_path / "file" / "x", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == f"error: out: cannot create {tmp_path / 'file' / 'x'}: Not a directory\n"
    assert proc.stdout == ""
    proc = tcplab("run", smoke_path, "--quiet", "--out", tmp_path / "file", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: out: {tmp_path / 'file'}: exists and is not a dir")
    assert os.listdir(tmp_path) == ["file"]


def test_symlinked_output_is_written_through(smoke_path, tmp_path):
    real = tmp_path / "real"
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    for seed in ("1", "2"):  # the second run replaces the first
        proc = tcplab("run", smoke_path, "--quiet", "--seed", seed, "--out", link, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert json.loads((real / "summary.json").read_text())["seed"] == int(seed)
        assert sorted(os.listdir(tmp_path)) == ["link", "real"]
        assert link.is_symlink()
    assert (real / "sender.pcapng").stat().st_size > 0


def test_killed_run_leaves_nothing_in_tmp_and_the_next_run_cleans_up(smoke_path, tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = dict(os.environ, TMPDIR=str(temp))
    out = tmp_path / "out"
    victim = subprocess.Popen(
        [sys.executable, "-m", "tcplab", "run", smoke_path, "--quiet", "--out", out,
         "--set", "run.stop=duration", "--set", "run.duration=1000s",
         "--set", "flows.0.bulk.bytes=100GB"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not [p for p in tmp_path.glob(".out.tmp-*/sender.pcapng") if p.stat().st_size]:
            assert victim.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        victim.kill()
        victim.wait()
    assert [p.name for p in tmp_path.glob(".out.tmp-*")] == [p.name for p in
                                                             tmp_path.glob(f".out.tmp-{victim.pid}-*")]
    assert os.listdir(temp) == []  # the captures were beside the output, not in TMPDIR
    proc = subprocess.run(
        [sys.executable, "-m", "tcplab", "run", smoke_path, "--quiet", "--out", out],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["out", "tmp"]
    assert os.listdir(temp) == []


def test_interrupted_run_removes_its_staging(smoke_path, tmp_path, monkeypatch, capsys):
    import importlib
    import tempfile

    from tcplab import cli

    run_module = importlib.import_module("tcplab.run")

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))

    def interrupt(self, done_s):
        raise KeyboardInterrupt

    monkeypatch.setattr(run_module._LazyProgress, "update", interrupt)
    status = cli.main(["run", str(smoke_path), "--out", str(tmp_path / "out")])
    assert status == 130
    assert sorted(os.listdir(tmp_path)) == ["tmp"]
    assert os.listdir(temp) == []


def test_unreadable_scenario_files_exit_2(tmp_path):
    missing = tcplab("run", tmp_path / "missing.toml", cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr == f"error: {tmp_path / 'missing.toml'}: No such file or directory\n"
    bad = tmp_path / "bad.toml"
    bad.write_text("name = [\n")
    invalid = tcplab("run", bad, "--out", tmp_path / "out", cwd=tmp_path)
    assert invalid.returncode == 2
    assert invalid.stderr.startswith(f"error: {bad}: ")
    assert "Traceback" not in invalid.stderr
    assert os.listdir(tmp_path) == ["bad.toml"]


def test_usage_errors(smoke_path, tmp_path):
    assert tcplab(cwd=tmp_path).returncode == 2
    assert tcplab("run", smoke_path, "--seed", "-1", cwd=tmp_path).returncode == 2
    version = tcplab("--version", cwd=tmp_path)
    assert version.returncode == 0
    assert version.stdout.startswith("tcplab ")


@pytest.mark.parametrize(
    ("paper_passed", "beyond_passed", "status"),
    [(True, True, 0), (True, False, 0), (False, True, 3)],
)
def test_reproduce_exit_status_follows_the_papers_findings(monkeypatch, tmp_path, paper_passed, beyond_passed, status):
    import argparse

    from tcplab.cli import reproduce as reproduce_cli
    from tcplab.reproduce.findings import Check

    class Study:
        @staticmethod
        def reproduce(out, quick=False, progress=lambda _: None, workers=None):
            progress("running")
            return [
                Check("Fig. 1", "a finding", "measured", paper_passed),
                Check("beyond", "a remedy", "measured", beyond_passed, paper=False),
            ]

    from tcplab.reproduce import STUDIES  # the registry the command reads when it runs

    monkeypatch.setitem(STUDIES, "fake", Study)
    args = argparse.Namespace(paper="fake", out=str(tmp_path), quick=True, workers=None)
    assert reproduce_cli._cmd(args) == status
    # A finding that does not hold is a result, told apart from a failed run (1) and bad input (2).
    from tcplab.cli.common import EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_FINDINGS_DIFFER

    assert len({EXIT_FAILURE, EXIT_BAD_INPUT, EXIT_FINDINGS_DIFFER, 0}) == 4


def _reproduce_error(kind):
    """An error a reproduction can stop with, built lazily (the modules import on use)."""
    from tcplab.reproduce.runner import RunsFailed
    from tcplab.scenario import ScenarioError

    return {
        "invalid scenario": ScenarioError("defaults.tcp.rx_truesize: only applies to rcv_window_growth = true"),
        "runs failed": RunsFailed("3 runs of fig5 failed: worker died"),
    }[kind]


@pytest.mark.parametrize(("kind", "said"), [
    ("invalid scenario", "error: defaults.tcp.rx_truesize: only applies"),
    ("runs failed", "error: 3 runs of fig5 failed: worker died"),
])
def test_reproduce_that_cannot_finish_says_why_without_a_traceback(monkeypatch, tmp_path, capsys, kind, said):
    import argparse

    from tcplab.cli import reproduce as reproduce_cli
    from tcplab.cli.common import EXIT_FAILURE

    class Study:
        @staticmethod
        def reproduce(out, quick=False, progress=lambda _: None, workers=None):
            raise _reproduce_error(kind)

    from tcplab.reproduce import STUDIES  # the registry the command reads when it runs

    monkeypatch.setitem(STUDIES, "fake", Study)
    args = argparse.Namespace(paper="fake", out=str(tmp_path / "out"), quick=True, workers=None)
    assert reproduce_cli._cmd(args) == EXIT_FAILURE
    err = capsys.readouterr().err
    assert said in err
    assert "Traceback" not in err and "report.md was not written" in " ".join(err.split())


def test_a_run_that_cannot_finish_says_it_stopped_at_the_time_limit(tmp_path):
    # 99.9 % loss and no run.duration: the transfer cannot complete, so the run stops at the
    # simulated-time limit (10^6 s), exits 0 with its summary, and says why.
    path = tmp_path / "stuck.toml"
    path.write_text(
        'name = "stuck"\n[[hosts]]\nname = "a"\n[[hosts]]\nname = "b"\n'
        '[[emulators]]\nname = "e"\nloss = 0.999\n'
        '[[links]]\nbetween = ["a", "e"]\nrate = "1Gbps"\n'
        '[[links]]\nbetween = ["e", "b"]\nrate = "1Gbps"\n'
        '[[flows]]\nname = "f"\nsrc = "a"\ndst = "b"\nbulk = { bytes = "10MB" }\n'
    )
    proc = tcplab("run", path, "--quiet", "--out", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "simulated-time limit (1000000 s)" in proc.stderr and "f did not finish" in proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stop_reason"] == "time-limit" and summary["sim_time_s"] == 1e6



def test_traces_that_reach_their_budget_stop_recording_and_the_run_says_so(tmp_path):
    # A traced window over a long fast transfer with a 1 MiB trace budget: the run goes to its
    # end (exit 0), says when the traces stopped recording, and keeps what they recorded.
    path = tmp_path / "traced.toml"
    path.write_text(
        'name = "traced"\n[run]\nduration = "20s"\ntrace_memory = "1MiB"\n'
        '[[hosts]]\nname = "a"\n[[hosts]]\nname = "b"\n'
        '[[links]]\nbetween = ["a", "b"]\nrate = "100Mbps"\ndelay = "1ms"\n'
        '[[flows]]\nname = "f"\nsrc = "a"\ndst = "b"\n[trace]\ncwnd = true\n'
    )
    proc = tcplab("run", path, "--quiet", "--out", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "the traces stopped recording at" in proc.stderr, proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stop_reason"] == "duration" and summary["sim_time_s"] == 20
    assert 0 < summary["traces_stopped_s"] < 20
    assert (tmp_path / "out" / "cwnd.parquet").exists()


def test_run_finds_a_shipped_scenario_by_name(tmp_path):
    for name in ("smoke", "smoke/smoke", "smoke/smoke.toml"):
        proc = tcplab("run", name, "--quiet", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "scenario smoke " in proc.stdout


def test_run_of_an_unknown_name_says_where_the_shipped_ones_are(tmp_path):
    proc = tcplab("run", "comett", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "no scenario file 'comett'" in proc.stderr and "did you mean comet?" in proc.stderr
    assert "shipped ones are in" in proc.stderr
    proc = tcplab("run", "sweep", cwd=tmp_path)  # a sweep file is not a scenario
    assert proc.returncode == 2 and "no shipped scenario of that name" in proc.stderr


def test_a_file_in_the_working_directory_wins_over_a_shipped_name(smoke_path, tmp_path):
    (tmp_path / "fla").write_text(smoke_path.read_text())
    proc = tcplab("run", "fla", "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "scenario smoke " in proc.stdout


HEAVY = ("polars", "numpy", "matplotlib", "pandas")


def test_version_and_a_worker_start_without_polars_numpy_or_matplotlib(smoke_path, tmp_path):
    """`tcplab --version`, and a sweep worker running a summary-only run, load none of them."""
    code = f"""
import sys
from tcplab.cli import main
try:
    main(["--version"])
except SystemExit:
    pass
loaded = [m for m in {HEAVY!r} if m in sys.modules]
import tcplab
from tcplab.sweeps.records import execute
record = execute({{"key": "k", "scenario_hash": "h", "seed": 1, "traces": False, "hook": None,
                  "spec": tcplab.load_scenario({str(smoke_path)!r})}})
assert record["error"] is None and record["summary"], record
print(loaded, [m for m in {HEAVY!r} if m in sys.modules])
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("[] []"), proc.stdout


def test_public_names_resolve_lazily_and_tcplab_run_stays_the_function():
    import importlib

    import tcplab
    import tcplab.sweeps

    importlib.import_module("tcplab.run")  # importing the module must not rebind tcplab.run
    assert callable(tcplab.run) and tcplab.run.__module__ == "tcplab.run"
    for name in tcplab.__all__:
        assert getattr(tcplab, name) is not None, name
    for name in tcplab.sweeps.__all__:
        assert getattr(tcplab.sweeps, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        tcplab.nope
