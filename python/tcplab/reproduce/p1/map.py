"""Study 001's maps of the unknowns: AHTCP's threshold in each model (fractions of what one
client can receive there), one unknown of the shipped models changed at a time (the base RTT,
FGTCP's RTOmin, AHTCP's own RTOmin, the backoff-reset rule, SACK), and AHTCP's open decisions.
At every point of a map every finding of the paper is judged again (`checks.checks` on the
map's runs beside the main sweep's runs of the schemes the point does not change).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.reproduce.p1.beyond import threshold_verdicts
from tcplab.reproduce.p1.checks import checks, verdicts
from tcplab.reproduce.p1.constants import AHTCP_THRESHOLD, DECISIONS, PER_CLIENT_MBPS, SETTING_FROM_MAIN, SETTINGS
from tcplab.reproduce.p1.runs import run_points

__all__ = ["map_thresholds", "maps", "run_maps"]


def map_thresholds(model: str, fractions: Sequence[float]) -> list[int]:
    """The threshold map's points in `model` (Mb/s): each fraction of the most one client can
    receive there, the shipped threshold, and in model B model A's shipped value (carried over
    before; above what a B client can receive)."""
    points = {round(f * PER_CLIENT_MBPS[model]) for f in fractions} | {_mbps(AHTCP_THRESHOLD[model])}
    if model == "B":
        points.add(_mbps(AHTCP_THRESHOLD["A"]))
    return sorted(points)


def _mbps(rate: str) -> int:
    assert rate.endswith("Mbps"), rate
    return int(rate[:-4])


def run_maps(models: tuple[str, ...], fractions: tuple[float, ...], map_servers: tuple[int, ...], seeds: tuple[int, ...],
             progress: Callable[[str], None], where: Callable[[str], Path | None], workers: int | None,
             cluster: Any) -> dict[str, pl.DataFrame]:
    """Run the maps over `map_servers` × `seeds`, each sweep stored in `where(<its name>)`;
    returns their tables (`thresholds`, `settings`, `decisions`)."""
    # The threshold map: AHTCP at each fixed threshold of each model (the rest as in the main sweep).
    thr_rows = []
    for model in models:
        for mbps in map_thresholds(model, fractions):
            progress(f"threshold map: model {model}, {mbps} Mb/s")
            t = run_points(model, ["AHTCP"], map_servers, seeds, overrides={"defaults.tcp.ahtcp.threshold": f"{mbps}Mbps"},
                           out=where(f"threshold_{model}_{mbps}"), workers=workers, cluster=cluster, name=f"p1-thr-{model}-{mbps}")
            thr_rows.append(t.with_columns(pl.lit(mbps).alias("threshold_mbps")))
    thresholds = pl.concat(thr_rows, how="diagonal_relaxed")

    # The settings map: one unknown changed at a time, the schemes it changes, in its models.
    set_rows = []
    for k, (label, (on, schemes, over)) in enumerate(SETTINGS.items()):
        if label in SETTING_FROM_MAIN:
            continue
        for model in (m for m in on if m in models):
            progress(f"settings map: model {model}, {label}")
            t = run_points(model, list(schemes), map_servers, seeds, overrides=over(model), out=where(f"setting_{k}_{model}"),
                           workers=workers, cluster=cluster, name=f"p1-setting-{k}-{model}")
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


_ORDERS = {"A": ("§4.3 s5 near", "§4.3 s6"), "B": ("§4.3 s7 equal", "§4.3 s7 nir")}
"""The §4.3 orders whose measurements the threshold map prints, per model."""


def _point(base: pl.DataFrame, model: str, changed: Sequence[str], runs: pl.DataFrame) -> pl.DataFrame:
    """The runs of one map point in `model`: `runs` for the `changed` schemes, the main sweep's
    (`base`, restricted to the map's server counts) for the others."""
    keep = base.filter((pl.col("model") == model) & ~pl.col("scheme").is_in(list(changed)))
    return pl.concat([keep, runs.filter(pl.col("model") == model)], how="diagonal_relaxed")


def maps(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The maps' verdicts: per point, every finding of the paper judged (`verdicts`: finding id
    → pass), with AHTCP's (and per setting every scheme's) goodput and NIR per N."""
    base = data["main"].filter(pl.col("servers").is_in(list(data["plan"]["map_servers"])))
    out: dict[str, list[dict[str, Any]]] = {"thresholds": [], "settings": [], "decisions": [], "rules": threshold_verdicts(data["rules"])}
    for (model, mbps), part in data["thresholds"].group_by(["model", "threshold_mbps"], maintain_order=True):
        runs = _point(base, str(model), ["AHTCP"], part)
        result = checks(runs)
        # The measured orders of §4.3 in this model (paired differences), the evidence beside the verdicts.
        orders = {c.values["id"]: c.measured for c in result if c.values["id"] in _ORDERS[str(model)]}
        out["thresholds"].append({"model": model, "threshold_mbps": mbps, "fraction": mbps / PER_CLIENT_MBPS[str(model)],
                                  "shipped": f"{mbps}Mbps" == AHTCP_THRESHOLD[str(model)],
                                  "verdicts": verdicts(result), "orders": orders, **_per_n(runs, ["AHTCP"])})
    models = sorted(set(base["model"].to_list()))
    for model in models:
        runs = base.filter(pl.col("model") == model)
        out["settings"].append({"setting": "as shipped", "model": model, "verdicts": verdicts(checks(runs)), **_per_n(runs, None)})
    for label, (on, schemes, _) in SETTINGS.items():
        for model in (m for m in on if m in models):
            if label in SETTING_FROM_MAIN:
                frm = SETTING_FROM_MAIN[label]
                part = pl.concat([base.filter((pl.col("model") == model) & (pl.col("scheme") == src)).with_columns(pl.lit(dst).alias("scheme"))
                                  for dst, src in frm.items()], how="diagonal_relaxed")
            else:
                part = data["settings"].filter((pl.col("setting") == label) & (pl.col("model") == model))
            runs = _point(base, model, schemes, part)
            out["settings"].append({"setting": label, "model": model, "verdicts": verdicts(checks(runs)), **_per_n(runs, None)})
    runs = base.filter(pl.col("model") == "A")
    out["decisions"].append({"decision": "as shipped", "verdicts": verdicts(checks(runs)), **_per_n(runs, ["AHTCP"])})
    for (label,), part in data["decisions"].group_by(["decision"], maintain_order=True):
        runs = _point(base, "A", ["AHTCP"], part)
        out["decisions"].append({"decision": label, "verdicts": verdicts(checks(runs)), **_per_n(runs, ["AHTCP"])})
    return out


def _per_n(runs: pl.DataFrame, schemes: Sequence[str] | None) -> dict[str, Any]:
    """Goodput (Mb/s), NIR and requests per run (means) per scheme and N (`schemes`, or the
    paper's five)."""
    names = list(schemes) if schemes is not None else ["standard", "FGTCP", "LNRTCP", "HYBTCP", "AHTCP"]
    s = runs.filter(pl.col("scheme").is_in(names)).group_by(["scheme", "servers"]).agg(
        pl.col("goodput_mbps").mean(), pl.col("nir").mean(), pl.col("requests").mean()).sort("servers")
    per = {f"{r['scheme']}/{r['servers']}": [round(r["goodput_mbps"], 1), None if r["nir"] is None else round(r["nir"], 3),
                                             round(r["requests"], 1)]
           for name in names for r in s.filter(pl.col("scheme") == name).iter_rows(named=True)}
    return {"per_scheme": per}
