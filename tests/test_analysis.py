"""tcplab.analysis on small hand-made frames whose answers were worked out by hand."""

import math
from fractions import Fraction

import polars as pl
import pytest
from handmade import ACK, EVENTS, QUEUE, capture, throughput_trace
from tcplab import analysis as A


def rows_of(frame, *columns):
    return [tuple(r) for r in frame.select(columns).iter_rows()]


# --- throughput ------------------------------------------------------------------------------


def test_trace_interval():
    assert A.trace_interval(throughput_trace()) == pytest.approx(0.1)


def test_throughput_rebinned_from_the_trace():
    out = A.throughput_bins(throughput_trace(), 0.3)
    assert out.columns == ["flow", "flow_name", "start_s", "end_s", "bytes", "bps"]
    assert rows_of(out, "flow", "flow_name", "bytes") == [
        (0, "a", 600),
        (0, "a", 1500),
        (1, "b", 10),
        (1, "b", 90),
    ]
    assert out["start_s"].to_list() == pytest.approx([0.0, 0.3, 0.0, 0.3])
    assert out["end_s"].to_list() == pytest.approx([0.3, 0.6, 0.3, 0.6])
    assert out["bps"].to_list() == pytest.approx([16000, 40000, 800 / 3, 2400])


def test_throughput_trace_keeps_its_bins_without_bin_s():
    out = A.throughput_bins(throughput_trace())
    assert out.filter(pl.col("flow") == 0)["bytes"].to_list() == [100, 200, 300, 400, 500, 600]
    assert out.filter(pl.col("flow") == 0)["bps"].to_list() == pytest.approx(
        [8000, 16000, 24000, 32000, 40000, 48000]
    )


def test_throughput_partial_last_bin_is_rated_over_the_covered_time():
    out = A.throughput_bins(throughput_trace(bins=5), 0.3).filter(pl.col("flow") == 0)
    assert out["bytes"].to_list() == [600, 900]  # 400 + 500
    assert out["end_s"].to_list() == pytest.approx([0.3, 0.5])
    assert out["bps"].to_list() == pytest.approx([16000, 36000])  # 900 B over 0.2 s


def test_throughput_start_and_end_from_the_trace():
    out = A.throughput_bins(throughput_trace(), 0.3, start_s=0.2, end_s=0.6)
    assert rows_of(out.filter(pl.col("flow") == 0), "bytes") == [(1200,), (600,)]
    assert out.filter(pl.col("flow") == 0)["start_s"].to_list() == pytest.approx([0.2, 0.5])
    assert out.filter(pl.col("flow") == 0)["end_s"].to_list() == pytest.approx([0.5, 0.6])


def test_throughput_bin_must_be_a_multiple_of_the_trace_interval():
    with pytest.raises(ValueError, match="whole multiple"):
        A.throughput_bins(throughput_trace(), 0.25)
    with pytest.raises(ValueError, match="positive"):
        A.throughput_bins(throughput_trace(), 0)


def test_throughput_from_a_capture():
    # Last packet at 0.070 s: four whole 20 ms bins. Flow 0: 3 x 1000 B in [0.02, 0.04),
    # the 1000 B retransmission at 0.040 in [0.04, 0.06). Flow 1: 500 B at 0.025. UDP: 1000 B
    # at 0.012 and at 0.052.
    out = A.throughput_bins(capture(), 0.02)
    assert out.filter(pl.col("flow") == 0)["bytes"].to_list() == [0, 3000, 1000, 0]
    assert out.filter(pl.col("flow") == 1)["bytes"].to_list() == [0, 500, 0, 0]
    assert out.filter(pl.col("flow") == 2)["bytes"].to_list() == [1000, 0, 1000, 0]
    assert out.filter(pl.col("flow") == 0)["bps"].to_list() == pytest.approx([0, 1.2e6, 4e5, 0])
    assert out["end_s"].max() == pytest.approx(0.08)
    assert set(out["flow_name"]) == {"a", "b", "u"}


def test_throughput_from_a_capture_without_retransmissions():
    out = A.throughput_bins(capture(), 0.02, retransmissions=False)
    assert out.filter(pl.col("flow") == 0)["bytes"].to_list() == [0, 3000, 0, 0]
    assert out.filter(pl.col("flow") == 2)["bytes"].to_list() == [1000, 0, 1000, 0]


def test_throughput_from_a_capture_cut_at_end_s():
    out = A.throughput_bins(capture(), 0.02, end_s=0.05).filter(pl.col("flow") == 0)
    assert out["bytes"].to_list() == [0, 3000, 1000]
    assert out["end_s"].to_list() == pytest.approx([0.02, 0.04, 0.05])
    assert out["bps"][-1] == pytest.approx(1000 * 8 / 0.01)


def test_capture_with_several_taps_needs_a_choice():
    both = pl.concat([capture(tap=0), capture(tap=1)])
    with pytest.raises(ValueError, match="tap="):
        A.throughput_bins(both, 0.02)
    one = A.throughput_bins(both, 0.02, tap=1)
    assert one.filter(pl.col("flow") == 0)["bytes"].to_list() == [0, 3000, 1000, 0]


def test_goodput_from_the_trace():
    out = A.goodput(throughput_trace())
    assert rows_of(out, "flow", "bytes") == [(0, 2100), (1, 100)]
    assert out["duration_s"].to_list() == pytest.approx([0.6, 0.6])
    assert out["goodput_bps"].to_list() == pytest.approx([28000, 1000 * 4 / 3])
    window = A.goodput(throughput_trace(), 0.3, 0.6)
    assert rows_of(window, "bytes") == [(1500,), (90,)]
    assert window["duration_s"].to_list() == pytest.approx([0.3, 0.3])


def test_goodput_from_a_capture_counts_acknowledged_bytes():
    # Flow 0: highest ACK 3002 covers the FIN; capped at the last data byte 3001 -> 3000 B.
    # Flow 1: ACK 501 -> 500 B. The UDP flow is not reported. Window: 0 .. 0.070 s.
    out = A.goodput(capture())
    assert rows_of(out, "flow", "flow_name", "bytes") == [(0, "a", 3000), (1, "b", 500)]
    assert out["duration_s"].to_list() == pytest.approx([0.07, 0.07])
    assert out["goodput_bps"][0] == pytest.approx(3000 * 8 / 0.07)
    # From 0.030 s (ACK 1001 already there) to the end: 2000 B for flow 0.
    late = A.goodput(capture(), start_s=0.03)
    assert rows_of(late, "bytes") == [(2000,), (500,)]
    assert late["duration_s"][0] == pytest.approx(0.04)


# --- fairness --------------------------------------------------------------------------------


def test_jain_index_known_values():
    assert A.jain_index([5, 5, 5, 5]) == 1.0
    assert A.jain_index([1, 0, 0, 0]) == 0.25
    assert A.jain_index([1, 2, 3]) == pytest.approx(6 / 7)  # 36 / (3 * 14)
    assert A.jain_index(pl.Series([2.0, 2.0])) == 1.0
    assert math.isnan(A.jain_index([0, 0]))


def test_jain_index_rejects_bad_input():
    with pytest.raises(ValueError):
        A.jain_index([])
    with pytest.raises(ValueError):
        A.jain_index([1, -1])


def test_jain_over_time():
    result = A.jain_over_time(throughput_trace(), 0.3)
    # Means are proportional to totals 2100 and 100: 2200² / (2 (2100² + 100²)) = 121/221.
    assert result.overall == pytest.approx(121 / 221)
    per_bin = result.per_bin
    assert per_bin.columns == ["start_s", "end_s", "jain", "n_flows"]
    assert per_bin["n_flows"].to_list() == [2, 2]
    assert per_bin["jain"].to_list() == pytest.approx(
        [
            float(Fraction(610**2, 2 * (600**2 + 10**2))),
            float(Fraction(1590**2, 2 * (1500**2 + 90**2))),
        ]
    )


def test_jain_over_time_with_chosen_flows_and_idle_bins():
    result = A.jain_over_time(capture(), 0.02, flows=["a", "b"])
    # Bins: [0, 0, .., ..]: nobody sent in the first and last bins -> NaN there.
    jains = result.per_bin["jain"].to_list()
    assert math.isnan(jains[0]) and math.isnan(jains[3])
    assert jains[1] == pytest.approx(3500**2 / (2 * (3000**2 + 500**2)))
    assert jains[2] == pytest.approx(0.5)
    assert result.overall == pytest.approx(4500**2 / (2 * (4000**2 + 500**2)))


# --- TCP events ------------------------------------------------------------------------------


def test_dupack_events():
    out = A.dupack_events(capture())
    assert out.columns == ["flow", "flow_name", "time_s", "ack", "dup_count"]
    assert rows_of(out, "flow", "ack", "dup_count") == [(0, 1001, 1), (0, 1001, 2), (0, 1001, 1)]
    assert out["time_s"].to_list() == pytest.approx([0.031, 0.032, 0.034])


def test_dupack_needs_same_window_or_sack():
    rows = [
        (0.0, 0, 1, 1, 500, 0, ACK, 1000, 0, 0),
        (0.1, 0, 1, 1, 500, 0, ACK, 900, 0, 0),  # window changed: not a dupACK
        (0.2, 0, 1, 1, 500, 0, ACK, 800, 2, 0),  # window changed but SACK: dupACK
        (0.3, 0, 1, 1, 500, 10, ACK, 800, 0, 0),  # carries data: not a dupACK
        (0.4, 0, 1, 1, 500, 0, ACK, 800, 0, 0),  # dupACK (same ack and window as previous)
    ]
    out = A.dupack_events(capture(rows))
    assert out["time_s"].to_list() == pytest.approx([0.2, 0.4])
    assert out["dup_count"].to_list() == [1, 1]


def test_retransmissions():
    out = A.retransmissions(capture())
    assert out.columns == ["flow", "flow_name", "time_s", "seq", "len", "marked"]
    assert rows_of(out, "flow", "seq", "len", "marked") == [(0, 1001, 1000, True)]
    assert out["time_s"].to_list() == pytest.approx([0.040])


def test_partial_overlap_is_a_retransmission():
    rows = [
        (0.0, 0, 0, 1, 1, 1000, ACK, 0, 0, 0),
        (0.1, 0, 0, 1001, 1, 1000, ACK, 0, 0, 0),
        (0.2, 0, 0, 1501, 1, 1000, ACK, 0, 0, 0),  # bytes 1501..2000 seen before
        (0.3, 0, 0, 2501, 1, 100, ACK, 0, 0, 0),  # new
    ]
    out = A.retransmissions(capture(rows))
    assert rows_of(out, "seq", "marked") == [(1501, False)]


def test_loss_times_decodes_kinds():
    out = A.loss_times(EVENTS)
    assert rows_of(out, "flow", "kind", "seq") == [
        (1, "fast_retransmit", 10),
        (0, "timeout", 20),
        (0, "fast_retransmit", 40),
        (2, "fast_retransmit", 50),
    ]
    named = EVENTS.with_columns(
        kind_name=pl.col("kind").replace_strict(A.tcpevents.DEFAULT_EVENT_KINDS)
    )
    assert A.loss_times(named).equals(out)
    assert rows_of(A.loss_times(EVENTS, kinds=["timeout"]), "time_s") == [(0.7,)]
    with pytest.raises(ValueError, match="unknown"):
        A.loss_times(EVENTS, kinds=["bogus"])


def test_loss_times_counts_only_the_data_senders_events():
    # A two-way application's replies recover their own losses at the other end (`end` 1):
    # the timeout at 0.7 s marked as the other end's is not flow 0's loss.
    ends = EVENTS.with_columns(end=pl.Series([0, 0, 1, 0, 0, 0], dtype=pl.UInt32))
    assert rows_of(A.loss_times(ends), "flow", "kind", "seq") == [
        (1, "fast_retransmit", 10),
        (0, "fast_retransmit", 40),
        (2, "fast_retransmit", 50),
    ]


def test_first_occurrence_order():
    assert A.first_occurrence_order(A.loss_times(EVENTS)) == [1, 0, 2]
    assert A.first_occurrence_order(A.loss_times(EVENTS), flows=[2, 0, 7]) == [0, 2]


# --- timing ----------------------------------------------------------------------------------


def test_send_order_per_rtt():
    out = A.send_order_per_rtt(capture(), 0.02, t0=0.02, flows=[0, 1])
    assert rows_of(out, "rtt_index", "flow", "rank", "packets", "bytes") == [
        (0, 0, 1, 3, 3000),
        (0, 1, 2, 1, 500),
        (1, 0, 1, 1, 1000),
    ]
    assert out["first_send_s"].to_list() == pytest.approx([0.020, 0.025, 0.040])
    assert out["offset_s"].to_list() == pytest.approx([0.0, 0.005, 0.0])
    assert out["window_start_s"].to_list() == pytest.approx([0.02, 0.02, 0.04])
    assert out["flow_name"].to_list() == ["a", "b", "a"]


def test_send_order_default_t0_is_the_first_data_packet_of_the_flows_ranked():
    everyone = A.send_order_per_rtt(capture(), 0.02)  # t0 = 0.012, the UDP datagram
    assert rows_of(everyone, "rtt_index", "flow", "rank") == [
        (0, 2, 1),
        (0, 0, 2),
        (0, 1, 3),
        (1, 0, 1),
        (2, 2, 1),
    ]
    tcp = A.send_order_per_rtt(capture(), 0.02, flows=["a", "b"])  # t0 = 0.020
    assert tcp["window_start_s"][0] == pytest.approx(0.02)
    assert rows_of(tcp, "rtt_index", "flow", "rank") == [(0, 0, 1), (0, 1, 2), (1, 0, 1)]


def test_send_gap_per_rtt_grows():
    # Flow 0 sends at k * 0.1 s, flow 1 at k * 0.1 + (k + 1) ms, for k = 0, 1, 2.
    rows = []
    for k in range(3):
        rows.append((k * 0.1, 0, 0, 1 + 1000 * k, 1, 1000, ACK, 0, 0, 0))
        rows.append((k * 0.1 + 0.001 * (k + 1), 1, 0, 1 + 1000 * k, 1, 1000, ACK, 0, 0, 0))
    out = A.send_gap_per_rtt(capture(rows), 0.1, 0, 1)
    assert out.columns == ["rtt_index", "window_start_s", "first_a_s", "first_b_s", "gap_s"]
    assert out["rtt_index"].to_list() == [0, 1, 2]
    assert out["gap_s"].to_list() == pytest.approx([0.001, 0.002, 0.003])
    assert A.send_gap_per_rtt(capture(rows), 0.1, "b", "a")["gap_s"].to_list() == pytest.approx(
        [-0.001, -0.002, -0.003]
    )


def test_send_rounds_follow_a_growing_rtt_where_fixed_windows_wrap():
    # Round k of flow 0 starts at k * 0.13 s (an RTT of 0.1 s plus growing queueing), two
    # packets 1 ms apart; flow 1 starts each round (k + 1) * 10 ms later. Fixed 0.1 s
    # windows drift off the bursts (flow 1's fourth burst falls into a window flow 0 does not
    # send in, so the fourth gap is lost; later it wraps); rounds follow them.
    rows = []
    for k in range(4):
        for f, t in ((0, k * 0.13), (1, k * 0.13 + 0.010 * (k + 1))):
            for i in range(2):
                rows.append((t + 0.001 * i, f, 0, 1 + 1000 * (2 * k + i), 1, 1000, ACK, 0, 0, 0))
    rounds = A.send_rounds(capture(rows), 0.005)
    assert rounds.columns == ["flow", "round", "start_s", "end_s", "packets", "bytes"]
    assert rows_of(rounds.filter(pl.col("flow") == 1), "round", "packets", "bytes") == [(k, 2, 2000) for k in range(4)]
    assert rounds.filter(pl.col("flow") == 0)["end_s"].to_list() == pytest.approx([k * 0.13 + 0.001 for k in range(4)])
    gap = A.send_gap_per_round(capture(rows), 0, 1, 0.005)
    assert gap["round"].to_list() == [0, 1, 2, 3]
    assert gap["gap_s"].to_list() == pytest.approx([0.01, 0.02, 0.03, 0.04])
    assert A.send_gap_per_rtt(capture(rows), 0.1, 0, 1)["gap_s"].to_list() == pytest.approx([0.01, 0.02, 0.03])
    # An idle threshold above the pauses merges every round into one.
    assert A.send_rounds(capture(rows), 0.2)["round"].to_list() == [0, 0]
    with pytest.raises(ValueError, match="idle_s must be positive"):
        A.send_rounds(capture(rows), 0)


def test_send_gap_only_where_both_sent():
    out = A.send_gap_per_rtt(capture(), 0.02, "a", "b", t0=0.02)
    assert out["rtt_index"].to_list() == [0]
    assert out["gap_s"].to_list() == pytest.approx([0.005])


def test_data_and_ack_spacing():
    data = A.data_spacing(capture(), "a")
    assert data["time_s"].to_list() == pytest.approx([0.021, 0.022, 0.040])
    assert data["gap_s"].to_list() == pytest.approx([0.001, 0.001, 0.018])
    acks = A.ack_spacing(capture(), 0)  # SYN-ACK, five at 1001, 3001, 3002
    assert acks["gap_s"].to_list() == pytest.approx([0.02, 0.001, 0.001, 0.001, 0.001, 0.016, 0.02])
    new = A.ack_spacing(capture(), 0, new_data_only=True)  # 0.010, 0.030, 0.050, 0.070
    assert new["gap_s"].to_list() == pytest.approx([0.02, 0.02, 0.02])
    window = A.ack_spacing(capture(), 0, start_s=0.03, end_s=0.034)
    assert window["gap_s"].to_list() == pytest.approx([0.001] * 4)


def test_spacing_stats():
    stats = A.spacing_stats(A.data_spacing(capture(), 0))  # gaps 1, 1, 18 ms
    assert stats["count"] == 3
    assert stats["mean_s"] == pytest.approx(0.02 / 3)
    assert stats["median_s"] == pytest.approx(0.001)
    assert stats["min_s"] == pytest.approx(0.001)
    assert stats["max_s"] == pytest.approx(0.018)
    # deviations from the mean: -17/3, -17/3, +34/3 ms -> s² = (17² · 6 / 9) / 2 ms²
    assert stats["std_s"] == pytest.approx(0.017 / math.sqrt(3))
    assert stats["p10_s"] == pytest.approx(0.001)
    empty = A.spacing_stats(A.data_spacing(capture(), "b"))  # one packet: no gap
    assert empty["count"] == 0 and math.isnan(empty["mean_s"])


def test_outstanding_data():
    out = A.outstanding_data(capture(), "a")
    assert out.columns == ["time_s", "dir", "highest_sent", "highest_ack", "outstanding_bytes"]
    assert out["outstanding_bytes"].to_list() == [
        1,
        0,
        0,
        1000,
        2000,
        3000,
        2000,
        2000,
        2000,
        2000,
        2000,
        2000,
        0,
        1,
        0,
    ]
    assert out["highest_sent"][-1] == 3002 and out["highest_ack"][-1] == 3002


# --- queues ----------------------------------------------------------------------------------


def test_queue_occupancy_step_function():
    # Empty until 1 s, 2 until 2 s, (5 for no time) 4 until 4 s, then 0 until 5 s.
    stats = A.queue_occupancy(QUEUE, "x->y", end_s=5.0)
    assert stats["mean"] == pytest.approx(2.0)  # (2*1 + 4*2) / 5
    assert stats["max"] == 5.0
    assert stats["min"] == 0.0
    assert stats["duration_s"] == pytest.approx(5.0)
    # Time at 0: 2 s (40 %), at 2: 1 s (to 60 %), at 4: 2 s (to 100 %).
    assert (stats["p50"], stats["p90"], stats["p99"]) == (2.0, 4.0, 4.0)
    assert A.queue_occupancy(QUEUE, 3, end_s=5.0, percentiles=[40])["p40"] == 0.0


def test_queue_occupancy_window_and_bytes():
    stats = A.queue_occupancy(QUEUE, 3, start_s=1.5, end_s=3.0)
    assert stats["mean"] == pytest.approx((2 * 0.5 + 4 * 1.0) / 1.5)
    assert stats["max"] == 5.0
    assert A.queue_occupancy(QUEUE, 3, column="bytes")["mean"] == pytest.approx(
        (3000 * 1 + 6000 * 2) / 4
    )


def test_queue_occupancy_needs_a_queue_when_there_are_several():
    with pytest.raises(ValueError, match="queue="):
        A.queue_occupancy(QUEUE)
    with pytest.raises(ValueError, match="no queue named"):
        A.queue_occupancy(QUEUE, "nope")


# --- statistics ------------------------------------------------------------------------------


def test_nir_and_p_sru():
    assert A.nir(1200, 1000) == 1.2
    assert A.p_sru(4, 65536, 1460) == 180  # 4 * ceil(44.9)
    assert A.p_sru(1, 2920, 1460) == 2
    assert A.nir(A.p_sru(4, 65536, 1460), A.p_sru(4, 65536, 1460)) == 1.0
    with pytest.raises(ValueError):
        A.nir(10, 0)


def test_rank_agreement():
    assert A.rank_agreement([0, 1, 2, 3], [0, 1, 2, 3]) == 1.0
    assert A.rank_agreement([0, 1, 2, 3], [3, 2, 1, 0]) == -1.0
    # Concordant pairs: only (1, 2); discordant: 5 -> (1 - 5) / 6.
    assert A.rank_agreement([0, 1, 2, 3], [3, 1, 2, 0]) == pytest.approx(-2 / 3)
    # Rank differences 3, 0, 0, -3: 1 - 6 * 18 / (4 * 15).
    assert A.rank_agreement([0, 1, 2, 3], [3, 1, 2, 0], "spearman") == pytest.approx(-0.8)
    # Items in only one ordering are ignored.
    assert A.rank_agreement([0, 9, 1, 2], [0, 1, 2, 8]) == 1.0
    with pytest.raises(ValueError):
        A.rank_agreement([0], [0])
    with pytest.raises(ValueError):
        A.rank_agreement([0, 1], [1, 0], "pearson")


def test_t_quantile_against_closed_forms():
    for p in (0.9, 0.975, 0.995):
        assert A.t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-9)
        assert A.t_quantile(p, 2) == pytest.approx(
            (2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-9
        )
    assert A.t_quantile(0.025, 2) == pytest.approx(-4.302652729911275, rel=1e-9)
    assert A.t_quantile(0.975, 9) == pytest.approx(2.2621571627409915, rel=1e-9)
    assert A.t_quantile(0.975, 1e7) == pytest.approx(1.959963984540054, rel=1e-6)


def test_mean_ci():
    df = pl.DataFrame(
        {"x": [1, 1, 1, 2, 3, 3], "seed": [1, 2, 3, 1, 1, 2], "y": [1.0, 2.0, 3.0, 5.0, 4.0, None]}
    )
    out = A.mean_ci(df, "x", "y")
    assert out.columns == ["x", "n", "mean", "std", "half_width", "ci_low", "ci_high"]
    assert out["x"].to_list() == [1, 2, 3]
    assert out["n"].to_list() == [3, 1, 1]
    assert out["mean"].to_list() == [2.0, 5.0, 4.0]
    t = (2 * 0.975 - 1) / math.sqrt(2 * 0.975 * 0.025)  # t_{0.975, 2}
    assert out["std"][0] == 1.0
    assert out["half_width"][0] == pytest.approx(t / math.sqrt(3))
    assert out["ci_low"][0] == pytest.approx(2 - t / math.sqrt(3))
    assert out["ci_high"][0] == pytest.approx(2 + t / math.sqrt(3))
    assert out["half_width"][1] is None and out["std"][1] is None


def test_mean_ci_groups_by_several_columns():
    df = pl.DataFrame({"a": ["p", "p", "q", "q"], "x": [1, 1, 1, 1], "y": [1.0, 3.0, 10.0, 10.0]})
    out = A.mean_ci(df, ["a", "x"], "y", level=0.9)
    assert rows_of(out, "a", "x", "n", "mean") == [("p", 1, 2, 2.0), ("q", 1, 2, 10.0)]
    t = math.tan(math.pi * (0.95 - 0.5))  # t_{0.95, 1}
    assert out["half_width"][0] == pytest.approx(t * math.sqrt(2) / math.sqrt(2))
    assert out["half_width"][1] == 0.0
