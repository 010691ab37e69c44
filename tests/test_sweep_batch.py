"""Many sweeps' runs on one pool (`tcplab.sweeps.batch`) and a study's prefetch
(`tcplab.reproduce.runner.prefetch`): the batch runs each distinct run once, in the order given,
into the right store; the sweeps afterwards run nothing and give the tables they give alone."""

from __future__ import annotations

import json

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from tcplab.reproduce import runner
from tcplab.sweeps import build_sweep, run_sweep
from tcplab.sweeps.batch import run_batch
from tcplab.sweeps.records import execute


def _queues(out):
    """The bottleneck queues of the runs a store's log says were executed, in execution order."""
    keys = [json.loads(line)["key"] for line in (out / "runs.log").read_text().splitlines()]
    return [pl.read_parquet(out / "runs" / f"{k}.parquet")["overrides"][0] for k in keys]


def test_a_batch_runs_each_run_once_in_order_and_the_sweeps_then_reuse_it(smoke_path, tmp_path):
    a = build_sweep(smoke_path, axes={"links.1.queue_a": ["10pkts", "20pkts"]}, seeds=2, metrics=["events"])
    # b shares its 20pkts point with a: the same runs, run once.
    b = build_sweep(smoke_path, axes={"links.1.queue_a": ["20pkts", "40pkts"]}, seeds=2, metrics=["events"])
    alone = run_sweep(a, workers=1).table
    shared, other = tmp_path / "shared", tmp_path / "other"
    outcome = run_batch([(a, shared), (b, shared), (b, other)], workers=1)
    assert (outcome.executed, outcome.reused, outcome.failed) == (6, 0, 0)
    assert outcome.run_s > 0
    # One worker: executed in the order given (a's points, then b's new one), seeds in order.
    queues = [json.loads(o)["links.1.queue_a"] for o in _queues(shared)]
    assert queues == ["10pkts", "10pkts", "20pkts", "20pkts", "40pkts", "40pkts"]
    # b's store got b's runs, the shared 20pkts ones included, without running them again.
    assert sorted(json.loads(o)["links.1.queue_a"] for o in _queues(other)) == ["20pkts", "20pkts", "40pkts", "40pkts"]
    again = run_sweep(a, workers=1, out=shared)
    assert (again.executed, again.reused) == (0, 4)
    assert_frame_equal(again.table.drop("wall_time_s"), alone.drop("wall_time_s"))
    assert (run_sweep(b, workers=1, out=other).executed, run_batch([(b, other)], workers=1).executed) == (0, 0)


def _record_only_40(task):
    """A run function that fails every run but the 40pkts ones (as a crash would be recorded)."""
    if task["spec"]["links"][1]["queue_a"] != "40pkts":
        raise AssertionError("only the 40pkts runs should have been queued")
    return execute(task)


def test_a_batch_runs_only_what_the_store_lacks(smoke_path, tmp_path):
    out = tmp_path / "out"
    a = build_sweep(smoke_path, axes={"links.1.queue_a": ["10pkts", "20pkts"]}, seeds=2, metrics=["events"])
    run_sweep(a, workers=1, out=out)
    b = build_sweep(smoke_path, axes={"links.1.queue_a": ["10pkts", "20pkts", "40pkts"]}, seeds=2, metrics=["events"])
    outcome = run_batch([(b, out)], workers=1, _function=_record_only_40)
    assert (outcome.executed, outcome.reused, outcome.failed) == (2, 4, 0)


def test_prefetch_collects_the_experiments_sweeps_then_they_run_nothing(smoke_path, tmp_path):
    out = tmp_path / "runs"
    calls = []

    def experiments():
        t = runner.run_points([(smoke_path, {"links.1.queue_a": q}) for q in ("10pkts", "20pkts", "10pkts")], [1, 2],
                              metrics={"events": "events"}, out=out, shared_store=True, workers=1, name="t")
        calls.append(t)
        return t

    progress = []
    batch = runner.prefetch(experiments, workers=1, on_run=lambda done, total: progress.append((done, total)))
    assert (batch.executed, batch.reused) == (4, 0)
    assert progress == [(1, 4), (2, 4), (3, 4), (4, 4)]
    # In collecting mode nothing ran: the experiment saw one row per (point, seed), index and seed only.
    assert calls[0].columns == ["index", "seed"] and calls[0].height == 6
    assert sorted(calls[0]["index"].to_list()) == [0, 0, 1, 1, 2, 2]
    table = experiments()
    assert len((out / "runs.log").read_text().splitlines()) == 4  # nothing more ran
    direct = runner.run_points([(smoke_path, {"links.1.queue_a": q}) for q in ("10pkts", "20pkts", "10pkts")], [1, 2],
                               metrics={"events": "events"}, workers=1, name="t")
    cols = ["index", "seed", "key", "events"]
    assert_frame_equal(table.select(cols).sort("index", "seed"), direct.select(cols).sort("index", "seed"))


def test_prefetch_leaves_an_invalid_sweep_to_raise_its_own_error(smoke_path, tmp_path):
    from tcplab.scenario import ScenarioError

    def experiments():
        return runner.run_points([(smoke_path, {"links.1.no_such_key": 1})], [1], out=tmp_path / "runs",
                                 shared_store=True, workers=1, name="bad")

    assert runner.prefetch(experiments, workers=1).executed == 0
    with pytest.raises((ScenarioError, Exception), match="no_such_key"):
        experiments()
