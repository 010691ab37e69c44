"""Short names and units for metric expressions, shared by the sweep table and `sweep_plot`."""

from __future__ import annotations

__all__ = ["metric_heading"]

_SHORT = {"retransmits": "retx", "fast_retransmits": "fast retx", "bytes_delivered": "delivered",
          "max_packets": "max pkts", "max_bytes": "max bytes", "timeouts": "RTOs"}
"""Shorter headings for the longest summary fields."""

_UNITS = (("_bps", "Mb/s", 1e-6), ("_bytes", "MB", 1e-6), ("_s", "s", 1.0))
"""A metric's field suffix, the unit it is shown in, and the factor to that unit."""


def metric_heading(metric: str) -> tuple[str, str, float]:
    """(short name, unit, factor to the unit) for a metric expression or column name:
    `sum(flows[kind=tcp].goodput_bps)` -> ("sum goodput", "Mb/s", 1e-6),
    `queues[sw1->emu].dropped` -> ("dropped", "", 1), `jain(...)` has no unit, a plain column
    without a unit suffix is its own name. The longest fields are shortened (`retransmits` ->
    `retx`) and `_` becomes a space."""
    agg, _, inner = metric.partition("(")
    if inner.endswith(")") and agg.isidentifier():
        path = inner[:-1]
    else:
        agg, path = "", metric
    field = path.rsplit(".", 1)[-1]
    unit, factor = "", 1.0
    for suffix, shown, scale in _UNITS:
        if field.endswith(suffix) and len(field) > len(suffix):
            field = field[: -len(suffix)]
            if agg != "jain":  # Jain's index has no unit
                unit, factor = shown, scale
            break
    field = _SHORT.get(field, field).replace("_", " ")  # a heading wraps between words
    name = f"{agg} {field}" if agg else field
    return name, unit, factor
