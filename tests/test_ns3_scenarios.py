"""The ns-3 side-by-side scenarios (benches/ns3/): every file is a valid tcplab scenario,
both drivers list the same files, and the ns-3 translation accepts each one (without ns-3:
`check` only reads the TOML)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import tcplab

BENCH = Path(__file__).resolve().parents[1] / "benches" / "ns3"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_both_drivers_list_every_scenario_file():
    compare, ns3_side = _load("compare"), _load("ns3_scenarios")
    files = sorted(p.name for p in (BENCH / "tcplab_scenarios").glob("*.toml"))
    assert sorted(f for f, _ in compare.SCENARIOS.values()) == files
    assert {k: f for k, (f, _) in compare.SCENARIOS.items()} == ns3_side.SCENARIOS


@pytest.mark.parametrize("path", sorted((BENCH / "tcplab_scenarios").glob("*.toml")), ids=lambda p: p.stem)
def test_each_scenario_loads_in_tcplab_and_the_ns3_translation(path):
    r = tcplab.run(path, overrides={"run.duration": "5ms"})  # builds and validates it (after the last flow starts, 3 ms)
    assert r.summary["sim_time_s"] == pytest.approx(0.005)
    ns3_side = _load("ns3_scenarios")
    _, sc = ns3_side.load(str(path))
    ns3_side.check(sc)


def test_offset_variant_differs_from_s1_100_only_in_start_times():
    import tomllib

    base = tomllib.loads((BENCH / "tcplab_scenarios" / "s1-100.toml").read_text())
    off = tomllib.loads((BENCH / "tcplab_scenarios" / "s1-100-offset.toml").read_text())
    assert [f.pop("start") for f in off["flows"]] == ["0ms", "1ms", "2ms", "3ms"]
    for k in ("name", "description"):
        base.pop(k), off.pop(k)
    assert off == base
