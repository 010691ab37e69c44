"""Planning a sweep: one row per (axis point, seed), each with its run key.

A run's key is sha256(scenario hash, seed, tcplab version): the same run in any sweep, on any
machine, has the same key, which is what lets a store skip finished runs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from tcplab import _core
from tcplab.scenario import apply_overrides, scenario_json
from tcplab.sweeps.records import describe
from tcplab.sweeps.spec import Sweep, check_size

__all__ = ["Row", "plan", "run_key"]


@dataclass
class Row:
    """One run of the sweep: an axis point with one seed."""

    point: int
    """Index of the axis point (grid order, the last axis varying fastest)."""
    labels: dict[str, Any]
    """Axis path → the value the table shows."""
    overrides: dict[str, Any]
    """Axis path → the value the scenario gets."""
    seed: int
    key: str
    """The run key (`run_key`), or a digest of the point's description when it is invalid."""
    scenario_hash: str | None
    """The core's hash of the resolved scenario; None for an invalid point."""
    spec: dict[str, Any] | None
    """The scenario with every override applied; None for an invalid point."""
    error: str | None
    """Why the point cannot run (its scenario is invalid), or None."""


def plan(sweep: Sweep, version: str) -> tuple[list[Row], dict[str, Any] | None]:
    """The rows of the sweep and a reference summary (of the first valid point, before it runs).

    A point whose overrides do not apply or whose scenario the core rejects gets an error row
    per seed; it is never sent to a worker. Raises SweepError, before planning anything, for a
    sweep of more than MAX_RUNS runs (one assembled without `build_sweep`).
    """
    check_size(sweep.axes, len(sweep.seeds))
    rows = []
    reference = None
    for index, (overrides, labels) in enumerate(sweep.points()):
        spec: dict[str, Any] | None = None
        scenario_hash = None
        error = None
        try:
            spec = apply_overrides(sweep.base, {**sweep.overrides, **overrides})
            simulation = _core.Simulation(scenario_json(spec), sweep.seeds[0])
            scenario_hash = simulation.scenario_hash()
            if reference is None:
                reference = json.loads(simulation.summary_json())
            del simulation
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # ScenarioError, or the core's PanicException
            error = describe(e)
            spec = None
        blob = None
        if error is not None:
            blob = json.dumps([sweep.base, sweep.overrides, overrides], sort_keys=True)
        for seed in sweep.seeds:
            if blob is None:
                key = run_key(scenario_hash, seed, version)
            else:
                key = _digest("tcplab-invalid", blob, str(seed), version)
            rows.append(Row(index, labels, overrides, seed, key, scenario_hash, spec, error))
    return rows, reference


def run_key(scenario_hash: str, seed: int, version: str) -> str:
    """The key of a run: 32 hex digits of sha256(scenario hash, seed, tcplab version)."""
    return _digest("tcplab-run", scenario_hash, str(seed), version)


def _digest(*parts: str) -> str:
    """32 hex digits of sha256 over `parts` joined by NUL."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]
