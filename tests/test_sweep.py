"""Sweeps: the sweep file, metrics, the local pool and Dask (LocalCluster and a scheduler with
two workers as separate processes) giving identical tables, resuming after a kill, failures
recorded, aggregation and the sweep plot."""

import dataclasses
import json
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter

import polars as pl
import pytest
import tcplab
from polars.testing import assert_frame_equal
from tcplab.analysis.stats import t_quantile
from tcplab.sweeps.metrics import parse_metric
from tcplab.sweeps.plan import plan
from tcplab.sweeps.stats import sweep_summary
from tcplab.sweeps import (
    CRASH_MESSAGE,
    SweepError,
    WorkerMismatch,
    build_sweep,
    execute,
    load_sweep,
    run_sweep,
)


def write_sweep(directory, smoke_path, body, name="sweep.toml"):
    """Write a sweep file over the smoke scenario and return its path."""
    path = directory / name
    path.write_text(f"base = {json.dumps(str(smoke_path))}\n{body}", encoding="utf-8")
    return path


def tcplab_cli(*args, cwd, **kwargs):
    """`python -m tcplab ARGS` in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "tcplab", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        **kwargs,
    )


def comparable(table):
    """A sweep table without its wall times, in key order."""
    return table.drop("wall_time_s").sort("key", "point")


# A small grid with random loss (so seeds differ) and one invalid point.
GRID = """
seeds = 2
metrics = ["sum(flows[kind=tcp].goodput_bps)", "jain(flows[kind=tcp].goodput_bps)",
           "queues[sw1->emu].dropped", "packets.random_drops", "sim_time_s"]
[overrides]
"emulators.0.loss" = 0.001
[axes]
"links.1.queue_a" = ["10pkts", "40pkts", "0pkts"]
[[zip]]
"links.1.rate" = ["100Mbps", "50Mbps"]
"defaults.tcp.mss" = [1460, 536]
"""


# --------------------------------------------------------------------------------------------
# Pool, LocalCluster and a separate scheduler + two workers: identical tables


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_local_pool_local_cluster_and_separate_workers_agree(smoke_path, tmp_path):
    from distributed import Client, LocalCluster

    sweep = load_sweep(write_sweep(tmp_path, smoke_path, GRID))
    assert sweep.runs == 12

    pool = run_sweep(sweep, workers=2, out=tmp_path / "pool").table
    assert pool.height == 12
    assert pool.filter(pl.col("error").is_not_null()).height == 4  # the 0pkts point × 2 × 2
    goodput = pool["sum(flows[kind=tcp].goodput_bps)"].drop_nulls()
    assert goodput.n_unique() > 4, "seeds and points must give different results"
    assert_frame_equal(pl.read_parquet(tmp_path / "pool" / "results.parquet"), pool)

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
    ) as cluster:
        local_cluster = run_sweep(sweep, cluster=cluster, out=tmp_path / "local-cluster").table
    assert_frame_equal(comparable(local_cluster), comparable(pool))

    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = [sys.executable, "-m", "dask"]
    processes = []
    try:
        processes.append(
            subprocess.Popen(
                [*dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        for _ in range(2):
            processes.append(
                subprocess.Popen(
                    [
                        *dask,
                        "worker",
                        address,
                        "--host",
                        "127.0.0.1",
                        "--nthreads",
                        "1",
                        "--no-nanny",
                        "--no-dashboard",
                        "--local-directory",
                        str(tmp_path / "dask"),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        deadline = time.monotonic() + 60
        while True:
            try:
                client = Client(address, timeout=5, set_as_default=False)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        with client:
            client.wait_for_workers(2, timeout=60)
            outcome = run_sweep(sweep, cluster=address, out=tmp_path / "cluster")
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    assert_frame_equal(comparable(outcome.table), comparable(pool))
    assert outcome.executed == 8

    # The runs really ran in the two worker processes (no nanny: the worker is the process).
    pids = {
        pl.read_parquet(path)["pid"][0]
        for path in (tmp_path / "cluster" / "runs").glob("*.parquet")
    }
    assert pids <= {processes[1].pid, processes[2].pid}
    pool_pids = {
        pl.read_parquet(path)["pid"][0] for path in (tmp_path / "pool" / "runs").glob("*.parquet")
    }
    assert os.getpid() not in pool_pids


# --------------------------------------------------------------------------------------------
# Resume: kill a sweep midway, rerun; nothing finished runs twice


SLOW = """
seeds = 3
metrics = ["sum(flows[kind=tcp].goodput_bps)", "sum(flows.retransmits)", "events"]
[overrides]
"emulators.0.loss" = 0.0001
"flows.0.bulk.bytes" = "100MB"
"links.1.rate" = "1Gbps"
[axes]
"links.1.queue_a" = { values = [50, 100, 200], unit = "pkts" }
"""


def run_files(store):
    return sorted((store / "runs").glob("*.parquet"))


def test_resume_after_kill_skips_finished_runs(smoke_path, tmp_path):
    sweep_path = write_sweep(tmp_path, smoke_path, SLOW)
    store = tmp_path / "store"
    command = [
        sys.executable,
        "-m",
        "tcplab",
        "sweep",
        str(sweep_path),
        "--out",
        str(store),
        "--workers",
        "1",
        "--quiet",
    ]
    victim = subprocess.Popen(
        command,
        cwd=tmp_path,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while len(run_files(store)) < 3 if store.exists() else True:
            assert victim.poll() is None, "the sweep ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        os.killpg(victim.pid, signal.SIGKILL)  # the sweep and its worker processes
        victim.wait()

    finished = {path.stem: pl.read_parquet(path)["exec_id"][0] for path in run_files(store)}
    assert 3 <= len(finished) < 9, "the kill must land midway"
    assert not (store / "results.parquet").exists()

    proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"{9 - len(finished)} executed, {len(finished)} reused, 0 failed" in proc.stdout

    # The runs finished before the kill were not executed again ...
    for key, exec_id in finished.items():
        assert pl.read_parquet(store / "runs" / f"{key}.parquet")["exec_id"][0] == exec_id
    # ... and no run was executed twice: one log line per execution, one run file per run.
    log = [json.loads(line) for line in (store / "runs.log").read_text().splitlines()]
    executions = Counter(entry["key"] for entry in log)
    assert max(executions.values()) == 1
    assert len(run_files(store)) == 9
    assert not list((store / "runs").glob(".*"))  # temporary files of the killed sweep cleaned

    resumed = pl.read_parquet(store / "results.parquet")
    uninterrupted = tcplab.sweep(load_sweep(sweep_path), workers=2, out=tmp_path / "straight")
    assert_frame_equal(comparable(resumed), comparable(uninterrupted))
    assert resumed["error"].null_count() == 9


# Orphans: kill -9 of the sweep ends its workers and releases its stdout and stderr.


def marked_processes(marker):
    """Ids of the live (not zombie) processes whose environment holds `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                environ = f.read()
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in environ.split(b"\0") and state != b"Z":
            found.append(int(entry))
    return found


def read_to_eof(stream, timeout):
    """Whether `stream` reaches end of file within `timeout` seconds."""
    import threading

    reader = threading.Thread(target=stream.read, daemon=True)
    reader.start()
    reader.join(timeout)
    return not reader.is_alive()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_sweep_leaves_no_worker_behind(smoke_path, tmp_path):
    import uuid

    marker = f"TCPLAB_ORPHAN_TEST={uuid.uuid4().hex}".encode()
    name, value = marker.decode().split("=")
    sweep_path = write_sweep(tmp_path, smoke_path, SLOW)
    store = tmp_path / "store"
    victim = subprocess.Popen(
        [sys.executable, "-m", "tcplab", "sweep", str(sweep_path), "--out", str(store),
         "--workers", "2", "--quiet"],
        cwd=tmp_path,
        env={**os.environ, name: value},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while not (store.exists() and run_files(store)):  # the workers are running
            assert victim.poll() is None, "the sweep ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.01)
        workers = set(marked_processes(marker)) - {victim.pid}
        assert len(workers) >= 2  # two workers (and the resource tracker)
        victim.kill()
        victim.wait()
        assert read_to_eof(victim.stdout, 15), "stdout still open 15 s after the kill"
        assert read_to_eof(victim.stderr, 15), "stderr still open 15 s after the kill"
        deadline = time.monotonic() + 15
        while marked_processes(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert marked_processes(marker) == [], "processes of the killed sweep survive"
    finally:
        victim.kill()
        for pid in marked_processes(marker):  # what the sweep started, if it survived
            os.kill(pid, signal.SIGKILL)
        victim.wait()
        victim.stdout.close()
        victim.stderr.close()


# --------------------------------------------------------------------------------------------
# Failures: an invalid point, a panic in a worker, a worker process that dies


@pytest.mark.parametrize(
    "axis, reason",
    [
        ('"links.1.rtae" = ["1Mbps", "2Mbps"]', "links[1].rtae: unknown field `rtae`"),
        ('"links.9.rate" = ["1Mbps", "2Mbps"]', "links.9: index out of range"),
        ('"links.1.queue_a" = ["0pkts"]', "links[1].queue_a"),
    ],
)
def test_a_sweep_no_point_of_which_can_run_is_refused_before_anything(
    smoke_path, tmp_path, axis, reason
):
    sweep_path = write_sweep(tmp_path, smoke_path, f"[axes]\n{axis}\n")
    proc = tcplab_cli("sweep", sweep_path, "--out", tmp_path / "out", "--quiet", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: no point of the sweep has a valid scenario")
    assert reason in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert not (tmp_path / "out").exists()


def test_failing_point_is_recorded_and_the_others_run(smoke_path, tmp_path):
    sweep_path = write_sweep(
        tmp_path,
        smoke_path,
        """
metrics = ["sum(flows.goodput_bps)"]
[axes]
"links.1.queue_a" = ["10pkts", "0pkts", "40pkts"]
""",
    )
    proc = tcplab_cli(
        "sweep", sweep_path, "--out", tmp_path / "out", "--workers", "2", "--quiet", cwd=tmp_path
    )
    assert proc.returncode == 1, proc.stderr
    assert (
        "failed: point 1 (links.1.queue_a=0pkts) seed 1: ScenarioError: links[1].queue_a"
        in proc.stderr
    )
    assert "flows.parquet, queues.parquet" in proc.stdout.splitlines()[-1]
    table = pl.read_parquet(tmp_path / "out" / "results.parquet")
    assert table["links.1.queue_a"].to_list() == ["10pkts", "0pkts", "40pkts"]
    errors = table["error"].to_list()
    assert errors[0] is None and errors[2] is None
    assert "at least 1" in errors[1]
    goodput = table["sum(flows.goodput_bps)"].to_list()
    assert goodput[0] > 0 and goodput[2] > 0 and goodput[1] is None


class FakePanic(BaseException):
    """Stands in for pyo3's PanicException, which derives from BaseException."""


def panicking_run(spec, seed):
    raise FakePanic("called `Option::unwrap()` on a `None` value")


def crash_or_panic(task):
    """Worker function for the test below: the 40pkts point kills its worker process, the
    160pkts point panics, the others run normally."""
    queue = task["spec"]["links"][1]["queue_a"]
    if queue == "40pkts":
        os._exit(3)
    if queue == "160pkts":
        return execute(task, runner=panicking_run)
    return execute(task)


def test_worker_crash_and_panic_are_recorded(smoke_path):
    sweep = build_sweep(
        smoke_path,
        axes={"links.1.queue_a": ["10pkts", "40pkts", "160pkts", "20pkts"]},
        seeds=2,
        metrics=["events"],
    )
    table = run_sweep(sweep, workers=2, _function=crash_or_panic).table
    errors = dict(zip(zip(table["links.1.queue_a"], table["seed"]), table["error"], strict=True))
    for seed in (1, 2):
        assert errors[("10pkts", seed)] is None
        assert errors[("20pkts", seed)] is None
        assert errors[("40pkts", seed)] == CRASH_MESSAGE
        assert errors[("160pkts", seed)] == "FakePanic: called `Option::unwrap()` on a `None` value"
    assert table.filter(pl.col("error").is_null())["events"].min() > 0


def test_kept_pools_start_the_workers_once_and_change_no_result(smoke_path, tmp_path):
    from tcplab.sweeps import kept_pools

    sweep = build_sweep(smoke_path, axes={"links.1.queue_a": ["10pkts", "20pkts"]}, seeds=2, metrics=["events"])

    def pids(out):
        return {pl.read_parquet(path)["pid"][0] for path in (out / "runs").glob("*.parquet")}

    alone = [run_sweep(sweep, workers=2, out=tmp_path / f"alone{i}").table for i in range(2)]
    assert not multiprocessing.active_children(), "without the block a sweep's workers end with it"
    assert not pids(tmp_path / "alone0") & pids(tmp_path / "alone1"), "without the block each sweep starts its own workers"
    with kept_pools():
        kept = [run_sweep(sweep, workers=2, out=tmp_path / f"kept{i}").table for i in range(2)]
        first = pids(tmp_path / "kept0") | pids(tmp_path / "kept1")
        alive = {c.pid for c in multiprocessing.active_children()}
        assert len(alive) == 2 and first <= alive, "one pool of two workers ran both sweeps and is still there"
    for a, b in zip(alone + alone, kept + kept[::-1], strict=True):
        assert_frame_equal(comparable(a), comparable(b))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(pid) for pid in first):
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in first), "the block's end stops its workers"


def _alive(pid):
    """Whether process `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def test_a_worker_crash_inside_kept_pools_is_isolated_and_the_next_sweep_runs(smoke_path):
    from tcplab.sweeps import kept_pools

    crashing = build_sweep(smoke_path, axes={"links.1.queue_a": ["10pkts", "40pkts"]}, seeds=2, metrics=["events"])
    fine = build_sweep(smoke_path, axes={"links.1.queue_a": ["10pkts", "20pkts"]}, seeds=2, metrics=["events"])
    with kept_pools():
        table = run_sweep(crashing, workers=2, _function=crash_or_panic).table
        after = run_sweep(fine, workers=2).table
    errors = dict(zip(zip(table["links.1.queue_a"], table["seed"]), table["error"], strict=True))
    assert errors[("40pkts", 1)] == CRASH_MESSAGE and errors[("10pkts", 1)] is None
    assert after["error"].null_count() == after.height


def other_build(task):
    """Worker function standing in for a worker with another tcplab build."""
    record = execute(task)
    record["scenario_hash"] = "0123456789abcdef"
    return record


def test_a_worker_with_another_build_stops_the_sweep(smoke_path, tmp_path):
    sweep = build_sweep(smoke_path, metrics=["events"])
    with pytest.raises(WorkerMismatch, match="computed scenario hash 0123456789abcdef"):
        run_sweep(sweep, workers=1, out=tmp_path / "out", _function=other_build)
    assert not run_files(tmp_path / "out")
    assert not (tmp_path / "out" / "results.parquet").exists()


# --------------------------------------------------------------------------------------------
# Sweep files: validation, ranges, seeds, zipped axes; traces; the Python call


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('colour = "red"\n', "colour: unknown key"),
        ('[axes]\n"links.1.queue_a" = "10pkts"\n', 'axes."links.1.queue_a": expected a list'),
        ('[axes]\n"links.1.queue_a" = []\n', 'axes."links.1.queue_a": no values'),
        ('[axes]\n"x" = { start = 1, stop = 5 }\n', "axes.x: give exactly one of step, num"),
        ('[axes]\n"x" = { start = 1, stop = 5, step = -1 }\n', "axes.x.step: -1 does not lead"),
        ('[axes]\n"x" = { start = 1, stop = 5, step = 1, unit = 3 }\n', "axes.x.unit"),
        ('[axes]\n"x" = { start = 1, stop = 5, step = 1, by = 3 }\n', "axes.x.by: unknown key"),
        ('[axes]\n"run.seed" = [1, 2]\n', "seeds come from the sweep"),
        ("seeds = 0\n", "seeds: the count must be at least 1"),
        ("seeds = [1, 1]\n", "seeds: a seed appears twice"),
        ('seeds = "many"\n', "seeds: expected a count"),
        ('metrics = ["flows.goodput_bps"]\n', "metrics[0]: flows.goodput_bps: flows has one value"),
        ('metrics = ["p95(flows.goodput_bps)"]\n', "unknown aggregate 'p95'"),
        ('[[zip]]\n"a.x" = [1, 2]\n"a.y" = [1]\n', "zip[0]: zipped axes need equal lengths"),
        (
            '[overrides]\n"links.1.rate" = "1Gbps"\n[axes]\n"links.1.rate" = ["1Gbps"]\n',
            'axes."links.1.rate": also set in overrides',
        ),
        ('traces = "yes"\n', "traces: expected true or false"),
        (  # beyond a 64-bit integer (tomllib reads it): was an OverflowError
            f'[axes]\n"x" = {{ start = 1, stop = {2**1100}, factor = 2 }}\n',
            "axes.x.stop: expected a number",
        ),
    ],
)
def test_bad_sweep_files_name_the_key(smoke_path, tmp_path, body, message):
    with pytest.raises(SweepError) as error:
        load_sweep(write_sweep(tmp_path, smoke_path, body))
    assert message in str(error.value)


def test_bad_sweep_file_exits_2_without_output(smoke_path, tmp_path):
    sweep_path = write_sweep(tmp_path, smoke_path, 'metrics = ["sum(flows.goodput)"]\n')
    proc = tcplab_cli("sweep", sweep_path, "--out", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 2
    assert "error:" in proc.stderr and "flows have no field 'goodput'" in proc.stderr
    assert not (tmp_path / "out").exists()

    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "precious.txt").write_text("keep")
    proc = tcplab_cli(
        "sweep", write_sweep(tmp_path, smoke_path, ""), "--out", tmp_path / "full", cwd=tmp_path
    )
    assert proc.returncode == 2
    assert "not a tcplab sweep store" in proc.stderr
    assert os.listdir(tmp_path / "full") == ["precious.txt"]


# Sweep size: points × seeds is checked arithmetically before anything is materialised.

TWO_BIG_AXES = """
[axes]
"a.x" = { start = 1, stop = 100000, step = 1 }
"a.y" = { start = 1, stop = 100000, num = 100000 }
"""


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("seeds = 100000000\n", "seeds: 100,000,000 seeds; a sweep may have at most 1,000,000 runs"),
        (TWO_BIG_AXES, "axes: 10,000,000,000 points (100,000 × 100,000); a sweep may have at most"),
        (
            'seeds = 20\n[axes]\n"a.x" = { start = 1, stop = 100000, step = 1 }\n',
            "seeds: 20 seeds × 100,000 points = 2,000,000 runs; a sweep may have at most 1,000,000",
        ),
    ],
)
def test_sweep_size_is_limited_before_planning(smoke_path, tmp_path, body, message):
    started = time.monotonic()
    with pytest.raises(SweepError) as error:
        load_sweep(write_sweep(tmp_path, smoke_path, body))
    assert message in str(error.value)
    assert time.monotonic() - started < 10


def test_sweep_size_limit_python_api_and_cli(smoke_path, tmp_path):
    with pytest.raises(SweepError, match="seeds: 100,000,000 seeds"):
        build_sweep(smoke_path, seeds=100_000_000)
    with pytest.raises(SweepError, match="seeds: 1,000,001 seeds"):
        build_sweep(smoke_path, seeds=list(range(1_000_001)))
    at_limit = build_sweep(smoke_path, axes={"a.x": {"start": 1, "stop": 10, "num": 10}},
                           seeds=100_000)
    assert at_limit.runs == 1_000_000
    # A Sweep assembled by hand is checked by plan() before it plans a single point.
    big = at_limit.axes[0].__class__(("a.x",), ((1,),) * 100_000, ((1,),) * 100_000)
    huge = dataclasses.replace(at_limit, axes=(big, dataclasses.replace(big, paths=("a.y",))))
    with pytest.raises(SweepError, match="axes: 10,000,000,000 points"):
        plan(huge, "test")

    sweep_path = write_sweep(tmp_path, smoke_path, "seeds = 100000000\n")
    proc = tcplab_cli("sweep", sweep_path, "--out", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
    assert "seeds: 100,000,000 seeds" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_ranges_seeds_and_zip(smoke_path, tmp_path):
    sweep = load_sweep(
        write_sweep(
            tmp_path,
            smoke_path,
            """
seeds = 3
[axes]
"a.step" = { start = 10, stop = 40, step = 10, unit = "pkts" }
"a.factor" = { start = 2, stop = 256, factor = 2 }
"a.num" = { start = 0.5, stop = 1.5, num = 3, unit = "ms" }
"a.float" = { start = 0.1, stop = 0.3, step = 0.1 }
[[zip]]
"b.x" = ["1Gbps", "10Gbps"]
"b.y" = { values = [9000, 1500] }
""",
        )
    )
    assert sweep.seeds == (1, 2, 3)
    axes = {axis.paths: axis for axis in sweep.axes}
    assert [v for (v,) in axes[("a.step",)].values] == ["10pkts", "20pkts", "30pkts", "40pkts"]
    assert [v for (v,) in axes[("a.step",)].labels] == [10, 20, 30, 40]
    assert [v for (v,) in axes[("a.factor",)].values] == [2, 4, 8, 16, 32, 64, 128, 256]
    assert [v for (v,) in axes[("a.num",)].values] == ["0.5ms", "1ms", "1.5ms"]
    assert [v for (v,) in axes[("a.float",)].values] == [0.1, 0.2, 0.3]
    assert axes[("b.x", "b.y")].values == (("1Gbps", 9000), ("10Gbps", 1500))
    assert sweep.runs == 4 * 8 * 3 * 3 * 2 * 3
    overrides, labels = sweep.points()[1]
    assert overrides == {
        "a.step": "10pkts",
        "a.factor": 2,
        "a.num": "0.5ms",
        "a.float": 0.1,
        "b.x": "10Gbps",
        "b.y": 1500,
    }
    assert labels["a.step"] == 10

    listed = load_sweep(write_sweep(tmp_path, smoke_path, "seeds = [7, 3]\n", "listed.toml"))
    assert listed.seeds == (7, 3)


def test_python_call_traces_and_duplicate_scenarios(smoke_path, tmp_path):
    out = tmp_path / "out"
    table = tcplab.sweep(
        smoke_path,
        # "50pkts" and "50 pkts" resolve to the same scenario: one run, two rows.
        axes={
            "links.1.queue_a": ["50pkts", "50 pkts"],
            ("links.1.rate", "flows.0.tcp.mss"): [("100Mbps", 1460)],
        },
        seeds=[4],
        metrics={"goodput": "sum(flows.goodput_bps)", "first": "flows[bulk.0].bytes_delivered"},
        workers=1,
        out=out,
        traces=True,
    )
    assert table.columns == [
        "point",
        "links.1.queue_a",
        "links.1.rate",
        "flows.0.tcp.mss",
        "seed",
        "key",
        "scenario_hash",
        "wall_time_s",
        "error",
        "goodput",
        "first",
    ]
    assert table["seed"].to_list() == [4, 4]
    assert table["key"].n_unique() == 1
    assert table["first"][0] == 2_000_000
    key = table["key"][0]
    assert len(run_files(out)) == 1
    saved_files = set(os.listdir(out / "traces" / key))
    assert {"cwnd.parquet", "events.parquet", "summary.json", "sender.pcapng"} <= saved_files
    assert (out / "traces" / key / "sender.pcapng").stat().st_size > 1000
    saved = json.loads((out / "traces" / key / "metadata.json").read_text())
    assert saved["seed"] == 4 and saved["scenario_hash"] == table["scenario_hash"][0]
    assert json.loads((out / "sweep.json").read_text())["seeds"] == [4]


# --------------------------------------------------------------------------------------------
# Per-run metric hooks: columns computed from each run's Result (its traces) in the worker


def loss_events(result, kinds):
    """A hook: per flow, the number of trace events of `kinds`, and the largest cwnd (bytes);
    neither is in the run summary."""
    events = result.trace("events").filter(pl.col("kind_name").is_in(kinds))
    cwnd = result.trace("cwnd").group_by("flow").agg(pl.col("cwnd_bytes").max()).sort("flow")
    return {
        "loss_events": events.height,
        "max_cwnd": cwnd["cwnd_bytes"].to_list(),
        "first_loss_s": float(events["time_s"].min()) if events.height else float("nan"),
    }


def test_a_hook_adds_columns_from_each_runs_traces_and_resumes(smoke_path, tmp_path):
    out = tmp_path / "out"
    kinds = ["fast_retransmit", "timeout"]
    args = dict(axes={"links.1.queue_a": ["10pkts", "40pkts"]}, seeds=[1, 2], metrics=["events"],
                overrides={"emulators.0.loss": 0.001})
    table = tcplab.sweep(smoke_path, **args, workers=2, out=out, hook=loss_events, hook_args={"kinds": kinds})
    assert table.columns[-4:] == ["events", "loss_events", "max_cwnd", "first_loss_s"]
    assert table["max_cwnd"].dtype == pl.List(pl.Int64)
    # The same values as the hook on a run of one's own.
    for row in table.iter_rows(named=True):
        result = tcplab.run(smoke_path, seed=row["seed"], overrides={"emulators.0.loss": 0.001,
                                                                      "links.1.queue_a": row["links.1.queue_a"]})
        assert {k: row[k] for k in ("loss_events", "max_cwnd")} == {
            k: v for k, v in loss_events(result, kinds).items() if k != "first_loss_s"}
    assert table["loss_events"].n_unique() > 1, "points and seeds must differ"
    assert json.loads((out / "sweep.json").read_text())["hook"] == {
        "name": "test_sweep:loss_events", "args": {"kinds": kinds}}

    # Resumed from the store: nothing runs again, the columns come back from the run files.
    again = run_sweep(build_sweep(smoke_path, **args, hook="test_sweep.loss_events", hook_args={"kinds": kinds}),
                      workers=1, out=out)
    assert (again.executed, again.reused) == (0, 4)
    assert_frame_equal(comparable(again.table), comparable(table))
    # Other arguments, or no hook before: the runs are run again to compute the columns.
    other = run_sweep(build_sweep(smoke_path, **args, hook=loss_events, hook_args={"kinds": ["timeout"]}),
                      workers=1, out=out)
    assert (other.executed, other.reused) == (4, 0)
    bare = tmp_path / "bare"
    run_sweep(build_sweep(smoke_path, **args), workers=1, out=bare)
    hooked = run_sweep(build_sweep(smoke_path, **args, hook=loss_events, hook_args={"kinds": kinds}),
                       workers=1, out=bare)
    assert (hooked.executed, hooked.reused) == (4, 0)
    assert_frame_equal(comparable(hooked.table), comparable(table))


def failing_hook(result):
    raise ValueError("no such trace")


def test_hooks_that_cannot_be_imported_are_refused_and_a_failing_one_is_recorded(smoke_path):
    with pytest.raises(SweepError, match="cannot be imported by name"):
        build_sweep(smoke_path, hook=lambda result: {})
    with pytest.raises(SweepError, match="hook: test_sweep:no_such_function"):
        build_sweep(smoke_path, hook="test_sweep:no_such_function")
    with pytest.raises(SweepError, match="hook_args: not JSON-plain"):
        build_sweep(smoke_path, hook=loss_events, hook_args={"kinds": {1, 2}})
    table = tcplab.sweep(smoke_path, metrics=["events"], workers=1, hook=failing_hook)
    assert table["error"][0] == "ValueError: no such trace"
    assert table["events"][0] is None


# --------------------------------------------------------------------------------------------
# Metrics, aggregation, plot


SUMMARY = {
    "sim_time_s": 2.0,
    "events": 10,
    "packets": {"delivered": 5},
    "flows": [
        {"name": "a", "kind": "tcp", "goodput_bps": 3.0, "srtt_s": 0.1, "finish_s": None},
        {"name": "b", "kind": "tcp", "goodput_bps": 1.0, "srtt_s": 0.3, "finish_s": 1.5},
        {"name": "u", "kind": "udp", "goodput_bps": 4.0, "srtt_s": None, "finish_s": None},
    ],
    "queues": [{"name": "sw->x", "dropped": 7}],
}


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("sim_time_s", 2.0),
        ("packets.delivered", 5),
        ("flows[1].goodput_bps", 1.0),
        ("flows[b].srtt_s", 0.3),
        ("flows[name=u].goodput_bps", 4.0),
        ("flows[9].goodput_bps", None),
        ("queues[sw->x].dropped", 7),
        ("sum(flows.goodput_bps)", 8.0),
        ("sum(flows[kind=tcp].goodput_bps)", 4.0),
        ("mean(flows.srtt_s)", 0.2),
        ("min(flows.goodput_bps)", 1.0),
        ("max(flows.finish_s)", 1.5),
        ("count(flows.finish_s)", 1),
        ("jain(flows[kind=tcp].goodput_bps)", 16 / (2 * 10)),
        ("mean(flows[kind=none].goodput_bps)", None),
    ],
)
def test_metrics(expr, value):
    result = parse_metric(expr).evaluate(SUMMARY)
    assert result == pytest.approx(value) if value is not None else result is None


def test_sweep_summary_and_plot():
    table = pl.DataFrame(
        {
            "point": [0, 0, 0, 1, 1, 1],
            "buffer": ["10pkts", "10pkts", "10pkts", "50pkts", "50pkts", "50pkts"],
            "seed": [1, 2, 3, 1, 2, 3],
            "key": list("abcdef"),
            "scenario_hash": list("xxxyyy"),
            "wall_time_s": [0.1] * 6,
            "error": [None, None, None, None, None, "boom"],
            "goodput": [1.0, 2.0, 3.0, 10.0, 14.0, None],
        }
    )
    summary = sweep_summary(table)
    assert summary["buffer"].to_list() == ["10pkts", "50pkts"]
    first, second = summary.iter_rows(named=True)
    assert (first["runs"], first["failed"], first["n"], first["mean"]) == (3, 0, 3, 2.0)
    assert first["ci"] == pytest.approx(t_quantile(0.975, 2) * 1.0 / 3**0.5)
    assert first["ci"] == pytest.approx(2.4841, abs=1e-4)
    assert (second["failed"], second["n"], second["mean"]) == (1, 2, 12.0)
    # std of [10, 14] is √8, so ci = t(0.975, 1) · √8 / √2 = 2 · 12.7062
    assert second["high"] - second["low"] == pytest.approx(4 * 12.706205)

    figure = tcplab.sweep_plot(table, x="buffer", y="goodput")
    assert type(figure).__name__ == "Figure"
    (ax,) = figure.axes
    assert [t.get_text() for t in ax.get_xticklabels()] == ["10pkts", "50pkts"]
    assert ax.get_ylabel() == "goodput"


# --------------------------------------------------------------------------------------------
# An unusable output directory, a script without a main guard, the version in the run key


def test_output_directory_that_cannot_be_created_exits_2_before_running(smoke_path, tmp_path):
    (tmp_path / "file").write_text("in the way")
    sweep_path = write_sweep(tmp_path, smoke_path, "")
    out = tmp_path / "file" / "x"
    proc = tcplab_cli("sweep", sweep_path, "--out", out, "--quiet", "--workers", "1", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == f"error: out: cannot create {out}: Not a directory\n"
    assert "finished runs are kept" not in proc.stderr
    assert proc.stdout == ""  # no run started, no table
    assert sorted(os.listdir(tmp_path)) == ["file", "sweep.toml"]
    assert (tmp_path / "file").read_text() == "in the way"


UNGUARDED = """
import tcplab
table = tcplab.sweep({smoke!r}, seeds=1, workers=1, metrics=["events"])
print("rows", table.height, table["error"].to_list())
"""


@pytest.mark.parametrize("guarded", [False, True])
def test_sweep_in_a_script_without_a_main_guard_says_so(smoke_path, tmp_path, guarded):
    body = UNGUARDED.format(smoke=str(smoke_path))
    if guarded:
        body = 'if __name__ == "__main__":\n' + "".join(f"    {line}\n" for line in body.split("\n"))
    script = tmp_path / "script.py"
    script.write_text(body, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    if guarded:
        assert proc.returncode == 0, proc.stderr
        assert "rows 1 [None]" in proc.stdout
        return
    assert proc.returncode == 1
    assert "WorkerCrash" not in proc.stdout + proc.stderr
    assert proc.stdout == ""
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: tcplab.sweep() ran again in a worker process")
    assert 'put the call under `if __name__ == "__main__":`' in last


def test_run_key_changes_with_the_version():
    from tcplab.sweeps import run_key

    key = run_key("0123456789abcdef", 1, "0.1.0")
    assert key != run_key("0123456789abcdef", 1, "0.1.1")
    assert key != run_key("0123456789abcdef", 2, "0.1.0")
    assert key != run_key("fedcba9876543210", 1, "0.1.0")
    assert key == run_key("0123456789abcdef", 1, "0.1.0")


def as_other_version(task):
    """Worker function standing in for a worker of the other tcplab version below."""
    record = execute(task)
    record["version"] = "0.0.0-other"
    return record


def test_a_store_of_another_version_is_not_reused(smoke_path, tmp_path, monkeypatch):
    from tcplab import _core

    sweep = build_sweep(smoke_path, axes={"links.1.queue_a": ["10pkts", "20pkts"]},
                        metrics=["events"])
    out = tmp_path / "out"
    first = run_sweep(sweep, workers=1, out=out)
    assert (first.executed, first.reused) == (2, 0)
    assert run_sweep(sweep, workers=1, out=out).reused == 2  # same version: reused

    monkeypatch.setattr(_core, "version", lambda: "0.0.0-other")
    other = run_sweep(sweep, workers=1, out=out, _function=as_other_version)
    assert (other.executed, other.reused) == (2, 0)
    assert set(other.table["key"]).isdisjoint(first.table["key"])
    assert len(run_files(out)) == 4
    versions = {pl.read_parquet(p)["version"][0] for p in run_files(out)}
    assert versions == {tcplab.__version__, "0.0.0-other"}


def test_store_housekeeping_removes_only_its_own_temporary_files(smoke_path, tmp_path):
    sweep_path = write_sweep(tmp_path, smoke_path, 'metrics = ["events"]\n')
    out = tmp_path / "out"
    command = ("sweep", sweep_path, "--out", out, "--workers", "1", "--quiet")
    assert tcplab_cli(*command, cwd=tmp_path).returncode == 0
    key = run_files(out)[0].stem
    # What a killed sweep leaves: tcplab's temporary names (a dot, the file, .tmp-, 12 hex).
    own = [
        out / ".results.parquet.tmp-0123456789ab",
        out / ".sweep.json.tmp-abcdef012345",
        out / "runs" / f".{key}.parquet.tmp-0123456789ab",
    ]
    # The user's files and folders of a similar shape.
    user = [
        out / ".notes.tmp-1",
        out / ".results.parquet.tmp-mine",
        out / "runs" / ".draft.tmp-x",
        out / "runs" / f".{key}.parquet.tmp-0123456789abcdef",
    ]
    folders = [out / ".results.parquet.tmp-0123456789ac", out / "runs" / ".cache.tmp-1"]
    for path in own + user:
        path.write_text("x")
    for folder in folders:
        folder.mkdir()
        (folder / "data").write_text("keep")

    proc = tcplab_cli(*command, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "0 executed, 1 reused" in proc.stdout
    assert [path for path in own if path.exists()] == []
    assert [path for path in user if not path.is_file()] == []
    assert all((folder / "data").read_text() == "keep" for folder in folders)


# --------------------------------------------------------------------------------------------
# Dask is an optional extra


DASK_MISSING = (
    "error: running a sweep on a Dask cluster needs Dask, an optional extra of tcplab: "
    "pip install 'tcplab[dask]'\n"
)

WITHOUT_DASK = """
import sys
sys.modules["dask"] = None          # what `import dask` finds when Dask is not installed
sys.modules["distributed"] = None
from tcplab.cli import main
status = main(sys.argv[1:])
assert "dask" not in sys.modules or sys.modules["dask"] is None
raise SystemExit(status)
"""


def test_a_cluster_sweep_without_dask_is_one_line_naming_the_extra(smoke_path, tmp_path):
    sweep_path = write_sweep(tmp_path, smoke_path, "seeds = 1\n")
    out = tmp_path / "out"
    without = [sys.executable, "-c", WITHOUT_DASK, "sweep", str(sweep_path), "--out", str(out)]
    proc = subprocess.run(
        [*without, "--cluster", "tcp://127.0.0.1:1", "--quiet"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr == DASK_MISSING
    assert proc.stdout == ""
    assert not out.exists()
    # The local pool needs no Dask.
    local = subprocess.run(
        [*without, "--workers", "1", "--quiet"], cwd=tmp_path, capture_output=True, text=True,
        timeout=120,
    )
    assert local.returncode == 0, local.stderr
    assert (out / "results.parquet").is_file()


def test_the_python_api_without_dask_raises_an_import_error_naming_the_extra(
    smoke_path, tmp_path, monkeypatch
):
    from tcplab.sweeps import DaskNotInstalled

    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(DaskNotInstalled, match=r"pip install 'tcplab\[dask\]'") as caught:
        tcplab.sweep(smoke_path, cluster="tcp://127.0.0.1:1", out=tmp_path / "out")
    assert isinstance(caught.value, ImportError)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert not (tmp_path / "out").exists()


def test_importing_tcplab_does_not_import_dask():
    code = "import sys, tcplab, tcplab.cli; print(sorted({'dask', 'distributed'} & set(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "[]\n"


def test_metric_headings_are_short_with_units():
    from tcplab.cli.sweep import _number
    from tcplab.sweeps.labels import metric_heading

    assert metric_heading("sum(flows[kind=tcp].goodput_bps)") == ("sum goodput", "Mb/s", 1e-6)
    assert metric_heading("jain(flows.goodput_bps)") == ("jain goodput", "", 1.0)
    assert metric_heading("max(flows.finish_s)") == ("max finish", "s", 1.0)
    assert metric_heading("queues[sw1->emu].max_packets") == ("max pkts", "", 1.0)
    assert metric_heading("sum(flows.retransmits)") == ("sum retx", "", 1.0)
    assert [_number(x, 2) for x in (240.3, 0.0012, 3.4e7, 1e-5)] == ["240", "0.0012", "3.4e+07", "1e-05"]


def test_the_sweep_table_fits_the_columns_given_when_piped(smoke_path, tmp_path):
    sweep_path = write_sweep(tmp_path, smoke_path, GRID)
    env = {**os.environ, "COLUMNS": "100"}
    proc = tcplab_cli("sweep", sweep_path, "--quiet", cwd=tmp_path, env=env)
    assert proc.returncode == 1, proc.stderr  # GRID has an invalid point
    lines = proc.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 100, proc.stdout
    assert "Mb/s" in proc.stdout and "sum goodput = sum(flows[kind=tcp].goodput_bps)" in proc.stdout
    env["COLUMNS"] = "180"
    wide = tcplab_cli("sweep", sweep_path, "--quiet", cwd=tmp_path, env=env)
    assert max(len(line.rstrip()) for line in wide.stdout.splitlines()) > 100


# --------------------------------------------------------------------------------------------
# Typed columns: metrics that no run has a value for, per-flow and per-queue tables


def test_a_metric_no_run_has_a_value_for_keeps_its_type(smoke_path):
    # 50 ms: no flow finishes, so every finish_s is null; the column is still Float64.
    table = tcplab.sweep(
        smoke_path,
        {"links.1.queue_a": ["10pkts", "40pkts"]},
        metrics=["max(flows.finish_s)", "flows[bulk.0].finish_s", "count(flows.finish_s)",
                 "sum(flows.retransmits)"],
        overrides={"run.duration": "0.05s"},
        workers=1,
    )
    assert table["error"].to_list() == [None, None]
    assert table["max(flows.finish_s)"].to_list() == [None, None]
    assert table.schema["max(flows.finish_s)"] == pl.Float64
    assert table.schema["flows[bulk.0].finish_s"] == pl.Float64
    assert table.schema["count(flows.finish_s)"] == pl.Int64
    assert table.schema["sum(flows.retransmits)"] == pl.Int64


def test_the_store_has_per_flow_and_per_queue_tables_with_typed_columns(smoke_path, tmp_path):
    sweep_path = write_sweep(
        tmp_path,
        smoke_path,
        """
seeds = 2
metrics = ["sum(flows.goodput_bps)"]
[axes]
"links.1.queue_a" = ["10pkts", "0pkts", "40pkts"]
""",
    )
    outcome = run_sweep(load_sweep(sweep_path), workers=2, out=tmp_path / "out")
    flows = pl.read_parquet(tmp_path / "out" / "flows.parquet")
    assert_frame_equal(flows, outcome.flows)
    # One row per flow of each successful run (the invalid point 0pkts has none), in table order.
    assert flows.columns[:5] == ["point", "links.1.queue_a", "seed", "key", "id"]
    assert flows.height == 4 * 3
    assert flows["links.1.queue_a"].unique(maintain_order=True).to_list() == ["10pkts", "40pkts"]
    assert flows["name"].to_list()[:3] == ["bulk.0", "bulk.1", "cbr"]
    for column in ("goodput_bps", "finish_s", "srtt_s", "data_start_s"):
        assert flows.schema[column] == pl.Float64, column
    assert flows.schema["retransmits"] == pl.Int64 and flows.schema["name"] == pl.String
    # The same values as each run's summary.
    table = outcome.table.filter(pl.col("error").is_null())
    for row in table.iter_rows(named=True):
        summary = json.loads(pl.read_parquet(tmp_path / "out" / "runs" / f"{row['key']}.parquet")["summary"][0])
        mine = flows.filter((pl.col("point") == row["point"]) & (pl.col("seed") == row["seed"]))
        assert mine["goodput_bps"].to_list() == [f["goodput_bps"] for f in summary["flows"]]
        assert sum(mine["goodput_bps"]) == pytest.approx(row["sum(flows.goodput_bps)"])
    queues = pl.read_parquet(tmp_path / "out" / "queues.parquet")
    assert_frame_equal(queues, outcome.queues)
    assert queues.columns[:5] == ["point", "links.1.queue_a", "seed", "key", "id"]
    assert queues.schema["dropped"] == pl.Int64
    assert queues.filter(pl.col("name") == "sw1->emu")["max_packets"].max() <= 40
    # A resumed sweep writes the same tables.
    again = run_sweep(load_sweep(sweep_path), workers=2, out=tmp_path / "out")
    assert again.executed == 0
    assert_frame_equal(pl.read_parquet(tmp_path / "out" / "flows.parquet"), flows)
