"""Sweeps: one base scenario run over a grid of overrides and seeds, on a local process pool or
a Dask cluster, with a result store that resumes.

A sweep is described by a TOML file (`load_sweep`) or by the arguments of `sweep`. Each run is
the base scenario with the overrides of one axis point, simulated with one seed. Runs are keyed
by sha256(scenario hash, seed, tcplab version); a store directory keeps one Parquet file per
finished run, so rerunning a sweep skips what is done. See `tcplab docs sweeps`
(docs/sweeps.md).

| module | concept |
|---|---|
| `spec` | the `Sweep` description: loading a sweep file, validating, `build_sweep` |
| `axes` | one axis's values: lists, ranges with units, zipped paths |
| `metrics` | metric expressions that pick one number out of a run summary |
| `hooks` | per-run metric hooks: extra columns computed from each run's Result in the worker |
| `plan` | one row per (axis point, seed), each with its run key |
| `records` | one run's record, as a worker returns it (`execute`) |
| `pool` | the local process pool, what a worker's death means, `kept_pools` (one pool for many sweeps) |
| `cluster` | Dask distributed (the optional extra `tcplab[dask]`) |
| `store` | the output directory that makes a rerun resume |
| `table` | the sweep table built from the plan and the records |
| `runner` | `run_sweep` and `sweep`: everything above, in order |
| `stats` | mean and confidence interval over seeds (`sweep_summary`) |
| `labels` | short names and units of metric expressions (table headings, plot labels) |
| `plot` | a metric against an axis with its interval (`sweep_plot`): units, log axes |
| `errors` | the errors a sweep raises |
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tcplab.sweeps.axes import Axis
    from tcplab.sweeps.errors import (
        ClusterError,
        ClusterLost,
        DaskNotInstalled,
        StoreError,
        SweepError,
        WorkerMismatch,
    )
    from tcplab.sweeps.metrics import DEFAULT_METRICS, Metric, MetricError, parse_metric
    from tcplab.sweeps.plan import run_key
    from tcplab.sweeps.plot import sweep_plot
    from tcplab.sweeps.pool import CRASH_MESSAGE, kept_pools
    from tcplab.sweeps.records import execute
    from tcplab.sweeps.runner import SweepOutcome, run_sweep, sweep
    from tcplab.sweeps.spec import RESERVED_COLUMNS, Sweep, build_sweep, load_sweep
    from tcplab.sweeps.stats import sweep_summary
    from tcplab.sweeps.store import STORE_MARKER

# Each public name is imported from its module on first use (PEP 562): a spawned sweep worker
# unpickles `records.execute` without loading polars, numpy or matplotlib, which a run that
# only reports its summary never needs.
_LAZY = {
    "Axis": "axes",
    "ClusterError": "errors",
    "ClusterLost": "errors",
    "DaskNotInstalled": "errors",
    "StoreError": "errors",
    "SweepError": "errors",
    "WorkerMismatch": "errors",
    "DEFAULT_METRICS": "metrics",
    "Metric": "metrics",
    "MetricError": "metrics",
    "parse_metric": "metrics",
    "run_key": "plan",
    "sweep_plot": "plot",
    "CRASH_MESSAGE": "pool",
    "kept_pools": "pool",
    "execute": "records",
    "SweepOutcome": "runner",
    "run_sweep": "runner",
    "sweep": "runner",
    "RESERVED_COLUMNS": "spec",
    "Sweep": "spec",
    "build_sweep": "spec",
    "load_sweep": "spec",
    "sweep_summary": "stats",
    "STORE_MARKER": "store",
}


def __getattr__(name: str) -> Any:
    """Import a public name of the package on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tcplab.sweeps' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"tcplab.sweeps.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "CRASH_MESSAGE",
    "DEFAULT_METRICS",
    "RESERVED_COLUMNS",
    "STORE_MARKER",
    "Axis",
    "ClusterError",
    "ClusterLost",
    "DaskNotInstalled",
    "Metric",
    "MetricError",
    "StoreError",
    "Sweep",
    "SweepError",
    "SweepOutcome",
    "WorkerMismatch",
    "build_sweep",
    "execute",
    "kept_pools",
    "load_sweep",
    "parse_metric",
    "run_key",
    "run_sweep",
    "sweep",
    "sweep_plot",
    "sweep_summary",
]
