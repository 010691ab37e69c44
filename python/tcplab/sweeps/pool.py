"""The local process pool of sweeps, and what a worker's death means.

Workers are spawned, so each one imports the caller's main module again. A script that calls
`tcplab.sweep` at its top level, without `if __name__ == "__main__":`, would start a sweep
again in every worker; `refuse_in_worker_bootstrap` makes such a worker exit with
MAIN_REIMPORT_EXIT instead, and the pool turns that exit code into a RuntimeError saying what
to do (rather than recording every run as a WorkerCrash).

Workers end with the process that started them: killed by the kernel when it dies (Linux's
PR_SET_PDEATHSIG), else by a thread that watches their parent's id; a `kill -9` of a sweep
or a reproduction leaves no worker behind. Workers write nothing to the parent's stdout (it
is /dev/null in them), so a caller reading the command's output is not kept waiting by them.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from tcplab.sweeps.records import describe, failure

__all__ = [
    "CRASH_MESSAGE",
    "MAIN_GUARD_MESSAGE",
    "MAIN_REIMPORT_EXIT",
    "LocalPool",
    "kept_pools",
    "refuse_in_worker_bootstrap",
]

MAIN_REIMPORT_EXIT = 86
"""Exit status of a worker that refused to start a sweep while importing the main module."""

MAIN_GUARD_MESSAGE = (
    "tcplab.sweep() ran again in a worker process while it imported your main module: the "
    "local process pool spawns its workers, and each one imports the script that called "
    'sweep(): put the call under `if __name__ == "__main__":` (with whatever else the '
    "script does), so that importing the script does not run it"
)
"""The RuntimeError's message when workers exit with MAIN_REIMPORT_EXIT."""


def refuse_in_worker_bootstrap() -> None:
    """Exit with MAIN_REIMPORT_EXIT if this is a spawned process still importing the parent's
    main module (multiprocessing's own test for an unguarded main); else do nothing."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise SystemExit(MAIN_REIMPORT_EXIT)


class _RecordingSpawnContext(multiprocessing.context.SpawnContext):
    """The spawn context, keeping the processes it starts so their exit codes can be read."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[multiprocessing.process.BaseProcess] = []

    def Process(self, *args: Any, **kwargs: Any) -> multiprocessing.process.BaseProcess:  # noqa: N802
        process = multiprocessing.context.SpawnProcess(*args, **kwargs)
        self.started.append(process)
        return process


def _raise_if_main_reimported(processes: Sequence[multiprocessing.process.BaseProcess]) -> None:
    """RuntimeError(MAIN_GUARD_MESSAGE) if a worker of the broken pool exited with
    MAIN_REIMPORT_EXIT (waiting up to a few seconds for the ended ones' exit codes)."""
    deadline = time.monotonic() + 5
    while True:
        if any(p.exitcode == MAIN_REIMPORT_EXIT for p in processes):
            raise RuntimeError(MAIN_GUARD_MESSAGE)
        unread = [p for p in processes if p.exitcode is None and _ended(p)]
        if not unread or time.monotonic() > deadline:
            return
        time.sleep(0.01)


def _ended(process: multiprocessing.process.BaseProcess) -> bool:
    """Whether `process` has ended (its sentinel is ready), its exit code perhaps not yet read."""
    try:
        return bool(multiprocessing.connection.wait([process.sentinel], 0))
    except (ValueError, OSError):  # not started, or closed
        return False


_PR_SET_PDEATHSIG = 1
"""prctl(2) option: the signal this process gets when the thread that created it ends."""

_PARENT_POLL_S = 1.0
"""Seconds between two looks at the parent's id (where the kernel cannot signal its death)."""


def _start_worker(parent: int) -> None:
    """Pool worker initializer: Ctrl-C is handled by the parent, which stops the workers; end
    when the parent `parent` (its process id) ends; leave the parent's stdout alone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)


def _die_with_parent(parent: int) -> None:
    """Arrange for this process to end when `parent` does: SIGKILL from the kernel on Linux
    (the pool spawns its workers from the thread that runs the sweep, which lives as long as
    the pool), and on every system a daemon thread polling the parent's id (it runs whenever
    the interpreter is free, e.g. between two runs)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:  # it ended before the signal was asked for
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _watch_parent(parent: int) -> None:
    """End this process as soon as its parent `parent` is gone (it is then adopted)."""
    while True:
        time.sleep(_PARENT_POLL_S)
        if os.getppid() != parent:
            os._exit(1)


CRASH_MESSAGE = (
    "WorkerCrash: the worker process died while running this run "
    "(killed, out of memory, or an abort in the core)"
)
"""The error recorded for a run whose worker process died again when run alone."""


class LocalPool:
    """Runs tasks on a `concurrent.futures.ProcessPoolExecutor` (spawned worker processes).

    At most two tasks per worker are in flight. When a worker process dies, the pool breaks
    and every task in flight fails; those tasks are then rerun one at a time on a fresh
    one-process pool, so that the one that kills its worker again is recorded as crashed and
    the others finish. Then the sweep goes on with a full pool.
    """

    def __init__(self, workers: int | None = None):
        if workers is not None and (
            isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
        ):
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        self.workers = workers or os.cpu_count() or 1
        self._started: list[multiprocessing.process.BaseProcess] = []

    def run(
        self, tasks: Sequence[dict[str, Any]], function: Callable[[dict[str, Any]], Any]
    ) -> Iterator[dict[str, Any]]:
        """Yield one run record per task, in completion order.

        Raises RuntimeError (MAIN_GUARD_MESSAGE) when the workers exit because importing
        the caller's main module started a sweep again (see `refuse_in_worker_bootstrap`).
        """
        if not tasks:
            return
        workers = min(self.workers, len(tasks))
        pending = deque(tasks)
        suspects: deque[dict[str, Any]] = deque()
        in_flight: dict[Any, dict[str, Any]] = {}
        pool: ProcessPoolExecutor | None = None
        size = 0
        clean = False
        try:
            while pending or suspects or in_flight:
                isolating = bool(suspects)
                wanted = 1 if isolating else workers
                if pool is not None and size != wanted and not in_flight:
                    self._release(pool)
                    pool = None
                if pool is None:
                    pool, size = self._acquire(wanted), wanted
                if isolating:
                    if not in_flight:
                        task = suspects.popleft()
                        in_flight[pool.submit(function, task)] = task
                else:
                    while pending and len(in_flight) < 2 * workers:
                        task = pending.popleft()
                        in_flight[pool.submit(function, task)] = task
                done, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
                broken = False
                for future in done:
                    task = in_flight.pop(future)
                    try:
                        record = future.result()
                    except BrokenProcessPool:
                        broken = True
                        _raise_if_main_reimported(self._started)
                        if isolating:
                            yield failure(task, CRASH_MESSAGE)
                        else:
                            suspects.append(task)
                    except Exception as e:  # e.g. the task could not be pickled
                        yield failure(task, describe(e))
                    else:
                        yield record
                if broken:
                    # Every other task in flight fails too; rerun those one at a time.
                    for future, task in list(in_flight.items()):
                        try:
                            yield future.result()
                        except BrokenProcessPool:
                            suspects.append(task)
                        except Exception as e:
                            yield failure(task, describe(e))
                    in_flight.clear()
                    self._discard(pool)
                    pool = None
            clean = True
        finally:
            if pool is not None:
                if clean:
                    self._release(pool)
                else:
                    self._discard(pool)

    def _acquire(self, workers: int) -> ProcessPoolExecutor:
        """A pool of `workers` processes: the one `kept_pools` keeps when it has that size,
        else a new one (a kept pool of another size is stopped first)."""
        kept = _KEPT[-1] if _KEPT else None
        if kept is None or workers == 1:
            return self._pool(workers)
        if kept.get("workers") != workers:
            if kept.get("pool") is not None:
                kept["pool"].shutdown(wait=True)
            kept.update(workers=workers, pool=self._pool(workers), started=self._started)
        self._started = kept["started"]
        return kept["pool"]

    def _release(self, pool: ProcessPoolExecutor) -> None:
        """Done with `pool`, all its tasks finished: shut it down unless `kept_pools` keeps it."""
        if not (_KEPT and _KEPT[-1].get("pool") is pool):
            pool.shutdown(wait=True)

    def _discard(self, pool: ProcessPoolExecutor) -> None:
        """Stop `pool` now (broken, or left with tasks in flight); a kept pool is forgotten."""
        if _KEPT and _KEPT[-1].get("pool") is pool:
            _KEPT[-1].clear()
        _stop(pool)

    def _pool(self, workers: int) -> ProcessPoolExecutor:
        context = _RecordingSpawnContext()
        self._started = context.started
        return ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_start_worker,
            initargs=(os.getpid(),),
        )


_KEPT: list[dict[str, Any]] = []
"""The pools `kept_pools` keeps, innermost block last: {"workers", "pool", "started"}, or {}
before the first sweep in the block (or after its pool broke)."""


@contextlib.contextmanager
def kept_pools() -> Iterator[None]:
    """Within the block, the local pools of successive sweeps (of the same number of workers)
    are one pool: its workers are started once, not once per sweep, and stopped when the block
    ends. A reproduction runs dozens of sweeps of a few seconds each; starting two workers
    (each importing tcplab and the calling script) costs tenths of a second every time. A pool that breaks is
    replaced as outside the block; a worker keeps nothing from one run to the next but the
    imports and the seek curves it has fitted (`app::storage::geometry`), so results are the
    same either way."""
    _KEPT.append({})
    try:
        yield
    finally:
        kept = _KEPT.pop()
        if kept.get("pool") is not None:
            kept["pool"].shutdown(wait=True)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop a pool now: cancel queued tasks and terminate its worker processes."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14+
    if terminate is not None:
        with contextlib.suppress(Exception):
            terminate()
    else:
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            with contextlib.suppress(Exception):
                process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
