"""The sweep description: the `Sweep` record, read from a sweep TOML file (`load_sweep`) or
built from Python arguments (`build_sweep`), and validated before anything runs: the base
scenario, the fixed overrides, the axes, the seeds and the metrics.

See `tcplab docs sweeps` (docs/sweeps.md) for the file format.
"""

from __future__ import annotations

import itertools
import math
import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcplab.scenario import MAX_SEED, ScenarioError, check_seed, check_toml_depth, load_scenario
from tcplab.sweeps.axes import Axis, check_path, check_plain, path_axis, quote, zip_axis
from tcplab.sweeps.errors import SweepError
from tcplab.sweeps.hooks import RunHook, run_hook
from tcplab.sweeps.metrics import DEFAULT_METRICS, Metric, MetricError, parse_metric

__all__ = [
    "MAX_RUNS",
    "RESERVED_COLUMNS",
    "Sweep",
    "build_sweep",
    "check_size",
    "load_sweep",
]

MAX_RUNS = 1_000_000
"""Largest number of runs (axis points × seeds) a sweep may have. A store keeps one file per run
in `runs/` (a few KB each, at least one disk block) and the sweep holds every run's summary in
memory until it writes results.parquet: a million runs of the smoke scenario are about 6 GB on
disk and as much in memory. Checked arithmetically before any point or seed is materialised."""

RESERVED_COLUMNS = ("point", "seed", "key", "scenario_hash", "wall_time_s", "error")
"""Columns of every sweep table besides the axis and metric columns."""

_SWEEP_KEYS = (
    "name",
    "description",
    "base",
    "seeds",
    "metrics",
    "traces",
    "overrides",
    "axes",
    "zip",
)
"""Top-level keys of a sweep file."""


@dataclass(frozen=True)
class Sweep:
    """A validated sweep: base scenario, fixed overrides, axes, seeds and metrics."""

    name: str
    base: dict[str, Any]
    """The base scenario, loaded (a dict of TOML values)."""
    axes: tuple[Axis, ...] = ()
    seeds: tuple[int, ...] = (1,)
    """Every axis point runs each of these seeds."""
    metrics: tuple[Metric, ...] = ()
    overrides: dict[str, Any] = field(default_factory=dict)
    """Dotted path → value, applied to every run before the axis values."""
    traces: bool = False
    """Save every run's traces in the store (`traces/<key>/`)."""
    description: str = ""
    base_path: str | None = None
    """The base scenario's file, when it came from one."""
    source_path: str | None = None
    """The sweep file, when the sweep came from one."""
    source_text: str | None = None
    """The sweep file's text (copied into the store as sweep.toml)."""
    hook: RunHook | None = None
    """A per-run metric hook (`tcplab.sweeps.hooks`): extra columns computed from each run's
    Result in the worker."""

    @property
    def columns(self) -> list[str]:
        """The axis columns of the sweep table, in order."""
        return [path for axis in self.axes for path in axis.paths]

    def points(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """Every axis point as (overrides, table labels); the last axis varies fastest."""
        result = []
        for combination in itertools.product(*(range(len(a.values)) for a in self.axes)):
            overrides: dict[str, Any] = {}
            labels: dict[str, Any] = {}
            for axis, i in zip(self.axes, combination, strict=True):
                overrides.update(zip(axis.paths, axis.values[i], strict=True))
                labels.update(zip(axis.paths, axis.labels[i], strict=True))
            result.append((overrides, labels))
        return result

    @property
    def runs(self) -> int:
        """Number of runs: points × seeds."""
        return math.prod(len(a.values) for a in self.axes) * len(self.seeds)

    def to_json(self) -> dict[str, Any]:
        """The sweep as plain JSON data (written to `sweep.json` in the store)."""
        return {
            "name": self.name,
            "description": self.description,
            "base_path": self.base_path,
            "base": self.base,
            "overrides": self.overrides,
            "axes": [
                {
                    "paths": list(a.paths),
                    "values": [list(v) for v in a.values],
                    "labels": [list(v) for v in a.labels],
                }
                for a in self.axes
            ],
            "seeds": list(self.seeds),
            "metrics": {m.name: m.expr for m in self.metrics},
            "traces": self.traces,
            "hook": None if self.hook is None else self.hook.to_json(),
        }


def load_sweep(path: str | os.PathLike[str]) -> Sweep:
    """Read and validate a sweep TOML file (see docs/sweeps.md).

    Raises SweepError naming the bad key, OSError if the file cannot be read.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    try:
        check_toml_depth(text)
        table = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ScenarioError) as e:
        raise SweepError(f"{path}: {e}") from None
    try:
        unknown = [k for k in table if k not in _SWEEP_KEYS]
        if unknown:
            raise SweepError(f"{unknown[0]}: unknown key (known: {', '.join(_SWEEP_KEYS)})")
        if "base" not in table:
            raise SweepError("base: missing; name the base scenario file")
        base = table["base"]
        if isinstance(base, str):
            base = path.parent / base
        elif not isinstance(base, dict):
            raise SweepError("base: expected a scenario file path or an inline table")
        zipped = table.get("zip", [])
        if not isinstance(zipped, list) or not all(isinstance(z, dict) for z in zipped):
            raise SweepError("zip: expected an array of tables ([[zip]])")
        axes = table.get("axes", {})
        if not isinstance(axes, dict):
            raise SweepError("axes: expected a table of PATH = values")
        return _build(
            base=base,
            axes=[path_axis((path,), spec) for path, spec in axes.items()]
            + [zip_axis(i, z) for i, z in enumerate(zipped)],
            seeds=table.get("seeds", 1),
            metrics=table.get("metrics"),
            overrides=table.get("overrides", {}),
            traces=table.get("traces", False),
            name=table.get("name", path.stem),
            description=table.get("description", ""),
            source_path=str(path),
            source_text=text,
        )
    except SweepError as e:
        raise SweepError(f"{path}: {e}") from None


def _build(
    base: str | os.PathLike[str] | Mapping[str, Any],
    axes: Sequence[Axis],
    seeds: Any,
    metrics: Any,
    overrides: Any,
    traces: Any,
    name: Any,
    description: Any = "",
    source_path: str | None = None,
    source_text: str | None = None,
    hook: RunHook | None = None,
) -> Sweep:
    """Validate the parts of a sweep and assemble it."""
    base_path = None if isinstance(base, Mapping) else os.fspath(base)
    try:
        base_dict = load_scenario(base)
        if "seed" in (run_table := base_dict.get("run") or {}):
            check_seed(run_table["seed"])
    except OSError as e:
        raise SweepError(f"base: {base_path}: {e.strerror or e}") from None
    except ScenarioError as e:
        raise SweepError(f"base: {e}") from None
    if not isinstance(name, str) or not name:
        raise SweepError(f"name: expected a non-empty string, got {name!r}")
    if not isinstance(description, str):
        raise SweepError(f"description: expected a string, got {description!r}")
    if not isinstance(traces, bool):
        raise SweepError(f"traces: expected true or false, got {traces!r}")
    if not isinstance(overrides, Mapping):
        raise SweepError("overrides: expected a table of PATH = value")
    for path, value in overrides.items():
        check_path(f"overrides.{quote(path)}", path)
        check_plain(f"overrides.{quote(path)}", value)

    built = list(axes)
    check_size(built, _seed_count(seeds))
    seen: dict[str, str] = {path: "overrides" for path in overrides}
    for axis in built:
        for path in axis.paths:
            if path in seen:
                raise SweepError(f"axes.{quote(path)}: also set in {seen[path]}")
            seen[path] = "axes"

    parsed_metrics = _metrics(metrics)
    names = set(RESERVED_COLUMNS)
    for axis in built:
        for path in axis.paths:
            if path in names:
                raise SweepError(f"axes.{quote(path)}: clashes with the table column {path!r}")
            names.add(path)
    for metric in parsed_metrics:
        if metric.name in names:
            raise SweepError(f"metrics: {metric.name!r} clashes with another table column")
        names.add(metric.name)

    return Sweep(
        name=name,
        base=base_dict,
        axes=tuple(built),
        seeds=_seeds(seeds, base_dict),
        metrics=tuple(parsed_metrics),
        overrides=dict(overrides),
        traces=traces,
        description=description,
        base_path=base_path,
        source_path=source_path,
        source_text=source_text,
        hook=hook,
    )


def build_sweep(
    base: str | os.PathLike[str] | Mapping[str, Any],
    axes: Mapping[str | tuple[str, ...], Any] | None = None,
    seeds: int | Sequence[int] = 1,
    metrics: Sequence[str] | Mapping[str, str] | None = None,
    *,
    overrides: Mapping[str, Any] | None = None,
    traces: bool = False,
    name: str = "sweep",
    hook: str | Callable[..., Any] | None = None,
    hook_args: Mapping[str, Any] | None = None,
) -> Sweep:
    """A validated Sweep from the arguments of `sweep` (raises SweepError)."""
    if axes is not None and not isinstance(axes, Mapping):
        raise SweepError("axes: expected a mapping of path (or tuple of paths) to values")
    return _build(
        base=base,
        axes=[
            path_axis((path,) if isinstance(path, str) else tuple(path), values)
            for path, values in (axes or {}).items()
        ],
        seeds=seeds,
        metrics=metrics,
        overrides=overrides or {},
        traces=traces,
        name=name,
        hook=run_hook(hook, hook_args),
    )


def check_size(axes: Sequence[Axis], seeds: int | None) -> None:
    """SweepError naming `axes` or `seeds` if the grid of `axes` times `seeds` seeds (None: not
    yet known to be a count) exceeds MAX_RUNS; computed from the lengths alone."""
    lengths = [len(axis.values) for axis in axes]
    points = math.prod(lengths)
    limit = f"a sweep may have at most {MAX_RUNS:,} runs (docs/sweeps.md)"
    if points > MAX_RUNS:
        product = " × ".join(f"{n:,}" for n in lengths)
        raise SweepError(f"axes: {points:,} points ({product}); {limit}")
    if seeds is None:
        return
    if seeds > MAX_RUNS:
        raise SweepError(f"seeds: {seeds:,} seeds; {limit}")
    if points * seeds > MAX_RUNS:
        raise SweepError(
            f"seeds: {seeds:,} seeds × {points:,} points = {points * seeds:,} runs; {limit}"
        )


def _seed_count(spec: Any) -> int | None:
    """The number of seeds `spec` (a count or a list) gives, without materialising them; None
    for anything else (reported by `_seeds`)."""
    if isinstance(spec, bool):
        return None
    if isinstance(spec, int):
        return spec
    if isinstance(spec, (list, tuple)):
        return len(spec)
    return None


def _seeds(spec: Any, base: dict[str, Any]) -> tuple[int, ...]:
    """Seeds from a count (the base seed and the ones after it) or an explicit list."""
    if isinstance(spec, bool) or not isinstance(spec, (int, list, tuple)):
        raise SweepError(f"seeds: expected a count or a list of seeds, got {spec!r}")
    if isinstance(spec, int):
        if spec < 1:
            raise SweepError(f"seeds: the count must be at least 1, got {spec}")
        run_table = base.get("run")
        first = run_table.get("seed", 1) if isinstance(run_table, dict) else 1
        if first + spec - 1 > MAX_SEED:
            raise SweepError(f"seeds: {spec} seeds from {first} pass 2^63 - 1")
        return tuple(range(first, first + spec))
    if not spec:
        raise SweepError("seeds: empty list")
    for i, seed in enumerate(spec):
        try:
            check_seed(seed, f"seeds[{i}]")
        except ScenarioError as e:
            raise SweepError(str(e)) from None
    if len(set(spec)) != len(spec):
        raise SweepError("seeds: a seed appears twice")
    return tuple(spec)


def _metrics(spec: Any) -> list[Metric]:
    """Metrics from a list of expressions or a table of name = expression."""
    if spec is None:
        spec = list(DEFAULT_METRICS)
    if isinstance(spec, Mapping):
        items = list(spec.items())
    elif isinstance(spec, (list, tuple)) and not isinstance(spec, str):
        items = [(None, expr) for expr in spec]
    else:
        raise SweepError(f"metrics: expected a list of metric expressions, got {spec!r}")
    metrics = []
    for i, (name, expr) in enumerate(items):
        where = f"metrics.{quote(name)}" if name is not None else f"metrics[{i}]"
        if name is not None and (not isinstance(name, str) or not name):
            raise SweepError(f"{where}: a metric name must be a non-empty string")
        try:
            metrics.append(parse_metric(expr, name))
        except MetricError as e:
            raise SweepError(f"{where}: {e}") from None
    return metrics
