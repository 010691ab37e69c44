"""Study 003, block C: ImTCP-bg's rules read from the `cc_state` trace. `rules` on synthetic
rows (each rule made to hold and to break), then on a real run through the hook."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import tcplab
from tcplab.reproduce.p3 import control
from tcplab.reproduce.scenarios import study_scenario

NAN = math.nan


def frame(rows: list[dict]) -> dict:
    """Columns from rows with defaults: no recovery, Ā 40 Mb/s, RTT_min 30 ms (cap 150,000 B)."""
    base = {"time_s": 0.0, "cwnd_bytes": 100_000, "recovery": 0, "avail_bps": 40e6, "rtt_min_s": 0.03, "cap_bytes": 150_000.0,
            "rtt_cur_s": 0.031, "acks": 0, "round": 0, "cuts": 0, "cut_round": NAN, "cut_from_bytes": NAN, "results": 1}
    full = [base | r for r in rows]
    return {k: np.asarray([r[k] for r in full]) for k in base}


def acks(n: int, **kw) -> list[dict]:
    return [{"time_s": 5.0 + 0.01 * i, "acks": i + 1, "round": i // 10} | kw for i in range(n)]


def test_the_cap_rule_and_its_binding_share():
    ok = control.rules(frame(acks(100)), [40e6], 6.0)
    assert ok["acted"] == 100 and ok["above_cap"] == 0 and ok["at_cap_share"] == 0.0
    above = frame(acks(100))
    above["cwnd_bytes"][50] = 150_001
    assert control.rules(above, [40e6], 6.0)["above_cap"] == 1
    # In recovery the connection sets the window: not read.
    rec = frame(acks(100))
    rec["cwnd_bytes"][50], rec["recovery"][50] = 200_000, 1
    assert control.rules(rec, [40e6], 6.0)["above_cap"] == 0
    at = frame(acks(100, cwnd_bytes=150_000))
    assert control.rules(at, [40e6], 6.0)["at_cap_share"] == pytest.approx(1.0)


def test_the_smoothing_is_checked_after_every_result():
    est = [40e6, 80e6]
    rows = acks(3) + [{"time_s": 6.0, "acks": 3, "results": 2, "avail_bps": 45e6}]
    assert control.rules(frame(rows), est, 7.0)["b1_bad"] == 0  # 40 · 7/8 + 80/8 = 45
    rows[-1]["avail_bps"] = 50e6
    assert control.rules(frame(rows), est, 7.0)["b1_bad"] == 1


def test_an_rtt_cut_must_follow_a_trigger_exactly_once_per_round():
    # ACK 2's sample is 60 ms against RTT_min 30 ms (δ = 1.4): the window halves.
    rows = acks(2) + [{"time_s": 6.0, "acks": 3, "round": 1, "rtt_cur_s": 0.06, "cuts": 1, "cut_round": 1, "cut_from_bytes": 100_000,
                       "cwnd_bytes": 50_000}]
    good = control.rules(frame(rows), [40e6], 7.0)
    assert (good["triggers"], good["cuts"], good["missed"], good["inexact"]) == (1, 1, 0, 0)
    # A second trigger in the same round needs no cut; in a new round it does.
    same = rows + [{"time_s": 6.1, "acks": 4, "round": 1, "rtt_cur_s": 0.06, "cuts": 1, "cut_round": 1, "cut_from_bytes": 100_000, "cwnd_bytes": 50_000}]
    assert control.rules(frame(same), [40e6], 7.0)["missed"] == 0
    new = rows + [{"time_s": 6.1, "acks": 4, "round": 2, "rtt_cur_s": 0.06, "cuts": 1, "cut_round": 1, "cut_from_bytes": 100_000, "cwnd_bytes": 50_000}]
    assert control.rules(frame(new), [40e6], 7.0)["missed"] == 1
    wrong = [dict(r) for r in rows]
    wrong[-1]["cwnd_bytes"] = 80_000
    assert control.rules(frame(wrong), [40e6], 7.0)["inexact"] == 1
    untriggered = [dict(r) for r in rows]
    untriggered[-1]["rtt_cur_s"], untriggered[-1]["cwnd_bytes"] = 0.035, 85_714  # the formula's value, but no trigger
    assert control.rules(frame(untriggered), [40e6], 7.0)["inexact"] == 1


def _run(**kw) -> dict:
    return {"acted": 100, "above_cap": 0, "at_cap_share": 0.5, "results": 10, "b1_bad": 0, "samples": 100, "triggers": 5, "cuts": 5,
            "missed": 0, "inexact": 0} | kw


def test_the_checks_pass_fail_and_are_not_exercised_as_their_criteria_say():
    good = [_run() for _ in range(3)]
    c24, c25 = control.f24(good, "UDP"), control.f25(good, "UDP")
    assert (c24.status, c25.status, control.f26(good, c24, c25, "UDP").status) == ("pass", "pass", "pass")
    loose = [_run(at_cap_share=0.0) for _ in range(3)]
    c24 = control.f24(loose, "UDP")
    assert c24.status == "not exercised" and control.f26(loose, c24, control.f25(loose, "UDP"), "UDP").status == "not exercised"
    assert control.f24([_run(above_cap=1)], "UDP").status == "FAIL"
    assert control.f25([_run(missed=1)], "UDP").status == "FAIL"
    assert control.f25([_run(triggers=0, cuts=0)], "UDP").status == "not exercised"
    bad8 = [_run(b1_bad=1)]
    assert control.f26(bad8, control.f24(bad8, "UDP"), control.f25(bad8, "UDP"), "UDP").status == "FAIL"


def test_the_rules_hold_on_a_real_run():
    r = tcplab.run(study_scenario("p3_imtcp", "background"), seed=1, overrides={"trace.cc_state": True, "run.duration": "10s"})
    d = json.loads(control.keep(r)["data"])
    assert d["acted"] > 1000 and d["results"] > 20 and d["triggers"] > 0 and d["cuts"] > 0
    assert (d["above_cap"], d["b1_bad"], d["missed"], d["inexact"]) == (0, 0, 0, 0)
    frame = r.cc_state("bg")
    assert "cap_bytes" in frame.columns and "v9" not in frame.columns
    with pytest.raises(KeyError, match="not a TCP flow"):
        r.cc_state("udp")
