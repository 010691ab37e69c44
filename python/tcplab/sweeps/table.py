"""The sweep table: one row per (axis point, seed), built from the plan and the run records."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import polars as pl

from tcplab.sweeps.errors import SweepError
from tcplab.sweeps.hooks import decode_values
from tcplab.sweeps.plan import Row
from tcplab.sweeps.spec import RESERVED_COLUMNS, Sweep

__all__ = ["build_table"]


def build_table(
    sweep: Sweep, rows: list[Row], records: Mapping[str, Mapping[str, Any]]
) -> pl.DataFrame:
    """The sweep table: one row per (point, seed) in sweep order.

    Columns: `point`, the axis columns, `seed`, `key`, `scenario_hash`, `wall_time_s`, `error`,
    then one column per metric, then, with a per-run metric hook, one column per name the hook
    returned (in the order first seen; null where a run failed or returned no such name).
    Raises SweepError if a hook's column has the name of another column.
    """
    summaries: dict[str, dict[str, Any] | None] = {}
    extras: dict[str, dict[str, Any]] = {}
    columns: dict[str, list[Any]] = {
        name: [] for name in ["point", *sweep.columns, *RESERVED_COLUMNS[1:]]
    }
    metric_values: dict[str, list[Any]] = {m.name: [] for m in sweep.metrics}
    hook_values: dict[str, list[Any]] = {}
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
        if sweep.hook is not None:
            extra = _extra(records, row, extras)
            for name in extra:
                hook_values.setdefault(name, [None] * (len(columns["point"]) - 1))
            for name, values in hook_values.items():
                values.append(extra.get(name))
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
    taken = {s.name for s in series}
    for name, values in hook_values.items():
        if name in taken:
            raise SweepError(f"hook {sweep.hook.name}: its column {name!r} clashes with another table column")  # type: ignore[union-attr]
        series.append(_hook_series(name, values))
    return pl.DataFrame(series)


def _extra(records: Mapping[str, Mapping[str, Any]], row: Row, cache: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The hook's columns of one row's run ({} for an invalid point or a failed run)."""
    if row.error is not None:
        return {}
    if row.key not in cache:
        record = records[row.key]
        text = record.get("extra")
        cache[row.key] = decode_values(text) if text is not None and record["error"] is None else {}
    return cache[row.key]


def _hook_series(name: str, values: list[Any]) -> pl.Series:
    """A hook's column: as a metric's (`_series`), except that lists and tables become
    polars list and struct columns when their values have one type (else JSON text)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, (list, dict)) for v in present):
        try:
            return pl.Series(name, values, strict=True)
        except (TypeError, ValueError, pl.exceptions.PolarsError):
            pass
    return _series(name, values)


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
