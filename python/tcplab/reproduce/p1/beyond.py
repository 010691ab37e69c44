"""Study 001 beyond the paper: the remedies the field adopted since — the randomised RTO
(Vasudevan et al., SIGCOMM 2009) and DCTCP over ECN (RFC 8257, RFC 3168) — run beside AHTCP in
both models, and AHTCP's threshold set dynamically (the peak rule, the paper's future work)
against fixed thresholds in cases where the fixed threshold that suits a client differs: model
B's shared bottleneck, heavy background load, and 10 Gb/s links in both models.

Every run goes through `runs.run_points` (the sweep runner), so a cluster runs these too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
from matplotlib.figure import Figure

from tcplab.reproduce.figures import new_figure
from tcplab.reproduce.p1.constants import BOTTLENECKS, DCTCP_K, REMEDIES, flow_path, links_override
from tcplab.reproduce.p1.runs import model_path, run_points, summarise
from tcplab.reproduce.scenarios import queue_override, scenario_value
from tcplab.scenario import load_scenario

__all__ = ["GOOD_GOODPUT", "GOOD_NIR", "conditions", "marking", "peak_rule", "remedies_figure", "remedy_overrides", "rule_scores", "run_beyond",
           "threshold_verdicts"]

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
    """The cases of the threshold comparison: label → (model, the AHTCP scheme it runs — over
    FGTCP's or the standard RTOmin — and the overrides of the shipped model). Chosen, before
    the runs, so that what one client can receive (and so the fixed threshold that suits it)
    differs by model, link rate and background: about 964, 380 and 88 Mb/s in model A at 1 Gb/s
    under 10, 600 and 900 Mb/s of UDP; 484 Mb/s in model B; about 9.6 and 4.8 Gb/s at 10 Gb/s
    in A and B."""
    a = model_path("A")
    spec = load_scenario(a)
    udp = next(i for i, f in enumerate(spec["flows"]) if f.get("kind") == "udp-cbr")
    return {
        "A: 1 Gb/s, 10 Mb/s UDP (the paper's)": ("A", "AHTCP", {}),
        "A: 1 Gb/s, 600 Mb/s UDP": ("A", "AHTCP", {flow_path(udp, "rate"): "600Mbps"}),
        "A: 1 Gb/s, 900 Mb/s UDP": ("A", "AHTCP", {flow_path(udp, "rate"): "900Mbps"}),
        "B: 1 Gb/s (two clients per 1 Gb/s port)": ("B", "AHTCP", {}),
        # Over FGTCP's 200 µs timer a 10 Gb/s server recovers before a 5 ms quiet spell ends
        # (AHTCP never asks there, every threshold gives the same runs), so at 10 Gb/s the
        # requests run over the standard timer, where they do the recovery.
        "A: 10 Gb/s links, 200 ms RTOmin": ("A", "AHTCP/200ms", links_override("A", "rate", "10Gbps")),
        "B: 10 Gb/s links, 200 ms RTOmin": ("B", "AHTCP/200ms", links_override("B", "rate", "10Gbps")),
    }


def run_beyond(servers: tuple[int, ...], seeds: tuple[int, ...], map_servers: tuple[int, ...], map_seeds: tuple[int, ...],
               thresholds_mbps: tuple[int, ...], peak_fractions: tuple[float, ...], models: tuple[str, ...], progress: Callable[[str], None],
               where: Callable[[str], Path | None], workers: int | None, cluster: Any) -> dict[str, pl.DataFrame]:
    """The remedies over `servers` × `seeds` in each model, and the threshold comparison (every
    fixed threshold and the peak rule — at its default fraction and at `peak_fractions` — in
    each case, over `map_servers` × `map_seeds`)."""
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
            t = run_points(model, [scheme], map_servers, map_seeds, overrides={**over, **r_over}, out=where(f"case_{k}_{tag}"),
                           workers=workers, cluster=cluster, name=f"p1-rule-{k}")
            rows.append(t.with_columns(pl.lit(label).alias("condition"), pl.lit(rule).alias("rule")))
    rules_table = pl.concat(rows, how="diagonal_relaxed")
    return {"remedies": remedies, "rules": rules_table}


GOOD_GOODPUT = 0.9
GOOD_NIR = 1.1
"""A rule is as good as a case's best fixed threshold when its mean goodput is at least 90 % of
the best's and its mean NIR at most 10 % above the best's (written before the first run of
the comparison; kept for the redesigned cases)."""


def threshold_verdicts(rules: pl.DataFrame) -> list[dict[str, Any]]:
    """Per case (condition and N): each rule's goodput and NIR (means), the best fixed threshold
    (highest goodput; the lowest NIR among those within 2 % of it), and for every rule — each
    fixed threshold and each fraction of the peak rule — whether it is as good as that best
    (`ok`: rule → bool; `GOOD_GOODPUT`, `GOOD_NIR`). `peak_vs_best`: the peak rule's (default
    fraction, `"peak"`) goodput and NIR over the best's."""
    s = summarise(rules, by=("condition", "rule", "servers"))
    out = []
    for (cond, n), part in s.group_by(["condition", "servers"], maintain_order=True):
        per = {r["rule"]: (r["goodput_mbps"], r["nir"]) for r in part.iter_rows(named=True)}
        fixed = {k: v for k, v in per.items() if not k.startswith("peak")}
        top = max(g for g, _ in fixed.values())
        near = {k: v for k, v in fixed.items() if v[0] >= 0.98 * top}
        best = min(near, key=lambda k: (near[k][1] if near[k][1] is not None else float("inf")))
        bg, bx = fixed[best]

        def good(rule: str) -> bool:
            g, x = per[rule]
            return g >= GOOD_GOODPUT * bg and (x is not None and (bx is None or x <= GOOD_NIR * bx))

        pk = per.get("peak")
        ratios = None if pk is None or pk[1] is None or bx is None else [round(pk[0] / bg, 3), round(pk[1] / bx, 3)]
        out.append({"condition": cond, "servers": int(n), "best_fixed": best, "ok": {k: good(k) for k in per},
                    "peak_vs_best": ratios,
                    "per_rule": {k: [round(v[0], 1), None if v[1] is None else round(v[1], 3)] for k, v in per.items()}})
    return out


def rule_scores(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    """Over the cases of `threshold_verdicts`: the cases that separate the rules (some fixed
    threshold is not as good there), and per rule how many cases (all; separating) it is as
    good in; `peak_earns` — the peak rule (default fraction) as good in more cases than every
    single fixed threshold."""
    separating = [v for v in verdicts if not all(ok for k, ok in v["ok"].items() if not k.startswith("peak"))]
    rules = list(dict.fromkeys(k for v in verdicts for k in v["ok"]))
    score = {r: [sum(bool(v["ok"].get(r)) for v in verdicts), sum(bool(v["ok"].get(r)) for v in separating)] for r in rules}
    fixed_best = max((score[r][0] for r in rules if not r.startswith("peak")), default=0)
    return {"cases": len(verdicts), "separating": len(separating), "score": score,
            "peak_earns": "peak" in score and score["peak"][0] > fixed_best, "best_fixed_score": fixed_best}


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
