"""Run records: what one run of a sweep leaves behind, whoever executed it.

A worker (a local pool process or a Dask worker) runs one task with `execute` and returns its
record; a run that could not return one (its worker died) gets a record from `failure`. The
store keeps each record as one row of `runs/<key>.parquet` (`RECORD_COLUMNS`).
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tcplab import _core
from tcplab.run import run
from tcplab.sweeps.hooks import encode_values

__all__ = ["RECORD_COLUMNS", "describe", "execute", "failure"]

RECORD_COLUMNS = {
    "key": "String",
    "scenario_hash": "String",
    "seed": "UInt64",
    "version": "String",
    "error": "String",
    "wall_time_s": "Float64",
    "summary": "String",
    "hook": "String",
    "extra": "String",
    "overrides": "String",
    "exec_id": "String",
    "host": "String",
    "pid": "Int64",
    "finished_at": "Float64",
}
"""Columns of a run file `runs/<key>.parquet` (one row), each with its polars type's name
(`store.RECORD_SCHEMA` holds the types; named here so that a worker need not load polars).
`hook` is the identity of the per-run metric hook that computed `extra` (its columns, as
JSON), both null without a hook."""


def execute(task: dict[str, Any], runner: Callable[..., Any] | None = None) -> dict[str, Any]:
    """Run one task and return its run record; every failure is recorded, never raised.

    A ScenarioError, a Python exception, or a panic in the core (pyo3's PanicException, a
    BaseException) becomes the record's `error`, and so does an exception of the task's
    per-run metric hook (`task["hook"]`, a `RunHook` or None), which gets the run's Result
    before it is dropped. Only KeyboardInterrupt and SystemExit pass.
    """
    runner = run if runner is None else runner
    started = time.perf_counter()
    record: dict[str, Any] = {
        "key": task["key"],
        "scenario_hash": task["scenario_hash"],
        "seed": task["seed"],
        "version": _core.version(),
        "error": None,
        "wall_time_s": None,
        "summary": None,
        "hook": None,
        "extra": None,
        "exec_id": uuid.uuid4().hex,
        "host": socket.gethostname(),
        "pid": os.getpid(),
    }
    try:
        result = runner(task["spec"], seed=task["seed"])
        summary = result.summary
        text = json.dumps(summary, allow_nan=False)
        hook = task.get("hook")
        extra = None if hook is None else encode_values(hook(result))
        if task["traces"]:
            # Capture files live in the worker's temporary directory (perhaps on another
            # machine): ship their bytes with the result.
            record["captures"] = {
                name: Path(path).read_bytes() for name, path in result.captures.items()
            }
            record["result"] = result
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:
        record["error"] = describe(e)
        record["wall_time_s"] = time.perf_counter() - started
        record.pop("captures", None)
    else:
        record["wall_time_s"] = summary["wall_time_s"]
        record["summary"] = text
        if hook is not None:
            record["hook"], record["extra"] = hook.identity, extra
        record["scenario_hash"] = summary["scenario_hash"]  # checked by the sweep
    record["finished_at"] = time.time()
    return record


def describe(error: BaseException) -> str:
    """`Type: message` for a failed run."""
    message = str(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def failure(task: dict[str, Any], message: str) -> dict[str, Any]:
    """A run record for a task whose worker did not return one."""
    return {
        "key": task["key"],
        "scenario_hash": task["scenario_hash"],
        "seed": task["seed"],
        "version": _core.version(),
        "error": message,
        "wall_time_s": None,
        "summary": None,
        "hook": None,
        "extra": None,
        "exec_id": uuid.uuid4().hex,
        "host": None,
        "pid": None,
        "finished_at": time.time(),
    }
