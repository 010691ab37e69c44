"""Running one scenario through the Rust core, with an optional progress bar."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import stat
import tempfile
import time
from pathlib import Path
from collections.abc import Iterable, Mapping
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)

from tcplab import _core
from tcplab.outdir import process_alive
from tcplab.result import Result
from tcplab.scenario import (
    apply_overrides,
    check_seed,
    load_scenario,
    scenario_json,
)

__all__ = ["run"]

_CHUNKS = 200
"""Number of chunks a run with a stop time is advanced in (for progress updates)."""

_OPEN_ENDED_CHUNK_S = 0.1
"""Simulated seconds per chunk when the scenario has no stop time."""

_PROGRESS_DELAY_S = 1.0
"""Wall seconds before the progress bar appears (short runs never show one)."""

_CAPTURE_DIR = re.compile(r"tcplab-capture-(?P<pid>[0-9]+)-[0-9a-f]{12}")
"""The name of a run's private capture directory in the system temporary directory: the id of
the process that owns it and 12 hex digits."""


def run(
    scenario: str | os.PathLike[str] | Mapping[str, Any],
    seed: int | None = None,
    overrides: Iterable[str] | Mapping[str, Any] | None = None,
    progress: bool = False,
    *,
    capture_dir: str | os.PathLike[str] | None = None,
) -> Result:
    """Simulate `scenario` (a TOML path or a dict) and return its Result.

    `seed` defaults to the scenario's `run.seed`, else 1. `overrides` are applied first (see
    `tcplab.scenario.apply_overrides`). With `progress=True` a progress bar over simulated time
    is drawn on stderr once the run has taken more than a second of wall time. Raises
    ScenarioError for an invalid scenario (a seed outside [0, 2^63) included). Capture files
    go to a temporary directory removed with the Result (`tcplab-capture-<pid>-<hex>` in the
    system temporary directory; one whose process was killed is removed by the next run that
    captures), or to `capture_dir` (an existing directory the caller owns and cleans, e.g. the
    staging directory of an output).
    """
    spec = load_scenario(scenario)
    if overrides:
        spec = apply_overrides(spec, overrides)
    run_table = spec.get("run")
    if isinstance(run_table, dict) and "seed" in run_table:
        check_seed(run_table["seed"])
    if seed is None:
        seed = run_table.get("seed", 1) if isinstance(run_table, dict) else 1
    check_seed(seed)
    spec_json = scenario_json(spec)

    started = time.perf_counter()
    # Taps stream their pcapng files into a private directory; the Result owns it (and
    # `Result.save` moves the files into the output directory). Until the Result exists, any
    # exception (KeyboardInterrupt and a panic in the core included) removes it.
    own_dir = capture_dir is None and bool(spec.get("taps"))
    if own_dir:
        capture_dir = _make_capture_dir()
    try:
        taps_dir = os.fspath(capture_dir) if spec.get("taps") else None
        sim = _core.Simulation(spec_json, seed, taps_dir)
        total = sim.stop_time_s
        step = total / _CHUNKS if total else _OPEN_ENDED_CHUNK_S
        with _LazyProgress(progress, total, started) as bar:
            target = sim.now_s
            while not sim.finished:
                target = max(target, sim.now_s) + step
                sim.advance(target)
                bar.update(sim.now_s)
        error = sim.capture_error()
        if error is not None:
            raise OSError(f"capture failed: {error}")
        wall_time_s = time.perf_counter() - started
        summary = json.loads(sim.summary_json())
        summary["wall_time_s"] = wall_time_s
        captures = (
            {p.stem: p for p in sorted(Path(taps_dir).glob("*.pcapng"))} if taps_dir else {}
        )
        return Result(
            summary,
            sim.traces(),
            sim.resolved_toml(),
            captures=captures,
            capture_dir=capture_dir if own_dir else None,
        )
    except BaseException:
        if own_dir:
            shutil.rmtree(capture_dir, ignore_errors=True)
        raise


def _make_capture_dir() -> str:
    """Create a private capture directory `tcplab-capture-<pid>-<12 hex>` in the system
    temporary directory, after removing those a killed process left there."""
    temp = tempfile.gettempdir()
    _remove_stale_capture_dirs(temp)
    while True:
        path = os.path.join(temp, f"tcplab-capture-{os.getpid()}-{secrets.token_hex(6)}")
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return path


def _remove_stale_capture_dirs(temp: str) -> None:
    """Remove the capture directories in `temp` whose process has ended: only directories (not
    links) of this user whose whole name is tcplab's (`_CAPTURE_DIR`)."""
    try:
        entries = list(os.scandir(temp))
    except OSError:
        return
    uid = os.getuid()
    for entry in entries:
        m = _CAPTURE_DIR.fullmatch(entry.name)
        if m is None or process_alive(int(m["pid"])):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == uid:
            shutil.rmtree(entry.path, ignore_errors=True)


class _LazyProgress:
    """A rich progress bar over simulated seconds, shown only after a delay of wall time."""

    def __init__(self, enabled: bool, total_s: float | None, started: float):
        self._enabled = enabled
        self._total_s = total_s
        self._started = started
        self._progress: Progress | None = None
        self._task = None

    def __enter__(self) -> _LazyProgress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def update(self, done_s: float) -> None:
        """Report `done_s` simulated seconds; starts the bar once the delay has passed."""
        if not self._enabled:
            return
        if self._progress is None:
            if time.perf_counter() - self._started >= _PROGRESS_DELAY_S:
                self._start(done_s)
            return
        self._progress.update(self._task, completed=done_s)

    def _start(self, done_s: float) -> None:
        """Create and show the bar at `done_s` simulated seconds."""
        if self._total_s:
            columns = [
                BarColumn(),
                TaskProgressColumn(),
                TextColumn("{task.completed:.3f}/{task.total:.3f} s simulated"),
                TimeRemainingColumn(),
            ]
        else:
            columns = [BarColumn(), TextColumn("{task.completed:.3f} s simulated")]
        self._progress = Progress(
            TextColumn("[bold]simulating"),
            *columns,
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._progress.add_task(
            "simulating", total=self._total_s or None, completed=done_s
        )
        self._progress.start()
