"""The errors a sweep raises, each naming what went wrong and, where it helps, what to do."""

from __future__ import annotations

__all__ = [
    "ClusterError",
    "ClusterLost",
    "DaskNotInstalled",
    "StoreError",
    "SweepError",
    "WorkerMismatch",
]


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


class DaskNotInstalled(ImportError):
    """A sweep was sent to a Dask cluster, but Dask (the optional extra `tcplab[dask]`) is not
    installed; the message says how to install it. Raised before anything runs."""
