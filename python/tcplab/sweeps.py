"""Sweeps: one base scenario run over a grid of overrides and seeds, on a local process pool or
a Dask cluster, with a result store that resumes.

A sweep is described by a TOML file (`load_sweep`) or by the arguments of `sweep`. Each run is
the base scenario with the overrides of one axis point, simulated with one seed. Runs are keyed
by sha256(scenario hash, seed, tcplab version); a store directory keeps one Parquet file per
finished run, so rerunning a sweep skips what is done. See docs/sweeps.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import json
import math
import os
import secrets
import shutil
import socket
import time
import tomllib
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from tcplab import _core
from tcplab.outdir import make_staging
from tcplab.run import run
from tcplab.sweep_pool import CRASH_MESSAGE as CRASH_MESSAGE  # re-exported
from tcplab.sweep_pool import LocalPool, refuse_in_worker_bootstrap
from tcplab.sweep_pool import describe as _describe
from tcplab.sweep_pool import failure as _failure
from tcplab.scenario import (
    MAX_SEED,
    ScenarioError,
    check_toml_depth,
    apply_overrides,
    check_seed,
    load_scenario,
    scenario_json,
    value_error,
)
from tcplab.sweep_metrics import DEFAULT_METRICS, Metric, MetricError, parse_metric

__all__ = [
    "Axis",
    "ClusterError",
    "ClusterLost",
    "StoreError",
    "Sweep",
    "SweepError",
    "SweepOutcome",
    "WorkerMismatch",
    "build_sweep",
    "load_sweep",
    "run_sweep",
    "sweep",
]

RESERVED_COLUMNS = ("point", "seed", "key", "scenario_hash", "wall_time_s", "error")
"""Columns of every sweep table besides the axis and metric columns."""

MAX_AXIS_VALUES = 100_000
"""Largest number of values one range may produce (guards against a mistyped step)."""

STORE_MARKER = "store.json"
"""File that marks a directory as a sweep store."""

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
_RANGE_KEYS = ("values", "start", "stop", "step", "num", "factor", "unit")
_RECORD_SCHEMA = {
    "key": pl.String,
    "scenario_hash": pl.String,
    "seed": pl.UInt64,
    "version": pl.String,
    "error": pl.String,
    "wall_time_s": pl.Float64,
    "summary": pl.String,
    "overrides": pl.String,
    "exec_id": pl.String,
    "host": pl.String,
    "pid": pl.Int64,
    "finished_at": pl.Float64,
}
"""Columns of a run file `runs/<key>.parquet` (one row)."""


class SweepError(ValueError):
    """An invalid sweep description; the message names the offending key."""


class StoreError(OSError):
    """The output directory cannot be used as a sweep store (not one, or in use)."""


class ClusterError(ConnectionError):
    """The Dask scheduler cannot be reached."""


class ClusterLost(RuntimeError):
    """The connection to the Dask cluster was lost during the sweep (rerun to resume)."""


class WorkerMismatch(RuntimeError):
    """A worker runs a different tcplab build: its scenario hash or version differs."""


# --------------------------------------------------------------------------------------------
# Sweep description


@dataclass(frozen=True)
class Axis:
    """One dimension of the grid: one path, or several zipped paths that vary together.

    `values[i]` are the scenario values of point i (one per path); `labels[i]` what the table
    shows (the same, except that ranges with a `unit` show the bare numbers).
    """

    paths: tuple[str, ...]
    values: tuple[tuple[Any, ...], ...]
    labels: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True)
class Sweep:
    """A validated sweep: base scenario, fixed overrides, axes, seeds and metrics."""

    name: str
    base: dict[str, Any]
    axes: tuple[Axis, ...] = ()
    seeds: tuple[int, ...] = (1,)
    metrics: tuple[Metric, ...] = ()
    overrides: dict[str, Any] = field(default_factory=dict)
    traces: bool = False
    description: str = ""
    base_path: str | None = None
    source_path: str | None = None
    source_text: str | None = None

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
            axes=[_axis((path,), spec) for path, spec in axes.items()]
            + [_zip_axis(i, z) for i, z in enumerate(zipped)],
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
        _check_path(f"overrides.{_quote(path)}", path)
        _check_plain(f"overrides.{_quote(path)}", value)

    built = list(axes)
    seen: dict[str, str] = {path: "overrides" for path in overrides}
    for axis in built:
        for path in axis.paths:
            if path in seen:
                raise SweepError(f"axes.{_quote(path)}: also set in {seen[path]}")
            seen[path] = "axes"

    parsed_metrics = _metrics(metrics)
    names = set(RESERVED_COLUMNS)
    for axis in built:
        for path in axis.paths:
            if path in names:
                raise SweepError(f"axes.{_quote(path)}: clashes with the table column {path!r}")
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
    )


def _zip_axis(index: int, table: Mapping[str, Any]) -> Axis:
    """One axis from a `[[zip]]` table: PATH = values entries of equal length, varied together."""
    where = f"zip[{index}]"
    if not table:
        raise SweepError(f"{where}: empty; give two or more PATH = values")
    paths = tuple(table)
    columns = []
    for path, member in table.items():
        _check_path(f"{where}.{_quote(path)}", path)
        columns.append(_values(f"{where}.{_quote(path)}", member))
    lengths = {len(values) for values, _ in columns}
    if len(lengths) > 1:
        counts = ", ".join(f"{p}: {len(v)}" for p, (v, _) in zip(paths, columns, strict=True))
        raise SweepError(f"{where}: zipped axes need equal lengths ({counts})")
    values = tuple(zip(*(v for v, _ in columns), strict=True))
    labels = tuple(zip(*(lab for _, lab in columns), strict=True))
    return Axis(paths, values, labels)


def _axis(paths: tuple[str, ...], spec: Any) -> Axis:
    """One axis from a path and its values (a list or a range table), or, for several paths
    (Python API), a list of value tuples."""
    if len(paths) == 1:
        where = f"axes.{_quote(paths[0])}"
        _check_path(where, paths[0])
        values, labels = _values(where, spec)
        return Axis(paths, tuple((v,) for v in values), tuple((lab,) for lab in labels))
    # Python API: a tuple of paths with a list of value tuples.
    where = f"axes[{paths!r}]"
    for path in paths:
        _check_path(where, path)
    if len(set(paths)) != len(paths):
        raise SweepError(f"{where}: a path appears twice")
    if isinstance(spec, (str, bytes, Mapping)) or not isinstance(spec, Iterable):
        raise SweepError(f"{where}: expected a list of value tuples")
    rows = [tuple(row) if isinstance(row, (list, tuple)) else row for row in spec]
    if not rows:
        raise SweepError(f"{where}: no values")
    for row in rows:
        if not isinstance(row, tuple) or len(row) != len(paths):
            raise SweepError(f"{where}: each value must be a tuple of {len(paths)}, got {row!r}")
        for value in row:
            _check_plain(where, value)
    return Axis(paths, tuple(rows), tuple(rows))


def _values(where: str, spec: Any) -> tuple[list[Any], list[Any]]:
    """(scenario values, table labels) of one axis from a list or a range table."""
    if isinstance(spec, Mapping):
        unknown = [k for k in spec if k not in _RANGE_KEYS]
        if unknown:
            raise SweepError(f"{where}.{unknown[0]}: unknown key (known: {', '.join(_RANGE_KEYS)})")
        unit = spec.get("unit")
        if unit is not None and not isinstance(unit, str):
            raise SweepError(f'{where}.unit: expected a string such as "pkts" or "ms"')
        if "values" in spec:
            extra = [k for k in ("start", "stop", "step", "num", "factor") if k in spec]
            if extra:
                raise SweepError(f"{where}.{extra[0]}: give either values or a range, not both")
            numbers = _list(f"{where}.values", spec["values"])
        else:
            numbers = _range(where, spec)
        if unit is None:
            return numbers, numbers
        for i, n in enumerate(numbers):
            if not _is_number(n):
                raise SweepError(f"{where}.values[{i}]: a unit needs numbers, got {n!r}")
        return [f"{_format_number(n)}{unit}" for n in numbers], numbers
    values = _list(where, spec)
    return values, values


def _list(where: str, spec: Any) -> list[Any]:
    """A non-empty list of TOML values."""
    if isinstance(spec, (str, bytes)) or not isinstance(spec, (list, tuple)):
        raise SweepError(
            f"{where}: expected a list of values or a range table "
            f"{{ start, stop, step | num | factor }}, got {spec!r}"
        )
    if not spec:
        raise SweepError(f"{where}: no values")
    for i, value in enumerate(spec):
        _check_plain(f"{where}[{i}]", value)
    return list(spec)


def _range(where: str, spec: Mapping[str, Any]) -> list[Any]:
    """The values of `{start, stop, step}`, `{start, stop, num}` or `{start, stop, factor}`.

    Ranges include `stop` when they land on it (within 1e-9 relative).
    """
    for key in ("start", "stop"):
        if key not in spec:
            raise SweepError(
                f"{where}.{key}: missing (a range needs start, stop and one of step, num, factor)"
            )
    kinds = [k for k in ("step", "num", "factor") if k in spec]
    if len(kinds) != 1:
        raise SweepError(f"{where}: give exactly one of step, num, factor")
    kind = kinds[0]
    for key in ("start", "stop", kind):
        if not _is_number(spec[key]):
            raise SweepError(f"{where}.{key}: expected a number, got {spec[key]!r}")
    start, stop, arg = spec["start"], spec["stop"], spec[kind]
    integral = all(isinstance(v, int) for v in (start, stop, arg))
    eps = 1e-9 * max(abs(start), abs(stop), 1)
    if kind == "step":
        if arg == 0 or (stop - start) * arg < 0:
            raise SweepError(f"{where}.step: {arg!r} does not lead from {start!r} to {stop!r}")
        count = math.floor((stop - start) / arg + 1e-9) + 1
        _check_count(where, count)
        values = [start + i * arg for i in range(count)]
    elif kind == "num":
        if not isinstance(arg, int) or arg < 1 or (arg == 1 and start != stop):
            raise SweepError(f"{where}.num: expected an integer ≥ 2, got {arg!r}")
        _check_count(where, arg)
        if arg == 1:
            values = [start]
        else:
            values = [start + (stop - start) * i / (arg - 1) for i in range(arg)]
            if integral and all(float(v).is_integer() for v in values):
                values = [int(v) for v in values]
    else:
        if start <= 0 or stop <= 0 or arg <= 0 or arg == 1 or (stop - start) * (arg - 1) < 0:
            raise SweepError(
                f"{where}.factor: {arg!r} does not lead from {start!r} to {stop!r} "
                "(start, stop > 0; factor > 1 upwards, < 1 downwards)"
            )
        values = []
        value = start
        while (value <= stop + eps) if arg > 1 else (value >= stop - eps):
            values.append(value)
            _check_count(where, len(values))
            value = value * arg
    if kind != "num" and not integral:
        values = [float(np.round(v, 12)) for v in values]
    return values


def _check_count(where: str, count: int) -> None:
    if count > MAX_AXIS_VALUES:
        raise SweepError(f"{where}: more than {MAX_AXIS_VALUES} values")


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
        where = f"metrics.{_quote(name)}" if name is not None else f"metrics[{i}]"
        if name is not None and (not isinstance(name, str) or not name):
            raise SweepError(f"{where}: a metric name must be a non-empty string")
        try:
            metrics.append(parse_metric(expr, name))
        except MetricError as e:
            raise SweepError(f"{where}: {e}") from None
    return metrics


def _check_path(where: str, path: Any) -> None:
    """A scenario path that a sweep may vary."""
    if not isinstance(path, str) or not path or not all(path.split(".")):
        raise SweepError(f"{where}: not a dotted scenario path: {path!r}")
    if path in ("run.seed", "run"):
        raise SweepError(f"{where}: seeds come from the sweep's `seeds`, not from run.seed")


def _quote(path: Any) -> str:
    """A key as TOML writes it in a dotted key."""
    text = str(path)
    return text if text.replace("_", "").replace("-", "").isalnum() else json.dumps(text)


def _check_plain(where: str, value: Any) -> None:
    """SweepError unless `value` is made only of TOML values (no NaN, None, dates, deep nests)."""
    if (message := value_error(value, where, 2)) is not None:
        raise SweepError(message)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _format_number(value: float) -> str:
    """A number as the core's unit parser reads it: `10`, `0.5`, never `1e-05`."""
    if isinstance(value, int):
        return str(value)
    if float(value).is_integer():
        return str(int(value))
    return np.format_float_positional(value, trim="-")


# --------------------------------------------------------------------------------------------
# Planning: one row per (point, seed), each with its run key


@dataclass
class _Row:
    point: int
    labels: dict[str, Any]
    overrides: dict[str, Any]
    seed: int
    key: str
    scenario_hash: str | None
    spec: dict[str, Any] | None
    error: str | None


def _plan(sweep: Sweep, version: str) -> tuple[list[_Row], dict[str, Any] | None]:
    """The rows of the sweep and a reference summary (of the first valid point, before it runs).

    A point whose overrides do not apply or whose scenario the core rejects gets an error row
    per seed; it is never sent to a worker.
    """
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
            error = _describe(e)
            spec = None
        blob = None
        if error is not None:
            blob = json.dumps([sweep.base, sweep.overrides, overrides], sort_keys=True)
        for seed in sweep.seeds:
            if blob is None:
                key = run_key(scenario_hash, seed, version)
            else:
                key = _digest("tcplab-invalid", blob, str(seed), version)
            rows.append(_Row(index, labels, overrides, seed, key, scenario_hash, spec, error))
    return rows, reference


def run_key(scenario_hash: str, seed: int, version: str) -> str:
    """The key of a run: 32 hex digits of sha256(scenario hash, seed, tcplab version)."""
    return _digest("tcplab-run", scenario_hash, str(seed), version)


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


# --------------------------------------------------------------------------------------------
# Executing one run (in a worker process: local pool or Dask worker)


def execute(task: dict[str, Any], runner: Callable[..., Any] | None = None) -> dict[str, Any]:
    """Run one task and return its run record; every failure is recorded, never raised.

    A ScenarioError, a Python exception, or a panic in the core (pyo3's PanicException, a
    BaseException) becomes the record's `error`. Only KeyboardInterrupt and SystemExit pass.
    """
    runner = run if runner is None else runner
    started = time.perf_counter()
    record: dict[str, Any] = {
        "key": task["key"],
        "scenario_hash": task["scenario_hash"],
        "seed": task["seed"],
        "version": _core.version(),
        "error": None,
        "wall_time_s": None,
        "summary": None,
        "exec_id": uuid.uuid4().hex,
        "host": socket.gethostname(),
        "pid": os.getpid(),
    }
    try:
        result = runner(task["spec"], seed=task["seed"])
        summary = result.summary
        text = json.dumps(summary, allow_nan=False)
        if task["traces"]:
            # Capture files live in the worker's temporary directory (perhaps on another
            # machine): ship their bytes with the result.
            record["captures"] = {
                name: Path(path).read_bytes() for name, path in result.captures.items()
            }
            record["result"] = result
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:
        record["error"] = _describe(e)
        record["wall_time_s"] = time.perf_counter() - started
        record.pop("captures", None)
    else:
        record["wall_time_s"] = summary["wall_time_s"]
        record["summary"] = text
        record["scenario_hash"] = summary["scenario_hash"]  # checked by the sweep
    record["finished_at"] = time.time()
    return record


class DaskCluster:
    """Runs tasks on a Dask distributed cluster: `client.submit` per task, `as_completed`.

    `cluster` is a scheduler address (`tcp://host:8786`), a `distributed.Client`, or a cluster
    object with a `scheduler_address` (e.g. `distributed.LocalCluster`). Workers need the same
    tcplab version installed. A worker that dies repeatedly on a task (Dask's KilledWorker) is
    recorded as that run's error; losing the scheduler stops the sweep (rerun to resume).
    """

    def __init__(self, cluster: Any, timeout: float = 10.0):
        from distributed import Client

        self._own = not isinstance(cluster, Client)
        if not self._own:
            self.client = cluster
            return
        address = (
            cluster if isinstance(cluster, str) else getattr(cluster, "scheduler_address", None)
        )
        if not isinstance(address, str):
            raise TypeError(
                f"cluster must be a scheduler address, a Client or a Dask cluster, got {cluster!r}"
            )
        try:
            self.client = Client(address, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError) as e:
            raise ClusterError(f"cannot connect to the Dask scheduler at {address}: {e}") from None

    def close(self) -> None:
        """Close the client if this object opened it."""
        if self._own:
            self.client.close()

    def run(
        self, tasks: Sequence[dict[str, Any]], function: Callable[[dict[str, Any]], Any] = execute
    ) -> Iterator[dict[str, Any]]:
        """Yield one run record per task, in completion order."""
        from distributed import as_completed
        from distributed.client import FutureCancelledError

        if not tasks:
            return
        token = secrets.token_hex(4)
        futures = {
            self.client.submit(
                function, task, key=f"tcplab-run-{task['key']}-{token}", pure=False
            ): task
            for task in tasks
        }
        try:
            for future in as_completed(list(futures), loop=self.client.loop):
                task = futures.pop(future)
                try:
                    record = future.result()
                except (KeyboardInterrupt, SystemExit):
                    raise
                except (FutureCancelledError, ConnectionError, TimeoutError) as e:
                    raise ClusterLost(f"lost the Dask cluster: {_describe(e)}") from None
                except BaseException as e:  # KilledWorker, or an error outside `execute`
                    if self.client.status not in ("running", "connecting"):
                        raise ClusterLost(f"lost the Dask cluster: {_describe(e)}") from None
                    record = _failure(task, _describe(e))
                yield record
        finally:
            if futures:
                with contextlib.suppress(Exception):
                    self.client.cancel(list(futures))


# --------------------------------------------------------------------------------------------
# The result store


class Store:
    """A sweep's output directory.

    `store.json` marks it; `sweep.json` (and `sweep.toml`, `base.toml` when the sweep came from
    files) describe the last sweep run in it; `runs/<key>.parquet` holds one row per finished
    run; `runs.log` one JSON line per run executed; `traces/<key>/` the traces of a run when
    asked; `results.parquet` the sweep table. Every file is written to a temporary name and
    renamed into place. A lock file keeps two sweeps from using one store at once.
    """

    def __init__(self, root: Path):
        self.root = root
        self.runs = root / "runs"
        self.traces = root / "traces"
        self._lock: Any = None

    @classmethod
    def check(cls, out: str | os.PathLike[str]) -> Path:
        """The store's absolute path; StoreError if it is something else."""
        root = Path(os.path.abspath(out))
        if root.exists():
            if not root.is_dir():
                raise StoreError(f"{root}: exists and is not a directory")
            if any(root.iterdir()) and not (root / STORE_MARKER).is_file():
                raise StoreError(f"{root}: exists and is not a tcplab sweep store")
        return root

    @classmethod
    def open(cls, out: str | os.PathLike[str], sweep: Sweep) -> Store:
        """Create or reopen the store, lock it, and record the sweep's description."""
        store = cls(cls.check(out))
        try:
            store.root.mkdir(parents=True, exist_ok=True)
            store.runs.mkdir(exist_ok=True)
            lock = open(store.root / ".lock", "a")  # noqa: SIM115 - held until close()
        except OSError as e:
            raise StoreError(f"out: cannot create {e.filename}: {e.strerror}") from None
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            raise StoreError(f"{store.root}: another sweep is using this store") from None
        store._lock = lock
        try:
            for directory in (store.root, store.runs):
                for stale in directory.glob(".*.tmp-*"):
                    stale.unlink(missing_ok=True)
            _write_text(
                store.root / STORE_MARKER,
                json.dumps({"created_by": "tcplab-sweep", "format": 1}) + "\n",
            )
            _write_text(store.root / "sweep.json", json.dumps(sweep.to_json(), indent=2) + "\n")
            if sweep.source_text is not None:
                _write_text(store.root / "sweep.toml", sweep.source_text)
            if sweep.base_path is not None:
                _write_text(
                    store.root / "base.toml", Path(sweep.base_path).read_text(encoding="utf-8")
                )
        except BaseException:
            store.close()
            raise
        return store

    def close(self) -> None:
        """Release the lock."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def run_path(self, key: str) -> Path:
        return self.runs / f"{key}.parquet"

    def read(self, key: str) -> dict[str, Any] | None:
        """The stored record of run `key`, or None (absent or unreadable)."""
        path = self.run_path(key)
        if not path.is_file():
            return None
        try:
            rows = pl.read_parquet(path).to_dicts()
        except Exception:
            return None
        return rows[0] if len(rows) == 1 else None

    def has_traces(self, key: str) -> bool:
        return (self.traces / key / "metadata.json").is_file()

    def write(
        self,
        record: dict[str, Any],
        result: Any = None,
        captures: Mapping[str, bytes] | None = None,
    ) -> None:
        """Store a finished run: its traces first (if any), then its run file, then a log line.

        `result` is the run's Result (saved to `traces/<key>/`), `captures` the bytes of its
        pcapng files, which are written beside it.
        """
        key = record["key"]
        if result is not None:
            staging = make_staging(self.traces / key)  # beside it, not in /tmp
            try:
                result.captures = {}
                for name, data in (captures or {}).items():
                    path = staging / f"{name}.pcapng"
                    path.write_bytes(data)
                    result.captures[name] = path
                result.save(self.traces / key)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        frame = pl.DataFrame([{k: record.get(k) for k in _RECORD_SCHEMA}], schema=_RECORD_SCHEMA)
        _write_parquet_atomic(frame, self.run_path(key))
        line = {
            "key": key,
            "exec_id": record["exec_id"],
            "finished_at": record["finished_at"],
            "error": record["error"] is not None,
        }
        with open(self.root / "runs.log", "a", encoding="utf-8") as log:
            log.write(json.dumps(line) + "\n")

    def write_results(self, table: pl.DataFrame) -> Path:
        """Write the sweep table to `results.parquet` atomically."""
        path = self.root / "results.parquet"
        _write_parquet_atomic(table, path)
        return path


def _write_text(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file and a rename."""
    temporary = path.with_name(f".{path.name}.tmp-{secrets.token_hex(6)}")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------------------------
# Running a sweep


@dataclass
class SweepOutcome:
    """What `run_sweep` did: the table, and how many runs it executed, reused and saw fail."""

    table: pl.DataFrame
    executed: int
    reused: int
    failed: int
    elapsed_s: float
    store: Path | None = None


def run_sweep(
    sweep: Sweep,
    *,
    workers: int | None = None,
    cluster: Any = None,
    out: str | os.PathLike[str] | None = None,
    traces: bool | None = None,
    retry_failed: bool = False,
    progress: bool = False,
    _function: Callable[[dict[str, Any]], Any] = execute,
) -> SweepOutcome:
    """Run `sweep` and return its outcome; see `sweep` for the arguments."""
    refuse_in_worker_bootstrap()  # an unguarded script, imported again by a spawned worker
    started = time.perf_counter()
    if workers is not None and cluster is not None:
        raise ValueError("give either workers (local pool) or cluster (Dask), not both")
    traces = sweep.traces if traces is None else traces
    if traces and out is None:
        raise ValueError("saving traces needs an output directory (out=...)")
    version = _core.version()
    rows, reference = _plan(sweep, version)
    if reference is not None:
        for metric in sweep.metrics:
            try:
                metric.check(reference)
            except MetricError as e:
                raise SweepError(f"metrics: {e}") from None
    if out is not None:
        Store.check(out)
    executor: LocalPool | DaskCluster = (
        DaskCluster(cluster) if cluster is not None else LocalPool(workers)
    )
    store = None
    try:
        store = Store.open(out, sweep) if out is not None else None
        records: dict[str, dict[str, Any]] = {}
        scheduled: dict[str, dict[str, Any]] = {}
        for row in rows:
            if row.error is not None or row.key in records or row.key in scheduled:
                continue
            stored = store.read(row.key) if store is not None else None
            if (
                stored is not None
                and stored["version"] == version  # the key has it too
                and (not traces or stored["error"] is not None or store.has_traces(row.key))
                and not (retry_failed and stored["error"] is not None)
            ):
                records[row.key] = stored
                continue
            scheduled[row.key] = {
                "key": row.key,
                "scenario_hash": row.scenario_hash,
                "seed": row.seed,
                "spec": row.spec,
                "traces": traces,
                "overrides": json.dumps(row.overrides, sort_keys=True),
            }
        tasks = list(scheduled.values())
        reused = len(records)

        with (
            _SweepProgress(progress, reused + len(tasks), reused) as bar,
            contextlib.closing(executor.run(tasks, _function)) as completed,
        ):
            for record in completed:
                result = record.pop("result", None)
                captures = record.pop("captures", None)
                task = scheduled[record["key"]]
                if record["version"] != version or record["scenario_hash"] != task["scenario_hash"]:
                    raise WorkerMismatch(
                        f"worker {record['host']} (pid {record['pid']}) runs tcplab "
                        f"{record['version']} and computed scenario hash "
                        f"{record['scenario_hash']}; this process runs {version} and computed "
                        f"{task['scenario_hash']}: install the same tcplab build everywhere "
                        "(and restart workers after rebuilding)"
                    )
                record["overrides"] = task["overrides"]
                if store is not None:
                    store.write(record, result, captures)
                records[record["key"]] = record
                bar.advance(record["error"] is not None)

        table = build_table(sweep, rows, records)
        if store is not None:
            store.write_results(table)
    finally:
        if isinstance(executor, DaskCluster):
            executor.close()
        if store is not None:
            store.close()
    failed = table.filter(pl.col("error").is_not_null()).height
    return SweepOutcome(
        table,
        len(tasks),
        reused,
        failed,
        time.perf_counter() - started,
        store.root if store is not None else None,
    )


def build_table(
    sweep: Sweep, rows: list[_Row], records: Mapping[str, Mapping[str, Any]]
) -> pl.DataFrame:
    """The sweep table: one row per (point, seed) in sweep order.

    Columns: `point`, the axis columns, `seed`, `key`, `scenario_hash`, `wall_time_s`, `error`,
    then one column per metric.
    """
    summaries: dict[str, dict[str, Any] | None] = {}
    columns: dict[str, list[Any]] = {
        name: [] for name in ["point", *sweep.columns, *RESERVED_COLUMNS[1:]]
    }
    metric_values: dict[str, list[Any]] = {m.name: [] for m in sweep.metrics}
    for row in rows:
        columns["point"].append(row.point)
        for path in sweep.columns:
            columns[path].append(row.labels[path])
        columns["seed"].append(row.seed)
        columns["key"].append(row.key)
        columns["scenario_hash"].append(row.scenario_hash)
        if row.error is not None:
            error, wall, summary = row.error, None, None
        else:
            record = records[row.key]
            error, wall = record["error"], record["wall_time_s"]
            if row.key not in summaries:
                text = record["summary"]
                summaries[row.key] = (
                    json.loads(text) if text is not None and error is None else None
                )
            summary = summaries[row.key]
        columns["wall_time_s"].append(wall)
        columns["error"].append(error)
        for metric in sweep.metrics:
            metric_values[metric.name].append(None if summary is None else metric.evaluate(summary))
    series = [_series("point", columns["point"], pl.Int64)]
    series += [_series(path, columns[path]) for path in sweep.columns]
    series += [
        _series("seed", columns["seed"], pl.UInt64),
        _series("key", columns["key"], pl.String),
        _series("scenario_hash", columns["scenario_hash"], pl.String),
        _series("wall_time_s", columns["wall_time_s"], pl.Float64),
        _series("error", columns["error"], pl.String),
    ]
    series += [_series(name, values) for name, values in metric_values.items()]
    return pl.DataFrame(series)


def _series(name: str, values: list[Any], dtype: Any = None) -> pl.Series:
    """A column with a dtype that fits all its values (JSON text for mixed or nested values)."""
    if dtype is not None:
        return pl.Series(name, values, dtype=dtype)
    present = [v for v in values if v is not None]
    if not present:
        return pl.Series(name, values, dtype=pl.Null)
    if all(isinstance(v, bool) for v in present):
        return pl.Series(name, values, dtype=pl.Boolean)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        if all(-(2**63) <= v < 2**63 for v in present):
            return pl.Series(name, values, dtype=pl.Int64)
        if all(0 <= v < 2**64 for v in present):
            return pl.Series(name, values, dtype=pl.UInt64)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pl.Series(name, [None if v is None else float(v) for v in values], dtype=pl.Float64)
    if all(isinstance(v, str) for v in present):
        return pl.Series(name, values, dtype=pl.String)
    return pl.Series(
        name,
        [None if v is None else json.dumps(v, sort_keys=True) for v in values],
        dtype=pl.String,
    )


class _SweepProgress:
    """A rich progress bar over runs: done/total, failures, elapsed time and ETA (stderr)."""

    def __init__(self, enabled: bool, total: int, done: int):
        self._progress = None
        self._failed = 0
        if not enabled or total == 0:
            return
        self._progress = Progress(
            TextColumn("[bold]sweep"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("runs"),
            TextColumn("[red]{task.fields[failed]} failed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self._task = self._progress.add_task("sweep", total=total, completed=done, failed=0)

    def __enter__(self) -> _SweepProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def advance(self, failed: bool) -> None:
        if self._progress is None:
            return
        self._failed += failed
        self._progress.update(self._task, advance=1, failed=self._failed)


def build_sweep(
    base: str | os.PathLike[str] | Mapping[str, Any],
    axes: Mapping[str | tuple[str, ...], Any] | None = None,
    seeds: int | Sequence[int] = 1,
    metrics: Sequence[str] | Mapping[str, str] | None = None,
    *,
    overrides: Mapping[str, Any] | None = None,
    traces: bool = False,
    name: str = "sweep",
) -> Sweep:
    """A validated Sweep from the arguments of `sweep` (raises SweepError)."""
    if axes is not None and not isinstance(axes, Mapping):
        raise SweepError("axes: expected a mapping of path (or tuple of paths) to values")
    return _build(
        base=base,
        axes=[
            _axis((path,) if isinstance(path, str) else tuple(path), values)
            for path, values in (axes or {}).items()
        ],
        seeds=seeds,
        metrics=metrics,
        overrides=overrides or {},
        traces=traces,
        name=name,
    )


def sweep(
    base: str | os.PathLike[str] | Mapping[str, Any] | Sweep,
    axes: Mapping[str | tuple[str, ...], Any] | None = None,
    seeds: int | Sequence[int] = 1,
    metrics: Sequence[str] | Mapping[str, str] | None = None,
    *,
    overrides: Mapping[str, Any] | None = None,
    workers: int | None = None,
    cluster: Any = None,
    out: str | os.PathLike[str] | None = None,
    traces: bool = False,
    retry_failed: bool = False,
    progress: bool = False,
    name: str = "sweep",
) -> pl.DataFrame:
    """Run a sweep and return its table (a polars DataFrame, one row per run).

    `base` is a scenario (TOML path or dict) or a `Sweep` from `load_sweep` (then `axes`,
    `seeds`, `metrics`, `overrides`, `name` must be left out). `axes` maps a dotted scenario
    path to its values: a list, or a range `{"start", "stop", "step" | "num" | "factor",
    "unit"}`; a tuple of paths maps to a list of value tuples (zipped axes). `seeds` is a count
    (the base scenario's run.seed, default 1, and the seeds after it) or a list. `metrics` are
    metric expressions (default: `tcplab.sweep_metrics.DEFAULT_METRICS`), or a mapping of column
    name to expression. `overrides` apply to every run.

    Runs go to a local process pool of `workers` processes (default: one per CPU), or to the
    Dask cluster `cluster` (scheduler address, Client or cluster object). With `out`, finished
    runs are stored there and a rerun skips them (failed ones too, unless `retry_failed`);
    `traces` saves each run's traces in `out/traces/<key>/`. Failed runs have their message in
    the `error` column. Raises SweepError for an invalid description.
    """
    if isinstance(base, Sweep):
        if axes is not None or metrics is not None or overrides is not None or seeds != 1:
            raise ValueError("pass either a Sweep or base, axes, seeds, metrics and overrides")
        spec = base
    else:
        spec = build_sweep(
            base, axes, seeds, metrics, overrides=overrides, traces=traces, name=name
        )
    outcome = run_sweep(
        spec,
        workers=workers,
        cluster=cluster,
        out=out,
        traces=traces or spec.traces,
        retry_failed=retry_failed,
        progress=progress,
    )
    return outcome.table


def _write_parquet_atomic(frame: pl.DataFrame, path: Path) -> None:
    """Write `frame` to `path` through a synced temporary file and a rename: a reader (or a
    crash) sees the old file or the new one, never a partial one."""
    temporary = path.with_name(f".{path.name}.tmp-{secrets.token_hex(6)}")
    try:
        with open(temporary, "wb") as f:
            frame.write_parquet(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
