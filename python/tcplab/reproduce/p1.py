"""Reproduce study 001 (TCP incast; FGTCP, LNRTCP, HYBTCP and AHTCP, scored by goodput and NIR).

`reproduce(out, quick=False)` runs the shipped models of `scenarios/p1_incast/` on the sweep
runner (a local process pool, or a Dask cluster with `cluster=`): every scheme over the active
server counts and seeds in both models, then the maps of the unknowns (AHTCP's threshold, the
base RTT, AHTCP's open decisions). It writes the equivalents of Figs. 3–6, the maps' figures,
`results.json` and `report.md`, which sets each statement of the paper (quoted) beside the
measured means, pass or FAIL. The runs themselves are kept in `out/runs/` (resumable stores).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.reproduce.findings import Check
from tcplab.reproduce.p1_beyond import PEAK_FRACTIONS, run_beyond, threshold_verdicts
from tcplab.reproduce.p1_checks import checks, findings_at
from tcplab.reproduce.p1_report import report, write_figures_p1
from tcplab.reproduce.p1_runs import AHTCP_THRESHOLD, CEILING_MBPS, SCHEME_ORDER, run_points, summarise
from tcplab.reproduce.report import write_results_json

__all__ = ["Plan", "experiment", "reproduce", "write_report"]


@dataclasses.dataclass(frozen=True)
class Plan:
    """How much to run: seeds, active-server counts, and the maps' points."""

    seeds: tuple[int, ...]
    servers: tuple[int, ...]
    models: tuple[str, ...]
    thresholds_mbps: tuple[int, ...]
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
            return Plan(seeds=(1, 2), servers=(2, 16, 64, 256), models=("A", "B"), thresholds_mbps=(100, 500, 900), map_servers=(64,),
                        remedy_servers=(64,), remedy_seeds=(1,), rule_thresholds_mbps=(500,), rule_servers=(64,), rule_seeds=(1,),
                        peak_fractions=())
        seeds = tuple(range(1, 11))
        return Plan(seeds=seeds, servers=(2, 4, 8, 16, 32, 64, 128, 256), models=("A", "B"), thresholds_mbps=(50, 100, 300, 500, 700, 900),
                    map_servers=(16, 64, 256), remedy_servers=(2, 4, 8, 16, 32, 64, 128, 256), remedy_seeds=seeds,
                    rule_thresholds_mbps=(100, 300, 500, 900, 3000, 6000), rule_servers=(16, 64), rule_seeds=seeds[:5],
                    peak_fractions=PEAK_FRACTIONS)


SETTINGS: dict[str, dict[str, Any]] = {
    "base RTT ≈ 400 µs (every link 95 µs)": {f"links.{i}.delay": "95us" for i in range(3)},
    "backoff forgotten on an RTT sample only (RFC 6298, Linux)": {"defaults.tcp.rto_backoff_reset": "rtt-sample"},
    "SACK (FullTcp/Sack)": {"defaults.tcp.sack": True},
}
"""The unknowns mapped across every scheme in model A (README A3, A4, A5): each row changes one
setting of the shipped model."""


DECISIONS = {
    "as shipped": {},
    "align = restart (literal)": {"defaults.tcp.ahtcp.align": "restart"},
    "restart = ceiling (first missing byte; no request with nothing held)": {"defaults.tcp.ahtcp.restart": "ceiling"},
    "targets = stalled-sample (quiet for 1 ms)": {"defaults.tcp.ahtcp.targets": "stalled-sample"},
    "targets = incomplete": {"defaults.tcp.ahtcp.targets": "incomplete"},
}
"""AHTCP's open decisions mapped against the shipped ones (README A13–A16)."""


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

    # The threshold map: AHTCP at each fixed threshold (the rest as in the main sweep).
    thr_rows = []
    for model in plan.models:
        for mbps in plan.thresholds_mbps:
            progress(f"threshold map: model {model}, {mbps} Mb/s")
            t = run_points(model, ["AHTCP"], plan.map_servers, plan.seeds, overrides={"defaults.tcp.ahtcp.threshold": f"{mbps}Mbps"},
                           out=where(f"threshold_{model}_{mbps}"), workers=workers, cluster=cluster, name=f"p1-thr-{model}-{mbps}")
            thr_rows.append(t.with_columns(pl.lit(mbps).alias("threshold_mbps")))
    thresholds = pl.concat(thr_rows, how="diagonal_relaxed")

    # The settings map: one unknown changed at a time (model A), all schemes.
    set_rows = []
    schemes = [s for s in SCHEME_ORDER if s != "HYBTCP-b"]
    for k, (label, over) in enumerate(SETTINGS.items()):
        progress(f"settings map: {label}")
        t = run_points("A", schemes, plan.map_servers, plan.seeds, overrides=over, out=where(f"setting_{k}"), workers=workers,
                       cluster=cluster, name=f"p1-setting-{k}")
        set_rows.append(t.with_columns(pl.lit(label).alias("setting")))
    settings = pl.concat(set_rows, how="diagonal_relaxed")

    # AHTCP's open decisions (model A).
    dec_rows = []
    for label, over in DECISIONS.items():
        if not over:
            continue
        progress(f"AHTCP decision: {label}")
        t = run_points("A", ["AHTCP"], plan.map_servers, plan.seeds, overrides=over, out=where("decision_" + label.split()[0]),
                       workers=workers, cluster=cluster, name="p1-dec")
        dec_rows.append(t.with_columns(pl.lit(label).alias("decision")))
    decisions = pl.concat(dec_rows, how="diagonal_relaxed")

    # Beyond the paper: the remedies since, and the threshold rules (p1_beyond).
    beyond = run_beyond(plan.remedy_servers, plan.remedy_seeds, plan.rule_servers, plan.rule_seeds, plan.rule_thresholds_mbps,
                        plan.peak_fractions, plan.models, progress, where, workers, cluster)
    wall = time.perf_counter() - t0
    runs = main.height + thresholds.height + settings.height + decisions.height + beyond["remedies"].height + beyond["rules"].height
    return {"plan": dataclasses.asdict(plan), "main": main, "thresholds": thresholds, "settings": settings, "decisions": decisions,
            **beyond, "wall_s": wall, "main_wall_s": main_wall, "runs": runs, "ahtcp_threshold": AHTCP_THRESHOLD}


def maps(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The maps' verdicts: per threshold (and model), per base RTT, per AHTCP decision, the
    orders of §4.3 (AHTCP above FGTCP, near LNRTCP/HYBTCP, lower NIR) at N ≥ 64."""
    main = summarise(data["main"])
    out: dict[str, list[dict[str, Any]]] = {"thresholds": [], "settings": [], "decisions": [], "rules": threshold_verdicts(data["rules"])}
    others = main.filter(pl.col("scheme") != "AHTCP")
    for (model, mbps), part in data["thresholds"].group_by(["model", "threshold_mbps"], maintain_order=True):
        s = pl.concat([others.filter(pl.col("model") == model), summarise(part)], how="diagonal_relaxed")
        out["thresholds"].append({"model": model, "threshold_mbps": mbps, **findings_at(s, str(model)), **_ah(summarise(part))})
    shipped = main.filter((pl.col("model") == "A") & pl.col("servers").is_in(data["plan"]["map_servers"]))
    out["settings"].append({"setting": "as shipped", **findings_at(shipped, "A"), **_ah(shipped), **_baselines(shipped)})
    for (label,), part in data["settings"].group_by(["setting"], maintain_order=True):
        s = summarise(part)
        out["settings"].append({"setting": label, **findings_at(s, "A"), **_ah(s), **_baselines(s)})
    base = {"decision": "as shipped", **findings_at(main, "A"), **_ah(main.filter((pl.col("model") == "A") & pl.col("servers").is_in(data["plan"]["map_servers"])))}
    out["decisions"].append(base)
    for (label,), part in data["decisions"].group_by(["decision"], maintain_order=True):
        s = pl.concat([others.filter(pl.col("model") == "A"), summarise(part)], how="diagonal_relaxed")
        out["decisions"].append({"decision": label, **findings_at(s, "A"), **_ah(summarise(part))})
    return out


def _baselines(summary: pl.DataFrame) -> dict[str, Any]:
    """§2.2's claims on one summary of model A: FGTCP at the largest N below 90 % of its
    smallest-N goodput; LNRTCP and HYBTCP at 80 % of the ceiling or more; their NIR above
    FGTCP's at the largest N."""
    g = {(r["scheme"], r["servers"]): (r["goodput_mbps"], r["nir"]) for r in summary.iter_rows(named=True)}
    ns = sorted({n for _, n in g})
    lo, hi = ns[0], ns[-1]
    return {
        "fg_degrades": g[("FGTCP", hi)][0] < 0.9 * g[("FGTCP", lo)][0],
        "lnr_hyb_hold": all(g[(s, n)][0] >= 0.8 * CEILING_MBPS["A"] for s in ("LNRTCP", "HYBTCP") for n in ns),
        "lnr_hyb_nir_above": all(g[(s, hi)][1] > g[("FGTCP", hi)][1] for s in ("LNRTCP", "HYBTCP")),
        "per_scheme": {f"{s}/{n}": [round(v[0], 1), None if v[1] is None else round(v[1], 3)] for (s, n), v in g.items()},
    }


def _ah(summary: pl.DataFrame) -> dict[str, Any]:
    """AHTCP's goodput and NIR per N in a summary."""
    rows = summary.filter(pl.col("scheme") == "AHTCP").sort("servers")
    return {"ahtcp": {int(r["servers"]): [round(r["goodput_mbps"], 1), None if r["nir"] is None else round(r["nir"], 3)] for r in rows.iter_rows(named=True)}}


def write_report(data: dict[str, Any], out: Path) -> list[Check]:
    """Write the figures, results.json and report.md into `out`; return the checks."""
    out.mkdir(parents=True, exist_ok=True)
    summary = summarise(data["main"])
    result = checks(summary, data["main"])
    mapped = maps(data)
    figs = write_figures_p1(data, summary, out)
    report(data, summary, result, mapped, figs).write(out / "report.md")
    plain = {"plan": data["plan"], "wall_s": data["wall_s"], "runs": data["runs"], "ahtcp_threshold": data["ahtcp_threshold"],
             "summary": summary.to_dicts(), "remedies": summarise(data["remedies"]).to_dicts(), "maps": mapped}
    write_results_json(plain, result, out / "results.json")
    return result


def reproduce(out: str | Path, quick: bool = False, progress: Callable[[str], None] = lambda _: None, *,
              workers: int | None = None, cluster: Any = None) -> list[Check]:
    """Run study 001 and write figures and report.md into `out`; returns the checks."""
    out = Path(out)
    data = experiment(Plan.make(quick), progress, out=out, workers=workers, cluster=cluster)
    return write_report(data, out)
