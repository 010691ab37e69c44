"""Decoding raw trace buffers into frames, and atomic `Result.save` (no simulation run)."""

import json
import os
import tomllib

import numpy as np
import polars as pl
import pytest

from tcplab import Result

SUMMARY = {
    "version": "0.1.0",
    "seed": 3,
    "scenario_hash": "0123456789abcdef",
    "scenario_name": "synthetic",
    "sim_time_s": 1.0,
    "events": 10,
    "flows": [
        {"id": 0, "name": "f0", "finish_s": None, "bytes_delivered": 5},
        {"id": 1, "name": "f1", "finish_s": 0.5, "bytes_delivered": 7},
    ],
    "queues": [{"id": 0, "name": "sw->b", "enqueued": 4, "dropped": 1}],
    "trace_codes": {"events.kind": {"0": "loss", "1": "rto", "2": "fast_retransmit"}},
    "wall_time_s": 0.01,
}


def column(dtype, values):
    """A raw trace column as `_core.Simulation.traces()` returns it."""
    numpy_dtype = {"f64": "<f8", "u64": "<u8", "u32": "<u4", "i64": "<i8"}[dtype]
    return dtype, np.asarray(values, dtype=numpy_dtype).tobytes()


RAW_TRACES = {
    "events": {
        "time_s": column("f64", [0.1, 0.2, 0.3]),
        "flow": column("u32", [1, 0, 1]),
        "kind": column("u32", [2, 0, 1]),
        "seq": column("u64", [2**40, 1, 2]),
    },
    "queue": {
        "time_s": column("f64", [0.0, 0.5]),
        "queue": column("u32", [0, 0]),
        "packets": column("u64", [1, 0]),
        "bytes": column("u64", [1500, 0]),
    },
    "empty": {"time_s": column("f64", []), "delta": column("i64", [])},
}


@pytest.fixture
def result():
    return Result(json.loads(json.dumps(SUMMARY)), RAW_TRACES, 'name = "synthetic"\n')


def test_traces_decode_with_dtypes_and_names(result):
    events = result.trace("events")
    assert events.columns == ["time_s", "flow", "kind", "seq", "kind_name", "flow_name"]
    assert events.schema["time_s"] == pl.Float64
    assert events.schema["flow"] == pl.UInt32
    assert events.schema["seq"] == pl.UInt64
    assert events["seq"].to_list() == [2**40, 1, 2]
    assert events["kind_name"].to_list() == ["fast_retransmit", "loss", "rto"]
    assert events["flow_name"].to_list() == ["f1", "f0", "f1"]
    queue = result.trace("queue")
    assert queue["queue_name"].to_list() == ["sw->b", "sw->b"]
    empty = result.trace("empty")
    assert empty.height == 0
    assert empty.schema["delta"] == pl.Int64


def test_summary_tables_and_accessors(result):
    assert result.seed == 3
    assert result.scenario_hash == "0123456789abcdef"
    assert result.flows["name"].to_list() == ["f0", "f1"]
    assert result.flows["finish_s"].to_list() == [None, 0.5]
    assert result.queues["dropped"].to_list() == [1]
    assert result.to_pandas("queue")["packets"].tolist() == [1, 0]
    with pytest.raises(KeyError, match="recorded: empty, events, queue"):
        result.trace("cwnd")


def test_unknown_dtype_is_rejected():
    with pytest.raises(ValueError, match="bad.x: unknown dtype 'u8'"):
        Result(SUMMARY, {"bad": {"x": ("u8", b"\x00")}}, "")


def test_save_writes_every_file(result, tmp_path):
    out = result.save(tmp_path / "a" / "run")
    assert out == tmp_path / "a" / "run"
    assert sorted(os.listdir(out)) == [
        "empty.parquet",
        "events.parquet",
        "metadata.json",
        "queue.parquet",
        "scenario.toml",
        "summary.json",
    ]
    assert json.loads((out / "summary.json").read_text()) == SUMMARY
    assert tomllib.loads((out / "scenario.toml").read_text()) == {"name": "synthetic"}
    assert json.loads((out / "metadata.json").read_text()) == {
        "created_by": "tcplab",
        "version": "0.1.0",
        "scenario_name": "synthetic",
        "scenario_hash": "0123456789abcdef",
        "seed": 3,
        "traces": ["empty", "events", "queue"],
        "captures": [],
    }
    for name, frame in result.traces.items():
        assert pl.read_parquet(out / f"{name}.parquet").equals(frame)
    assert os.listdir(tmp_path / "a") == ["run"]


def earlier_output(target):
    """Save a result with seed 9 to `target`, as an earlier run would have."""
    Result(dict(SUMMARY, seed=9), RAW_TRACES, 'name = "earlier"\n').save(target)
    return sorted(os.listdir(target))


def saved_seed(target):
    """The seed recorded in `target`/summary.json."""
    return json.loads((target / "summary.json").read_text())["seed"]


def test_save_replaces_an_earlier_output(result, tmp_path):
    target = tmp_path / "run"
    earlier = Result(
        dict(SUMMARY, seed=9), {"older": RAW_TRACES["queue"]}, 'name = "earlier"\n'
    )
    earlier.save(target)
    assert "older.parquet" in os.listdir(target)
    result.save(target)
    assert saved_seed(target) == 3
    assert not (target / "older.parquet").exists()  # listed by the earlier metadata.json
    assert os.listdir(tmp_path) == ["run"]


@pytest.mark.parametrize(
    ("foreign", "first"),
    [
        ({"plots/throughput.png": "png"}, "plots"),
        ({"notes.txt": "mine"}, "notes.txt"),
        ({"extra.parquet": "not listed in metadata.json"}, "extra.parquet"),
        ({".hidden": "x", "zz.txt": "y"}, ".hidden"),
        ({"summary.json/inside": "a directory where a file belongs"}, "summary.json"),
    ],
)
def test_save_never_deletes_what_tcplab_did_not_write(result, tmp_path, foreign, first):
    target = tmp_path / "run"
    earlier_output(target)
    if first == "summary.json":
        (target / "summary.json").unlink()
    for name, text in foreign.items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_text(text)
    before = sorted(str(p.relative_to(target)) for p in target.rglob("*"))
    with pytest.raises(FileExistsError) as error:
        result.save(target)
    message = str(error.value)
    assert message.startswith(f"{target}: ")
    assert repr(first) in message and "choose another output directory" in message
    assert "remove it" in message
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*")) == before
    for name, text in foreign.items():
        assert (target / name).read_text() == text
    if first != "summary.json":
        assert saved_seed(target) == 9
    assert os.listdir(tmp_path) == ["run"]


@pytest.mark.parametrize("pointing_at", ["earlier output", "empty directory", "nothing yet"])
def test_save_through_a_symlink_writes_into_its_directory(result, tmp_path, pointing_at):
    real = tmp_path / "real"
    if pointing_at == "earlier output":
        earlier_output(real)
    elif pointing_at == "empty directory":
        real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    assert result.save(link) == link
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert saved_seed(real) == 3
    assert sorted(os.listdir(tmp_path)) == ["link", "real"]  # no .link.old-* / .link.tmp-*


def test_stale_staging_of_a_killed_save_is_removed(result, tmp_path):
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)
    stale = tmp_path / f".run.tmp-{dead_pid}-0123456789ab"
    (stale / "sub").mkdir(parents=True)
    (stale / "sender.pcapng").write_bytes(b"partial capture")
    alive = tmp_path / f".run.tmp-{os.getppid()}-0123456789ab"  # another live process's
    alive.mkdir()
    other = tmp_path / ".run.tmp-notapid"
    other.mkdir()
    result.save(tmp_path / "run")
    assert sorted(os.listdir(tmp_path)) == sorted(["run", alive.name, other.name])


def test_save_fills_an_empty_directory(result, tmp_path):
    (tmp_path / "run").mkdir()
    result.save(tmp_path / "run")
    assert saved_seed(tmp_path / "run") == 3
    assert os.listdir(tmp_path) == ["run"]


@pytest.mark.parametrize("existing", ["file", "foreign directory"])
def test_save_never_replaces_anything_else(result, tmp_path, existing):
    target = tmp_path / "run"
    if existing == "file":
        target.write_text("a file")
    else:
        target.mkdir()
        (target / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not a directory" if existing == "file" else
                       "'notes.txt', which tcplab did not write"):
        result.save(target)
    assert os.listdir(tmp_path) == ["run"]
    if existing == "file":
        assert target.read_text() == "a file"
    else:
        assert os.listdir(target) == ["notes.txt"]


def test_save_into_the_working_directory_is_refused(result, tmp_path, monkeypatch):
    (tmp_path / "notes.txt").write_text("mine")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileExistsError):
        result.save(".")
    assert os.listdir(tmp_path) == ["notes.txt"]


def fail_on_second_parquet(monkeypatch):
    """Make the second `write_parquet` call raise, after some files were written."""
    real = pl.DataFrame.write_parquet
    calls = []

    def write_parquet(self, *args, **kwargs):
        calls.append(args)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", write_parquet)
    return calls


def test_failed_save_leaves_no_directory(result, tmp_path, monkeypatch):
    calls = fail_on_second_parquet(monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        result.save(tmp_path / "run")
    assert len(calls) == 2
    assert os.listdir(tmp_path) == []


def test_failed_save_keeps_the_earlier_output(result, tmp_path, monkeypatch):
    target = tmp_path / "run"
    files = earlier_output(target)
    fail_on_second_parquet(monkeypatch)
    with pytest.raises(OSError):
        result.save(target)
    assert os.listdir(tmp_path) == ["run"]
    assert sorted(os.listdir(target)) == files
    assert saved_seed(target) == 9


def test_failed_final_rename_restores_the_earlier_output(result, tmp_path, monkeypatch):
    target = tmp_path / "run"
    files = earlier_output(target)
    real = os.replace
    calls = []

    def replace(src, dst):
        calls.append((src, dst))
        if len(calls) == 2:
            raise OSError(5, "Input/output error")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="Input/output error"):
        result.save(target)
    assert len(calls) == 3
    assert os.listdir(tmp_path) == ["run"]
    assert sorted(os.listdir(target)) == files
    assert saved_seed(target) == 9


def test_interrupted_save_leaves_no_directory(result, tmp_path, monkeypatch):
    def interrupt(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pl.DataFrame, "write_parquet", interrupt)
    with pytest.raises(KeyboardInterrupt):
        result.save(tmp_path / "run")
    assert os.listdir(tmp_path) == []


def test_load_reads_back_what_save_wrote(result, tmp_path):
    result.save(tmp_path / "out")
    loaded = Result.load(tmp_path / "out")
    assert loaded.summary == result.summary
    assert loaded.resolved_toml == result.resolved_toml
    assert sorted(loaded.traces) == sorted(result.traces)
    for name, frame in result.traces.items():
        assert loaded.trace(name).equals(frame), name
    assert loaded.flows.equals(result.flows)
    assert loaded.seed == 3 and loaded.scenario_hash == "0123456789abcdef"


def test_load_of_a_real_run_keeps_its_captures(smoke_path, tmp_path):
    import tcplab

    run = tcplab.run(smoke_path)
    run.save(tmp_path / "out")
    loaded = Result.load(tmp_path / "out")
    assert sorted(loaded.captures) == sorted(run.captures) != []
    for name, path in loaded.captures.items():
        assert path == run.captures[name] and path.stat().st_size > 0
    assert loaded.trace("cwnd").equals(run.trace("cwnd"))


def test_load_refuses_what_is_not_a_saved_result(result, tmp_path):
    with pytest.raises(FileNotFoundError, match="no saved tcplab result here"):
        Result.load(tmp_path)
    (tmp_path / "metadata.json").write_text('{"created_by": "someone"}')
    with pytest.raises(ValueError, match="not written by tcplab"):
        Result.load(tmp_path)
    result.save(tmp_path / "out")
    (tmp_path / "out" / "events.parquet").unlink()
    with pytest.raises(FileNotFoundError, match="events.parquet is missing"):
        Result.load(tmp_path / "out")


def test_html_shows_the_run_and_its_flows(result):
    shown = result._repr_html_()
    assert "synthetic" in shown and "seed 3" in shown and "f1" in shown
    assert "<table" in shown


def test_to_pandas_without_pandas_says_how_to_get_it(result, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'tcplab\[pandas\]'"):
        result.to_pandas("events")


def test_optional_flow_times_are_floats_even_when_all_missing(result):
    assert result.flows.schema["finish_s"] == pl.Float64  # one finished flow: inferred anyway
    summary = json.loads(json.dumps(SUMMARY))
    for flow in summary["flows"]:
        flow.update(finish_s=None, srtt_s=None)
    flows = Result(summary, {}, "").flows
    assert flows.schema["finish_s"] == pl.Float64 and flows.schema["srtt_s"] == pl.Float64
    assert flows["finish_s"].null_count() == 2


def test_cwnd_trace_has_nulls_for_no_rtt_sample_and_unlimited_ssthresh():
    raw = {"cwnd": {
        "time_s": column("f64", [0.0, 0.1, 0.2]),
        "flow": column("u32", [0, 0, 1]),
        "cwnd_bytes": column("u64", [2920, 4380, 2920]),
        "ssthresh_bytes": column("u64", [2**64 - 1, 2**64 - 1, 65536]),
        "srtt_s": column("f64", [0.0, 0.02, 0.03]),
        "inflight_bytes": column("u64", [0, 1460, 0]),
    }}
    cwnd = Result(json.loads(json.dumps(SUMMARY)), raw, "").trace("cwnd")
    assert cwnd["ssthresh_bytes"].to_list() == [None, None, 65536]
    assert cwnd["srtt_s"].to_list() == [None, 0.02, 0.03]
    assert cwnd.schema["ssthresh_bytes"] == pl.UInt64
