"""Flow-completion time: `tcplab.analysis.fct` on real runs, and the sweep metrics' `fct_s`
and percentile aggregates."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import tcplab
from tcplab.analysis import fct, fct_by_size, fct_stats, message_fct
from tcplab.sweeps.metrics import MetricError, parse_metric, percentile

# Ten flows of 10 KB to 1 MB on a 100 Mb/s path with a 20 ms RTT, started 0.5 s apart, so
# most run alone: their FCT is slow start's, a few RTTs.
SCENARIO = {
    "name": "fct",
    "run": {"duration": "10s"},
    "defaults": {"tcp": {"cc": "cubic"}},
    "hosts": [{"name": "a"}, {"name": "b"}],
    "links": [{"between": ["a", "b"], "rate": "100Mbps", "delay": "10ms"}],
    "flows": [
        {"name": f"f{i}", "src": "a", "dst": "b", "start": f"{i * 0.5}s", "bulk": {"bytes": f"{size}KB"}}
        for i, size in enumerate([10, 20, 50, 100, 200, 500, 1000, 10, 100, 1000])
    ],
}


@pytest.fixture(scope="module")
def result():
    return tcplab.run(SCENARIO, seed=1)


def test_fct_and_slowdown_of_real_flows(result):
    t = fct(result.flows, line_bps=100e6, base_rtt_s=0.020)
    assert t.height == 10 and t["fct_s"].null_count() == 0
    # Every transfer takes at least its ideal time (one RTT plus serialization) and, alone on
    # the path, the handshake and a dozen RTTs of slow start at most (1 MB: 243 ms, 12 RTTs).
    assert (t["slowdown"] >= 1.0).all()
    assert (t["fct_s"] < 0.020 * 15).all()
    big = t.filter(pl.col("size_bytes") == 1_000_000)["fct_s"]
    small = t.filter(pl.col("size_bytes") == 10_000)["fct_s"]
    assert big.min() > small.max()
    s = fct_stats(t)
    assert s["count"] == 10 and s["unfinished"] == 0 and s["p50"] <= s["p99"]
    s = fct_stats(t, "slowdown", percentiles=(50,))
    assert s["p50"] >= 1.0


def test_unfinished_flows_are_counted_not_dropped():
    spec = dict(SCENARIO, run={"duration": "0.1s"})
    spec["flows"] = [dict(f, start="0s") for f in SCENARIO["flows"]]
    t = fct(tcplab.run(spec, seed=1).flows)
    s = fct_stats(t)
    assert s["unfinished"] >= 1 and s["count"] + s["unfinished"] == 10
    with pytest.raises(ValueError, match="no finished flow"):
        fct_stats(t.with_columns(pl.lit(None, dtype=pl.Float64).alias("fct_s")))
    with pytest.raises(ValueError, match="give both"):
        fct(tcplab.run(spec, seed=1).flows, line_bps=1e9)


def test_sweep_metrics_read_fct_and_percentiles(result):
    summary = result.summary
    finished = [f["finish_s"] - f["start_s"] for f in summary["flows"]]
    for agg, q in (("median", 50), ("p90", 90), ("p99", 99)):
        m = parse_metric(f"{agg}(flows.fct_s)")
        m.check(summary)
        assert math.isclose(m.evaluate(summary), float(pl.Series(finished).quantile(q / 100, "linear")))
    assert parse_metric("max(flows.fct_s)").evaluate(summary) == max(finished)
    assert percentile([1, 2, 3, 4], 50) == 2.5 and percentile([7], 99) == 7.0
    with pytest.raises(MetricError, match="unknown aggregate 'p95'"):
        parse_metric("p95(flows.fct_s)")
    with pytest.raises(MetricError, match="no field 'fct'"):
        parse_metric("p99(flows.fct)").check(summary)


def test_default_ideal_is_the_runs_own_and_slowdown_reads_it(result):
    t = fct(result.flows)
    # Every flow has a size, so every one has the run's ideal; alone on the path each takes
    # at least it and no more than the handshake and slow start add (under 15 RTTs of 20 ms).
    assert t["ideal_s"].null_count() == 0
    assert (t["slowdown"] >= 1.0).all()
    ideal = dict(zip(t["name"], t["ideal_s"]))
    # 10 KB: one RTT of handshake, then 7 segments at 100 Mb/s and 10 ms more: ≈ 30.9 ms.
    assert 0.030 < ideal["f0"] < 0.0312, ideal["f0"]
    summary = result.summary
    m = parse_metric("max(flows.slowdown)")
    m.check(summary)
    assert math.isclose(m.evaluate(summary), float(t["slowdown"].max()))


def test_fct_by_size_bins_and_refuses_bad_edges(result):
    t = fct(result.flows)
    b = fct_by_size(t, [0, 50_000, 2_000_000], column="fct_s", percentiles=(50,))
    assert b["count"].to_list() == [4.0, 6.0]
    small = t.filter(pl.col("size_bytes") <= 50_000)["fct_s"].to_numpy()
    assert math.isclose(b["p50"][0], float(np.median(small)))
    assert fct_by_size(t, [2e6, 3e6])["count"].to_list() == [0.0]
    with pytest.raises(ValueError, match="increasing"):
        fct_by_size(t, [10, 5])


# A workload: 120 web-search flows among 6 hosts on one 1 Gb/s switch at 30 % load.
WORKLOAD = {
    "name": "wl",
    "run": {"stop": "flows-done"},
    "hosts": [{"name": "h", "count": 6}],
    "switches": [{"name": "s"}],
    "links": [{"between": ["h", "s"], "rate": "1Gbps", "delay": "10us", "queue": "100pkts"}],
    "flows": [
        {
            "name": "w",
            "kind": "workload",
            "src": "h",
            "dst": "h",
            "workload": {"flows": 120, "load": 0.3, "sizes": {"dist": "cdf", "cdf": "web-search"}},
        }
    ],
}


def test_a_workload_run_gives_an_fct_table():
    r = tcplab.run(WORKLOAD, seed=2)
    t = fct(r.flows)
    assert t.height == 120 and t["fct_s"].null_count() == 0
    assert (t["slowdown"] >= 1.0).all()
    assert r.flows["name"].to_list() == [f"w.{k}" for k in range(120)]
    # The sizes follow the web-search CDF: about 15 % of flows at most 10 KB, 30 % of flows
    # above 1 MB (loose: 120 draws).
    sizes = t["size_bytes"].to_numpy()
    assert 0.05 < (sizes <= 10_000).mean() < 0.3
    assert 0.15 < (sizes > 1_000_000).mean() < 0.45
    assert r.summary["stop_reason"] == "flows-done"


# Four clients asking one server over a 200 Mb/s link for exponential 20 KB responses at
# 250 requests/s each (≈ 160 Mb/s): queueing, but every request is answered.
REQUESTS = {
    "name": "rr",
    "run": {"duration": "1s"},
    "hosts": [{"name": "c", "count": 4}, {"name": "s"}],
    "switches": [{"name": "sw"}],
    "links": [
        {"between": ["c", "sw"], "rate": "1Gbps", "delay": "20us"},
        {"between": ["sw", "s"], "rate": "200Mbps", "delay": "20us", "queue": "200pkts"},
    ],
    "flows": [
        {
            "name": "rr",
            "kind": "request-response",
            "src": "c",
            "dst": "s",
            "request_response": {"rate": 250.0, "responses": {"dist": "exponential", "mean": "20KB"}},
        }
    ],
}


def test_request_response_messages_give_an_fct_table_and_sweep_metrics():
    r = tcplab.run(REQUESTS, seed=3)
    t = message_fct(r.trace("messages"))
    # About 4 × 250 arrivals in 1 s (Poisson), less the last few still being answered.
    assert 850 < t.height < 1100
    assert set(t["flow_name"].unique()) == {"rr.0", "rr.1", "rr.2", "rr.3"}
    assert (t["slowdown"] >= 1.0 - 1e-9).all() and t["slowdown"].max() > 2.0
    assert (t["request_bytes"] == 100).all()
    # Answers come in order on each connection.
    for _, part in t.group_by("flow"):
        assert part["id"].to_list() == list(range(part.height))
    s = fct_stats(t, "slowdown")
    assert 1.0 <= s["p50"] <= s["p99"]
    binned = fct_by_size(t, [0, 10_000, 1e9])
    assert binned["count"].sum() == t.height
    # The summary's `messages` holds the same run's nearest-rank figures; sweeps read them.
    m = r.summary["messages"]
    assert m["count"] == t.height
    assert m["fct_max_s"] == t["fct_s"].max()
    assert parse_metric("messages.slowdown_p99").evaluate(r.summary) == m["slowdown_p99"]
    assert "messages" not in tcplab.run(SCENARIO, seed=1).summary
    with pytest.raises(ValueError, match="messages trace"):
        message_fct(r.flows)
