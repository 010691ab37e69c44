"""Observing a run does not change it, down to the bytes of the files it saves: the smoke and
dumbbell scenarios saved with no extra observers and with every link tapped (pcapng written)
and every queue traced give byte-identical Parquet traces and capture files for what both
record (the Rust tests check the same in every optimisation mode and on random scenarios)."""

import json

import polars as pl
import pytest

import tcplab
from tcplab.scenario import apply_overrides
from conftest import REPO_ROOT


def _observe_everything(spec: dict) -> dict:
    """`spec` with a tap (pcapng) on every link not yet tapped and every queue traced."""
    spec = tcplab.load_scenario(spec)
    taps = spec.setdefault("taps", [])
    tapped = {frozenset(t["link"]) for t in taps}
    for i, link in enumerate(spec["links"]):
        if frozenset(link["between"]) not in tapped:
            taps.append({"name": f"observe-{i}", "link": link["between"], "pcap": True})
    spec.setdefault("trace", {})["queues"] = "all"
    return spec


@pytest.mark.parametrize(
    "scenario, overrides",
    [
        ("scenarios/smoke/smoke.toml", {}),
        ("scenarios/dumbbell/dumbbell.toml", {"run.duration": "1s", "trace.cwnd": True, "trace.events": True}),
    ],
)
def test_saved_files_are_byte_identical_with_and_without_observers(scenario, overrides, tmp_path):
    spec = apply_overrides(tcplab.load_scenario(REPO_ROOT / scenario), overrides)
    plain = tcplab.run(spec).save(tmp_path / "plain")
    observed = tcplab.run(_observe_everything(spec)).save(tmp_path / "observed")

    def summary(d):
        s = json.loads((d / "summary.json").read_text())
        for k in ("wall_time_s", "events", "scenario_hash"):  # the scenarios differ by their taps
            s.pop(k)
        return s

    assert summary(plain) == summary(observed)
    files = sorted(p.name for p in plain.iterdir() if p.suffix in (".parquet", ".pcapng"))
    assert files, "the scenario records something"
    for name in files:
        if name == "queue.parquet":
            # The observed run traces every queue: compare the queues the plain run traces.
            a = pl.read_parquet(plain / name)
            b = pl.read_parquet(observed / name).filter(pl.col("queue_name").is_in(a["queue_name"].unique().implode()))
            assert a.equals(b), name
        else:
            assert (plain / name).read_bytes() == (observed / name).read_bytes(), name
