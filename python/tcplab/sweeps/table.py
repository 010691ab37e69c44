"""The sweep table: one row per (axis point, seed), built from the plan and the run records;
and the per-flow and per-queue tables: one row per flow (queue) of each successful run."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import polars as pl

from tcplab.sweeps.errors import SweepError
from tcplab.sweeps.hooks import decode_values
from tcplab.sweeps.plan import Row
from tcplab.sweeps.spec import RESERVED_COLUMNS, Sweep

__all__ = ["ELEMENT_TABLES", "build_elements", "build_table"]

ELEMENT_TABLES = ("flows", "queues")
"""The summary lists that `build_elements` turns into tables (the store's `<name>.parquet`)."""

_FLOAT_FIELDS = ("finish_s", "data_start_s", "srtt_s")
"""Per-flow summary values that are null when they do not exist (yet): Float64 columns even
when every row is null (as `Result.flows`)."""

Summaries = dict[str, "dict[str, Any] | None"]
"""Run key -> its parsed summary (None for a failed run): a cache the table builders share."""


def build_table(
    sweep: Sweep,
    rows: list[Row],
    records: Mapping[str, Mapping[str, Any]],
    reference: Mapping[str, Any] | None = None,
    summaries: Summaries | None = None,
) -> pl.DataFrame:
    """The sweep table: one row per (point, seed) in sweep order.

    Columns: `point`, the axis columns, `seed`, `key`, `scenario_hash`, `wall_time_s`, `error`,
    then one column per metric, then, with a per-run metric hook, one column per name the hook
    returned (in the order first seen; null where a run failed or returned no such name).
    A metric that no run has a value for (`max(flows.finish_s)` when no flow finished) gets
    the type of its value in `reference` (a summary of the sweep's scenario, `plan`'s), Float64
    when that has none either. `summaries` caches the parsed run summaries across calls.
    Raises SweepError if a hook's column has the name of another column.
    """
    summaries = {} if summaries is None else summaries
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
            summary = _summary(records, row, summaries)
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
    for metric in sweep.metrics:
        values = metric_values[metric.name]
        empty = all(v is None for v in values)
        sample = metric.evaluate(reference) if empty and reference is not None else None
        series.append(_series(metric.name, values, _empty_dtype(sample) if empty else None))
    taken = {s.name for s in series}
    for name, values in hook_values.items():
        if name in taken:
            raise SweepError(f"hook {sweep.hook.name}: its column {name!r} clashes with another table column")  # type: ignore[union-attr]
        series.append(_hook_series(name, values))
    return pl.DataFrame(series)


def build_elements(
    sweep: Sweep,
    rows: list[Row],
    records: Mapping[str, Mapping[str, Any]],
    name: str,
    summaries: Summaries | None = None,
) -> pl.DataFrame:
    """One row per element of the summary list `name` (`flows` or `queues`) of each successful
    run, in sweep order: `point`, the axis columns, `seed`, `key`, then the element's summary
    fields as typed columns (as `Result.flows` and `Result.queues`; a field named as an axis
    column is prefixed, `flow_name`). Failed runs have no rows.
    """
    summaries = {} if summaries is None else summaries
    head: dict[str, list[Any]] = {c: [] for c in ["point", *sweep.columns, "seed", "key"]}
    elements: list[Mapping[str, Any]] = []
    for row in rows:
        summary = None if row.error is not None else _summary(records, row, summaries)
        for element in (summary or {}).get(name) or []:
            head["point"].append(row.point)
            for path in sweep.columns:
                head[path].append(row.labels[path])
            head["seed"].append(row.seed)
            head["key"].append(row.key)
            elements.append(element)
    series = [_series("point", head["point"], pl.Int64)]
    series += [_series(path, head[path]) for path in sweep.columns]
    series += [_series("seed", head["seed"], pl.UInt64), _series("key", head["key"], pl.String)]
    fields = pl.DataFrame(elements, infer_schema_length=None) if elements else pl.DataFrame()
    fields = fields.with_columns(
        pl.col(c).cast(pl.Float64) for c in _FLOAT_FIELDS if c in fields.columns
    )
    taken = {s.name for s in series}  # an axis `name` (the scenario's) is kept as it is
    fields = fields.rename({c: f"{name[:-1]}_{c}" for c in fields.columns if c in taken})
    return pl.DataFrame(series).hstack(fields) if fields.width else pl.DataFrame(series)


def _summary(records: Mapping[str, Mapping[str, Any]], row: Row, cache: Summaries) -> dict[str, Any] | None:
    """The parsed summary of a row's run (None for a failed run)."""
    if row.key not in cache:
        record = records[row.key]
        text = record["summary"]
        cache[row.key] = json.loads(text) if text is not None and record["error"] is None else None
    return cache[row.key]


def _empty_dtype(sample: Any) -> Any:
    """The type of a metric column without values, from the metric's value `sample` in a
    reference summary: Boolean, Int64 or String as the sample, else Float64 (an absent value
    is one of the optional times, `finish_s`, `srtt_s`, which are seconds)."""
    if isinstance(sample, bool):
        return pl.Boolean
    if isinstance(sample, int):
        return pl.Int64
    if isinstance(sample, str):
        return pl.String
    return pl.Float64


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
