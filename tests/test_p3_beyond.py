"""Study 003 beyond the slides: F18, the smallest HZ per path against the timer grid's
prediction, and F10, the RTT rule where the estimate reads high; judged on synthetic runs (so
each verdict can be made to fail) and on real ones."""

from __future__ import annotations

import math

import pytest
from tcplab.reproduce.p3 import hz_map
from tcplab.reproduce.p3.constants import PACKET_BITS


def _run(error: float, truth: float = 100e6, n: int = 20) -> dict:
    """A run whose every estimate after 5 s is off by `error` (relative) from `truth`."""
    starts = [5.0 + 0.5 * i for i in range(n)]
    return {"meas": {"start_s": starts, "truth_bps": [truth] * n, "estimate_bps": [truth * (1 + error)] * n}}


def test_the_prediction_is_the_grid_half_step():
    # 1.2 Mb/s at HZ 100 (S6 L95): R_max = 12,000 bit × HZ.
    assert PACKET_BITS * 100 == 1.2e6
    # r/(2·ε·S·8): 100 Mb/s within 10 % needs R_max ≥ 500 Mb/s, HZ ≥ 41,667.
    assert hz_map.predicted_hz(100e6) == pytest.approx(41_666.67, rel=1e-6)
    assert hz_map.predicted_hz(10e6, 0.05) == pytest.approx(8_333.33, rel=1e-6)


def test_smallest_hz_needs_every_larger_hz_within_the_bound():
    by_hz = {1_000: [_run(0.5)], 10_000: [_run(0.05)], 20_000: [_run(0.2)], 50_000: [_run(0.02)], 100_000: [_run(0.01)]}
    # 10k is within 10 % but 20k is not: the smallest from which on every HZ holds is 50k.
    assert hz_map.smallest_hz(by_hz) == 50_000
    by_hz[100_000] = [_run(0.3)]
    assert hz_map.smallest_hz(by_hz) is None
    # A HZ with no result at all does not count as within the bound.
    assert hz_map.smallest_hz({1_000: [_run(0.01)], 2_000: [{"meas": {}}]}) is None


def _path(found_at: int, grid=hz_map.GRID) -> dict[int, list[dict]]:
    """Runs at 100 Mb/s free whose error is within 10 % from `found_at` on, 50 % below it."""
    return {h: [_run(0.01 if h >= found_at else 0.5)] * 3 for h in grid}


def test_f18_passes_within_one_grid_step_and_fails_further():
    # 100 Mb/s free: predicted 41,667, the grid's next HZ is 50,000; neighbours 20k and 100k pass.
    for found in (20_000, 50_000, 100_000):
        (c,) = hz_map.f18({"200Mbps": _path(found)})
        assert c.values["status"] == "pass", (found, c.measured)
        assert c.values["smallest_hz"] == found and not c.paper
    for found in (10_000, 200_000, 1_000_000):
        (c,) = hz_map.f18({"200Mbps": _path(found)})
        assert c.values["status"] == "FAIL", (found, c.measured)
    # Never within the bound: not exercised, and never a pass.
    (c,) = hz_map.f18({"200Mbps": {h: [_run(0.5)] * 3 for h in hz_map.GRID}})
    assert c.values["status"] == "not exercised" and not c.passed
    # An empty trace is not a pass either.
    (c,) = hz_map.f18({"200Mbps": {h: [{"meas": {}}] * 3 for h in hz_map.GRID}})
    assert c.values["status"] == "not exercised" and math.isnan(c.values["free_bps"])


def test_points_cover_each_path_with_its_access_links():
    pts = hz_map.points((1_000, 1_000_000))
    assert [(p, h) for _, _, p, h in pts] == [(p, h) for p in hz_map.PATHS for h in (1_000, 1_000_000)]
    for _, o, path, _ in pts:
        assert o["links.2.rate"] == path
        # the CBR takes half the bottleneck, and no access link is slower than the bottleneck
        rate = hz_map._bps(path)
        assert o["flows.1.cbr.schedule"] == [{"at": "0s", "rate": f"{rate / 2e6:g}Mbps"}]
        assert all(hz_map._bps(o[f"links.{i}.rate"]) >= rate for i in hz_map.LINKS)


def test_a_real_map_point_measures_near_its_truth():
    # One seed, the 200 Mb/s path at HZ 100,000 and 1,000: the fine grid within 10 %, the
    # coarse one (R_max 12 Mb/s, far below a 95 Mb/s free bandwidth) far from it.
    from tcplab.reproduce.p3.checks import errors
    from tcplab.reproduce.p3.runs import run

    pts = [p for p in hz_map.points((1_000, 100_000)) if p[2] == "200Mbps"]
    res = run([(s, o) for s, o, _, _ in pts], [1], hook_args={"measured": "imtcp"}, out=None, workers=1, cluster=None, name="t")
    coarse, fine = (sorted(errors(r[0])) for r in res)
    assert len(fine) > 50 and fine[len(fine) // 2] < 0.10
    assert len(coarse) > 10 and coarse[len(coarse) // 2] > 0.5


def _bg_run(cross_bps: float, bias: float, bg_bps: float = 10e6) -> dict:
    """A background run: the cross traffic at `cross_bps`, estimates off by `bias` after 5 s."""
    r = _run(bias)
    r["steady_bps"] = {"bg": bg_bps, "x": cross_bps}
    return r


def test_f10_judges_the_rule_only_where_the_estimate_reads_high():
    from tcplab.reproduce.p3 import beyond

    on = [_bg_run(50e6 + i * 1e5, 0.3 + 0.01 * i) for i in range(5)]
    off = [_bg_run(40e6 + i * 2e5, 0.3) for i in range(5)]
    c = beyond.f10(on, off, "TCP")
    assert c.values["status"] == "pass" and not c.paper
    # The rule costing the cross traffic instead: FAIL.
    assert beyond.f10(off, on, "TCP").values["status"] == "FAIL"
    # Differences that straddle 0: inconclusive.
    mixed = [_bg_run(45e6 + (1 if i % 2 else -1) * 1e6, 0.3) for i in range(5)]
    assert beyond.f10(mixed, [_bg_run(45e6, 0.3)] * 5, "TCP").values["status"] == "inconclusive"
    # An estimate not shown high (here unbiased, or no result at all): not exercised, never a pass.
    unbiased = [_bg_run(50e6, 0.0) for _ in range(5)]
    assert beyond.f10(unbiased, off, "TCP").values["status"] == "not exercised"
    empty = [{"steady_bps": {"bg": 1e6, "x": 50e6}} for _ in range(5)]
    c = beyond.f10(empty, off, "TCP")
    assert c.values["status"] == "not exercised" and not c.passed


def _pair(late_frac: float, seconds: int = 600) -> dict:
    """Two flows' 100 ms bins: the latecomer carries `late_frac` of 100 Mb/s from 90 s on."""
    t = [round(0.1 * (i + 1), 6) for i in range(10 * seconds)]
    late = [100e6 * late_frac if x > 90 else 0.0 for x in t]
    return {"bins": {"time_s": t, "bg": [100e6 - v for v in late], "late": late}}


def test_the_latecomer_share_and_its_verdict():
    from tcplab.reproduce.p3 import beyond

    assert beyond.late_share(_pair(0.9)) == pytest.approx(0.9)
    assert math.isnan(beyond.late_share({"bins": {}}))
    runs = {"ledbat": {3000: [_pair(0.9 + 0.01 * i) for i in range(5)], 1000: [_pair(0.4 + 0.01 * i) for i in range(5)]},
            "reno": {3000: [_pair(0.5)] * 5, 1000: [_pair(0.5)] * 5}}
    verdicts = {c.values["buffer"]: c.values["status"] for c in beyond.latecomer(runs)}
    assert verdicts == {1000: "FAIL", 3000: "pass"}
    # No bins (an empty trace): never a pass.
    (c,) = beyond.latecomer({"ledbat": {3000: [{"bins": {}}] * 5}})
    assert c.values["status"] == "inconclusive" and not c.passed
    # The points: the second flow of the same controller from 90 s, the window never binding.
    for _, o, cc, q in beyond.latecomer_points():
        assert o["flows.0.tcp"]["cc"] == o["flows.1"]["tcp"]["cc"] == cc and o["flows.1"]["start"] == "90s"
        assert o["queue(r1->dn)"] == f"{q}pkts" and o["defaults.tcp.sndbuf"] == "8MB"


def test_block_e_judges_the_error_with_delayed_acks_against_an_ack_per_segment():
    from tcplab.reproduce.p3 import beyond

    worse = [_run(1.0 + 0.01 * i) for i in range(5)]
    fine = [_run(0.05 + 0.01 * i) for i in range(5)]
    c = beyond.delayed_acks(worse, fine, "UDP")
    assert c.values["status"] == "pass" and not c.paper
    assert beyond.delayed_acks(fine, worse, "UDP").values["status"] == "FAIL"
    # No results with delayed ACKs: no verdict either way, never a pass.
    c = beyond.delayed_acks([{"meas": {}}] * 5, fine, "UDP")
    assert c.values["status"] == "inconclusive" and not c.passed
    assert beyond.DELAYED_ACKS == {"flows.0.tcp.delack_segments": 2, "flows.0.tcp.imtcp.delayed_ack": "warn"}


def _probe(error: float, top_bps: float) -> dict:
    r = _run(error)
    r["meas"]["high_bps"] = [top_bps] * len(r["meas"]["start_s"])
    return r


def test_f5_and_f6_judge_the_adaptive_range_against_the_fixed_one():
    from tcplab.reproduce.p3 import ablation

    arms = {"adaptive/10": [_probe(0.10 + 0.001 * i, 60e6 + 1e5 * i) for i in range(5)],
            "fixed/10": [_probe(0.30 + 0.001 * i, 100e6) for i in range(5)],
            "fixed/20": [_probe(0.15, 100e6)] * 5, "fixed/40": [_probe(0.05, 100e6)] * 5}
    f5, f6 = ablation.f5(arms), ablation.f6(arms)
    assert (f5.values["status"], f6.values["status"]) == ("pass", "pass") and f5.paper and f6.paper
    assert f6.values["match_packets"] == 40
    # The adaptive range probing faster than the fixed one fails F5.
    faster = {**arms, "adaptive/10": [_probe(0.1, 150e6 + 1e5 * i) for i in range(5)]}
    assert ablation.f5(faster).values["status"] == "FAIL"
    # The fixed range as accurate at 10 packets: it needs no more packets, F6 fails.
    same = {**arms, "fixed/10": [_probe(0.05 + 0.001 * i, 100e6) for i in range(5)]}
    assert ablation.f6(same).values["status"] == "FAIL"
    # No results at all: never a pass.
    empty = {k: [{"meas": {}}] * 5 for k in arms}
    assert ablation.f5(empty).values["status"] != "pass" and ablation.f6(empty).values["status"] != "pass"
    # The arms differ only in the range and the packets per stream.
    pts = ablation.points()
    assert [(o["flows.0.tcp.imtcp.range"], o["flows.0.tcp.imtcp.packets"]) for _, o in pts] == list(ablation.ARMS.values())
    assert all(o["flows.0.tcp.imtcp.initial"] == "link" for _, o in pts)


def test_tcp_lp_at_1khz_cycles_through_slow_start_from_one_segment():
    # Why TCP-LP on Linux hosts at HZ 1000 keeps 0.10-0.16 of the free bandwidth beside the
    # CBR (README, block D): its early indications never touch ssthresh (tcp_lp.c), so the
    # flow is always in slow start; a slow start's bursts raise the one-way delay past the
    # threshold at about 100 segments (halved), the queue they built lifts the smoothed delay
    # past the reset threshold within the inference time-out (one segment), and the window
    # stays frozen for three RTTs before slow start begins again from one segment. No packet
    # is lost: the yielding is all delay-based.
    import numpy as np
    import polars as pl
    import tcplab
    from tcplab.reproduce.p3.constants import LINUX_1KHZ
    from tcplab.reproduce.scenarios import study_scenario

    r = tcplab.run(study_scenario("p3_imtcp", "background"), seed=1,
                   overrides={"flows.0.tcp.cc": "tcp-lp", **LINUX_1KHZ, "trace.cwnd": True, "run.duration": "10s"})
    bg = r.flows.filter(pl.col("name") == "bg").row(0, named=True)
    assert bg["retransmits"] == 0 and bg["timeouts"] == 0
    cw = r.traces["cwnd"].filter(pl.col("flow") == bg["id"])
    assert cw.height > 1000 and cw["ssthresh_bytes"].is_nan().all()  # never set: always slow start
    seg = (cw["cwnd_bytes"].to_numpy() // 1448).astype(int)
    to_one = np.flatnonzero((seg[1:] == 1) & (seg[:-1] > 1)) + 1
    halved = np.flatnonzero((seg[:-1] > 4) & (seg[1:] > 1) & (seg[1:] <= seg[:-1] // 2 + 1)) + 1
    assert len(to_one) >= 15 and abs(len(halved) - len(to_one)) <= 1
    # Each drop to one segment follows a halving from near 100 segments, within one cycle.
    assert 80 <= np.median(seg[halved - 1]) <= 120 and 40 <= np.median(seg[to_one - 1]) <= 60
    free_bps = 70e6  # the 100 Mb/s line less the CBR's 30 Mb/s over the first 20 s
    assert bg["goodput_bps"] < 0.2 * free_bps


def test_bg_delayed_acks_judges_the_cross_traffic_s_drop_paired():
    from tcplab.reproduce.p3 import beyond

    def run(bg: float, cross: float) -> dict:
        return {"steady_bps": {"bg": bg, "udp": cross}, "meas": {}}

    alone = [run(0.0, 50e6) for _ in range(5)]
    every = [run(20e6, 50e6 * (0.99 - 0.001 * i)) for i in range(5)]
    pushes = [run(40e6, 50e6 * (0.80 + 0.002 * i)) for i in range(5)]
    c = beyond.bg_delayed_acks(pushes, every, alone, "TCP", rule_off=every)
    assert c.status == "pass" and not c.paper and "RTT rule off" in c.measured
    assert beyond.bg_delayed_acks(every, pushes, alone, "TCP").status == "FAIL"
    assert beyond.bg_delayed_acks(every, every, alone, "TCP").status == "inconclusive"
