"""Many sweeps' runs on one pool: `run_batch` plans each sweep, collects every run its store
does not hold finished, and sends them all to one local pool (or Dask cluster) in one queue, in
the order given, storing each record as it comes back.

A study runs dozens of small sweeps. One after another, each ends with a tail where some workers
wait for the sweep's last runs, and a sweep of one long run keeps every other worker idle. Run
as one batch first, the pool stays busy until the last run; the sweeps then run as usual and
find every run in their stores (`tcplab.reproduce.runner.prefetch`). Results are the same either
way: a run's record depends only on its scenario, seed and hook, never on the queue.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcplab import _core
from tcplab.sweeps.cluster import DaskCluster
from tcplab.sweeps.plan import plan
from tcplab.sweeps.pool import LocalPool, refuse_in_worker_bootstrap
from tcplab.sweeps.records import execute
from tcplab.sweeps.runner import pending, receive
from tcplab.sweeps.spec import Sweep
from tcplab.sweeps.store import Store

__all__ = ["BatchOutcome", "run_batch"]


@dataclass
class BatchOutcome:
    """What `run_batch` did."""

    executed: int
    """Runs executed (each distinct run of a store once)."""
    reused: int
    """Distinct runs found finished in their stores."""
    failed: int
    """Executed runs that recorded an error."""
    run_s: float
    """The executed runs' own wall times summed (worker seconds)."""


def run_batch(
    sweeps: Sequence[tuple[Sweep, str | Path]],
    *,
    workers: int | None = None,
    cluster: Any = None,
    on_run: Callable[[int, int], None] = lambda done, total: None,
    _function: Callable[[dict[str, Any]], Any] = execute,
) -> BatchOutcome:
    """Run every run of `sweeps` — (sweep, its store directory) pairs, several may share a
    store — that its store does not hold finished, on one local pool of `workers` processes (or
    the Dask cluster `cluster`), in the order of `sweeps` and of each sweep's rows; each record
    is written to its sweep's store as it comes back. A run two sweeps of one store share runs
    once (with traces if one of them saves traces; with the hook of the first: a sweep with
    another hook runs it again). Points that cannot run (an invalid scenario) are skipped: the sweep itself reports
    them when it runs. `on_run(done, total)` is called after each run. Builds no table."""
    refuse_in_worker_bootstrap()
    if workers is not None and cluster is not None:
        raise ValueError("give either workers (local pool) or cluster (Dask), not both")
    version = _core.version()
    stores: dict[Path, Store] = {}
    queue: dict[str, dict[str, Any]] = {}  # key → task, in the order first queued
    targets: dict[str, list[Store]] = {}  # key → the stores its record goes to
    reused: set[tuple[Path, str]] = set()  # (store, key) found finished
    executor: LocalPool | DaskCluster | None = None
    try:
        for sweep, out in sweeps:
            root = Store.check(out)
            store = stores.get(root)
            if store is None:
                store = stores[root] = Store.open(root, sweep)
            rows, _ = plan(sweep, version)
            records, scheduled = pending(rows, store, version, sweep.traces, False, sweep.hook)
            reused.update((root, key) for key in records)
            for key, task in scheduled.items():
                if key in queue:
                    queue[key]["traces"] = queue[key]["traces"] or task["traces"]
                else:
                    queue[key] = task
                if store not in targets.setdefault(key, []):
                    targets[key].append(store)
        executor = DaskCluster(cluster) if cluster is not None else LocalPool(workers)
        failed = 0
        run_s = 0.0
        done = 0
        with contextlib.closing(executor.run(list(queue.values()), _function)) as completed:
            for record in completed:
                result, captures = receive(record, queue[record["key"]], version)
                for store in targets[record["key"]]:
                    store.write(record, result, captures)
                failed += record["error"] is not None
                run_s += record.get("wall_time_s") or 0.0
                done += 1
                on_run(done, len(queue))
        return BatchOutcome(len(queue), len(reused), failed, run_s)
    finally:
        if isinstance(executor, DaskCluster):
            executor.close()
        for store in stores.values():
            store.close()
