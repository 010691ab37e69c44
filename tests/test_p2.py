"""Study 002 (the Data Reservoir): the findings table and its quotes, the noise rules, each
implemented check passing on the paper's pattern and failing when one thing is changed, the
per-run measures on a real small run, and the shipped scenarios' shared values."""

from __future__ import annotations

import math

import polars as pl
import pytest

import tcplab
from tcplab.reproduce import STUDY_NAMES
from tcplab.reproduce.findings import missing_quotes
from tcplab.reproduce.p2 import checks as p2_checks
from tcplab.reproduce.p2 import constants as c
from tcplab.reproduce.p2.checks_streams import CONTENDED_LINE
from tcplab.reproduce.p2.measures import copy_measures, run_measures
from tcplab.reproduce.scenarios import scenario_value, study_dir, study_scenario
from test_p2_streams import comet_table, competing_table, coupled_table, path_table, stream_columns, traced_table


def test_every_finding_is_read_with_its_quote_and_place():
    rows = p2_checks.findings_table()
    assert sorted(rows, key=lambda f: int(f[1:])) == [f"F{i}" for i in range(1, 36)]
    assert all(r["quote"] and r["place"] for r in rows.values())
    assert "p2" in STUDY_NAMES
    # The EVIDENCE note travels with the scenarios.
    assert (study_dir(c.STUDY) / "EVIDENCE.md").is_file()


def test_the_noise_rules_decided_before_the_runs():
    assert p2_checks.order([2, 3, 4, 5, 6], [1, 1, 1, 1, 1])[0]
    assert not p2_checks.order([2, 3, 0, 0, 6], [1, 1, 1, 1, 1])[0], "above in 60 % of seeds only"
    assert not p2_checks.order([1.1, 1.2, 1.0, 1.3, 5], [1, 1, 1, 1, 1])[0], "the gap is inside the IQR"
    assert p2_checks.level([0.3, 0.29, 0.31], 0.23, 0.33)[0]
    assert not p2_checks.level([0.5, 0.5, 0.5], 0.23, 0.33)[0]
    assert not p2_checks.level([0.1, 0.28, 0.5], 0.23, 0.33)[0], "too noisy to judge"


def _fla(value):
    """An FLA table over 10 seeds: every point of the plan (1×4×2 also with an ACK per segment),
    `value(servers, disks, loss, rtt, nic, seed)` giving the row's measures over the per-stream
    columns of `test_p2_streams`."""
    rows = []
    for (j, k) in c.FLA_SHAPES["full"]:
        for p in c.FLA_LOSSES["full"]:
            for rtt in c.FLA_RTTS_MS:
                for nic in (c.NIC_SHIPPED, "unlimited"):
                    for seed in range(1, 11):
                        for ack in ("delayed", "every") if (j, k, nic) == (4, 2, c.NIC_SHIPPED) else ("delayed",):
                            rows.append({"servers": j, "disks": k, "loss": p, "rtt_ms": rtt, "nic": nic, "seed": seed, "ack": ack,
                                         **stream_columns(j, p, rtt, ack, seed), **value(j, k, p, rtt, nic, seed)})
    return pl.DataFrame(rows)


def _paper_fla(j, k, p, rtt, nic, seed):
    """The paper's pattern: loss spreads rates, makes 1-2 stragglers and RTOs, 1×2×1's slow stream ~1.43×."""
    lossy = p > 0
    n = j
    finish = [70.0 + seed * 0.1] * n
    if lossy:
        finish[-1] = 100.0 + seed * 0.1
    mbps = [8e3 / f for f in finish]
    return {"agg_mbps": (40.0 if not lossy else 15.0) * j * k / 8 + seed * (0.01 if not lossy else 0.3),
            "retx_rate": (1e-4 if not lossy else 1e-3) + seed * 1e-6, "avg_over_peak": 0.9 if not lossy else 0.5 + seed * 0.001,
            "stream_cv": (0.05 if not lossy else 0.3) + seed * 0.001 + (0.0 if rtt == 200 else -0.2 if lossy else 0.0),
            "tail": 1 if lossy else 0, "last_over_median": max(finish) / sorted(finish)[len(finish) // 2] if lossy else 1.0,
            "timeouts": 2 if lossy else 0, "stream_finish_s": finish, "stream_mbps": [m * (10 if rtt == 20 else 1) for m in mbps]}


def test_the_fla_checks_pass_on_the_papers_pattern_and_fail_when_one_thing_changes():
    data = {"fla": _fla(_paper_fla), "plan": {"fla_losses": c.FLA_LOSSES["full"]}}
    for judge in (p2_checks._f9, p2_checks._f12, p2_checks._f13, p2_checks._f24, p2_checks._f34):
        ok, text, _ = judge(data)
        assert ok, f"{judge.__name__}: {text}"
    # No stragglers, no RTOs, equal streams, no spread: each fails.
    flat = _fla(lambda *a: _paper_fla(*a) | {"tail": 0, "timeouts": 0, "stream_cv": 0.01, "last_over_median": 1.0,
                                             "stream_finish_s": [70.0] * a[0]})
    data_flat = {"fla": flat, "plan": data["plan"]}
    for judge in (p2_checks._f9, p2_checks._f12, p2_checks._f13, p2_checks._f24, p2_checks._f34):
        ok, text, _ = judge(data_flat)
        assert not ok, f"{judge.__name__} passed a flat run: {text}"


def _local(seq, scat):
    """Fig. 4's runs, sequential and scattered, 3 seeds."""
    return pl.DataFrame([{"placement": p, "seed": k, "agg_mbps": (seq if p == "sequential" else scat) + k, "avg_over_peak": 0.99}
                         for p in ("sequential", "scattered") for k in (1, 2, 3)])


def _copy(shipped, inner=0.6):
    """Fig. 3's copy runs: average/peak `shipped` with the destination at the outer edge, lower inward."""
    return pl.DataFrame([{"dst_position": p, "seed": k, "avg_over_peak": (shipped if p == 0.0 else inner) + 0.001 * k,
                          "peak_mbps": 530.0, "avg_mbps": 530.0 * shipped} for p in (0.0, 0.5, 1.0) for k in (1, 2, 3)])


def test_the_copy_findings_need_the_copy_below_its_peak_and_below_the_reservoir():
    # F2: the copy's average/peak below 0.8 and below 1×4×2's (order); F3 needs the reverse order.
    good = {"local": _local(900.0, 400.0), "copy": _copy(0.6)}
    for judge in (p2_checks._f2, p2_checks._f3):
        ok, text, _ = judge(good)
        assert ok, f"{judge.__name__}: {text}"
    # A copy that sustains its peak (equal disks: the shipped reading) fails both, and the map is printed.
    flat = {"local": _local(900.0, 400.0), "copy": _copy(0.999)}
    for judge in (p2_checks._f2, p2_checks._f3):
        ok, text, _ = judge(flat)
        assert not ok and "1: 0.602" in text, f"{judge.__name__}: {text}"
    # Below the reservoir but not below 0.8: F2 fails on its level.
    assert not p2_checks._f2({"local": _local(900.0, 400.0), "copy": _copy(0.85)})[0]


def _ipv6(shift):
    """F10's IPv6 runs: the IPv4 FLA 1×4×2 at 200 ms of `_paper_fla`, every rate less `shift` Mb/s."""
    return _fla(_paper_fla).filter((pl.col("servers") == 4) & (pl.col("disks") == 2) & (pl.col("rtt_ms") == 200)
                                   & (pl.col("nic") == c.NIC_SHIPPED) & (pl.col("ack") == "delayed")).with_columns(pl.col("agg_mbps") - shift)


def test_ipv6_separates_from_ipv4_only_beyond_the_seeds_noise():
    data = {"fla": _fla(_paper_fla), "plan": {"fla_losses": c.FLA_LOSSES["full"]}}
    ok, text, _ = p2_checks._f10(data | {"ipv6": _ipv6(0.05)})
    assert ok, text
    ok, text, _ = p2_checks._f10(data | {"ipv6": _ipv6(5.0)})
    assert not ok and "separates them" in text, text
    assert not p2_checks._f10(data | {"ipv6": _ipv6(0.0).filter(pl.col("loss") == 0.0)})[0], "no IPv6 runs at the judged loss"


def _disk_only():
    return pl.DataFrame({"seed": [1, 1, 1], "file_position": [0.0, 1.0, 0.0], "placement": ["sequential", "sequential", "scattered"],
                         "agg_mbps": [1000.0, 500.0, 300.0]})


def test_the_placement_finding_needs_sequential_faster_beyond_the_noise():
    ok, text, _ = p2_checks._f4({"local": _local(900.0, 400.0), "disk_only": _disk_only()})
    assert ok and "2.2" in text and "3.33×" in text, text
    assert not p2_checks._f4({"local": _local(900.0, 899.0), "disk_only": _disk_only()})[0], "a gain within the seeds' noise"
    assert not p2_checks._f4({"local": _local(400.0, 900.0), "disk_only": _disk_only()})[0]
    assert p2_checks._f3({"local": _local(900.0, 400.0), "copy": _copy(0.6)})[0]
    assert p2_checks._f22({"disk_only": _disk_only()})[0], "F22 reads the sequential runs only"


def _comet_limit(held0, held20):
    """F19's runs: each mapped limit at 0, 20 and 200 ms; the limit's own rates `held0`, `held20`."""
    return pl.DataFrame([{"limit": lim, "rtt_ms": rtt, "seed": k, "agg_mbps": {0: held0, 20: held20, 200: 4.0}[rtt] + 0.01 * k}
                         for lim in ("400Mbps", "200Mbps") for rtt in (0, 20, 200) for k in range(1, 11)])


def test_the_processing_limit_explains_the_dip_only_if_it_spares_the_other_delays():
    comet = comet_table()  # 5 Mb/s at every delay, unlimited
    comet = comet.with_columns(pl.when(pl.col("rtt_ms") == 0).then(500.0).otherwise(pl.col("agg_mbps")).alias("agg_mbps"))
    ok, text, values = p2_checks._f19({"comet": comet, "comet_limit": _comet_limit(300.0, 5.0)})
    assert ok and values["explains"] == ["400Mbps", "200Mbps"], text
    ok, text, _ = p2_checks._f19({"comet": comet, "comet_limit": _comet_limit(300.0, 2.0)})
    assert not ok, f"a limit that also cuts 20 ms explains nothing: {text}"
    assert not p2_checks._f19({"comet": comet, "comet_limit": _comet_limit(500.0, 5.0)})[0], "no dip"


def test_rtos_must_mostly_follow_a_failed_fast_recovery():
    plan = {"fla_losses": c.FLA_LOSSES["full"]}
    assert p2_checks._f12({"fla": _fla(_paper_fla), "plan": plan})[0]
    clean = _fla(lambda *a: _paper_fla(*a) | {"s_rto_after_fr": [0] * a[0]})
    ok, text, _ = p2_checks._f12({"fla": clean, "plan": plan})
    assert not ok and "0 of 20 RTOs" in text, text


def _sc(knee_at):
    """Fig. 11: linear at 40 Mb/s per server up to `knee_at`, flat after; seed noise growing past it."""
    rows = []
    for j in c.SC_SERVERS["full"]:
        for seed in range(1, 6):
            base = 40.0 * min(j, knee_at) + (2.0 * max(0, j - knee_at))
            noise = (seed - 3) * (0.5 if j <= 8 else 8.0)
            rows.append({"servers": j, "seed": seed, "ip_mbps": base + noise, "agg_mbps": 0.96 * base + noise * 0.1})
    return pl.DataFrame(rows)


def test_the_scaling_knee_is_found_where_it_is_and_nowhere_when_scaling_is_linear():
    ok, text, values = p2_checks._f15({"sc": _sc(10)})
    assert ok and values["knee"] == 12, text
    assert p2_checks._f16({"sc": _sc(10)})[0]
    ok, text, _ = p2_checks._f15({"sc": _sc(100)})
    assert not ok and "no knee" in text
    ok, text, _ = p2_checks._f15({"sc": _sc(3)})
    assert not ok, text


def _shared(level, noise):
    """§4.2: 1×26×2 alone (Fig. 11's j = 26 runs, small seed noise) and beside cross traffic at
    `level` Mb/s with `noise` Mb/s of seed spread."""
    sc = pl.DataFrame([{"servers": 26, "seed": k, "agg_mbps": 550.0 + k * 0.5} for k in range(1, 6)])
    sh = pl.DataFrame([{"cross": n, "seed": k, "agg_mbps": level * 26 / n + (k - 3) * noise} for n in (8, 26, 52) for k in range(1, 6)])
    return {"sc": sc, "shared": sh}


def test_the_shared_case_is_calibrated_and_its_spread_judged():
    ok, text, values = p2_checks._f18(_shared(224.8, 10.0))
    assert ok and values["cross"] == [8, 26, 52], text
    assert not p2_checks._f18(_shared(400.0, 10.0))[0], "400 Mb/s at 26 flows is not 224.8"
    assert p2_checks._f14(_shared(224.8, 10.0))[0]
    assert not p2_checks._f14(_shared(224.8, 0.1))[0], "a steadier shared case"


def test_the_delay_ratio_is_judged_on_the_named_reading_only():
    def comet(ratio):
        rows = []
        for r in c.COMET_READINGS:
            for seed in range(1, 11):
                rows.append({"reading": r, "rtt_ms": 0, "seed": seed, "agg_mbps": 400.0})
                rows.append({"reading": r, "rtt_ms": 200, "seed": seed, "agg_mbps": 400.0 * (ratio if r == c.COMET_NAMED else 0.9) + seed * 0.1})
        return pl.DataFrame(rows)
    assert p2_checks._f20({"comet": comet(0.28)})[0]
    ok, text, _ = p2_checks._f20({"comet": comet(0.01)})
    assert not ok and "Other readings" in text


def test_every_finding_is_a_check_or_a_setup_sentence_and_not_run_ones_fail():
    data = {"fla": _fla(_paper_fla), "plan": {"fla_losses": c.FLA_LOSSES["full"]}, "sc": _sc(10),
            "local": _local(900.0, 400.0), "disk_only": _disk_only(), "copy": _copy(0.6), "ipv6": _ipv6(0.0),
            "comet": comet_table(), "traced": traced_table(), "path": path_table(5.0), "comet_limit": _comet_limit(300.0, 5.0),
            "coupled": coupled_table(), "competing": competing_table(),
            "sc_full": pl.DataFrame({"ip_mbps": [560.0], "l2_mbps": [565.0], "peak_l2_mbps": [580.0]}), "sc_full_label": "test"}
    data["shared"] = _shared(224.8, 10.0)["shared"]
    result = p2_checks.checks(data)
    assert len(result) == 35 - len(p2_checks.SETUP)
    assert [x.claim.split(":")[0] for x in result if not x.paper] == list(p2_checks.CALIBRATIONS)
    assert not missing_quotes(result)
    not_run = [x for x in result if x.measured.startswith("NOT RUN")]
    assert all(not x.passed for x in not_run)
    assert {x.claim.split(":")[0] for x in not_run} == set(p2_checks.MISSING)


def test_the_measures_of_a_real_run(tmp_path):
    path = study_scenario(c.STUDY, "local_gbe")
    r = tcplab.run(path, overrides={"flows.0.reservoir.file": "256MiB", "flows.0.reservoir.servers": 2})
    m = run_measures(r)
    assert m["finished"] == m["streams"] == 2
    # 256 MiB of file bytes over GbE with 38-byte Ethernet framing: below the payload ceiling.
    ceiling = 1e3 * 1448 / (1500 + 38) * 8192 / 8240
    assert 0.6 * ceiling < m["agg_mbps"] < ceiling, m["agg_mbps"]
    assert 2 * (128 << 20) * 8 / 1e6 / m["span_s"] == pytest.approx(m["agg_mbps"])
    assert 0.5 < m["avg_over_peak"] <= 1.0 + 1e-9, m["avg_over_peak"]
    # A transfer shorter than one bin has no peak to judge.
    short = run_measures(tcplab.run(path, overrides={"flows.0.reservoir.file": "16MiB"}))
    assert math.isnan(short["avg_over_peak"])
    # Without the milestones the file bytes are unknown: refused, not zero.
    r2 = tcplab.run(path, overrides={"flows.0.reservoir.file": "8MiB", "trace.milestones": False})
    with pytest.raises(ValueError, match="milestones"):
        run_measures(r2)


def test_the_copy_measures_of_a_real_run():
    # 64 MiB through the shipped copy: every byte delivered, the peak a whole 1 s bin near the
    # source disk's rate, average/peak at most 1; a slower destination (inner edge, a cache
    # smaller than the file) falls below its peak.
    path = study_scenario(c.STUDY, "fs_copy")
    m = copy_measures(tcplab.run(path, overrides={"flows.0.fs_copy.file": "256MiB"}))
    assert 400 < m["peak_mbps"] < 600 and 0.9 < m["avg_over_peak"] <= 1.0 + 1e-9, m
    slow = copy_measures(tcplab.run(path, overrides={"flows.0.fs_copy.file": "256MiB", "flows.0.fs_copy.cache": "64MiB",
                                                     "flows.0.fs_copy.dst_position": 1.0}))
    assert slow["avg_over_peak"] < 0.85, slow
    with pytest.raises(ValueError, match="no flow named"):
        copy_measures(tcplab.run(path, overrides={"flows.0.fs_copy.file": "8MiB"}), flow="nope")


def test_the_shipped_scenarios_share_the_hosts_and_the_nic_queue():
    for name in ("fla", "sc2002", "sc2002_shared", "comet", "local_gbe"):
        path = study_scenario(c.STUDY, name)
        assert scenario_value(path, "defaults.tcp.profile") == "linux-2.4.18", name
        assert scenario_value(path, "links.0.queue_a") == c.NIC_SHIPPED, name
    assert scenario_value(study_scenario(c.STUDY, "sc2002"), "flows.0.reservoir.servers") == 26
    assert math.isclose(c.POS_IP_MBPS, 596.653, abs_tol=1e-3)


def test_the_report_median_leaves_out_runs_without_the_value():
    # A run without a loss has no "cwnd at the first loss": the report's table must print the
    # median of the runs that have one, or NaN when none has, never fail on the gap.
    from tcplab.reproduce.p2.report import _median
    t = pl.DataFrame({"loss": [0.0, 0.0, 1e-4, 1e-4, 1e-4], "x": [None, None, 1.0, 3.0, None]})
    assert math.isnan(_median(t, "x", loss=0.0))
    assert _median(t, "x", loss=1e-4) == 2.0


def test_a_run_two_experiments_share_is_run_once_and_the_quick_plan_is_smaller(tmp_path):
    # The study keeps one store (`out/runs/`): the slow-start comparison's NewReno rows are the
    # FLA experiment's 1×4×2 runs at 200 ms as shipped, the same resolved scenario, so they are
    # read from the store, not run again.
    from tcplab.reproduce.p2 import runs
    from tcplab.reproduce.p2.study import Plan

    out = tmp_path / "runs"
    fla = runs.run_fla(((4, 2),), (0.0,), (200,), [1], out=out, workers=1)
    executed = len((out / "runs.log").read_text().splitlines())
    assert executed == 3  # as shipped, NIC queue unlimited, an ACK per segment
    ss = runs.run_slow_start((0.0,), [1], out=out, workers=1)
    assert len((out / "runs.log").read_text().splitlines()) == executed + len(runs.SLOW_STARTS) - 1
    shipped = fla.filter((pl.col("nic") == c.NIC_SHIPPED) & (pl.col("ack") == "delayed"))
    newreno = ss.filter(pl.col("variant") == "newreno")
    assert newreno["key"].to_list() == shipped["key"].to_list()
    assert newreno["agg_mbps"].to_list() == shipped["agg_mbps"].to_list()
    # --quick: two Comet Drop readings (the judged one first), FLA's other readings and the
    # coordinated windows at the lossy point, neither the map nor the slow-start comparison,
    # F19's largest and smallest processing limits, F35's competing flow on the line it is
    # judged on.
    quick, full = Plan.make(True), Plan.make(False)
    assert quick.comet_readings[0] == c.COMET_NAMED and set(quick.comet_readings) < set(full.comet_readings)
    assert quick.map_losses == () and full.map_losses == full.fla_losses
    assert quick.coupled_losses == (1e-4,) and full.coupled_losses == full.fla_losses
    assert quick.fla_extra_losses == (1e-4,) and full.fla_extra_losses == full.fla_losses
    assert quick.slow_start_losses == () and full.slow_start_losses == full.fla_losses
    assert quick.competing_lines == (CONTENDED_LINE,) and full.competing_lines == tuple(runs.COMPETING_LINES)
    with pytest.raises(ValueError, match="lines"):
        runs.run_competing(1.0, [1], lines=("1Gbps",), out=out, workers=1)
    assert quick.comet_limits == ("400Mbps", "100Mbps") and full.comet_limits == runs.PROCESSING_LIMITS
