"""Reproduce study 002: the orchestrator. `reproduce(out, quick=False)` runs the experiments
(`runs`), judges the findings (`checks`), writes the figures, `results.json` and `report.md`."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tcplab.reproduce.findings import Check
from tcplab.reproduce.output import check_out, publish
from tcplab.reproduce import runner
from tcplab.reproduce.p2 import runs
from tcplab.reproduce.p2.checks import checks
from tcplab.reproduce.p2.checks_streams import CONTENDED_LINE
from tcplab.reproduce.p2.constants import (COMET_QUICK_READINGS, COMET_READINGS, COMET_RTTS_MS, COMET_RTTS_QUICK_MS, CROSS_FLOWS, FLA_LOSSES, FLA_RTTS_MS,
                                           FLA_SHAPES, QUICK_LOSSY, SC_DURATION_S, SC_SERVERS)
from tcplab.reproduce.p2.report import report, write_figures_p2
from tcplab.reproduce.report import write_results_json

__all__ = ["LONGEST_FIRST", "Plan", "experiment", "reproduce", "write_report"]


@dataclasses.dataclass(frozen=True)
class Plan:
    """How much to run: seeds, the FLA shapes and path losses, the Fig. 11 points and their
    simulated duration, and whether the whole 51 GB transfer runs."""

    seeds: tuple[int, ...]
    fla_shapes: tuple[tuple[int, int], ...]
    fla_losses: tuple[float, ...]
    sc_servers: tuple[int, ...]
    sc_duration_s: float
    sc_full: bool
    cross: tuple[int, ...]
    comet_rtts_ms: tuple[int, ...] = COMET_RTTS_MS
    comet_readings: tuple[str, ...] = tuple(COMET_READINGS)
    map_losses: tuple[float, ...] = FLA_LOSSES["full"]
    slow_start_losses: tuple[float, ...] = FLA_LOSSES["full"]
    """The path losses of the slow-start comparison (beyond the paper, a report table)."""
    comet_limits: tuple[str, ...] = runs.PROCESSING_LIMITS
    """F19's mapped processing limits."""
    competing_lines: tuple[str, ...] = tuple(runs.COMPETING_LINES)
    """The lines of F35's competing-flow runs (`runs.COMPETING_LINES`)."""
    coupled_losses: tuple[float, ...] = FLA_LOSSES["full"]
    """The path losses of the coordinated-window runs (F25 and F35 are judged at the lossy ones;
    the loss-free one is a report row)."""
    fla_extra_losses: tuple[float, ...] = FLA_LOSSES["full"]
    """The path losses of FLA's other readings at 200 ms (the NIC queue unlimited, A12; an ACK
    per segment, F30)."""

    @staticmethod
    def make(quick: bool) -> Plan:
        """The full plan (10 seeds, the 51 GB run) or the quick one (3 seeds, shorter runs, fewer
        shapes, losses and Comet Drop points and readings; FLA's other readings (NIC queue
        unlimited, an ACK per segment) and the coordinated windows at the lossy point only; F19's
        largest and smallest processing limits; F35's competing flow on the contended line only;
        neither the map of the unknowns nor the slow-start comparison, report tables no finding
        is judged on)."""
        if not quick:
            return Plan(tuple(range(1, 11)), FLA_SHAPES["full"], FLA_LOSSES["full"], SC_SERVERS["full"], SC_DURATION_S["full"], True,
                        CROSS_FLOWS["full"])
        return Plan((1, 2, 3), FLA_SHAPES["quick"], FLA_LOSSES["quick"], SC_SERVERS["quick"], SC_DURATION_S["quick"], False,
                    CROSS_FLOWS["quick"], COMET_RTTS_QUICK_MS, COMET_QUICK_READINGS, (), (),
                    (runs.PROCESSING_LIMITS[0], runs.PROCESSING_LIMITS[-1]), (CONTENDED_LINE,), QUICK_LOSSY, QUICK_LOSSY)


LONGEST_FIRST = ("sc_full", "shared", "sc", "competing")
"""The experiments whose runs the one-pool batch starts first, longest runs first (worker seconds
per run in a full run on the development machine: the 51 GB run 40 s, the shared runs about 8.5,
the scaling runs 4.7, the competing-flow runs 2.9; every other experiment's below 1.5), so that
no worker waits at the end for a long run that started last."""


def _experiments(plan: Plan, kw: dict[str, Any]) -> list[tuple[str, str, Callable[[], Any]]]:
    """The experiments as (key in the data, title, run) in the report's order."""
    s = plan.seeds
    every = [
        ("copy", "Fig. 3: the conventional copy through page caches", lambda: runs.run_fs_copy(s, **kw)),
        ("local", "Fig. 4: local access over GbE", lambda: runs.run_local(s, **kw)),
        ("disk_only", "F22: one disk server's disks alone", lambda: runs.run_disk_only(s[:3], **kw)),
        ("fla", "Figs. 6-10: FLA shapes × path loss",
         lambda: runs.run_fla(plan.fla_shapes, plan.fla_losses, FLA_RTTS_MS, s, extra_losses=plan.fla_extra_losses, **kw)),
        ("ipv6", "F10: FLA 1×4×2 over IPv6", lambda: runs.run_ipv6(plan.fla_losses, s, **kw)),
        ("traced", "Figs. 9-10: 1×2×1 traced at the senders' NICs", lambda: runs.run_traced(plan.fla_losses, s, **kw)),
        ("map", "the map: bottleneck buffer, command window", lambda: runs.run_map(plan.map_losses, s, **kw)),
        ("coupled", "F25, F35: the streams' windows coordinated", lambda: runs.run_coupled(plan.coupled_losses, s, **kw)),
        ("competing", "F35: beside a competing flow", lambda: runs.run_competing(plan.sc_duration_s, s, lines=plan.competing_lines, **kw)),
        ("sc", "Fig. 11: 1×j×2 scaling", lambda: runs.run_sc2002(plan.sc_servers, plan.sc_duration_s, s[:5], **kw)),
        ("shared", "§4.2: SC2002 shared with cross traffic", lambda: runs.run_shared(plan.cross, plan.sc_duration_s, s[:5], **kw)),
        ("comet", "Fig. 12: Comet Drop against delay", lambda: runs.run_comet(plan.comet_rtts_ms, s, plan.comet_readings, **kw)),
        ("comet_limit", "F19: Comet Drop's processing limit", lambda: runs.run_comet_limit(plan.comet_limits, (0, 20, 200), s, **kw)),
        ("path", "F21: Fig. 12's 1×1×1 over the SC2002 path model", lambda: runs.run_path_1x1x1(plan.fla_losses, s, **kw)),
    ]
    if plan.slow_start_losses:
        every.insert(every.index(next(e for e in every if e[0] == "competing")) + 1,
                     ("slow_start", "beyond: slow starts against the overshoot", lambda: runs.run_slow_start(plan.slow_start_losses, s, **kw)))
    if not plan.map_losses:
        every = [e for e in every if e[0] != "map"]
    if plan.sc_full:
        every.append(("sc_full", "SC2002: the 51 GB transfer", lambda: runs.run_sc2002_full(s[:1], **kw)))
    return every


def experiment(plan: Plan, progress: Callable[[str], None] = lambda _: None, *, out: Path | None = None,
               workers: int | None = None, cluster: Any = None) -> dict[str, Any]:
    """Run every experiment (stores under `out/runs/`); returns the tables by name. With `out`,
    every run of every experiment first goes through one pool as one batch, longest first
    (`LONGEST_FIRST`, `runner.prefetch`); the experiments then read their runs from the store."""
    kw = {"out": out / "runs" if out is not None else None, "workers": workers, "cluster": cluster}
    data: dict[str, Any] = {"plan": dataclasses.asdict(plan), "walls": {}}
    every = _experiments(plan, kw)
    started = time.perf_counter()
    if out is not None:
        progress(f"{len(every)} experiments")
        first = [e for key in LONGEST_FIRST for e in every if e[0] == key]
        batch = runner.prefetch(lambda: [f() for _, _, f in first + [e for e in every if e not in first]],
                                workers=workers, cluster=cluster, on_run=lambda done, total: progress(f"runs: {done} of {total}"))
        data["batch"] = dataclasses.asdict(batch)
    for key, title, f in every:
        progress(title)
        table = f()
        data[key] = table
        data["walls"][title] = {"runs": table.height, "run_s": float(table["wall_time_s"].sum())}
    data["wall_s"] = time.perf_counter() - started
    if plan.sc_full:
        data["sc_full_label"] = "1×26×2, the whole 51 GB"
    else:
        j = max(plan.sc_servers)
        data["sc_full"] = data["sc"].filter(data["sc"]["servers"] == j)
        data["sc_full_label"] = f"1×{j}×2 over {plan.sc_duration_s:g} s (--quick: the 51 GB run is in the full plan)"
    return data


def write_report(data: dict[str, Any], out: Path, progress: Callable[[str], None] = lambda _: None) -> list[Check]:
    """Write the figures, results.json and report.md into `out`; return the checks."""
    out.mkdir(parents=True, exist_ok=True)
    progress("figures")
    figs = write_figures_p2(data, out)
    result = checks(data)
    report(data, result, figs).write(out / "report.md")
    plain = {k: (v.to_dicts() if hasattr(v, "to_dicts") else v) for k, v in data.items()}
    write_results_json(plain, result, out / "results.json")
    return result


def reproduce(out: str | Path, quick: bool = False, progress: Callable[[str], None] = lambda _: None, *,
              workers: int | None = None, cluster: Any = None) -> list[Check]:
    """Run study 002 and write its figures and report.md into `out`; returns the checks.
    `out` may hold only what tcplab wrote there; the report is moved into place when whole."""
    target = check_out(out)
    data = experiment(Plan.make(quick), progress, out=target, workers=workers, cluster=cluster)
    return publish(target, lambda directory: write_report(data, directory, progress))
