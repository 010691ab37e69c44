"""tcplab.analysis.avail: the true available bandwidth from the `link_usage` trace, on frames
worked out by hand and on runs whose answer is known (a fixed CBR load beside a measured
flow)."""

import polars as pl
import pytest

import tcplab
from tcplab import ScenarioError
from tcplab.analysis import avail

# --- hand-made frames --------------------------------------------------------------------------


def usage_frame():
    """Two links; on link 0 ("x->y") flow 0 ("probe") and flow 1 ("cbr") over four 10 ms
    intervals, the third with no row at all; link 1 ("y->x") carries flow 0's ACKs."""
    rows = [
        (0.01, 0, 0, 1000, "x->y", "probe"),
        (0.01, 0, 1, 2500, "x->y", "cbr"),
        (0.01, 1, 0, 40, "y->x", "probe"),
        (0.02, 0, 1, 5000, "x->y", "cbr"),
        (0.04, 0, 0, 3000, "x->y", "probe"),
        (0.04, 0, 1, 1250, "x->y", "cbr"),
    ]
    return pl.DataFrame(
        rows,
        schema={
            "time_s": pl.Float64,
            "pipe": pl.UInt32,
            "flow": pl.UInt32,
            "bytes": pl.UInt64,
            "pipe_name": pl.String,
            "flow_name": pl.String,
        },
        orient="row",
    )


C = 8_000_000.0  # 8 Mb/s: 10,000 bytes per 10 ms interval


def test_available_bandwidth_is_c_minus_the_other_flows_per_interval():
    out = avail.available_bandwidth(usage_frame(), "x->y", C, interval_s=0.01, measured="probe")
    assert out.columns == avail.TRUTH_COLUMNS
    assert out["start_s"].to_list() == pytest.approx([0.0, 0.01, 0.02, 0.03])
    assert out["end_s"].to_list() == pytest.approx([0.01, 0.02, 0.03, 0.04])
    # cbr: 2500, 5000, 0, 1250 bytes in 10 ms → 2, 4, 0, 1 Mb/s.
    assert out["cross_bytes"].to_list() == [2500, 5000, 0, 1250]
    assert out["cross_bps"].to_list() == pytest.approx([2e6, 4e6, 0.0, 1e6])
    assert out["avail_bps"].to_list() == pytest.approx([6e6, 4e6, 8e6, 7e6])
    assert out["measured_bps"].to_list() == pytest.approx([0.8e6, 0.0, 0.0, 2.4e6])


def test_the_last_interval_of_the_link_and_end_s():
    frame = usage_frame()
    out = avail.available_bandwidth(frame, 0, C, interval_s=0.01, measured=[0], end_s=0.06)
    assert out.height == 6
    assert out["cross_bytes"].to_list() == [2500, 5000, 0, 1250, 0, 0]
    assert out["avail_bps"].to_list()[-2:] == pytest.approx([C, C])
    # Nobody measured: every flow counts against A.
    everyone = avail.available_bandwidth(frame, "x->y", C, interval_s=0.01)
    assert everyone["cross_bytes"].to_list() == [3500, 5000, 0, 4250]
    # The reverse direction holds only the probe's ACKs.
    acks = avail.available_bandwidth(frame, "y->x", C, interval_s=0.01, measured="probe")
    assert acks["avail_bps"].to_list() == [C]


def test_rebin_truth_weighs_each_interval_by_its_overlap():
    truth = avail.available_bandwidth(usage_frame(), "x->y", C, interval_s=0.01, measured="probe")
    spans = [(0.0, 0.02), (0.005, 0.015), (0.015, 0.04), (0.0, 0.04)]
    out = avail.rebin_truth(truth, spans)
    assert out.columns == ["t0_s", "t1_s", "cross_bps", "avail_bps"]
    # A: 6, 4, 8, 7 Mb/s. [0, 20 ms): 5; [5, 15 ms): half of 6 and half of 4 = 5;
    # [15, 40 ms): (5·4 + 10·8 + 10·7)/25 = 6.8; the whole run: 6.25.
    assert out["avail_bps"].to_list() == pytest.approx([5e6, 5e6, 6.8e6, 6.25e6])
    assert out["cross_bps"].to_list() == pytest.approx([3e6, 3e6, 1.2e6, 1.75e6])
    frame = pl.DataFrame({"t0_s": [0.01], "t1_s": [0.03]})
    assert avail.rebin_truth(truth, frame)["avail_bps"].to_list() == pytest.approx([6e6])


def test_rebin_truth_refuses_bad_spans():
    truth = avail.available_bandwidth(usage_frame(), "x->y", C, interval_s=0.01, measured="probe")
    with pytest.raises(ValueError, match="is empty"):
        avail.rebin_truth(truth, [(0.02, 0.02)])
    with pytest.raises(ValueError, match="outside the truth"):
        avail.rebin_truth(truth, [(0.03, 0.05)])
    with pytest.raises(ValueError, match="t0_s and t1_s"):
        avail.rebin_truth(truth, pl.DataFrame({"a": [0.0], "b": [0.01]}))
    with pytest.raises(ValueError, match="not contiguous"):
        avail.rebin_truth(pl.concat([truth[:1], truth[2:]]), [(0.0, 0.01)])


def test_bad_input_to_available_bandwidth():
    frame = usage_frame()
    with pytest.raises(
        ValueError,
        match=r"no link named 'a->b' in the link_usage trace \(have: \['x->y', 'y->x'\]\)",
    ):
        avail.available_bandwidth(frame, "a->b", C, interval_s=0.01)
    for bad in (0.0, -0.01):
        with pytest.raises(ValueError, match="interval_s must be positive"):
            avail.available_bandwidth(frame, "x->y", C, interval_s=bad)
    with pytest.raises(ValueError, match="capacity_bps must be a positive"):
        avail.available_bandwidth(frame, "x->y", 0.0, interval_s=0.01)
    with pytest.raises(ValueError, match="not at the end of an interval"):
        avail.available_bandwidth(frame, "x->y", C, interval_s=0.03)
    with pytest.raises(ValueError, match="rows after end_s"):
        avail.available_bandwidth(frame, "x->y", C, interval_s=0.01, end_s=0.02)
    with pytest.raises(ValueError, match="no flow named 'nobody'"):
        avail.available_bandwidth(frame, "x->y", C, interval_s=0.01, measured="nobody")
    with pytest.raises(ValueError, match="missing column"):
        avail.available_bandwidth(frame.drop("bytes"), "x->y", C, interval_s=0.01)


# --- runs ---------------------------------------------------------------------------------------


def fixed_load(cbr="30Mbps", links=("r1->r2",)):
    """A window-limited TCP flow (measured) beside a CBR stream of 1500-byte datagrams over a
    100 Mb/s link with Ethernet framing; the flow keeps the queue nearly empty (64 KB over a
    20 ms RTT ≈ 26 Mb/s), so the CBR's departures stay evenly spaced."""
    hosts = ["snd", "rcv", "xs", "xr"]
    return {
        "name": "fixed-load",
        "run": {"duration": "2s"},
        "hosts": [{"name": h} for h in hosts],
        "switches": [{"name": "r1"}, {"name": "r2"}],
        "links": [
            {"between": ["snd", "r1"], "rate": "1Gbps"},
            {"between": ["xs", "r1"], "rate": "1Gbps"},
            {
                "between": ["r1", "r2"],
                "rate": "100Mbps",
                "delay": "10ms",
                "framing": "38B",
                "queue": "100pkts",
            },
            {"between": ["r2", "rcv"], "rate": "1Gbps"},
            {"between": ["r2", "xr"], "rate": "1Gbps"},
        ],
        "flows": [
            {"name": "measured", "src": "snd", "dst": "rcv", "tcp": {"rcvbuf": "64KB"}},
            {
                "name": "udp",
                "kind": "udp-cbr",
                "src": "xs",
                "dst": "xr",
                "cbr": {"rate": cbr, "packet_size": "1500B"},
            },
        ],
        "trace": {"link_usage": {"links": list(links), "interval": "10ms"}},
    }


@pytest.fixture(scope="module")
def loaded():
    return tcplab.run(fixed_load(links=("r1->r2", "r2->r1")), seed=1)


def test_the_trace_reaches_python_with_names(loaded):
    usage = loaded.trace("link_usage")
    schema = {"time_s": pl.Float64, "pipe": pl.UInt32, "flow": pl.UInt32, "bytes": pl.UInt64}
    assert {c: usage.schema[c] for c in schema} == schema
    assert set(usage["pipe_name"]) == {"r1->r2", "r2->r1"}
    assert set(usage["flow_name"]) == {"measured", "udp"}
    info = loaded.summary["link_usage"]
    assert info["interval_s"] == pytest.approx(0.01)
    assert [(e["pipe"], e["name"], e["rate_bps"]) for e in info["links"]] == [
        (0, "r1->r2", 100_000_000),
        (1, "r2->r1", 100_000_000),
    ]
    # The ACKs go the other way: the reverse direction carries no CBR datagram.
    assert set(usage.filter(pl.col("pipe_name") == "r2->r1")["flow_name"]) == {"measured"}
    # What the trace counts is what the queue sent.
    queue = loaded.queues.filter(pl.col("name") == "r1->r2")["bytes_transmitted"].item()
    assert usage.filter(pl.col("pipe") == 0)["bytes"].sum() == queue


def test_capacity_is_the_ip_byte_rate_of_1500_byte_packets_with_framing(loaded):
    assert avail.link_capacity(loaded, "r1->r2") == pytest.approx(100e6 * 1500 / 1538)
    assert avail.link_capacity(loaded.summary, 1) == pytest.approx(100e6 * 1500 / 1538)


def test_truth_equals_c_minus_cbr_on_a_fixed_load(loaded):
    c = avail.link_capacity(loaded, "r1->r2")
    truth = avail.truth(loaded, "r1->r2", measured="measured")
    assert truth.height == 200
    one_packet = 1500 * 8 / 0.01
    # From the second interval (the first datagram crosses its access link first).
    errors = (truth["avail_bps"][1:] - (c - 30e6)).abs()
    assert errors.max() <= one_packet + 1e-6
    assert truth["measured_bps"].mean() > 15e6, "the measured flow ran beside it"
    # Over the whole run, exact within a packet; over a span cutting intervals, by overlap.
    whole = avail.truth(loaded, "r1->r2", measured="measured", spans=[(0.01, 2.0), (0.505, 0.7575)])
    assert whole["avail_bps"][0] == pytest.approx(c - 30e6, abs=2 * one_packet / 199)
    assert whole["avail_bps"][1] == pytest.approx(c - 30e6, abs=one_packet)
    # Not excluding the measured flow: what is left of C is what neither flow used.
    everyone = avail.truth(loaded, "r1->r2")
    assert (everyone["avail_bps"] <= truth["avail_bps"] + 1e-6).all()


def test_truth_refuses_what_it_cannot_answer(loaded, smoke_path):
    with pytest.raises(
        ValueError,
        match=r"link 'r9->r1' is not watched by trace.link_usage \(watched: 0: 'r1->r2', 1: 'r2->r1'\)",
    ):
        avail.truth(loaded, "r9->r1")
    with pytest.raises(ValueError, match="no flow named 'ghost'"):
        avail.truth(loaded, "r1->r2", measured="ghost")
    plain = tcplab.run(smoke_path, seed=1)
    with pytest.raises(ValueError, match="did not record the link_usage trace"):
        avail.truth(plain, "sw1->emu")
    unlimited = tcplab.run(
        smoke_path,
        seed=1,
        overrides={"trace.link_usage": {"links": ["emu:sw1->sw2"], "interval": "100ms"}},
    )
    with pytest.raises(ValueError, match="has no rate limit"):
        avail.truth(unlimited, "emu:sw1->sw2")
    assert avail.truth(unlimited, "emu:sw1->sw2", capacity_bps=1e9)["avail_bps"].max() <= 1e9


@pytest.mark.parametrize(
    ("link_usage", "message"),
    [
        (
            {"links": ["r1->nowhere"], "interval": "10ms"},
            "trace.link_usage.links[0]: no link direction or emulator direction is named 'r1->nowhere'",
        ),
        ({"links": ["r1->r2"], "interval": "0s"}, "trace.link_usage.interval: must be positive"),
        (
            {"links": ["r1->r2"], "interval": "-5ms"},
            "trace.link_usage.interval: '-5ms' must be a non-negative",
        ),
        ({"links": [], "interval": "10ms"}, "trace.link_usage.links: is empty"),
        ({"interval": "10ms"}, "trace.link_usage: missing field `links`"),
    ],
)
def test_bad_link_usage_is_refused_naming_the_key(link_usage, message):
    scenario = fixed_load()
    scenario["trace"]["link_usage"] = link_usage
    with pytest.raises(ScenarioError) as error:
        tcplab.run(scenario, seed=1)
    assert message in str(error.value)


def test_path_truth_follows_the_tight_link_as_it_moves():
    # Study 003's moving bottleneck: 30 Mb/s of CBR on the first hop throughout; four
    # window-limited TCP flows (about 66 Mb/s together) on the second from 20 s.
    from tcplab.reproduce.scenarios import study_scenario

    r = tcplab.run(study_scenario("p3_imtcp", "moving_alone"), seed=1)
    hops = ["r1->dn", "r2->r3"]
    path = avail.path_truth(r, hops)
    each = [avail.truth(r, h) for h in hops]
    c = avail.link_capacity(r, "r1->dn")
    assert path.height == each[0].height == 4000
    least = [min(a, b) for a, b in zip(each[0]["avail_bps"], each[1]["avail_bps"], strict=True)]
    assert path["avail_bps"].to_list() == least
    before, after = path.filter(pl.col("end_s") < 19.9), path.filter(pl.col("start_s") > 21.0)
    assert (before["tight"] == 0).all() and (after["tight"] == 1).mean() > 0.95
    assert before["avail_bps"].mean() == pytest.approx(c - 30e6, rel=0.01)
    assert 25e6 < after["avail_bps"].mean() < 40e6
    # Re-binned: a span across the move averages both levels by their time.
    spans = avail.path_truth(r, hops, spans=[(10.0, 19.0), (25.0, 39.0), (18.0, 22.0)])
    assert spans["avail_bps"][0] == pytest.approx(before["avail_bps"].mean(), rel=0.01)
    assert spans["avail_bps"][1] < spans["avail_bps"][2] < spans["avail_bps"][0]
    # One link is that link's truth; no link at all is refused.
    assert (avail.path_truth(r, ["r2->r3"])["avail_bps"] == each[1]["avail_bps"]).all()
    with pytest.raises(ValueError, match="links"):
        avail.path_truth(r, [])
    with pytest.raises(ValueError, match="links"):
        avail.path_truth(r, "r1->dn")
