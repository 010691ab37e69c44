"""Running the smoke scenario through the core: summary contents, traces, determinism."""

import json

import polars as pl
import pytest

import tcplab
from tcplab import ScenarioError, load_scenario

TOP_KEYS = {
    "version",
    "seed",
    "scenario_hash",
    "scenario_name",
    "sim_time_s",
    "events",
    "flows",
    "queues",
    "trace_codes",
    "wall_time_s",
}
FLOW_KEYS = {
    "id",
    "name",
    "kind",
    "src",
    "dst",
    "cc",
    "start_s",
    "finish_s",
    "bytes_delivered",
    "goodput_bps",
    "segments_sent",
    "retransmits",
    "timeouts",
    "fast_retransmits",
    "dupacks_received",
    "bytes_sent",
    "srtt_s",
    "cwnd_bytes",
}
QUEUE_KEYS = {"id", "name", "enqueued", "dropped", "max_packets", "max_bytes", "departed"}
TRACE_SCHEMAS = {
    "throughput": {"time_s": pl.Float64, "flow": pl.UInt32, "bytes": pl.UInt64, "bps": pl.Float64},
    "cwnd": {
        "time_s": pl.Float64,
        "flow": pl.UInt32,
        "cwnd_bytes": pl.UInt64,
        "ssthresh_bytes": pl.UInt64,
        "srtt_s": pl.Float64,
        "inflight_bytes": pl.UInt64,
    },
    "queue": {"time_s": pl.Float64, "queue": pl.UInt32, "packets": pl.UInt64, "bytes": pl.UInt64},
    "events": {"time_s": pl.Float64, "flow": pl.UInt32, "kind": pl.UInt32, "seq": pl.UInt64},
    "milestones": {
        "time_s": pl.Float64,
        "app": pl.UInt32,
        "flow": pl.UInt32,
        "kind": pl.UInt32,
        "bytes": pl.UInt64,
    },
    "link_usage": {"time_s": pl.Float64, "pipe": pl.UInt32, "flow": pl.UInt32, "bytes": pl.UInt64},
}
ALL_TRACES = {
    "trace.throughput_interval": "10ms",
    "trace.cwnd": True,
    "trace.queues": "all",
    "trace.events": True,
    "trace.milestones": True,
    "trace.link_usage": {"links": ["sw1->emu", "sw2->emu"], "interval": "10ms"},
}


@pytest.fixture(scope="module")
def traced(smoke_path):
    """The smoke scenario with every trace switched on, run with seed 1."""
    return tcplab.run(smoke_path, seed=1, overrides=ALL_TRACES)


def without_wall_time(summary):
    """The summary as JSON text, without the one field that legitimately varies."""
    return json.dumps({k: v for k, v in summary.items() if k != "wall_time_s"}, indent=2)


def test_summary_has_every_documented_key(traced):
    summary = traced.summary
    assert TOP_KEYS - summary.keys() == set()
    assert summary["flows"] and summary["queues"]
    for flow in summary["flows"]:
        assert FLOW_KEYS - flow.keys() == set()
    for queue in summary["queues"]:
        assert QUEUE_KEYS - queue.keys() == set()
    assert summary["version"] == tcplab.__version__
    assert summary["seed"] == traced.seed == 1
    assert len(traced.scenario_hash) == 16
    int(traced.scenario_hash, 16)
    assert summary["events"] > 0
    assert summary["wall_time_s"] > 0
    assert "events.kind" in summary["trace_codes"]


def test_flow_and_queue_frames(traced):
    assert traced.flows.height == len(traced.summary["flows"])
    assert FLOW_KEYS - set(traced.flows.columns) == set()
    assert traced.queues.height == len(traced.summary["queues"])
    assert QUEUE_KEYS - set(traced.queues.columns) == set()
    assert (traced.flows["bytes_delivered"] > 0).all()


def test_queue_trace_records_each_change_of_each_queue(traced):
    q = traced.trace("queue")
    per_queue = q.partition_by("queue", as_dict=True)
    assert len(per_queue) >= 2, "the smoke scenario traces several queues"
    for (qid,), rows in per_queue.items():
        packets, nbytes = rows["packets"].to_list(), rows["bytes"].to_list()
        assert rows["time_s"].is_sorted()
        # Only changes are written, per queue, however the queues' records interleave.
        changes = list(zip(packets, nbytes))
        assert all(a != b for a, b in zip(changes, changes[1:])), f"queue {qid} repeats a value"


def test_traces_have_the_documented_columns(traced):
    assert set(traced.traces) == set(TRACE_SCHEMAS)
    for name, schema in TRACE_SCHEMAS.items():
        frame = traced.trace(name)
        assert {c: frame.schema[c] for c in schema} == schema
        assert frame["time_s"].is_sorted()
    flow_names = set(traced.flows["name"])
    assert traced.trace("throughput").height > 0
    assert set(traced.trace("throughput")["flow_name"]) <= flow_names
    assert set(traced.trace("cwnd")["flow_name"]) <= flow_names
    assert set(traced.trace("queue")["queue_name"]) <= set(traced.queues["name"])
    assert set(traced.trace("link_usage")["pipe_name"]) == {"sw1->emu", "sw2->emu"}
    events = traced.trace("events")
    known = set(traced.summary["trace_codes"]["events.kind"].values())
    assert events["kind_name"].null_count() == 0
    assert set(events["kind_name"]) <= known
    assert traced.to_pandas("throughput").shape == traced.trace("throughput").shape
    # Every flow reports its milestones: a TCP sender what it wrote, its sink what it received
    # (at the flow's finish time), a CBR source how many datagrams it sent.
    milestones = traced.trace("milestones")
    assert milestones["kind_name"].null_count() == 0
    for flow in traced.summary["flows"]:
        rows = milestones.filter(pl.col("flow") == flow["id"])
        kinds = dict(zip(rows["kind_name"], zip(rows["bytes"], rows["time_s"])))
        if flow["kind"] == "tcp":
            assert set(kinds) == {"written", "received"}
            assert kinds["received"] == (flow["bytes_delivered"], flow["finish_s"])
            assert kinds["written"][0] == flow["bytes_delivered"]
        else:
            assert kinds == {"sent": (flow["segments_sent"], flow["finish_s"])}


def test_resolved_scenario_is_complete_toml(traced):
    import tomllib

    resolved = tomllib.loads(traced.resolved_toml)
    assert resolved["name"] == traced.summary["scenario_name"]
    assert "tcp" in resolved["defaults"]


def test_same_seed_gives_identical_results(traced, smoke_path):
    again = tcplab.run(smoke_path, seed=1, overrides=ALL_TRACES)
    assert without_wall_time(again.summary) == without_wall_time(traced.summary)
    assert again.resolved_toml == traced.resolved_toml
    assert again.traces.keys() == traced.traces.keys()
    for name, frame in traced.traces.items():
        assert again.trace(name).equals(frame), name


def test_dict_and_file_give_the_same_run(traced, smoke_path):
    from_dict = tcplab.run(load_scenario(smoke_path), seed=1, overrides=ALL_TRACES)
    assert without_wall_time(from_dict.summary) == without_wall_time(traced.summary)


def test_different_seeds_differ_when_the_scenario_is_random(smoke_path):
    lossy = {"emulators.0.loss": 0.02}
    a = tcplab.run(smoke_path, seed=1, overrides=lossy)
    b = tcplab.run(smoke_path, seed=2, overrides=lossy)
    assert a.scenario_hash == b.scenario_hash
    assert (a.seed, b.seed) == (1, 2)
    assert a.summary["flows"] != b.summary["flows"]
    assert a.summary["events"] != b.summary["events"]


def test_seed_defaults_to_the_scenario_then_one(smoke_path):
    assert tcplab.run(smoke_path, overrides={"run.seed": 7}).seed == 7
    assert tcplab.run(smoke_path, seed=3, overrides={"run.seed": 7}).seed == 3
    scenario = load_scenario(smoke_path)
    scenario.get("run", {}).pop("seed", None)
    assert tcplab.run(scenario).seed == 1


def test_progress_bar_does_not_change_the_result(smoke_path, traced):
    shown = tcplab.run(smoke_path, seed=1, overrides=ALL_TRACES, progress=True)
    assert without_wall_time(shown.summary) == without_wall_time(traced.summary)


def test_overrides_change_the_run(smoke_path, traced):
    renamed = tcplab.run(smoke_path, seed=1, overrides=["name=renamed"])
    assert renamed.summary["scenario_name"] == "renamed"
    assert renamed.scenario_hash != traced.scenario_hash


@pytest.mark.parametrize(
    ("overrides", "path"),
    [
        ({"flows.0.bogus": 1}, "flows[0].bogus"),
        ({"flows.0.tcp.mss": 10}, "flows[0].tcp.mss"),
        ({"defaults.tcp.rcv_window_rule": "linux-4.19"}, "defaults.tcp.rcv_window_rule: unknown variant `linux-4.19`"),
        (["run.duration=5parsecs"], "run.duration"),
        ({"run.seed": -1}, "run.seed"),
        ({"defaults.tcp.cubic.hystrat": True}, "defaults.tcp.cubic.hystrat: unknown field `hystrat`"),
        ({"flows.0.tcp.bic.beta": 1024}, "flows[0].tcp.bic.beta: must be in 1..1024"),
        (
            {"defaults.tcp.bic_initial_ssthresh": 0},
            "defaults.tcp.bic_initial_ssthresh: moved to [defaults.tcp.bic] initial_ssthresh",
        ),
    ],
)
def test_invalid_scenarios_raise_with_the_field_path(smoke_path, overrides, path):
    with pytest.raises(ScenarioError, match=path.replace("[", r"\[").replace("]", r"\]")):
        tcplab.run(smoke_path, overrides=overrides)


def test_controller_tables_through_overrides(smoke_path):
    import tomllib

    overrides = {"defaults.tcp.cc": "cubic", "defaults.tcp.cubic.beta": 600, "defaults.tcp.bic.beta": 700}
    r = tcplab.run(smoke_path, overrides={**overrides, "run.duration": "100ms"})
    tcp = tomllib.loads(r.resolved_toml)["defaults"]["tcp"]
    assert tcp["cc"] == "cubic"
    assert tcp["cubic"]["beta"] == 600
    assert "bic" not in tcp, "only the table of the controller in use"
    assert {f["cc"] for f in r.summary["flows"] if f["kind"] == "tcp"} == {"cubic"}


def test_invalid_seed_argument(smoke_path):
    with pytest.raises(ValueError, match="seed"):
        tcplab.run(smoke_path, seed=-1)


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """Point tempfile's default directory at an empty folder, to see what a run leaves there."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_capture_directory_is_removed_on_interrupt(smoke_path, private_tmp, monkeypatch):
    import importlib

    run_module = importlib.import_module("tcplab.run")

    def interrupt(self, done_s):
        assert [p.name[:15] for p in private_tmp.iterdir()] == ["tcplab-capture-"]
        raise KeyboardInterrupt

    monkeypatch.setattr(run_module._LazyProgress, "update", interrupt)
    with pytest.raises(KeyboardInterrupt):
        tcplab.run(smoke_path)
    assert list(private_tmp.iterdir()) == []


def test_capture_directory_is_removed_when_building_the_result_fails(
    smoke_path, private_tmp, monkeypatch
):
    import importlib

    run_module = importlib.import_module("tcplab.run")

    class Broken(BaseException):
        """Stands in for any failure after the run (a panic in the core is a BaseException)."""

    def broken(*args, **kwargs):
        raise Broken

    monkeypatch.setattr(run_module, "Result", broken)
    with pytest.raises(Broken):
        tcplab.run(smoke_path)
    assert list(private_tmp.iterdir()) == []


def test_capture_directory_is_removed_with_the_result(smoke_path, private_tmp):
    import gc

    result = tcplab.run(smoke_path)
    assert result.captures["sender"].parent.parent == private_tmp
    del result
    gc.collect()
    assert list(private_tmp.iterdir()) == []


def _dead_pid() -> int:
    """The id of a process that has ended."""
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-c", ""])
    process.wait()
    return process.pid


def test_stale_capture_directories_of_dead_processes_are_removed(smoke_path, private_tmp):
    import os
    import re

    dead = _dead_pid()
    stale = private_tmp / f"tcplab-capture-{dead}-0123456789ab"
    stale.mkdir()
    (stale / "sender.pcapng").write_bytes(b"\0" * 4096)
    kept = [
        private_tmp / f"tcplab-capture-{os.getpid()}-0123456789ab",  # a live process's (this one)
        private_tmp / "tcplab-capture-1-0123456789ab",  # pid 1 is alive
        private_tmp / "tcplab-capture-k3j_x9q0",  # not tcplab's pid-named shape
        private_tmp / f"tcplab-capture-{dead}-notes",
    ]
    for folder in kept:
        folder.mkdir()
    not_a_folder = private_tmp / f"tcplab-capture-{dead}-0123456789ac"
    not_a_folder.write_text("mine")

    result = tcplab.run(smoke_path)
    assert not stale.exists()
    assert all(folder.is_dir() for folder in kept)
    assert not_a_folder.read_text() == "mine"
    own = result.captures["sender"].parent
    assert own.parent == private_tmp
    assert re.fullmatch(rf"tcplab-capture-{os.getpid()}-[0-9a-f]{{12}}", own.name)


def test_the_next_run_removes_what_a_killed_run_left(smoke_path, private_tmp):
    import os
    import subprocess
    import sys
    import time

    # A long run with a capture tap in another process, killed while it streams its capture.
    script = (
        "import tcplab, sys; tcplab.run(sys.argv[1], overrides={"
        "'flows.0.bulk.bytes': '10GB', 'run.duration': '1000s', 'run.stop': 'duration'})"
    )
    victim = subprocess.Popen(
        [sys.executable, "-c", script, str(smoke_path)], env={**os.environ, "TMPDIR": str(private_tmp)}
    )
    try:
        deadline = time.monotonic() + 60
        while not list(private_tmp.glob("tcplab-capture-*/*.pcapng")):
            assert victim.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        victim.kill()
        victim.wait()
    assert len(list(private_tmp.iterdir())) == 1  # left behind by the kill

    result = tcplab.run(smoke_path)
    assert list(private_tmp.iterdir()) == [result.captures["sender"].parent]
