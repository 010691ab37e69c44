"""The guarded worker of tests/test_fuzz_loader.py: one spawned process that builds or runs
one case at a time and answers over a pipe, so that a hang, an abort or exhausted memory in
the core ends that case (and this process, which the test restarts), never the test run."""

from __future__ import annotations

import contextlib
import io
import json
import multiprocessing
import resource
import traceback
from typing import Any

MEMORY_LIMIT = 3 << 30
"""Address-space limit of the worker (bytes): a runaway allocation fails instead of swapping."""


class Guard:
    """The parent's end: `call(kind, payload, timeout)` -> (outcome, detail).

    Outcomes: "ok", "ScenarioError", "SweepError", "OSError", "exit" (CLI status and stderr), "other"
    (another exception, with its traceback), "hang" (no answer within `timeout`; the worker
    is killed) and "crash" (the worker died; its exit code).
    """

    def __init__(self) -> None:
        self._context = multiprocessing.get_context("spawn")
        self._start()

    def _start(self) -> None:
        self._conn, child = self._context.Pipe()
        self._process = self._context.Process(target=serve, args=(child,), daemon=True)
        self._process.start()
        child.close()

    def call(self, kind: str, payload: Any, timeout: float) -> tuple[str, Any]:
        """Send one case and wait for its outcome."""
        try:
            self._conn.send((kind, payload))
            if not self._conn.poll(timeout):
                self._restart()
                return "hang", timeout
            return self._conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            self._process.join(5)
            code = self._process.exitcode
            self._restart()
            return "crash", code

    def _restart(self) -> None:
        self.close()
        self._start()

    def close(self) -> None:
        """Stop the worker."""
        self._conn.close()
        if self._process.is_alive():
            self._process.kill()
        self._process.join(5)


def serve(conn: Any) -> None:
    """Worker loop: answer each (kind, payload) until the pipe closes."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    import tcplab  # noqa: F401 - imported once, before the first case

    while True:
        try:
            kind, payload = conn.recv()
        except EOFError:
            return
        conn.send(_one(kind, payload))


def _one(kind: str, payload: Any) -> tuple[str, Any]:
    """Build a scenario (JSON text, seed), run one with tcplab.run, run the CLI (argv), or load
    a sweep file (its path; the answer is its number of runs)."""
    import tcplab
    from tcplab import _core
    from tcplab.cli import main

    try:
        if kind == "build":
            text, seed = payload
            sim = _core.Simulation(text, seed)
            sim.resolved_toml()
            sim.scenario_hash()
            sim.summary_json()
            return "ok", None
        if kind == "run":
            text, seed = payload
            result = tcplab.run(json.loads(text), seed=seed)
            return "ok", result.summary["events"]
        if kind == "cli":
            err = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                try:
                    status = main(payload)
                except SystemExit as e:  # argparse's usage errors
                    status = e.code
            return "exit", (status, err.getvalue())
        if kind == "sweep":
            from tcplab.sweeps import load_sweep

            return "ok", load_sweep(payload).runs
        raise ValueError(f"unknown case kind {kind!r}")
    except tcplab.ScenarioError as e:
        return "ScenarioError", str(e)
    except tcplab.SweepError as e:
        return "SweepError", str(e)
    except OSError as e:
        return "OSError", str(e)
    except BaseException as e:  # a panic in the core is a BaseException
        return "other", "".join(traceback.format_exception(e))
