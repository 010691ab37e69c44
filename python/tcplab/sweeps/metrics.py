"""Summary metrics for sweeps: small expressions that pick one number out of a run summary.

A metric is one of:

- a top-level summary value: `sim_time_s`, `events`;
- a value of a summary table: `packets.delivered`, `packets.queue_drops`; for runs with
  request/response flows, `messages.fct_p99_s`, `messages.slowdown_p99` (and `count`,
  `fct_mean_s`, `fct_p50_s`, `fct_max_s`, `slowdown_mean`, `slowdown_p50`, `slowdown_max`:
  every answered request of the run, nearest-rank percentiles);
- one flow's or queue's value: `flows[0].goodput_bps` (by index), `flows[bulk.0].goodput_bps`
  (by name), `queues[sw1->emu].dropped`;
- an aggregate over flows or queues: `sum(flows.goodput_bps)`, `mean(flows.srtt_s)`,
  `min(...)`, `max(...)`, `count(...)` (number of non-null values), `jain(...)` (Jain's
  fairness index (Σx)² / (n·Σx²)) and the percentiles `median(...)`, `p90(...)`, `p99(...)`
  (linear interpolation between order statistics, as numpy's default). A filter `[FIELD=VALUE]` restricts the flows or queues:
  `sum(flows[kind=tcp].goodput_bps)`, `jain(flows[cc=newreno].goodput_bps)`.

Flows have two derived fields beside the summary's: `fct_s`, the flow-completion time
`finish_s − start_s` (null while the flow runs), so `p99(flows.fct_s)` is the 99th-percentile
FCT, and `slowdown`, `fct_s / ideal_fct_s` (null for a flow of unknown size or still
running), so `p99(flows.slowdown)` is the 99th-percentile slowdown.

Aggregates skip null values (`finish_s` of an unfinished flow, `srtt_s` of a UDP flow) and are
null when nothing is left. A flow or queue that does not exist at some sweep point (index or
name not found) gives null. See docs/sweeps.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["AGGREGATES", "DEFAULT_METRICS", "Metric", "MetricError", "parse_metric"]

AGGREGATES = ("sum", "mean", "min", "max", "count", "jain", "median", "p90", "p99")
"""The aggregate functions a metric may apply to flows.FIELD or queues.FIELD."""

DEFAULT_METRICS = (
    "sim_time_s",
    "events",
    "sum(flows[kind=tcp].goodput_bps)",
    "jain(flows[kind=tcp].goodput_bps)",
    "sum(flows.retransmits)",
    "sum(flows.timeouts)",
    "sum(queues.dropped)",
)
"""Metrics collected when a sweep names none."""

_LISTS = ("flows", "queues")

_PERCENTILES = {"median": 50.0, "p90": 90.0, "p99": 99.0}


def _fct(flow: dict[str, Any]) -> Any:
    """A flow's completion time, s: finish_s − start_s, None while it runs."""
    finish, start = flow.get("finish_s"), flow.get("start_s")
    if finish is None or start is None:
        return None
    return finish - start


def _slowdown(flow: dict[str, Any]) -> Any:
    """A flow's FCT over its ideal (`ideal_fct_s`), None without one or while it runs."""
    fct, ideal = _fct(flow), flow.get("ideal_fct_s")
    if fct is None or not ideal:
        return None
    return fct / ideal


_DERIVED = {"flows": {"fct_s": _fct, "slowdown": _slowdown}}
"""Fields computed from a flow's summary values, readable as any other field."""


def _field(table: str, item: dict[str, Any], field: str) -> Any:
    """`item`'s value of `field`, derived or from the summary."""
    derive = _DERIVED.get(table, {}).get(field)
    return derive(item) if derive is not None and field not in item else item.get(field)


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile of `values` (non-empty), interpolating linearly between order
    statistics (numpy's default, Hyndman & Fan type 7)."""
    xs = sorted(float(v) for v in values)
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
_AGGREGATE = re.compile(r"^\s*(\w+)\s*\((.*)\)\s*$", re.DOTALL)
_LIST_REF = re.compile(r"^(\w+)(?:\[([^\]]*)\])?\.(\w+)$")
_PLAIN_REF = re.compile(r"^(\w+)(?:\.(\w+))?$")
_FILTER = re.compile(r"^(\w+)=(.*)$", re.DOTALL)


class MetricError(ValueError):
    """A metric expression that cannot be parsed or does not match the summary."""


@dataclass(frozen=True)
class Metric:
    """One parsed metric expression; `name` is its column name in the sweep table."""

    name: str
    expr: str
    aggregate: str | None
    table: str | None
    """`flows`/`queues` for per-element values, a summary table name (`packets`), or None."""
    field: str
    selector: tuple[str, Any] | None
    """("index", i), ("name", text), ("filter", (field, text)) or None (every element)."""

    @property
    def per_element(self) -> bool:
        """Whether the metric reads flows or queues (as opposed to a single summary value)."""
        return self.table in _LISTS

    def evaluate(self, summary: dict[str, Any]) -> Any:
        """The metric's value for one run summary (None when it does not apply)."""
        if not self.per_element:
            node = summary if self.table is None else summary.get(self.table)
            if not isinstance(node, dict):
                return None
            value = node.get(self.field)
            return value if _is_scalar(value) else None
        items = _select(summary.get(self.table) or [], self.selector)
        values = [_field(self.table, item, self.field) for item in items]
        if self.aggregate is None:
            return values[0] if values and _is_scalar(values[0]) else None
        return _aggregate(self.aggregate, [v for v in values if v is not None])

    def check(self, reference: dict[str, Any]) -> None:
        """Raise MetricError if the metric names fields absent from `reference`.

        `reference` is a summary of the sweep's scenario (taken before running it), so this
        catches misspelt fields before any run starts.
        """
        if not self.per_element:
            node = reference if self.table is None else reference.get(self.table)
            if self.table is not None and not isinstance(node, dict):
                raise MetricError(f"{self.expr}: the summary has no table {self.table!r}")
            if self.field not in node or isinstance(node[self.field], (dict, list)):
                known = ", ".join(sorted(k for k, v in node.items() if _is_scalar(v)))
                where = "the summary" if self.table is None else self.table
                raise MetricError(
                    f"{self.expr}: {where} has no value {self.field!r} (known: {known})"
                )
            return
        items = reference.get(self.table) or []
        if not items:
            return
        fields = set(items[0]) | set(_DERIVED.get(self.table, {}))
        needed = [self.field]
        if self.selector is not None and self.selector[0] == "filter":
            needed.append(self.selector[1][0])
        for field in needed:
            if field not in fields:
                known = ", ".join(sorted(fields))
                raise MetricError(
                    f"{self.expr}: {self.table} have no field {field!r} (known: {known})"
                )
        sample = next((v for i in items if (v := _field(self.table, i, self.field)) is not None), None)
        if self.aggregate not in (None, "count") and isinstance(sample, str):
            raise MetricError(
                f"{self.expr}: {self.field} is text; {self.aggregate}() needs numbers"
            )


def parse_metric(expr: str, name: str | None = None) -> Metric:
    """Parse a metric expression (see the module docstring); `name` defaults to `expr`."""
    if not isinstance(expr, str) or not expr.strip():
        raise MetricError(f"metric must be a non-empty string, got {expr!r}")
    text = expr.strip()
    aggregate = None
    inner = text
    match = _AGGREGATE.match(text)
    if match:
        aggregate, inner = match.group(1), match.group(2).strip()
        if aggregate not in AGGREGATES:
            raise MetricError(
                f"{text}: unknown aggregate {aggregate!r} (known: {', '.join(AGGREGATES)})"
            )
    list_ref = _LIST_REF.match(inner)
    if list_ref and list_ref.group(1) in _LISTS:
        table, selector_text, field = list_ref.groups()
        selector = None if selector_text is None else _parse_selector(text, selector_text)
        single = selector is not None and selector[0] in ("index", "name")
        if aggregate is None and not single:
            raise MetricError(
                f"{text}: {table} has one value per element; aggregate it "
                f"({', '.join(f'{a}({inner})' for a in AGGREGATES[:2])}, …) "
                f"or pick one: {table}[0].{field}"
            )
        return Metric(name or text, text, aggregate, table, field, selector)
    if list_ref and list_ref.group(2) is not None:
        raise MetricError(f"{text}: only flows and queues can be indexed or filtered")
    plain = _PLAIN_REF.match(inner)
    if not plain:
        raise MetricError(
            f"{text}: not a metric; expected e.g. sim_time_s, packets.delivered, "
            "flows[0].goodput_bps or sum(flows.goodput_bps)"
        )
    first, second = plain.groups()
    if first in _LISTS:
        if second is None:
            example = "goodput_bps" if first == "flows" else "dropped"
            raise MetricError(f"{text}: name a field, e.g. sum({first}.{example})")
        if aggregate is None:
            raise MetricError(
                f"{text}: {first} has one value per element; aggregate it "
                f"(sum({text}), mean({text}), …) or pick one: {first}[0].{second}"
            )
        return Metric(name or text, text, aggregate, first, second, None)
    if aggregate is not None:
        raise MetricError(f"{text}: {aggregate}() applies to flows.FIELD or queues.FIELD")
    if second is None:
        return Metric(name or text, text, None, None, first, None)
    return Metric(name or text, text, None, first, second, None)


def _parse_selector(expr: str, text: str) -> tuple[str, Any]:
    """Parse the part between brackets: an index, `FIELD=VALUE`, or a name."""
    text = text.strip()
    if not text:
        raise MetricError(f"{expr}: empty []")
    if text.isascii() and text.isdigit():
        return ("index", int(text))
    match = _FILTER.match(text)
    if match:
        field, value = match.group(1), match.group(2).strip()
        if field == "name":
            return ("name", value)
        return ("filter", (field, value))
    return ("name", text)


def _select(items: list[dict[str, Any]], selector: tuple[str, Any] | None) -> list[dict[str, Any]]:
    """The elements of `items` that `selector` picks."""
    if selector is None:
        return items
    kind, arg = selector
    if kind == "index":
        return [items[arg]] if arg < len(items) else []
    if kind == "name":
        return [item for item in items if item.get("name") == arg][:1]
    field, text = arg
    return [item for item in items if _matches(item.get(field), text)]


def _matches(value: Any, text: str) -> bool:
    """Whether a summary value equals the filter text (compared as text, number or boolean)."""
    if value is None:
        return text == "null"
    if isinstance(value, bool):
        return text == ("true" if value else "false")
    if isinstance(value, (int, float)):
        try:
            return float(text) == value
        except ValueError:
            return False
    return str(value) == text


def _aggregate(kind: str, values: list[Any]) -> Any:
    """Aggregate non-null `values`; None when there are none or they are not numbers."""
    if kind == "count":
        return len(values)
    if not values or any(isinstance(v, (str, bool, dict, list)) for v in values):
        return None
    if kind == "sum":
        return sum(values)
    if kind == "mean":
        return math.fsum(values) / len(values)
    if kind == "min":
        return min(values)
    if kind == "max":
        return max(values)
    if kind in _PERCENTILES:
        return percentile(values, _PERCENTILES[kind])
    squares = math.fsum(float(v) * float(v) for v in values)
    if squares == 0:
        return None
    return math.fsum(values) ** 2 / (len(values) * squares)


def _is_scalar(value: Any) -> bool:
    """Whether a summary value can be a table cell."""
    return value is None or isinstance(value, (bool, int, float, str))
