"""The data-centre worked example (examples/websearch_fct.py), shortened to 50 flows per leaf:
the same arrivals and sizes under each configuration, every flow done, and the example's
finding — CUBIC over drop-tail has a small-flow tail of timeouts that DCTCP's marking and
FQ-CoDel's flow isolation remove."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "websearch_fct.py"


@pytest.fixture(scope="module")
def rows():
    spec = importlib.util.spec_from_file_location("websearch_fct", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return {r["config"]: r for r in mod.compare(flows=50, seed=1)}, mod


def test_every_configuration_runs_the_same_flows_to_completion(rows):
    by, mod = rows
    assert list(by) == ["CUBIC, drop-tail", "DCTCP, ECN at 65 pkts", "CUBIC, FQ-CoDel"]
    counts = {name: [r[f"{b} n"] for b in mod.BIN_NAMES] for name, r in by.items()}
    for name, r in by.items():
        assert r["flows"] == 200 and r["unfinished"] == 0, (name, r)
        # The draws follow the seed, not the controller: the same sizes in every bin.
        assert counts[name] == counts["CUBIC, drop-tail"], counts
        for b in mod.BIN_NAMES:
            if r[f"{b} n"]:
                # The ideal is a lower bound on every flow's completion time.
                assert 1.0 <= r[f"{b} p50"] <= r[f"{b} p99"], (name, b, r)
    assert counts["CUBIC, drop-tail"][0] > 50, "most web-search flows are small"


def test_marking_and_flow_isolation_remove_the_small_flow_tail(rows):
    by, _ = rows
    cubic, dctcp, fq = by["CUBIC, drop-tail"], by["DCTCP, ECN at 65 pkts"], by["CUBIC, FQ-CoDel"]
    small = "≤100KB p99"
    # CUBIC fills the 200-packet ports; its losses on a path of microseconds cost 200 ms
    # minimum RTOs (and 1 s for a lost SYN): slowdowns in the thousands.
    assert cubic["timeouts"] > 0
    assert cubic[small] > 1000, cubic
    for other in (dctcp, fq):
        assert other["timeouts"] < cubic["timeouts"], other
        assert other[small] * 10 < cubic[small], (other, cubic)
    # FQ-CoDel lets a small flow pass the large ones' queues: a lower median too.
    assert fq["≤100KB p50"] < cubic["≤100KB p50"]


def test_the_example_draws_its_figure(rows, tmp_path):
    by, mod = rows
    path = tmp_path / "websearch_fct.png"
    mod.draw(list(by.values()), path)
    assert path.stat().st_size > 10_000
