"""Reproduce study 004: the orchestrator. `reproduce(out, quick=False)` runs Fig. 2, Table 2,
the Figs. 5–6 search (`search`), the unknowns mapped and the comparisons beyond the paper,
writes the figures, `results.json` and `report.md`, and returns the checks. The runs are kept
in `out/runs/` (resumable stores).
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.reproduce.findings import Check
from tcplab.reproduce.output import check_out, publish
from tcplab.reproduce.p4.atm import mss_freebsd
from tcplab.reproduce.p4.checks import all_views, checks, stated_setting_checks
from tcplab.reproduce.p4.constants import FIG5_CELLS, KEYS, MTUS, SCAN_MBPS, TABLE2_CELLS, TABLE2_SOCKS_KIB
from tcplab.reproduce.p4.predictor import beyond
from tcplab.reproduce.p4.report import report, write_figures_p4
from tcplab.reproduce.p4.runs import Spec, cells_per_wall_s, cells_through, run_specs, summarise, table2_traces
from tcplab.reproduce.p4.search import search_critical
from tcplab.reproduce.p4.variants import VARIANTS
from tcplab.reproduce.report import write_results_json

__all__ = ["Plan", "experiment", "reproduce", "search_points", "write_report"]


@dataclasses.dataclass(frozen=True)
class Plan:
    """How much to run."""

    seeds: tuple[int, ...]
    fig2_cells: tuple[int, ...]
    """Cell buffers of Fig. 2 (configured; an effective-buffer variant runs f × these)."""
    table2_cells: tuple[int, ...]
    """Cell buffers scanned for Table 2's pattern (25 KB good, 38 KB deadlock)."""
    socks_kib: tuple[int, ...]
    """Socket buffers of Figs. 5–6."""
    tol_mbps: float
    """The search halves the bracket of the critical CBR (the first step of its upward scan
    that deadlocks) until it is at most this wide."""
    spot_points: tuple[tuple[int, int], ...]
    """(cells, socket KiB) where a CBR grid tests the search's monotonicity (MTU 1500)."""
    spot_cbrs: tuple[float, ...]
    trace_seeds: tuple[int, ...]
    beyond_mtus: tuple[int, ...] = (1500, 9180)
    name: str = "custom"
    """"quick" or "full" (`make`), for the report's speed section."""
    bursts: tuple[int, ...] = (8, 64, 512)
    """CBR burst sizes mapped on Fig. 2's grid and Table 2 (a physical candidate for U16)."""
    scan_mbps: float = SCAN_MBPS
    """The step of the Figs. 5–6 search's upward scan in CBR."""

    @staticmethod
    def make(quick: bool) -> Plan:
        """The full plan (5 runs per point, as the paper) or the quick one."""
        if quick:
            return Plan(seeds=(1, 2), fig2_cells=(256, 512, 1024, 2048, 4096), table2_cells=(512, 768, 1024),
                        socks_kib=(6, 14, 22, 30, 38, 46, 54, 64), tol_mbps=10.0, spot_points=((1024, 46), (512, 64)),
                        spot_cbrs=(20, 60, 100, 130), trace_seeds=(1,), bursts=(64, 512), name="quick")
        grid = (256, 362, 512, 724, 1024, 1448, 2048, 2560, 3072, 4096, 5793, 8192)  # ≈ √2 apart, with the paper's 3K
        return Plan(seeds=(1, 2, 3, 4, 5), fig2_cells=grid, table2_cells=(384, 448, 512, 576, 640, 704, 768, 832, 896, 960, 1024, 1280),
                    socks_kib=tuple(range(6, 65)), tol_mbps=2.5, spot_points=((1024, 44), (1024, 46), (1024, 48), (1024, 50), (512, 32), (512, 64)),
                    spot_cbrs=(10, 30, 50, 70, 90, 110, 130), trace_seeds=(1, 2, 3, 4, 5), name="full")


def search_points(plan: Plan) -> list[tuple[tuple[int, int, str], int]]:
    """The (curve, socket bytes) the Figs. 5–6 search covers: the shipped reading's curves at
    every socket buffer of the plan (1 KB apart: finer than an MSS of 1460 B, so every window
    of MTU 1500 is seen), and so the effective-buffer variant's; the MSS rule's at every other
    one. A curve is
    (MSS, cells, CBR unit); CBR counted in payload is the same runs relabelled (README A8)."""
    socks = [k * 1024 for k in plan.socks_kib]
    out: dict[tuple[tuple[int, int, str], int], None] = {}
    for i, v in enumerate(VARIANTS):
        if v.unit != "cell":
            continue
        curves = [(v.mss(1500), v.cells(c), "cell") for c in FIG5_CELLS] + [(v.mss(m), v.cells(TABLE2_CELLS), "cell") for m in (1500, 9180)]
        for c in curves:
            for s in socks if i == 0 or v.f != 1.0 else socks[::2]:
                out[(c, s)] = None
    return list(out)


def experiment(plan: Plan, progress: Callable[[str], None] = lambda _: None, *, out: Path | None = None,
               workers: int | None = None, cluster: Any = None) -> dict[str, Any]:
    """Run every experiment; returns the per-run tables, the searches' results and timings."""
    store = (out / "runs") if out is not None else None
    walls: dict[str, float] = {}
    tables: dict[str, pl.DataFrame] = {}

    def run(specs: list[Spec], seeds: tuple[int, ...] = plan.seeds, name: str = "p4") -> pl.DataFrame:
        return run_specs(specs, seeds, out=store, workers=workers, cluster=cluster, name=name)

    load: list[tuple[str, float]] = [("start", os.getloadavg()[0])]

    def timed(label: str, specs: list[Spec], seeds: tuple[int, ...] = plan.seeds) -> None:
        t0 = time.perf_counter()
        progress(f"{label}: {len(set(specs))} points × {len(seeds)} seeds")
        tables[label] = run(specs, seeds, name=f"p4-{label}")
        walls[label] = time.perf_counter() - t0
        load.append((label, os.getloadavg()[0]))

    t_start = time.perf_counter()
    # Fig. 2 under every variant (an effective buffer is a run at f × the configured buffer).
    fig2 = [Spec(mss=v.mss(m), sock=65536, cells=v.cells(c), unit=v.unit) for v in VARIANTS for m in MTUS for c in plan.fig2_cells]
    # Table 2: 25 vs 38 KB, over the scanned buffers (and 1K under every variant).
    t2 = [Spec(mss=1460, sock=k * 1024, cells=c) for k in TABLE2_SOCKS_KIB for c in plan.table2_cells]
    t2 += [Spec(mss=1460, sock=k * 1024, cells=v.cells(TABLE2_CELLS), unit=v.unit) for k in TABLE2_SOCKS_KIB for v in VARIANTS]
    timed("fig2_table2", fig2 + t2)

    # Figs. 5–6: one search over every curve the variants need.
    points = search_points(plan)
    t0 = time.perf_counter()
    critical, searched = search_critical(points, plan.seeds, plan.tol_mbps, lambda specs: run(specs, name="p4-search"), progress,
                                        step=plan.scan_mbps)
    walls["search"] = time.perf_counter() - t0
    load.append(("search", os.getloadavg()[0]))
    # Spot checks of the search's monotonicity (MTU 1500, as shipped).
    timed("spot", [Spec(mss=1460, sock=k * 1024, cells=b, cbr_mbps=float(c)) for b, k in plan.spot_points for c in plan.spot_cbrs])

    # Beyond the paper: EPD (0.5·B, 0.8·B) and PPD on Fig. 2's grid; TCP against TCP.
    disc = [Spec(mss=mss_freebsd(m), sock=65536, cells=c, discard=d, epd=int(e * c))
            for m in plan.beyond_mtus for c in plan.fig2_cells for d, e in (("epd", 0.5), ("epd", 0.8), ("ppd", 0.0))]
    timed("discard", disc)
    timed("tcp_vs_tcp", [Spec(mss=mss_freebsd(m), sock=65536, cells=c, cbr_mbps=0.0, scenario="tcp_vs_tcp")
                         for m in MTUS for c in plan.fig2_cells])
    # A candidate cause of the small effective buffer: CBR in bursts of k back-to-back cells at
    # the same mean rate (Fig. 2 at MTU 1500 and 9180, and Table 2 at 1K cells).
    timed("burst", [Spec(mss=mss_freebsd(m), sock=65536, cells=c, burst=k) for m in plan.beyond_mtus for c in plan.fig2_cells for k in plan.bursts]
          + [Spec(mss=1460, sock=s * 1024, cells=TABLE2_CELLS, burst=k) for s in TABLE2_SOCKS_KIB for k in plan.bursts])

    # Table 2's traces (Figs. 3–4) at 1K cells and where the scan finds the paper's pattern.
    t0 = time.perf_counter()
    progress("Table 2 / Figs. 3–4: traced runs")
    traces = table2_traces(summarise(tables["fig2_table2"]), plan.trace_seeds, TABLE2_CELLS, TABLE2_SOCKS_KIB)
    walls["traces"] = time.perf_counter() - t0
    wall = time.perf_counter() - t_start
    load.append(("traces", os.getloadavg()[0]))

    # Each simulation once (a point several readings share is one run).
    every = pl.concat([*tables.values(), searched], how="diagonal_relaxed").unique(subset=[*KEYS, "seed"])
    traced = sum(len(rs) for rs in traces["runs"].values())
    return {"plan": dataclasses.asdict(plan), "tables": tables, "critical": critical, "searched": searched, "traces": traces,
            "walls": walls, "wall_s": wall, "runs": every.height + traced,
            "cells": cells_through(every), "run_wall_s": float(every["wall_time_s"].sum()),
            "speed": speed(every, load, workers, cluster)}


def speed(runs: pl.DataFrame, load: list[tuple[str, float]], workers: int | None, cluster: Any) -> dict[str, Any]:
    """How fast the runs went and under what: the median (and quartiles) over the runs of UBR
    data cells per wall second per core (`cells_per_wall_s`), the 1-minute load average after
    each phase, the workers, and the machine (CPUs, /proc/cpuinfo's model)."""
    rates = sorted(cells_per_wall_s(runs))

    def q(p: float) -> float:
        return rates[min(len(rates) - 1, int(p * len(rates)))] if rates else float("nan")

    return {"runs_timed": len(rates), "median_cells_per_s": statistics.median(rates) if rates else float("nan"),
            "q1_cells_per_s": q(0.25), "q3_cells_per_s": q(0.75), "load": load,
            "workers": "cluster" if cluster is not None else (workers or os.cpu_count() or 1), **machine()}


def machine() -> dict[str, Any]:
    """The CPUs this process sees (`nproc`) and their model (/proc/cpuinfo; "" where absent)."""
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    return {"cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(), "cpu_model": model}


def write_report(data: dict[str, Any], out: Path) -> list[Check]:
    """Write the figures, results.json and report.md into `out`; return the checks (the
    paper's findings under the shipped reading, then the comparisons beyond it)."""

    out.mkdir(parents=True, exist_ok=True)
    views = all_views(data)
    more, tables = beyond(data, views)
    result = checks(next(iter(views.values())), data) + more
    figs = write_figures_p4(data, views, tables, out)
    report(data, views, result, tables, figs).write(out / "report.md")
    plain = {"plan": data["plan"], "wall_s": data["wall_s"], "walls": data["walls"], "runs": data["runs"], "cells": data["cells"],
             "run_wall_s": data["run_wall_s"], "speed": data.get("speed"), "views": {name: v.plain() for name, v in views.items()}, "traces": data["traces"]["plain"],
             "critical": [{"mss": c[0], "cells": c[1], "unit": c[2], "sock": s, "criterion": k, "lo": lo, "hi": hi}
                          for (c, s, k), (lo, hi) in data["critical"].items()],
             "predictor": tables["predictor"]}
    plain["checks_at_stated_buffer"] = [dataclasses.asdict(c) for c in stated_setting_checks(data)]
    write_results_json(plain, result, out / "results.json")
    return result


def reproduce(out: str | Path, quick: bool = False, progress: Callable[[str], None] = lambda _: None, *,
              workers: int | None = None, cluster: Any = None) -> list[Check]:
    """Run study 004 and write figures and report.md into `out`; returns the checks.
    `out` may hold only what tcplab wrote there (an earlier report, `runs/`): anything else is
    refused (an OSError naming it) before anything runs. The report is rendered aside and
    moved into place when complete (`output.publish`)."""
    target = check_out(out)
    data = experiment(Plan.make(quick), progress, out=target, workers=workers, cluster=cluster)
    return publish(target, lambda directory: write_report(data, directory))
