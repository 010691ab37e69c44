"""Study 001's maps of the unknowns: AHTCP at fixed thresholds (both models), one unknown of
the shipped model changed at a time (model A, every scheme), and AHTCP's open decisions; and
their verdicts, the orders of §4.3 and §2.2's claims at each point of a map.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.reproduce.p1.beyond import threshold_verdicts
from tcplab.reproduce.p1.checks import findings_at
from tcplab.reproduce.p1.constants import CEILING_MBPS, DECISIONS, SCHEME_ORDER, SETTINGS
from tcplab.reproduce.p1.runs import run_points, summarise

__all__ = ["maps", "run_maps"]


def run_maps(models: tuple[str, ...], thresholds_mbps: tuple[int, ...], map_servers: tuple[int, ...], seeds: tuple[int, ...],
             progress: Callable[[str], None], where: Callable[[str], Path | None], workers: int | None,
             cluster: Any) -> dict[str, pl.DataFrame]:
    """Run the maps over `map_servers` × `seeds`, each sweep stored in `where(<its name>)`;
    returns their tables (`thresholds`, `settings`, `decisions`)."""
    # The threshold map: AHTCP at each fixed threshold (the rest as in the main sweep).
    thr_rows = []
    for model in models:
        for mbps in thresholds_mbps:
            progress(f"threshold map: model {model}, {mbps} Mb/s")
            t = run_points(model, ["AHTCP"], map_servers, seeds, overrides={"defaults.tcp.ahtcp.threshold": f"{mbps}Mbps"},
                           out=where(f"threshold_{model}_{mbps}"), workers=workers, cluster=cluster, name=f"p1-thr-{model}-{mbps}")
            thr_rows.append(t.with_columns(pl.lit(mbps).alias("threshold_mbps")))
    thresholds = pl.concat(thr_rows, how="diagonal_relaxed")

    # The settings map: one unknown changed at a time (model A), all schemes.
    set_rows = []
    schemes = [s for s in SCHEME_ORDER if s != "HYBTCP-b"]
    for k, (label, over) in enumerate(SETTINGS.items()):
        progress(f"settings map: {label}")
        t = run_points("A", schemes, map_servers, seeds, overrides=over, out=where(f"setting_{k}"), workers=workers,
                       cluster=cluster, name=f"p1-setting-{k}")
        set_rows.append(t.with_columns(pl.lit(label).alias("setting")))
    settings = pl.concat(set_rows, how="diagonal_relaxed")

    # AHTCP's open decisions (model A).
    dec_rows = []
    for label, over in DECISIONS.items():
        if not over:
            continue
        progress(f"AHTCP decision: {label}")
        # One store per decision: named by its overrides, so no two decisions share one.
        slug = "_".join(f"{k.rsplit('.', 1)[-1]}-{v}" for k, v in sorted(over.items())).lower()
        t = run_points("A", ["AHTCP"], map_servers, seeds, overrides=over, out=where(f"decision_{slug}"),
                       workers=workers, cluster=cluster, name="p1-dec")
        dec_rows.append(t.with_columns(pl.lit(label).alias("decision")))
    decisions = pl.concat(dec_rows, how="diagonal_relaxed")
    return {"thresholds": thresholds, "settings": settings, "decisions": decisions}


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
