"""Study 000 paper checks on the quick reproduction (3 seeds × 30 s) of the shipped scenarios:
every finding of the paper the issue lists. The remedies beyond the paper (DECP, harmonizer,
CUBIC) are compared in the report, not asserted here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcplab.reproduce import p0


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, p0.Check]:
    out = tmp_path_factory.mktemp("p0")
    checks = p0.reproduce(out, quick=True)
    assert (out / "report.md").is_file()
    for name in ("fig4_sending_rate_simultaneous", "fig8_send_gap", "fig9_throughput_staggered", "map_findings"):
        assert (out / f"{name}.png").stat().st_size > 0
    for case in p0.CASES:  # one pcapng header capture per case, a pcapng Section Header Block first
        assert (out / "captures" / f"{case}.pcapng").read_bytes()[:4] == b"\x0a\x0d\x0d\x0a"
    return {f"{c.figure}|{c.claim}": c for c in checks}


def _check(verdicts: dict[str, p0.Check], figure: str, words: str) -> p0.Check:
    [c] = [c for k, c in verdicts.items() if k.startswith(figure + "|") and words in c.claim]
    return c


def test_simultaneous_streams_diverge_and_stay_apart(verdicts):
    c = _check(verdicts, "Fig. 4", "diverge")
    assert c.passed, c.measured


def test_streams_sending_later_lose_first(verdicts):
    c = _check(verdicts, "Figs. 5–7", "likelier to lose")
    assert c.passed, c.measured


def test_send_gap_grows_over_the_early_rtts(verdicts):
    c = _check(verdicts, "Fig. 8", "grows")
    assert c.passed, c.measured


def test_every_finding_of_the_paper_is_quoted_and_placed_in_the_report(verdicts, tmp_path_factory):
    from tcplab.reproduce.findings import missing_quotes

    checks = list(verdicts.values())
    assert missing_quotes(checks) == []
    seed = (Path(__file__).resolve().parents[2] / "shared" / "seeds" / "000_dc74dff776e003ff.txt")
    if seed.is_file():
        # Each quote's fragments are the seed's own words.
        text = seed.read_text(encoding="utf-8")
        for c in checks:
            if c.paper:
                for part in c.quote.split(" […] "):
                    assert part in text, (c.figure, part)


def test_first_rtt_spread_is_about_two_ms(verdicts):
    c = _check(verdicts, "Fig. 6 (input)", "2 ms")
    assert c.passed, c.measured


def test_staggered_start_fairness_is_judged_by_its_rule(verdicts):
    # Since the SACK sender re-enters fast recovery when a loss follows a recovery (RFC 6675,
    # Linux 2.6.16), the staggered streams leave the slow-start overshoot with different
    # windows and this finding no longer holds (scenarios/p0_parallel_bic/README.md, "The
    # staggered start is no longer fair"). Its verdict must still follow its rule, seed by
    # seed, from the values printed beside it.
    from tcplab.reproduce.p0.constants import STAGGERED_RATE_MBPS

    c = _check(verdicts, "Fig. 9", "fair")
    lo, hi = STAGGERED_RATE_MBPS
    jain, means = c.values["jain"], c.values["means_mbps"]
    assert len(jain) == len(means) == 3 and all(len(m) == 4 for m in means)
    fair = [j >= 0.98 and all(lo <= m <= hi for m in ms) for j, ms in zip(jain, means)]
    assert c.passed == all(fair), (c.measured, fair)
    assert min(jain) > 0.9, "unequal, not starved: every stream keeps a large share"


def test_staggered_start_link_use_is_judged_by_its_rule(verdicts):
    # The full reproduction (10 seeds x 100 s) holds this finding in every seed (utilisation
    # 0.964-0.985). In the quick one (30 s runs) the recovery from the slow-start overshoot
    # takes a larger share of the window, and since a SACK sender re-enters recovery at once
    # (README, "The staggered start is no longer fair") one seed of three falls to 0.925. The
    # verdict must follow its rule from the values printed beside it, and the link stay mostly
    # used.
    c = _check(verdicts, "Fig. 9", "close to 100")
    util = c.values["utilisation"]
    assert len(util) == 3
    assert c.passed == all(u >= 0.95 for u in util), c.measured
    assert min(util) > 0.9, c.measured


@pytest.mark.parametrize("start", ["simultaneous", "staggered"])
def test_buffer_sweeps_cover_the_bottleneck_buffer(start):
    from tcplab.sweeps import load_sweep

    sweep = load_sweep(p0.SCENARIOS / f"sweep_buffer_{start}.toml")
    assert sweep.seeds == (1, 2, 3, 4, 5)
    bottleneck = p0.bottleneck_buffer_path(start)
    labels = [lab[bottleneck] for _, lab in sweep.points()]
    assert labels == [100, 200, 300, 500, 1000]
    overrides = [o[bottleneck] for o, _ in sweep.points()]
    assert "500pkts" in overrides and p0.shipped_buffer() == "500pkts"


def test_send_order_is_kept_round_by_round(verdicts):
    c = _check(verdicts, "Fig. 7", "send order is kept")
    assert c.passed, c.measured


def test_verdicts_that_fail_are_reported_with_their_values(verdicts):
    # The findings the shipped model does not match (issue 18) are still judged by their
    # rule: the verdict follows the per-seed values printed beside it.
    first = _check(verdicts, "Fig. 4", "until about 5 s")
    within = [abs(t - 5.0) <= 1.5 for t in first.values["first_loss_s"]]
    assert first.values["within_seeds"] == sum(within)
    assert first.passed == (2 * sum(within) > len(within))
    exact = _check(verdicts, "Figs. 5–7", "exactly the reverse")
    assert exact.passed == (2 * exact.values["exact_reverse_seeds"] > 3)
    assert "exact reverse in" in exact.measured
