"""Study 001's checks on made-up means (each passes on the paper's pattern and fails when one
thing is changed), and the paper's checks on real runs at reduced size."""

from __future__ import annotations

import polars as pl
import pytest

from tcplab.reproduce.findings import missing_quotes
from tcplab.reproduce.p1 import constants as p1_constants
from tcplab.reproduce.p1 import runs as p1_runs
from tcplab.reproduce.p1.checks import checks, timeout_bound_mbps

NS = (16, 64, 256)

# The paper's pattern, model by model: goodput (Mb/s) and NIR per scheme and N.
PATTERN = {
    "standard": ([20, 15, 10], [1.2, 1.2, 1.3]),
    "FGTCP": ([860, 600, 450], [1.2, 1.3, 1.4]),
    "LNRTCP": ([870, 880, 900], [1.2, 1.6, 2.0]),
    "HYBTCP": ([865, 870, 890], [1.2, 1.5, 1.8]),
    "AHTCP": ([860, 850, 860], [1.2, 1.35, 1.5]),
}


def _summary(changes: dict[tuple[str, str, int], tuple[float, float]] | None = None) -> pl.DataFrame:
    rows = []
    for model, scale in (("A", 1.0), ("B", 2.0)):
        for scheme, (gs, nirs) in PATTERN.items():
            for n, g, x in zip(NS, gs, nirs, strict=True):
                g, x = (changes or {}).get((model, scheme, n), (g * scale, x))
                rows.append({"model": model, "scheme": scheme, "servers": n, "goodput_mbps": float(g), "nir": float(x)})
    return pl.DataFrame(rows)


def _runs(nir_clean: float = 1.0, best: float = 900.0) -> pl.DataFrame:
    return pl.DataFrame({"model": ["A", "A", "B", "A"], "dropped": [0, 10, 5, 900], "nir": [nir_clean, 1.3, 1.4, 0.1],
                         "goodput_mbps": [best, 500.0, 1800.0, 5.0], "unfinished": [0, 0, 0, 64]})


def _verdicts(summary: pl.DataFrame, runs: pl.DataFrame | None = None) -> dict[tuple[str, str], bool]:
    return {(c.location, c.claim[:40]): c.passed for c in checks(summary, _runs() if runs is None else runs) if c.paper}


def test_every_finding_holds_on_the_papers_pattern_and_quotes_its_sentence():
    result = checks(_summary(), _runs())
    paper = [c for c in result if c.paper]
    assert len(paper) == 12
    assert all(c.passed for c in paper), [(c.location, c.measured) for c in paper if not c.passed]
    assert missing_quotes(result) == []


@pytest.mark.parametrize(
    ("change", "location"),
    [
        ({("A", "standard", 64): (200.0, 1.2)}, "§2.1 s8"),  # no collapse
        ({("A", "standard", 16): (60.0, 1.2)}, "§2.1 s7"),  # above the one-timeout bound (40 Mb/s)
        ({("A", "FGTCP", 256): (850.0, 1.4)}, "§2.2 s2"),  # FGTCP does not degrade
        ({("A", "LNRTCP", 64): (600.0, 1.6)}, "§2.2 s5"),  # LNRTCP does not hold
        ({("A", "HYBTCP", 256): (890.0, 1.3)}, "§2.2 s6"),  # HYBTCP's NIR below FGTCP's
        ({("A", "AHTCP", 64): (590.0, 1.35)}, "§4.3 s5"),  # AHTCP below FGTCP (and far below LNR)
        ({("A", "AHTCP", 256): (910.0, 1.5)}, "§4.3 s5"),  # AHTCP above LNRTCP, not "slightly lower"
        ({("A", "AHTCP", 256): (860.0, 2.1)}, "§4.3 s6"),  # NIR above LNRTCP's
        ({("B", "AHTCP", 64): (1400.0, 1.35)}, "§4.3 s7"),  # not equal in model B
        ({("B", "AHTCP", 256): (1720.0, 2.5)}, "§4.3 s7"),  # NIR above in model B
    ],
)
def test_each_finding_fails_when_its_pattern_is_broken(change, location):
    before = _verdicts(_summary())
    after = _verdicts(_summary(change))
    broken = {k[0] for k, v in after.items() if not v}
    # The named finding fails (a change may break another that depends on the same values).
    assert location in broken, broken
    assert all(before.values())


def test_nir_and_the_ceiling_checks_fail_when_broken():
    by = {c.location: c.passed for c in checks(_summary(), _runs(nir_clean=1.02)) if c.paper}
    assert by["§4.2 s4"] is False, "a loss-free run must have NIR exactly 1"
    by = {c.location: c.passed for c in checks(_summary(), _runs(best=980.0)) if c.paper}
    assert by["§4.3 s2"] is False, "a run above model A's ceiling"


def test_the_timeout_bound():
    # 16 × 64 KiB at 963.6 Mb/s takes 8.7 ms; with one 200 ms timeout: 40.2 Mb/s.
    assert timeout_bound_mbps(16, 963.6) == pytest.approx(40.2, abs=0.05)
    assert timeout_bound_mbps(256, 963.6) > timeout_bound_mbps(16, 963.6)


def test_the_papers_checks_at_reduced_size():
    """Model A at 2 and 64 servers, one seed: standard TCP collapses within its timeout bound,
    FGTCP recovers much of it, AHTCP beats FGTCP with a lower NIR than LNRTCP, NIR is 1 where
    nothing was lost, and nothing exceeds the ceiling."""
    runs = p1_runs.run_points("A", ["standard", "FGTCP", "LNRTCP", "AHTCP"], [2, 64], [1], workers=1)
    s = p1_runs.summarise(runs)
    m = {(r["scheme"], r["servers"]): r for r in s.iter_rows(named=True)}
    ceiling = p1_constants.CEILING_MBPS["A"]
    assert m[("standard", 64)]["goodput_mbps"] < 0.1 * ceiling
    assert m[("standard", 64)]["goodput_mbps"] <= timeout_bound_mbps(64, ceiling)
    assert m[("FGTCP", 64)]["goodput_mbps"] > 5 * m[("standard", 64)]["goodput_mbps"]
    assert m[("AHTCP", 64)]["goodput_mbps"] > m[("FGTCP", 64)]["goodput_mbps"]
    assert m[("AHTCP", 64)]["nir"] < m[("LNRTCP", 64)]["nir"]
    assert m[("AHTCP", 64)]["requests"] > 0
    clean = runs.filter(pl.col("dropped") == 0)
    assert clean.height > 0 and (clean["nir"] == 1.0).all()
    assert (runs["nir"] >= 1.0).all()
    assert (runs["goodput_mbps"] <= ceiling).all()


def _rules(per: dict[str, tuple[float, float]], condition: str = "c", servers: int = 64) -> pl.DataFrame:
    """A runs table of the threshold map: two seeds per rule at the given (goodput, NIR)."""
    rows = [{"condition": condition, "rule": r, "servers": servers, "seed": s, "goodput_mbps": g, "nir": x,
             "dropped": 1, "requests": 1.0, "timeouts": 1.0, "unfinished": 0, "error": None} for r, (g, x) in per.items() for s in (1, 2)]
    return pl.DataFrame(rows)


def test_threshold_verdicts_pick_the_best_fixed_and_judge_each_rule_against_it():
    from tcplab.reproduce.p1.beyond import threshold_verdicts

    # 900 Mb/s has the top goodput but 500 Mb/s is within 2 % with a lower NIR: 500 is best.
    (v,) = threshold_verdicts(_rules({"100 Mb/s": (600, 1.5), "500 Mb/s": (890, 2.0), "900 Mb/s": (900, 3.0), "peak": (880, 2.1)}))
    assert v["best_fixed"] == "500 Mb/s" and v["peak_ok"] is True and v["fixed500_ok"] is True
    assert v["peak_vs_best"] == [round(880 / 890, 3), round(2.1 / 2.0, 3)]
    # A peak rule that loses goodput, or retransmits more, is not as good.
    (v,) = threshold_verdicts(_rules({"500 Mb/s": (890, 2.0), "peak": (700, 1.5)}))
    assert v["peak_ok"] is False
    (v,) = threshold_verdicts(_rules({"500 Mb/s": (890, 2.0), "peak": (890, 2.5)}))
    assert v["peak_ok"] is False
    # Where 500 Mb/s is the misfit (a 10 Gb/s network), it fails and the peak rule does not.
    (v,) = threshold_verdicts(_rules({"500 Mb/s": (3000, 1.3), "6000 Mb/s": (7500, 1.3), "peak": (7400, 1.3)}))
    assert (v["best_fixed"], v["fixed500_ok"], v["peak_ok"]) == ("6000 Mb/s", False, True)


def test_the_remedies_and_conditions_are_valid_settings_of_the_shipped_models():
    """Each remedy's and each condition's overrides resolve in its model (a bad path or value
    would fail here, not an hour into a reproduction)."""
    from tcplab import _core
    from tcplab.reproduce.p1.beyond import conditions, remedy_overrides
    from tcplab.reproduce.p1.constants import BOTTLENECKS, REMEDIES, SCHEMES
    from tcplab.scenario import apply_overrides, load_scenario, scenario_json

    def builds(model: str, over: dict) -> str:
        path = p1_runs.model_path(model)
        return _core.Simulation(scenario_json(apply_overrides(load_scenario(path), over)), 1).resolved_toml()

    for model in ("A", "B"):
        for scheme, (base, _) in REMEDIES.items():
            text = builds(model, {**SCHEMES[base], **remedy_overrides(model, scheme)})
            if scheme.startswith("DCTCP"):
                assert 'cc = "dctcp"' in text and text.count('ecn_threshold = "20pkts"') == len(BOTTLENECKS[model])
            if scheme == "AHTCP-peak":
                assert 'threshold_rule = "peak"' in text and "threshold = " not in text.replace("ecn_threshold", "")
    for label, (model, scheme, over) in conditions().items():
        builds(model, {**SCHEMES[scheme], **over})
    for label, over in p1_constants.SETTINGS.items():
        builds("A", over)


def test_the_maps_name_links_by_their_ends_and_reach_every_link():
    """The base-RTT setting and the 10 Gb/s condition address links as `link(A,B)`: they set
    every link of model A (the same scenario as the index paths they replace)."""
    from tcplab.reproduce.p1.beyond import conditions
    from tcplab.scenario import apply_overrides, load_scenario

    shipped = load_scenario(p1_runs.model_path("A"))
    assert [tuple(link["between"]) for link in shipped["links"]] == list(p1_constants.MODEL_A_LINKS)
    rtt = p1_constants.SETTINGS["base RTT ≈ 400 µs (every link 95 µs)"]
    assert all(path.startswith("link(") for path in rtt)
    by_index = {f"links.{i}.delay": "95us" for i in range(len(shipped["links"]))}
    assert apply_overrides(shipped, rtt) == apply_overrides(shipped, by_index)
    _, _, ten = conditions()["A: 10 Gb/s links"]
    assert apply_overrides(shipped, ten) == apply_overrides(shipped, {f"links.{i}.rate": "10Gbps" for i in range(len(shipped["links"]))})


def test_other_fractions_of_the_peak_rule_are_shown_not_taken_for_fixed_thresholds():
    from tcplab.reproduce.p1.beyond import threshold_verdicts

    (v,) = threshold_verdicts(_rules({"500 Mb/s": (800, 2.0), "peak": (800, 2.0), "peak ×0.75": (900, 1.0)}))
    assert v["best_fixed"] == "500 Mb/s" and v["peak_vs_best"] == [1.0, 1.0]
    assert "peak ×0.75" in v["per_rule"]
