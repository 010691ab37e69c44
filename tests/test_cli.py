"""The command line, run as `python -m tcplab` in a subprocess."""

import json
import os
import subprocess
import sys
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
    for heading in ["flow", "src→dst", "goodput", "Mbps", "delivered", "retx", "timeouts"]:
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


def test_unwritable_output_exits_1_and_keeps_what_was_there(smoke_path, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    proc = tcplab("run", smoke_path, "--quiet", "--out", out, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == f"error: {out}: exists and is not an earlier tcplab output directory\n"
    assert os.listdir(tmp_path) == ["mine"]
    assert os.listdir(out) == ["notes.txt"]


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
    [(True, True, 0), (True, False, 0), (False, True, 1)],
)
def test_reproduce_exit_status_follows_the_papers_findings(monkeypatch, tmp_path, paper_passed, beyond_passed, status):
    import argparse

    from tcplab import reproduce_cli
    from tcplab.reproduce.p0 import Check

    class Study:
        @staticmethod
        def reproduce(out, quick=False, progress=lambda _: None):
            progress("running")
            return [
                Check("Fig. 1", "a finding", "measured", paper_passed),
                Check("beyond", "a remedy", "measured", beyond_passed, paper=False),
            ]

    monkeypatch.setitem(reproduce_cli.STUDIES, "fake", Study)
    args = argparse.Namespace(paper="fake", out=str(tmp_path), quick=True)
    assert reproduce_cli._cmd(args) == status
