"""The shared runner: a study's points sent through the sweep runner (`tcplab.sweeps`), so that
every study's runs resume from their store and run on a local process pool or a Dask cluster.

A point is one run setting: a shipped scenario file and the overrides that make the point.
`run_points` groups the points by scenario and by the paths they set, runs each group as one
sweep with a single zipped axis (two points that set the same values run once), and returns
one row per (point, seed) in the order of the points' groups.

`prefetch` runs a whole study's points as one batch first (`tcplab.sweeps.batch`): the study's
experiments are called once in collecting mode, where `run_points` only records the sweeps it
would run, then every run of every sweep goes through one pool, and the experiments run again,
finding their runs in the stores.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.scenario import ScenarioError
from tcplab.sweeps.batch import BatchOutcome, run_batch
from tcplab.sweeps.runner import sweep
from tcplab.sweeps.spec import build_sweep


class RunsFailed(RuntimeError):
    """Runs of a reproduction failed (the message names how many, of which experiment, and the
    first error); the reproduction cannot write its report."""

__all__ = ["prefetch", "run_points"]


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
        store = None if out is None else out if shared_store else out / Path(scenario).stem
        if _COLLECTING:
            if store is not None:
                _COLLECTING[-1].append((dict(base=scenario, axes=axes, seeds=list(seeds), metrics=dict(metrics or {}),
                                             overrides=dict(overrides or {}), name=name, hook=hook, hook_args=hook_args), store))
            frames.append(_collected_frame(settings, seeds))
            continue
        table = sweep(scenario, axes=axes, seeds=list(seeds),
                      metrics=dict(metrics or {}), overrides=dict(overrides or {}),
                      out=store, workers=workers, cluster=cluster, name=name, hook=hook, hook_args=hook_args)
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


_COLLECTING: list[list[tuple[dict[str, Any], Path]]] = []
"""The sweeps `run_points` recorded in collecting mode (innermost `prefetch` last): the keyword
arguments of `build_sweep` and the store."""


def _collected_frame(settings: Mapping[Any, tuple[tuple[Any, ...], list[int]]], seeds: Sequence[int]) -> pl.DataFrame:
    """What `run_points` returns in collecting mode for one group, where no run has happened: a
    row per (point, seed) with `index` and `seed` only, so the experiment can label its rows as
    usual (`prefetch` requires that it reads nothing else between sweeps)."""
    pairs = [(i, seed) for _, of in settings.values() for seed in seeds for i in of]
    return pl.DataFrame({"index": [i for i, _ in pairs], "seed": [s for _, s in pairs]},
                        schema={"index": pl.Int64, "seed": pl.Int64})


@contextlib.contextmanager
def _collecting() -> Iterator[list[tuple[dict[str, Any], Path]]]:
    _COLLECTING.append([])
    try:
        yield _COLLECTING[-1]
    finally:
        _COLLECTING.pop()


def prefetch(experiments: Callable[[], Any], *, workers: int | None = None, cluster: Any = None,
             on_run: Callable[[int, int], None] = lambda done, total: None) -> BatchOutcome:
    """Call `experiments` (which runs its points through `run_points` with stores, and reads
    nothing from the tables but `index` and `seed`) in collecting mode, then run every run of
    the sweeps it would have run as one batch on one pool, in the order it asked for them,
    storing each in its store (`tcplab.sweeps.batch.run_batch`; `on_run(done, total)` after each
    run). Calling `experiments` again afterwards runs nothing: every run is in its store. Points
    run without a store are not prefetched, nor is a sweep that is invalid (the experiment
    raises its error when called again)."""
    with _collecting() as calls:
        experiments()
    sweeps = []
    for kw, store in calls:
        try:
            sweeps.append((build_sweep(**kw), store))
        except Exception:  # an invalid sweep: it raises its own error when it runs
            continue
    return run_batch(sweeps, workers=workers, cluster=cluster, on_run=on_run)
