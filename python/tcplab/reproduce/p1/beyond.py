"""Study 001 beyond the paper: the remedies the field adopted since — the randomised RTO
(Vasudevan et al., SIGCOMM 2009) and DCTCP over ECN (RFC 8257, RFC 3168) — run beside AHTCP in
both models, and AHTCP's threshold set dynamically (the peak rule, the paper's future work)
against fixed thresholds where a fixed one is out of place: a 10 Gb/s network, a deeper port
buffer, heavy background load, and model B's shared bottleneck.

Every run goes through `runs.run_points` (the sweep runner), so a cluster runs these too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
from matplotlib.figure import Figure

from tcplab.reproduce.figures import new_figure
from tcplab.reproduce.p1.constants import BOTTLENECKS, DCTCP_K, REMEDIES, flow_path
from tcplab.reproduce.p1.runs import model_path, run_points, summarise
from tcplab.reproduce.scenarios import queue_override, scenario_value
from tcplab.scenario import load_scenario

__all__ = ["conditions", "marking", "peak_rule", "remedies_figure", "remedy_overrides", "run_beyond", "threshold_verdicts"]

def marking(model: str, rate: str = "1Gbps", buffer: str = "40pkts") -> dict[str, Any]:
    """The overrides that make `model`'s bottleneck ports mark ECN at DCTCP's K."""
    return {queue_override(model_path(model), q): {"limit": buffer, "ecn_threshold": DCTCP_K[rate]} for q in BOTTLENECKS[model]}


def peak_rule(model: str, fraction: float | None = None) -> dict[str, Any]:
    """The shipped `[defaults.tcp.ahtcp]` table with the peak rule in place of its threshold
    (at its default fraction, 0.5, unless `fraction` is given)."""
    table = dict(scenario_value(model_path(model), "defaults.tcp.ahtcp"))
    table.pop("threshold", None)
    extra = {} if fraction is None else {"peak_fraction": fraction}
    return {"defaults.tcp.ahtcp": {**table, "threshold_rule": "peak", **extra}}


def remedy_overrides(model: str, scheme: str) -> dict[str, Any]:
    """The overrides of `scheme` (one of `REMEDIES`) over its base scheme in `model`."""
    if scheme == "FGTCP+rand":
        return {"defaults.tcp.rto_randomize": 0.5}
    if scheme in ("DCTCP", "DCTCP+FG"):
        return {"defaults.tcp.cc": "dctcp", **marking(model)}
    if scheme == "AHTCP-peak":
        return peak_rule(model)
    raise KeyError(scheme)


def conditions() -> dict[str, tuple[str, str, dict[str, Any]]]:
    """The networks of the threshold map: label → (model, the AHTCP scheme it runs — over
    FGTCP's or the standard RTOmin — and the overrides of the shipped model)."""
    a = model_path("A")
    spec = load_scenario(a)
    udp = next(i for i, f in enumerate(spec["flows"]) if f.get("kind") == "udp-cbr")
    ten = {f"link({a},{b}).rate": "10Gbps" for a, b in (link["between"] for link in spec["links"])}
    return {
        "A: 1 Gb/s, 10 Mb/s UDP (the paper's)": ("A", "AHTCP", {}),
        "A: 1 Gb/s, 600 Mb/s UDP": ("A", "AHTCP", {flow_path(udp, "rate"): "600Mbps"}),
        "A: 1 Gb/s, 100-packet port": ("A", "AHTCP", {queue_override(a, "sw->client"): "100pkts"}),
        "A: 10 Gb/s links": ("A", "AHTCP", ten),
        # Over FGTCP's 200 µs timer a 10 Gb/s server recovers before a 5 ms quiet spell ends,
        # so no threshold matters there; over the standard timer the requests do the recovery.
        "A: 10 Gb/s links, 200 ms RTOmin": ("A", "AHTCP/200ms", ten),
        "B: 1 Gb/s (bottleneck shared by 4 clients)": ("B", "AHTCP", {}),
    }


def run_beyond(servers: tuple[int, ...], seeds: tuple[int, ...], map_servers: tuple[int, ...], map_seeds: tuple[int, ...],
               thresholds_mbps: tuple[int, ...], peak_fractions: tuple[float, ...], models: tuple[str, ...], progress: Callable[[str], None],
               where: Callable[[str], Path | None], workers: int | None, cluster: Any) -> dict[str, pl.DataFrame]:
    """The remedies over `servers` × `seeds` in each model, and the threshold map (every
    fixed threshold and the peak rule — at its default fraction and at `peak_fractions` — in
    each condition, over `map_servers` × `map_seeds`)."""
    rows = []
    for model in models:
        for scheme, (base, _) in REMEDIES.items():
            progress(f"remedies: model {model}, {scheme}")
            t = run_points(model, [base], servers, seeds, overrides=remedy_overrides(model, scheme), out=where(f"remedy_{model}_{scheme}"),
                           workers=workers, cluster=cluster, name=f"p1-remedy-{model}-{scheme}")
            rows.append(t.with_columns(pl.lit(scheme).alias("scheme")))
    remedies = pl.concat(rows, how="diagonal_relaxed")
    rows = []
    for k, (label, (model, scheme, over)) in enumerate(conditions().items()):
        if model not in models:
            continue
        rules: list[tuple[str, dict[str, Any]]] = [(f"{m} Mb/s", {"defaults.tcp.ahtcp.threshold": f"{m}Mbps"}) for m in thresholds_mbps]
        rules.append(("peak", peak_rule(model)))
        rules += [(f"peak ×{f:g}", peak_rule(model, f)) for f in peak_fractions]
        for rule, r_over in rules:
            progress(f"threshold rules: {label}, {rule}")
            tag = rule.split()[0] if not rule.startswith("peak ×") else "peak" + rule[6:]
            t = run_points(model, [scheme], map_servers, map_seeds, overrides={**over, **r_over}, out=where(f"rule_{k}_{tag}"),
                           workers=workers, cluster=cluster, name=f"p1-rule-{k}")
            rows.append(t.with_columns(pl.lit(label).alias("condition"), pl.lit(rule).alias("rule")))
    rules_table = pl.concat(rows, how="diagonal_relaxed")
    return {"remedies": remedies, "rules": rules_table}


def threshold_verdicts(rules: pl.DataFrame) -> list[dict[str, Any]]:
    """Per condition and N: each rule's goodput and NIR (means), the best fixed threshold
    (highest goodput; the lower NIR among those within 2 % of it), and whether the peak rule
    (at its default fraction, `"peak"`) and the shipped 500 Mb/s each reach 90 % of the best
    fixed goodput with a NIR at most 10 % above its NIR. Rules named `"peak …"` are other
    fractions of the peak rule, shown but not judged."""
    s = summarise(rules, by=("condition", "rule", "servers"))
    out = []
    for (cond, n), part in s.group_by(["condition", "servers"], maintain_order=True):
        per = {r["rule"]: (r["goodput_mbps"], r["nir"]) for r in part.iter_rows(named=True)}
        fixed = {k: v for k, v in per.items() if not k.startswith("peak")}
        top = max(g for g, _ in fixed.values())
        near = {k: v for k, v in fixed.items() if v[0] >= 0.98 * top}
        best = min(near, key=lambda k: (near[k][1] if near[k][1] is not None else float("inf")))

        def good(rule: str) -> bool | None:
            if rule not in per:
                return None
            g, x = per[rule]
            bx = fixed[best][1]
            return g >= 0.9 * fixed[best][0] and (x is not None and (bx is None or x <= 1.1 * bx))

        pk = per.get("peak")
        ratios = None if pk is None or pk[1] is None or fixed[best][1] is None else [round(pk[0] / fixed[best][0], 3), round(pk[1] / fixed[best][1], 3)]
        out.append({"condition": cond, "servers": int(n), "best_fixed": best, "peak_ok": good("peak"), "fixed500_ok": good("500 Mb/s"),
                    "peak_vs_best": ratios,
                    "per_rule": {k: [round(v[0], 1), None if v[1] is None else round(v[1], 3)] for k, v in per.items()}})
    return out


def remedies_figure(summary: pl.DataFrame, model: str, schemes: list[str]) -> Figure:
    """Goodput and NIR against active servers for the remedies beside the paper's schemes."""
    fig, (a1, a2) = new_figure(2)
    for scheme in schemes:
        part = summary.filter((pl.col("model") == model) & (pl.col("scheme") == scheme)).sort("servers")
        if part.height == 0:
            continue
        xs = part["servers"].to_list()
        a1.plot(xs, part["goodput_mbps"].to_list(), marker="o", markersize=3, label=scheme)
        a2.plot(xs, part["nir"].cast(pl.Float64).fill_null(float("nan")).to_list(), marker="o", markersize=3, label=scheme)
    for ax in (a1, a2):
        ax.set_xscale("log", base=2)
    a1.set_ylabel("goodput (Mb/s)")
    a2.set_ylabel("NIR")
    a2.set_xlabel("active servers")
    a1.set_title(f"Remedies beside AHTCP, model {model}")
    a1.legend(fontsize=7, ncol=2)
    return fig
