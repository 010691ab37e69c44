"""Running a sweep: plan the runs, reuse what the store holds, execute the rest on a local
process pool or a Dask cluster, store each record as it comes back, and build the table."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
from tcplab.sweeps.cluster import DaskCluster
from tcplab.sweeps.errors import SweepError, WorkerMismatch
from tcplab.sweeps.metrics import MetricError
from tcplab.sweeps.plan import plan
from tcplab.sweeps.pool import LocalPool, refuse_in_worker_bootstrap
from tcplab.sweeps.records import execute
from tcplab.sweeps.spec import Sweep, build_sweep
from tcplab.sweeps.store import Store
from tcplab.sweeps.table import ELEMENT_TABLES, build_elements, build_table

__all__ = ["SweepOutcome", "check_worker", "pending", "receive", "run_sweep", "sweep"]


@dataclass
class SweepOutcome:
    """What `run_sweep` did: the table, and how many runs it executed, reused and saw fail."""

    table: pl.DataFrame
    """The sweep table (see `build_table`)."""
    executed: int
    """Runs executed by this call."""
    reused: int
    """Runs found finished in the store and not run again."""
    failed: int
    """Rows of the table with an error (executed, reused or invalid)."""
    elapsed_s: float
    """Wall time of the call, seconds."""
    store: Path | None = None
    """The store's absolute path, when the sweep had one (`out`)."""
    flows: pl.DataFrame | None = None
    """One row per flow of each successful run: the point, axis values, seed and key, then the
    flow's summary values as columns (see `build_elements`; the store's `flows.parquet`)."""
    queues: pl.DataFrame | None = None
    """One row per queue of each successful run, likewise (the store's `queues.parquet`)."""


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
    rows, reference = plan(sweep, version)
    if reference is None and rows:
        # Not one point can run: a misspelt axis or override path, or values all refused.
        # Refused before a store is written or a worker started.
        first = rows[0]
        where = ", ".join(f"{path}={value}" for path, value in first.labels.items())
        raise SweepError(
            f"no point of the sweep has a valid scenario, so nothing was run; point 0"
            f"{f' ({where})' if where else ''}: {first.error}"
        )
    if reference is not None:
        for metric in sweep.metrics:
            try:
                metric.check(reference)
            except MetricError as e:
                raise SweepError(f"metrics: {e}") from None
    if out is not None:
        Store.check(out)
    hook = sweep.hook
    executor: LocalPool | DaskCluster = (
        DaskCluster(cluster) if cluster is not None else LocalPool(workers)
    )
    store = None
    try:
        store = Store.open(out, sweep) if out is not None else None
        records, scheduled = pending(rows, store, version, traces, retry_failed, hook)
        tasks = list(scheduled.values())
        reused = len(records)

        with (
            _SweepProgress(progress, reused + len(tasks), reused) as bar,
            contextlib.closing(executor.run(tasks, _function)) as completed,
        ):
            for record in completed:
                result, captures = receive(record, scheduled[record["key"]], version)
                if store is not None:
                    store.write(record, result, captures)
                records[record["key"]] = record
                bar.advance(record["error"] is not None)

        summaries: dict[str, Any] = {}
        table = build_table(sweep, rows, records, reference, summaries)
        elements = {
            name: build_elements(sweep, rows, records, name, summaries) for name in ELEMENT_TABLES
        }
        if store is not None:
            store.write_results(table, elements)
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
        elements["flows"],
        elements["queues"],
    )



def pending(
    rows: Sequence[Any],
    store: Store | None,
    version: str,
    traces: bool,
    retry_failed: bool,
    hook: Any,
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Split the planned `rows` into the runs `store` holds finished (key → record) and the
    tasks still to run (key → task), each key once; error rows are neither. A stored run is
    reused when it comes from this `version`, has its traces if `traces` asks for them, did not
    fail (or `retry_failed` is off), and was measured by the same `hook`."""
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
            and (hook is None or stored["error"] is not None or stored.get("hook") == hook.identity)
        ):
            records[row.key] = stored
            continue
        scheduled[row.key] = {
            "key": row.key,
            "scenario_hash": row.scenario_hash,
            "seed": row.seed,
            "spec": row.spec,
            "traces": traces,
            "hook": hook,
            "overrides": json.dumps(row.overrides, sort_keys=True),
        }
    return records, scheduled


def receive(record: dict[str, Any], task: Mapping[str, Any], version: str) -> tuple[Any, Any]:
    """Take a worker's record of `task` in: check the worker (`check_worker`), give the record
    the task's overrides, and return the Result and capture bytes it carried (popped from it)."""
    result = record.pop("result", None)
    captures = record.pop("captures", None)
    check_worker(record, task, version)
    record["overrides"] = task["overrides"]
    return result, captures


def check_worker(record: Mapping[str, Any], task: Mapping[str, Any], version: str) -> None:
    """WorkerMismatch when the worker that ran `task` runs another tcplab build than `version`
    or computed another scenario hash."""
    if record["version"] != version or record["scenario_hash"] != task["scenario_hash"]:
        raise WorkerMismatch(
            f"worker {record['host']} (pid {record['pid']}) runs tcplab "
            f"{record['version']} and computed scenario hash "
            f"{record['scenario_hash']}; this process runs {version} and computed "
            f"{task['scenario_hash']}: install the same tcplab build everywhere "
            "(and restart workers after rebuilding)"
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
    hook: str | Callable[..., Any] | None = None,
    hook_args: Mapping[str, Any] | None = None,
) -> pl.DataFrame:
    """Run a sweep and return its table (a polars DataFrame, one row per run).

    `base` is a scenario (TOML path or dict) or a `Sweep` from `load_sweep` (then `axes`,
    `seeds`, `metrics`, `overrides`, `name` must be left out). `axes` maps a dotted scenario
    path to its values: a list, or a range `{"start", "stop", "step" | "num" | "factor",
    "unit"}`; a tuple of paths maps to a list of value tuples (zipped axes). `seeds` is a count
    (the base scenario's run.seed, default 1, and the seeds after it) or a list. `metrics` are
    metric expressions (default: `tcplab.sweeps.metrics.DEFAULT_METRICS`), or a mapping of column
    name to expression. `overrides` apply to every run.

    Runs go to a local process pool of `workers` processes (default: one per CPU), or to the
    Dask cluster `cluster` (scheduler address, Client or cluster object). With `out`, finished
    runs are stored there and a rerun skips them (failed ones too, unless `retry_failed`);
    `traces` saves each run's traces in `out/traces/<key>/`. Failed runs have their message in
    the `error` column. `hook` is a per-run metric hook (`tcplab.sweeps.hooks`): a
    module-level function, or its import path `"package.module:function"`, called in the
    worker as `hook(result, **hook_args)` with each run's Result; the mapping it returns adds
    one table column per key (after the metrics), stored with the run so a resumed sweep
    reuses it. Raises SweepError for an invalid description.
    """
    if isinstance(base, Sweep):
        if (axes is not None or metrics is not None or overrides is not None or seeds != 1
                or hook is not None or hook_args is not None):
            raise ValueError("pass either a Sweep or base, axes, seeds, metrics, overrides and hook")
        spec = base
    else:
        spec = build_sweep(
            base, axes, seeds, metrics, overrides=overrides, traces=traces, name=name,
            hook=hook, hook_args=hook_args,
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


class _SweepProgress:
    """A rich progress bar over runs: done/total, failures, elapsed time and ETA (stderr)."""

    def __init__(self, enabled: bool, total: int, done: int):
        """A bar over `total` runs, `done` of them already finished; nothing unless `enabled`."""
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
        """One more run finished (`failed` if it failed)."""
        if self._progress is None:
            return
        self._failed += failed
        self._progress.update(self._task, advance=1, failed=self._failed)
