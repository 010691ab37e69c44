"""Study 003, block F: the bottleneck moves. The hook on real runs; the two checks on synthetic
data, so each verdict can be made to pass and to fail."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tcplab
from tcplab.reproduce.p3 import moving
from tcplab.reproduce.scenarios import study_scenario


@pytest.fixture(scope="module")
def runs():
    """Seed 1 of ImTCP-bg (with its measurements) and of the cross traffic alone."""
    out = {}
    for scenario, overrides, cc, _ in moving.points((50,)):
        if cc in ("imtcp-bg", "alone"):
            r = tcplab.run(study_scenario("p3_imtcp", scenario), overrides=overrides, seed=1)
            out[cc] = json.loads(moving.keep(r, measured="bg" if cc == "imtcp-bg" else None)["data"]) | {"seed": 1}
    return out


def test_the_truth_is_the_path_s_and_its_tight_link_moves(runs):
    for d in runs.values():
        b = d["bins"]
        assert len(b["time_s"]) == len(b["truth_bps"]) == len(b["cross2"]) == 400
        t = np.asarray(b["time_s"])
        tight = np.asarray(b["tight"])
        assert (tight[t <= moving.MOVE_S] == 0).all() and (tight[t > moving.MOVE_S + 1] == 1).mean() > 0.95
        # The second hop's cross traffic starts at the move; the first hop's runs throughout.
        assert sum(np.asarray(b["cross2"])[t <= moving.MOVE_S]) == 0
        assert d["rates"]["before"]["cross1"] == pytest.approx(30e6 * 1500 / 1528, rel=0.02)
    alone = runs["alone"]["rates"]
    assert alone["before"]["truth_bps"] > 2 * alone["after"]["truth_bps"] > 40e6
    m = runs["imtcp-bg"]["meas"]
    assert len(m["truth_bps"]) == len(m["estimate_bps"]) > 50
    # Each result's truth is the path's over its span: low after the move, high before.
    st, tr = np.asarray(m["start_s"]), np.asarray(m["truth_bps"])
    assert np.median(tr[(st > 5) & (st < 19)]) > 2 * np.median(tr[st > 25])


def _run(cross2: dict[str, float], bg_after: float = 20e6, truth_after: float = 30e6) -> dict:
    rates = {w: {"cross2": cross2[w] if w in cross2 else cross2["moved"], "bg": bg_after, "truth_bps": truth_after}
             for w in ("before", "transient", "after", "moved")}
    return {"rates": rates}


def test_background_passes_a_yielding_flow_and_fails_a_pushing_one():
    alone = [_run({"moved": 68e6}) for _ in range(5)]
    pushes = [_run({"moved": 68e6 * (0.9 + 0.001 * i)}) for i in range(5)]
    yields = [_run({"moved": 68e6 * (0.99 - 0.001 * i)}) for i in range(5)]
    ok = moving.background({"reno": pushes, "tcp-lp": pushes, "imtcp-bg": yields, "ledbat": pushes}, alone, 50)
    assert ok.status == "pass" and not ok.paper and ok.values["block"] == "F"
    bad = moving.background({"reno": yields, "tcp-lp": yields, "imtcp-bg": pushes, "ledbat": yields}, alone, 50)
    assert bad.status == "FAIL"
    assert "hop-2 buffer 50 pkts" in bad.measured and "ImTCP-bg reading" not in bad.measured
    staged = moving.background({"reno": pushes, "tcp-lp": pushes, "imtcp-bg": yields, "ledbat": pushes}, alone, 250, "stage")
    assert staged.values["case"] == "hop-2 buffer 250 pkts, ImTCP-bg reading stage"


def _measured(recover_at: int) -> dict:
    """Results every 0.1 s, truth 70 Mb/s then 30 from the move; the estimate stays at 70 until
    `recover_at` results after the move."""
    t = np.round(np.arange(5.1, 40.0, 0.1), 6)
    truth = np.where(t <= moving.MOVE_S, 70e6, 30e6)
    after = np.cumsum(t > moving.MOVE_S + 0.05)
    est = np.where((t > moving.MOVE_S) & (after >= recover_at), 30e6, 70e6)
    meas = {"time_s": t.tolist(), "start_s": (t - 0.05).tolist(), "estimate_bps": est.tolist(), "truth_bps": truth.tolist(),
            "low_bps": [60e6] * len(t), "high_bps": [80e6] * len(t), "flag": [0] * len(t), "packets": [40] * len(t)}
    bt = np.round(np.arange(1, 401) * 0.1, 6)
    return {"seed": 1, "meas": meas, "bins": {"time_s": bt.tolist(), "truth_bps": np.where(bt <= moving.MOVE_S, 70e6, 30e6).tolist()}}


def test_refind_judges_the_results_after_the_move():
    assert moving.refind([_measured(2)] * 3, 50).status == "pass"
    slow = moving.refind([_measured(20)] * 3, 50, "stage")
    assert slow.status == "FAIL" and not slow.paper and slow.values["case"].endswith("stage")


def test_points_cover_every_controller_and_the_cross_traffic_alone_at_each_buffer():
    pts = moving.points((50, 250))
    assert [(c, q) for _, _, c, q in pts] == [(c, q) for q in (50, 250) for c in (*moving.CCS, "alone")]
    assert all(o["queue(r2->r3)"] == f"{q}pkts" for _, o, _, q in pts)
    assert {s for s, _, c, _ in pts if c == "alone"} == {"moving_alone"}


def test_estimate_ratio_is_the_estimate_over_the_path_truth_on_each_side_of_the_move():
    run = _measured(10**6)  # the estimate stays at 70 Mb/s: right before the move, 70/30 after
    assert moving.estimate_ratio(run, after=False) == pytest.approx(1.0)
    assert moving.estimate_ratio(run, after=True) == pytest.approx(70 / 30)
    assert np.isnan(moving.estimate_ratio({"meas": {}}, after=True))
