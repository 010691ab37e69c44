"""The axes of a sweep: how one axis's values are written (a list, a range table with an
optional unit, or several paths zipped together) and expanded into the values of each point.

See `tcplab docs sweeps` (docs/sweeps.md), "The sweep file".
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from tcplab.scenario import value_error
from tcplab.sweeps.errors import SweepError

__all__ = ["MAX_AXIS_VALUES", "Axis", "check_path", "check_plain", "path_axis", "quote", "zip_axis"]

MAX_AXIS_VALUES = 100_000
"""Largest number of values one range may produce (guards against a mistyped step)."""

_RANGE_KEYS = ("values", "start", "stop", "step", "num", "factor", "unit")
"""Keys of a range table."""


@dataclass(frozen=True)
class Axis:
    """One dimension of the grid: one path, or several zipped paths that vary together.

    `values[i]` are the scenario values of point i (one per path); `labels[i]` what the table
    shows (the same, except that ranges with a `unit` show the bare numbers).
    """

    paths: tuple[str, ...]
    values: tuple[tuple[Any, ...], ...]
    labels: tuple[tuple[Any, ...], ...]


def zip_axis(index: int, table: Mapping[str, Any]) -> Axis:
    """One axis from a `[[zip]]` table: PATH = values entries of equal length, varied together."""
    where = f"zip[{index}]"
    if not table:
        raise SweepError(f"{where}: empty; give two or more PATH = values")
    paths = tuple(table)
    columns = []
    for path, member in table.items():
        check_path(f"{where}.{quote(path)}", path)
        columns.append(_values(f"{where}.{quote(path)}", member))
    lengths = {len(values) for values, _ in columns}
    if len(lengths) > 1:
        counts = ", ".join(f"{p}: {len(v)}" for p, (v, _) in zip(paths, columns, strict=True))
        raise SweepError(f"{where}: zipped axes need equal lengths ({counts})")
    values = tuple(zip(*(v for v, _ in columns), strict=True))
    labels = tuple(zip(*(lab for _, lab in columns), strict=True))
    return Axis(paths, values, labels)


def path_axis(paths: tuple[str, ...], spec: Any) -> Axis:
    """One axis from a path and its values (a list or a range table), or, for several paths
    (Python API), a list of value tuples."""
    if len(paths) == 1:
        where = f"axes.{quote(paths[0])}"
        check_path(where, paths[0])
        values, labels = _values(where, spec)
        return Axis(paths, tuple((v,) for v in values), tuple((lab,) for lab in labels))
    # Python API: a tuple of paths with a list of value tuples.
    where = f"axes[{paths!r}]"
    for path in paths:
        check_path(where, path)
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
            check_plain(where, value)
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
        check_plain(f"{where}[{i}]", value)
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
    """SweepError if a range would give more than MAX_AXIS_VALUES values."""
    if count > MAX_AXIS_VALUES:
        raise SweepError(f"{where}: more than {MAX_AXIS_VALUES} values")


def check_path(where: str, path: Any) -> None:
    """A scenario path that a sweep may vary."""
    if not isinstance(path, str) or not path or not all(path.split(".")):
        raise SweepError(f"{where}: not a dotted scenario path: {path!r}")
    if path in ("run.seed", "run"):
        raise SweepError(f"{where}: seeds come from the sweep's `seeds`, not from run.seed")


def quote(path: Any) -> str:
    """A key as TOML writes it in a dotted key."""
    text = str(path)
    return text if text.replace("_", "").replace("-", "").isalnum() else json.dumps(text)


def check_plain(where: str, value: Any) -> None:
    """SweepError unless `value` is made only of TOML values (no NaN, None, dates, deep nests)."""
    if (message := value_error(value, where, 2)) is not None:
        raise SweepError(message)


def _is_number(value: Any) -> bool:
    """Whether `value` is a TOML number: a signed 64-bit int or a finite float (not a bool)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return -(2**63) <= value < 2**63
    return isinstance(value, float) and math.isfinite(value)


def _format_number(value: float) -> str:
    """A number as the core's unit parser reads it: `10`, `0.5`, never `1e-05`."""
    if isinstance(value, int):
        return str(value)
    if float(value).is_integer():
        return str(int(value))
    return np.format_float_positional(value, trim="-")

