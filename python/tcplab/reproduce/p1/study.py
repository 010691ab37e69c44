"""Reproduce study 001: the orchestrator. `reproduce(out, quick=False)` runs the main sweeps,
the maps (`map`) and the comparisons beyond the paper (`beyond`), writes the figures,
`results.json` and `report.md`, and returns the checks. The runs are kept in `out/runs/`
(resumable stores).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.reproduce.findings import Check
from tcplab.reproduce.output import check_out, publish
from tcplab.reproduce.p1.beyond import run_beyond
from tcplab.reproduce.p1.checks import checks
from tcplab.reproduce.p1.constants import AHTCP_THRESHOLD, PEAK_FRACTIONS, SCHEME_ORDER, THRESHOLD_FRACTIONS
from tcplab.reproduce.p1.map import maps, run_maps
from tcplab.reproduce.p1.report import report, write_figures_p1
from tcplab.reproduce.p1.runs import run_points, summarise
from tcplab.reproduce.report import write_results_json

__all__ = ["Plan", "experiment", "reproduce", "write_report"]


@dataclasses.dataclass(frozen=True)
class Plan:
    """How much to run: seeds, active-server counts, and the maps' points."""

    seeds: tuple[int, ...]
    servers: tuple[int, ...]
    models: tuple[str, ...]
    threshold_fractions: tuple[float, ...]
    map_servers: tuple[int, ...]
    remedy_servers: tuple[int, ...]
    remedy_seeds: tuple[int, ...]
    rule_thresholds_mbps: tuple[int, ...]
    rule_servers: tuple[int, ...]
    rule_seeds: tuple[int, ...]
    peak_fractions: tuple[float, ...]

    @staticmethod
    def make(quick: bool) -> Plan:
        """The full plan (the paper's 2–256 servers, 10 runs per point) or the quick one."""
        if quick:
            return Plan(seeds=(1, 2), servers=(2, 16, 64, 256), models=("A", "B"), threshold_fractions=(0.1, 0.5), map_servers=(2, 16, 64),
                        remedy_servers=(64,), remedy_seeds=(1,), rule_thresholds_mbps=(100, 500, 3000), rule_servers=(64,), rule_seeds=(1,),
                        peak_fractions=())
        seeds = tuple(range(1, 11))
        return Plan(seeds=seeds, servers=(2, 4, 8, 16, 32, 64, 128, 256), models=("A", "B"), threshold_fractions=THRESHOLD_FRACTIONS,
                    map_servers=(2, 16, 64, 256), remedy_servers=(2, 4, 8, 16, 32, 64, 128, 256), remedy_seeds=seeds,
                    rule_thresholds_mbps=(30, 100, 250, 500, 1000, 3000, 6000), rule_servers=(16, 64), rule_seeds=seeds[:5],
                    peak_fractions=PEAK_FRACTIONS)


def experiment(plan: Plan, progress: Callable[[str], None] = lambda _: None, *, out: Path | None = None,
               workers: int | None = None, cluster: Any = None) -> dict[str, Any]:
    """Run the main sweeps and the maps; returns plain data and the tables."""
    store = (out / "runs") if out is not None else None
    t0 = time.perf_counter()

    def where(name: str) -> Path | None:
        return store / name if store is not None else None

    runs = []
    for model in plan.models:
        progress(f"model {model}: {len(SCHEME_ORDER)} schemes × {len(plan.servers)} server counts × {len(plan.seeds)} seeds")
        runs.append(run_points(model, SCHEME_ORDER, plan.servers, plan.seeds, out=where(f"main_{model}"), workers=workers,
                               cluster=cluster, name=f"p1-main-{model}"))
    main = pl.concat(runs, how="diagonal_relaxed")
    main_wall = time.perf_counter() - t0

    # The maps of the unknowns: AHTCP's threshold, the settings, AHTCP's open decisions.
    mapped = run_maps(plan.models, plan.threshold_fractions, plan.map_servers, plan.seeds, progress, where, workers, cluster)
    thresholds, settings, decisions = mapped["thresholds"], mapped["settings"], mapped["decisions"]

    # Beyond the paper: the remedies since, and the threshold rules (`beyond`).
    beyond = run_beyond(plan.remedy_servers, plan.remedy_seeds, plan.rule_servers, plan.rule_seeds, plan.rule_thresholds_mbps,
                        plan.peak_fractions, plan.models, progress, where, workers, cluster)
    wall = time.perf_counter() - t0
    runs = main.height + thresholds.height + settings.height + decisions.height + beyond["remedies"].height + beyond["rules"].height
    return {"plan": dataclasses.asdict(plan), "main": main, "thresholds": thresholds, "settings": settings, "decisions": decisions,
            **beyond, "wall_s": wall, "main_wall_s": main_wall, "runs": runs, "ahtcp_threshold": dict(AHTCP_THRESHOLD)}


def write_report(data: dict[str, Any], out: Path) -> list[Check]:
    """Write the figures, results.json and report.md into `out`; return the checks."""
    out.mkdir(parents=True, exist_ok=True)
    summary = summarise(data["main"])
    result = checks(data["main"])
    mapped = maps(data)
    figs = write_figures_p1(data, summary, out)
    report(data, summary, result, mapped, figs).write(out / "report.md")
    plain = {"plan": data["plan"], "wall_s": data["wall_s"], "runs": data["runs"], "ahtcp_threshold": data["ahtcp_threshold"],
             "summary": summary.to_dicts(), "remedies": summarise(data["remedies"]).to_dicts(), "maps": mapped}
    write_results_json(plain, result, out / "results.json")
    return result


def reproduce(out: str | Path, quick: bool = False, progress: Callable[[str], None] = lambda _: None, *,
              workers: int | None = None, cluster: Any = None) -> list[Check]:
    """Run study 001 and write figures and report.md into `out`; returns the checks.
    `out` may hold only what tcplab wrote there (an earlier report, `runs/`): anything else is
    refused (an OSError naming it) before anything runs. The report is rendered aside and
    moved into place when complete (`output.publish`)."""
    target = check_out(out)
    data = experiment(Plan.make(quick), progress, out=target, workers=workers, cluster=cluster)
    return publish(target, lambda directory: write_report(data, directory))
