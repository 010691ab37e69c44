"""The shared runner: a study's points sent through the sweep runner (`tcplab.sweeps`), so that
every study's runs resume from their store and run on a local process pool or a Dask cluster.

A point is one run setting: a shipped scenario file and the overrides that make the point.
`run_points` groups the points by scenario and by the paths they set, runs each group as one
sweep with a single zipped axis (two points that set the same values run once), and returns
one row per (point, seed) in the order of the points' groups.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.scenario import ScenarioError
from tcplab.sweeps.runner import sweep


class RunsFailed(RuntimeError):
    """Runs of a reproduction failed (the message names how many, of which experiment, and the
    first error); the reproduction cannot write its report."""

__all__ = ["run_points"]


def run_points(
    points: Sequence[tuple[str | os.PathLike[str], Mapping[str, Any]]],
    seeds: Sequence[int],
    *,
    overrides: Mapping[str, Any] | None = None,
    metrics: Mapping[str, str] | None = None,
    hook: str | Callable[..., Any] | None = None,
    hook_args: Mapping[str, Any] | None = None,
    out: Path | None = None,
    shared_store: bool = False,
    workers: int | None = None,
    cluster: Any = None,
    name: str = "study",
) -> pl.DataFrame:
    """Run every point over `seeds` on the sweep runner.

    `points` are (scenario file, overrides); `overrides` apply to every run, `metrics` are the
    sweep's summary metrics (name → expression; none by default) and `hook`/`hook_args` its
    per-run metric hook (`tcplab.sweeps.hooks`). Each scenario's runs are stored in
    `out/<scenario file stem>/`, or with `shared_store` all in `out` (a sweep store: a rerun
    reuses them). Returns one row per (point, seed): `index` (the point's place in `points`),
    the sweep table's `seed`, `key`, `scenario_hash`, `wall_time_s` and `error` (null), then
    the metric and hook columns; the rows of one group come in the sweep's order (values, then
    seeds), the groups in the order of their first point. Raises ScenarioError if a point's
    overrides make its scenario invalid, RunsFailed if a run failed.
    """
    # (scenario, paths) → the distinct settings → (values, the points' indices)
    groups: dict[tuple[str, tuple[str, ...]], dict[Any, tuple[tuple[Any, ...], list[int]]]] = {}
    for i, (scenario, point) in enumerate(points):
        paths = tuple(point)
        values = tuple(point[p] for p in paths)
        settings = groups.setdefault((os.fspath(scenario), paths), {})
        settings.setdefault(_setting_key(values), (values, []))[1].append(i)
    frames = []
    for (scenario, paths), settings in groups.items():
        axes = None
        if len(paths) == 1:
            axes = {paths[0]: [v[0] for v, _ in settings.values()]}
        elif paths:
            axes = {paths: [v for v, _ in settings.values()]}
        table = sweep(scenario, axes=axes, seeds=list(seeds),
                      metrics=dict(metrics or {}), overrides=dict(overrides or {}),
                      out=None if out is None else out if shared_store else out / Path(scenario).stem,
                      workers=workers, cluster=cluster, name=name, hook=hook, hook_args=hook_args)
        failed = table.filter(pl.col("error").is_not_null())
        invalid = failed.filter(pl.col("scenario_hash").is_null())
        if invalid.height:  # overrides the shipped scenario does not take
            raise ScenarioError(f"{name}: {invalid['error'][0]}")
        if failed.height:
            raise RunsFailed(f"{failed.height} runs of {name} failed: {failed['error'][0]}")
        keep = table.columns[table.columns.index("seed"):]
        # The sweep's axis point i is the group's i-th distinct setting (one zipped axis).
        members = [of for _, of in settings.values()]
        points_of = [members[p] for p in table["point"]]
        rows = [r for r, of in enumerate(points_of) for _ in of]
        index = pl.Series("index", [i for of in points_of for i in of], dtype=pl.Int64)
        frames.append(table.select(keep)[rows].with_columns(index).select("index", *keep))
    if not frames:
        return pl.DataFrame()
    return pl.concat(frames, how="diagonal_relaxed")


def _setting_key(values: tuple[Any, ...]) -> Any:
    """What tells two points' settings apart: the values themselves, or their JSON text when a
    value is a table or a list (not hashable)."""
    try:
        hash(values)
    except TypeError:
        return json.dumps(values, sort_keys=True)
    return values
