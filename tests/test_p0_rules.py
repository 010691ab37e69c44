"""Study 000's checks and map judged on made-up runs: each rule passes on the paper's own
pattern and fails when one thing about it is changed, so no check is unable to fail."""

from __future__ import annotations

import copy
import math

import polars as pl
import pytest

from tcplab.reproduce.p0 import map as p0_map
from tcplab.reproduce.p0.checks import checks
from tcplab.reproduce.p0.constants import ACK_POLICIES, FINDINGS
from tcplab.reproduce.p0.runs import judge


def _run(seed: int, **changes):
    """Per-run stats of a run that matches the paper: sent 0, 2, 1, 3; lost 3, 1, 2, 0 at 5 s;
    stream 3 slowest; unfair to the end, the spread shrinking."""
    r = {
        "seed": seed, "jain": 0.85, "util": 0.99, "means_mbps": [350.0, 200.0, 300.0, 140.0],
        "first_loss_s": 5.1, "first_loss_order": [3, 1, 2, 0], "start_order": [0, 2, 1, 3],
        "kendall_tau": 1.0, "exact_reverse": True, "first_loser_slowest": True,
        "spread_early": 0.5, "spread_late": 0.4, "jain_end": 0.9,
    }
    r.update(changes)
    return r


def _fair(seed: int, **changes):
    r = {"seed": seed, "jain": 0.999, "util": 0.99, "means_mbps": [248.0, 249.0, 250.0, 247.0]}
    r.update(changes)
    return r


def _data(sim=None, rounds=None):
    sim = sim or [_run(s) for s in (1, 2, 3)]
    rounds = rounds or [
        {"seed": s, "order_kept": True, "rounds_before_loss": 15, "gaps_s": [0.002, 0.004, 0.01, 0.03],
         "first_round_spread_s": 0.002} for s in (1, 2, 3)
    ]
    fair = [_fair(s) for s in (1, 2, 3)]
    return {
        "plan": {"window": (9.9, 99.9)}, "simultaneous": sim, "simultaneous_rounds": rounds,
        "staggered": fair, "decp": fair, "harmonizer": fair, "cubic_staggered": fair,
    }


def _verdicts(data):
    return {(c.figure, c.claim.split(":")[0]): c.passed for c in checks(data)}


def test_the_papers_pattern_passes_every_check():
    v = checks(_data())
    assert all(c.passed for c in v), [(c.figure, c.claim) for c in v if not c.passed]


@pytest.mark.parametrize(
    ("change", "figure", "words"),
    [
        ({"first_loss_s": 2.77}, "Fig. 4", "until about 5 s"),
        ({"first_loss_s": math.nan}, "Fig. 4", "until about 5 s"),
        ({"jain": 0.99}, "Fig. 4", "diverge"),
        ({"jain_end": 0.97}, "Fig. 4", "persist"),
        ({"spread_late": 0.6}, "Fig. 4", "persist"),
        ({"first_loser_slowest": False}, "Fig. 4", "stays the slowest"),
        ({"exact_reverse": False, "first_loss_order": [3, 2, 1, 0]}, "Figs. 5–7", "exactly the reverse"),
        ({"kendall_tau": -0.33}, "Figs. 5–7", "likelier to lose"),
    ],
)
def test_each_check_fails_when_the_runs_differ_from_the_paper(change, figure, words):
    data = _data(sim=[_run(s, **change) for s in (1, 2, 3)])
    [c] = [c for c in checks(data) if c.figure == figure and words in c.claim]
    assert not c.passed, c.measured
    # One seed of three differing is not enough to fail a majority rule.
    data = _data(sim=[_run(1, **change), _run(2), _run(3)])
    [c] = [c for c in checks(data) if c.figure == figure and words in c.claim]
    assert c.passed, c.measured


def test_round_checks_fail_when_the_order_changes_or_the_gap_shrinks():
    base = _data()
    for change, words in (({"order_kept": False}, "send order is kept"), ({"gaps_s": [0.002, 0.004, 0.003, 0.03]}, "grows round")):
        data = copy.deepcopy(base)
        for r in data["simultaneous_rounds"]:
            r.update(change)
        [c] = [c for c in checks(data) if words in c.claim]
        assert not c.passed, c.measured
    data = copy.deepcopy(base)
    for r in data["simultaneous_rounds"]:
        r["gaps_s"] = [0.002, 0.003, 0.004, 0.005]  # grows, but less than 3×
    [c] = [c for c in checks(data) if "grows round" in c.claim]
    assert not c.passed


def test_staggered_and_remedy_checks_judge_rate_and_utilisation():
    data = _data()
    data["staggered"] = [_fair(1), _fair(2), _fair(3, means_mbps=[300.0, 200.0, 250.0, 240.0], jain=0.985)]
    [c] = [c for c in checks(data) if c.figure == "Fig. 9" and "250 Mb/s" in c.claim]
    assert not c.passed
    data = _data()
    data["decp"] = [_fair(s, util=0.7) for s in (1, 2, 3)]
    [c] = [c for c in checks(data) if "DECP" in c.claim]
    assert not c.passed and not c.paper and "utilisation 0.700" in c.measured


def test_map_judges_runs_by_the_same_rules_and_counts_per_point():
    good = _run(1)
    assert judge(good, _fair(1)) == dict.fromkeys(FINDINGS, True)
    late = judge(_run(1, first_loss_s=6.6, jain_end=0.97), _fair(1, util=0.9))
    assert not late["first_loss"] and not late["persists"] and not late["shrinks"] and late["unfair"]
    assert not late["staggered_full"] and late["staggered_fair"]
    assert not judge(good, _fair(1, means_mbps=[280.0, 240.0, 240.0, 240.0]))["staggered_fair"]
    rows = []
    for seed, stats in ((1, good), (2, good), (3, _run(3, exact_reverse=False))):
        rows.append({"ack": "every", "ssthresh": 0, "skew_s": 0.002, "buffer_pkts": 500, "seed": seed,
                     **{k: stats[k] for k in ("jain", "util", "first_loss_s")}, "staggered_jain": 0.999,
                     "staggered_util": 0.99, **judge(stats, _fair(seed))})
    [point] = p0_map.map_table(rows)
    assert point["runs"] == 3 and point["exact_reverse"] == 2 and point["first_loss"] == 3
    assert point["majority"] == len(FINDINGS)
    assert point["first_loss_s"] == pytest.approx(5.1)


def test_map_plans_cover_the_unknowns_the_issue_names():
    full = p0_map.MapPlan.make(False)
    assert min(full.buffers) == 100 and max(full.buffers) == 4000
    assert len(full.seeds) >= 10 and full.duration_s == 100.0
    assert set(full.acks) == set(ACK_POLICIES) and set(full.ssthresholds) == {0, 100}
    assert len(full.points()) == len(full.buffers) * (len(full.acks) * 2 + len(full.skews_s) - 1)


def test_route_cache_keeps_the_ssthresh_linux_2_6_16_saves_at_close():
    from tcplab.reproduce.p0.runs import cached_ssthresh

    # Congestion avoidance in the Open state: max(cwnd/2, ssthresh), whatever was cached.
    assert cached_ssthresh(1000, 400, True) == 500
    assert cached_ssthresh(1000, 800, True, cached=2000) == 800
    # In recovery (not Open) or with cwnd ≤ ssthresh: only raises an existing metric.
    assert cached_ssthresh(1000, 800, False) == 0
    assert cached_ssthresh(1000, 800, False, cached=300) == 800
    assert cached_ssthresh(700, 800, True, cached=900) == 900
    # Slow start not finished: an existing metric is raised to cwnd/2, none is created.
    assert cached_ssthresh(1000, 0xFFFF, True) == 0
    assert cached_ssthresh(1000, 0xFFFF, True, cached=300) == 500
    # A backed-off retransmission timer saves nothing.
    assert cached_ssthresh(1000, 400, True, cached=300, backoff=1) == 300


def test_a_repeated_run_starts_each_stream_from_its_cached_ssthresh():
    from tcplab.reproduce.p0.constants import SEGMENT_BYTES
    from tcplab.reproduce.p0.runs import repeated_run_overrides, run_p0

    # At 8 s streams 1 and 2 are still recovering (not Open) and nothing was cached before,
    # so only streams 0 and 3 leave a metric; the others start the next run uncapped.
    first = run_p0("simultaneous", 1, 8.0)
    over = repeated_run_overrides(first, SEGMENT_BYTES)
    assert sorted(over) == ["flows.0.tcp.initial_ssthresh", "flows.3.tcp.initial_ssthresh"]
    last = first.trace("cwnd").sort("time_s").group_by("flow", maintain_order=True).last().sort("flow")
    for row in last.filter(pl.col("flow").is_in([0, 3])).iter_rows(named=True):
        value = int(over[f"flows.{row['flow']}.tcp.initial_ssthresh"].removesuffix("B"))
        assert value % SEGMENT_BYTES == 0
        assert value >= row["ssthresh_bytes"] // SEGMENT_BYTES * SEGMENT_BYTES  # max(cwnd/2, ssthresh) or ssthresh
    second = run_p0("simultaneous", 1, 8.0, over)
    start = second.trace("cwnd").sort("time_s").group_by("flow", maintain_order=True).first().sort("flow")
    for row in start.iter_rows(named=True):
        key = f"flows.{row['flow']}.tcp.initial_ssthresh"
        if key in over:
            assert row["ssthresh_bytes"] == int(over[key].removesuffix("B"))
        else:
            assert row["ssthresh_bytes"] is None  # unlimited: null in Result.trace("cwnd")
