"""The result store of a sweep: the output directory that makes a rerun resume.

Every file is written to a temporary name and renamed into place, so a reader (or a crash)
sees the old file or the new one, never a partial one.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.outdir import make_staging
from tcplab.sweeps.errors import StoreError
from tcplab.sweeps.records import RECORD_COLUMNS
from tcplab.sweeps.spec import Sweep

RECORD_SCHEMA = {name: getattr(pl, dtype) for name, dtype in RECORD_COLUMNS.items()}
"""The polars schema of a run file (`records.RECORD_COLUMNS`)."""

__all__ = ["STORE_MARKER", "Store"]

STORE_MARKER = "store.json"
"""File that marks a directory as a sweep store."""


class Store:
    """A sweep's output directory.

    `store.json` marks it; `sweep.json` (and `sweep.toml`, `base.toml` when the sweep came from
    files) describe the last sweep run in it; `runs/<key>.parquet` holds one row per finished
    run; `runs.log` one JSON line per run executed; `traces/<key>/` the traces of a run when
    asked; `results.parquet` the sweep table; `flows.parquet` and `queues.parquet` one row per flow
    (queue) of each successful run. Every file is written to a temporary name and
    renamed into place. A lock file keeps two sweeps from using one store at once.
    """

    def __init__(self, root: Path):
        """A store at `root` (absolute); use `Store.open` to create or reopen one."""
        self.root = root
        self.runs = root / "runs"
        self.traces = root / "traces"
        self._lock: Any = None

    @classmethod
    def check(cls, out: str | os.PathLike[str]) -> Path:
        """The store's absolute path; StoreError if it is something else."""
        root = Path(os.path.abspath(out))
        if root.exists():
            if not root.is_dir():
                raise StoreError(f"{root}: exists and is not a directory")
            if any(root.iterdir()) and not (root / STORE_MARKER).is_file():
                raise StoreError(f"{root}: exists and is not a tcplab sweep store")
        return root

    @classmethod
    def open(cls, out: str | os.PathLike[str], sweep: Sweep) -> Store:
        """Create or reopen the store, lock it, and record the sweep's description."""
        store = cls(cls.check(out))
        try:
            store.root.mkdir(parents=True, exist_ok=True)
            store.runs.mkdir(exist_ok=True)
            lock = open(store.root / ".lock", "a")  # noqa: SIM115 - held until close()
        except OSError as e:
            raise StoreError(f"out: cannot create {e.filename}: {e.strerror}") from None
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            raise StoreError(f"{store.root}: another sweep is using this store") from None
        store._lock = lock
        try:
            _remove_own_temporaries(store.root, _ROOT_TEMPORARY)
            _remove_own_temporaries(store.runs, _RUN_TEMPORARY)
            _write_text(
                store.root / STORE_MARKER,
                json.dumps({"created_by": "tcplab-sweep", "format": 1}) + "\n",
            )
            _write_text(store.root / "sweep.json", json.dumps(sweep.to_json(), indent=2) + "\n")
            if sweep.source_text is not None:
                _write_text(store.root / "sweep.toml", sweep.source_text)
            if sweep.base_path is not None:
                _write_text(
                    store.root / "base.toml", Path(sweep.base_path).read_text(encoding="utf-8")
                )
        except BaseException:
            store.close()
            raise
        return store

    def close(self) -> None:
        """Release the lock."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def run_path(self, key: str) -> Path:
        """The run file of run `key`: `runs/<key>.parquet`."""
        return self.runs / f"{key}.parquet"

    def read(self, key: str) -> dict[str, Any] | None:
        """The stored record of run `key`, or None (absent or unreadable)."""
        path = self.run_path(key)
        if not path.is_file():
            return None
        try:
            rows = pl.read_parquet(path).to_dicts()
        except Exception:
            return None
        return rows[0] if len(rows) == 1 else None

    def has_traces(self, key: str) -> bool:
        """Whether the traces of run `key` are saved (`traces/<key>/metadata.json` exists)."""
        return (self.traces / key / "metadata.json").is_file()

    def write(
        self,
        record: dict[str, Any],
        result: Any = None,
        captures: Mapping[str, bytes] | None = None,
    ) -> None:
        """Store a finished run: its traces first (if any), then its run file, then a log line.

        `result` is the run's Result (saved to `traces/<key>/`), `captures` the bytes of its
        pcapng files, which are written beside it.
        """
        key = record["key"]
        if result is not None:
            staging = make_staging(self.traces / key)  # beside it, not in /tmp
            try:
                result.captures = {}
                for name, data in (captures or {}).items():
                    path = staging / f"{name}.pcapng"
                    path.write_bytes(data)
                    result.captures[name] = path
                result.save(self.traces / key)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        frame = pl.DataFrame([{k: record.get(k) for k in RECORD_SCHEMA}], schema=RECORD_SCHEMA)
        _write_parquet_atomic(frame, self.run_path(key))
        line = {
            "key": key,
            "exec_id": record["exec_id"],
            "finished_at": record["finished_at"],
            "error": record["error"] is not None,
        }
        with open(self.root / "runs.log", "a", encoding="utf-8") as log:
            log.write(json.dumps(line) + "\n")

    def write_results(self, table: pl.DataFrame, elements: Mapping[str, pl.DataFrame] | None = None) -> Path:
        """Write the sweep table to `results.parquet` and each of `elements` (name -> table:
        `flows`, `queues`) to `<name>.parquet`, each atomically; returns results.parquet's path."""
        for name, frame in (elements or {}).items():
            _write_parquet_atomic(frame, self.root / f"{name}.parquet")
        path = self.root / "results.parquet"
        _write_parquet_atomic(table, path)
        return path


_TEMPORARY_SUFFIX = r"\.tmp-[0-9a-f]{12}"
"""What `_temporary` appends: `.tmp-` and 12 hex digits."""

_ROOT_TEMPORARY = re.compile(
    r"\.(?:store\.json|sweep\.json|sweep\.toml|base\.toml|results\.parquet|flows\.parquet"
    r"|queues\.parquet)" + _TEMPORARY_SUFFIX
)
"""A temporary name of a file the store writes in its root."""

_RUN_TEMPORARY = re.compile(r"\.[0-9a-f]{32}\.parquet" + _TEMPORARY_SUFFIX)
"""A temporary name of a run file (`runs/<key>.parquet`)."""


def _remove_own_temporaries(directory: Path, own: re.Pattern[str]) -> None:
    """Delete the temporary files a killed sweep left in `directory`: regular files whose name
    `own` matches (the store is locked, so no live sweep is writing them). Anything else, a
    directory or a link of that name included, is the user's and stays."""
    with os.scandir(directory) as entries:
        for entry in entries:
            if own.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                Path(entry.path).unlink(missing_ok=True)


def _temporary(path: Path) -> Path:
    """A fresh temporary name beside `path`: `.NAME.tmp-<12 hex>`."""
    return path.with_name(f".{path.name}.tmp-{secrets.token_hex(6)}")


def _write_text(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file and a rename."""
    temporary = _temporary(path)
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _write_parquet_atomic(frame: pl.DataFrame, path: Path) -> None:
    """Write `frame` to `path` through a synced temporary file and a rename: a reader (or a
    crash) sees the old file or the new one, never a partial one."""
    temporary = _temporary(path)
    try:
        with open(temporary, "wb") as f:
            frame.write_parquet(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
