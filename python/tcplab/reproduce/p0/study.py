"""Reproduce study 000: the orchestrator. `reproduce(out, quick=False)` runs the shipped
scenarios over several seeds and the map of the unknowns (`map`), writes the figures, the
captures, `results.json` and `report.md`, and returns the checks.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tcplab.reproduce.findings import Check
from tcplab.reproduce.output import check_out, publish
from tcplab.reproduce.p0.checks import checks
from tcplab.reproduce.p0.constants import CASES, SEGMENT_BYTES
from tcplab.reproduce.p0.map import MapPlan, run_map
from tcplab.reproduce.p0.report import report, write_figures_p0
from tcplab.reproduce.p0.runs import repeated_run_overrides, round_stats, run_p0, run_stats
from tcplab.reproduce.report import write_results_json

__all__ = ["Plan", "experiment", "reproduce", "write_report"]


@dataclasses.dataclass(frozen=True)
class Plan:
    """How much to run: seeds, simulated duration, the averaging window (whole 300 ms bins),
    the length of the pcapng header captures kept per case (s) and the map of the unknowns."""

    seeds: tuple[int, ...]
    duration_s: float
    window: tuple[float, float]
    capture_s: float
    map: MapPlan

    @staticmethod
    def make(quick: bool) -> Plan:
        """The full plan (the paper's 100 s, 10 seeds) or the quick one (30 s, 3 seeds)."""
        if quick:
            return Plan((1, 2, 3), 30.0, (9.9, 29.7), 6.0, MapPlan.make(True))
        return Plan(tuple(range(1, 11)), 100.0, (9.9, 99.9), 8.0, MapPlan.make(False))


def experiment(plan: Plan, progress: Callable[[str], None] = lambda _: None, *, out: Path | None = None,
               workers: int | None = None, cluster: Any = None) -> dict[str, Any]:
    """Run everything the report needs; returns plain data (per-run stats, the map's rows)
    and the Results the figures draw (the first seed's). The map runs on the sweep runner
    (`workers` processes, or the Dask cluster `cluster`), its runs stored in
    `out/runs/map/` when `out` is given, so a rerun resumes them."""
    data: dict[str, Any] = {"plan": dataclasses.asdict(plan)}
    for name in CASES:
        rows, rounds, repeated = [], [], []
        for seed in plan.seeds:
            progress(f"{name} seed {seed}")
            # The simultaneous runs keep their TAPEE header trace (Figs. 4 and 6–8).
            traced = {"taps.0.trace": True} if name == "simultaneous" else {}
            r = run_p0(name, seed, plan.duration_s, traced)
            st = run_stats(r, plan.window)
            st["seed"] = seed
            rows.append(st)
            if name == "simultaneous":
                rounds.append(round_stats(r) | {"seed": seed})
            if name in ("simultaneous", "staggered"):
                # The testbed's next run: each stream starts from the ssthresh its first run
                # left in the route cache (BIC's initial_ssthresh is 0, so the cache applies).
                progress(f"{name} seed {seed}, repeated run")
                w = run_p0(name, seed, plan.duration_s, repeated_run_overrides(r, SEGMENT_BYTES))
                repeated.append(run_stats(w, plan.window) | {"seed": seed})
            if seed == plan.seeds[0]:
                data[f"{name}_result"] = r
        data[name] = rows
        if repeated:
            data[f"{name}_repeated"] = repeated
        if rounds:
            data["simultaneous_rounds"] = rounds
    rows = []
    for seed in plan.seeds:
        progress(f"staggered CUBIC seed {seed}")
        r = run_p0("staggered", seed, plan.duration_s, {"defaults.tcp.profile": "linux-modern", "defaults.tcp.cc": "cubic"})
        st = run_stats(r, plan.window)
        st["seed"] = seed
        rows.append(st)
    data["cubic_staggered"] = rows
    # The first seconds of the staggered start's header trace (Fig. 10).
    progress("staggered capture")
    data["staggered_capture"] = run_p0("staggered", plan.seeds[0], plan.capture_s, {"taps.0.trace": True})
    data["map"] = run_map(plan.map, progress, out=out / "runs" / "map" if out is not None else None, workers=workers, cluster=cluster)
    return data


def _keep_captures(plan: dict[str, Any], out: Path, progress: Callable[[str], None]) -> list[Path]:
    """One pcapng of the TAPEE tap per case, its first `capture_s` seconds at the first seed,
    as `out/captures/<case>.pcapng` (Wireshark opens them)."""
    target = out / "captures"
    target.mkdir(exist_ok=True)
    kept = []
    for name in CASES:
        progress(f"{name} pcapng")
        r = run_p0(name, plan["seeds"][0], plan["capture_s"], {"taps.0.pcap": True})
        [(tap, path)] = r.captures.items()
        dest = target / f"{name}.pcapng"
        shutil.copyfile(path, dest)
        kept.append(dest)
    return kept


def write_report(data: dict[str, Any], out: Path, progress: Callable[[str], None] = lambda _: None) -> list[Check]:
    """Write the figures, captures, results.json and report.md into `out`; return the checks."""
    out.mkdir(parents=True, exist_ok=True)
    figs = write_figures_p0(data, out)
    captures = _keep_captures(data["plan"], out, progress)
    result = checks(data)
    report(data, result, figs, captures).write(out / "report.md")
    plain = {k: v for k, v in data.items() if not k.endswith(("_result", "_capture"))}
    write_results_json(plain, result, out / "results.json")
    return result


def reproduce(out: str | Path, quick: bool = False, progress: Callable[[str], None] = lambda _: None, *,
              workers: int | None = None, cluster: Any = None) -> list[Check]:
    """Run study 000 and write figures and report.md into `out`; returns the checks. The map's
    runs are kept in `out/runs/map/` (resumable stores).
    `out` may hold only what tcplab wrote there (an earlier report, `runs/`): anything else is
    refused (an OSError naming it) before anything runs. The report is rendered aside and
    moved into place when complete (`output.publish`)."""
    target = check_out(out)
    data = experiment(Plan.make(quick), progress, out=target, workers=workers, cluster=cluster)
    return publish(target, lambda directory: write_report(data, directory, progress))
