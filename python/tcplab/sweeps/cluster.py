"""Running a sweep on a Dask distributed cluster.

Dask is an optional extra (`pip install 'tcplab[dask]'`): nothing here imports it until a
sweep is sent to a cluster, and without it that sweep stops with DaskNotInstalled before
anything runs.
"""

from __future__ import annotations

import contextlib
import importlib
import secrets
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any

from tcplab.sweeps.errors import ClusterError, ClusterLost, DaskNotInstalled
from tcplab.sweeps.records import describe, execute, failure

__all__ = ["DASK_MISSING_MESSAGE", "DaskCluster"]

DASK_MISSING_MESSAGE = (
    "running a sweep on a Dask cluster needs Dask, an optional extra of tcplab: "
    "pip install 'tcplab[dask]'"
)
"""The message of DaskNotInstalled."""


def _distributed() -> ModuleType:
    """The `distributed` module; DaskNotInstalled (naming the extra) when it cannot be imported."""
    try:
        return importlib.import_module("distributed")
    except ImportError as e:
        raise DaskNotInstalled(DASK_MISSING_MESSAGE, name=e.name) from None


class DaskCluster:
    """Runs tasks on a Dask distributed cluster: `client.submit` per task, `as_completed`.

    `cluster` is a scheduler address (`tcp://host:8786`), a `distributed.Client`, or a cluster
    object with a `scheduler_address` (e.g. `distributed.LocalCluster`). Workers need the same
    tcplab version installed. A worker that dies repeatedly on a task (Dask's KilledWorker) is
    recorded as that run's error; losing the scheduler stops the sweep (rerun to resume).
    """

    def __init__(self, cluster: Any, timeout: float = 10.0):
        """Connect to `cluster`, waiting up to `timeout` seconds (default 10) for the scheduler.

        Raises DaskNotInstalled without Dask, ClusterError if the scheduler cannot be reached.
        """
        distributed = _distributed()
        self._own = not isinstance(cluster, distributed.Client)
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
            self.client = distributed.Client(address, timeout=timeout, set_as_default=False)
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
        from distributed import as_completed  # imported by __init__ already
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
                    raise ClusterLost(f"lost the Dask cluster: {describe(e)}") from None
                except BaseException as e:  # KilledWorker, or an error outside `execute`
                    if self.client.status not in ("running", "connecting"):
                        raise ClusterLost(f"lost the Dask cluster: {describe(e)}") from None
                    record = failure(task, describe(e))
                yield record
        finally:
            if futures:
                with contextlib.suppress(Exception):
                    self.client.cancel(list(futures))
