"""The AQM worked example (examples/aqm_compare.py) on the shipped `aqm/aqm.toml`, shortened:
each AQM holds the bottleneck's queueing delay near its target where drop-tail fills the
1000-packet buffer, and the line stays busy."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "aqm_compare.py"


@pytest.fixture(scope="module")
def rows():
    spec = importlib.util.spec_from_file_location("aqm_compare", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return {r["queue"]: r for r in mod.compare(duration="6s")}, mod


def test_each_aqm_holds_its_target_where_drop_tail_fills_the_buffer(rows):
    by, _ = rows
    assert set(by) == {"drop-tail", "RED", "CoDel", "FQ-CoDel", "PIE"}
    # 1000 packets at 100 Mb/s is 120 ms; CUBIC keeps drop-tail's buffer mostly full.
    assert by["drop-tail"]["delay_mean_ms"] > 60
    # CoDel and FQ-CoDel: 5 ms target; PIE: 15 ms; RED (thresholds 20–60 packets: 2.4–7.2 ms).
    assert by["CoDel"]["delay_mean_ms"] < 12
    assert by["FQ-CoDel"]["delay_mean_ms"] < 12
    assert 5 < by["PIE"]["delay_mean_ms"] < 30
    assert by["RED"]["delay_mean_ms"] < 10
    for name, r in by.items():
        assert r["utilisation"] > 0.9, (name, r)
        assert r["dropped"] > 0, (name, r)
        assert r["delay_p99_ms"] >= r["delay_mean_ms"], (name, r)


def test_the_example_draws_its_figure(rows, tmp_path):
    by, mod = rows
    path = tmp_path / "aqm_compare.png"
    mod.figure(list(by.values()), path)
    assert path.stat().st_size > 10_000
