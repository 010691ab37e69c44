"""Study 001's figures (the equivalents of Figs. 3–6 and the maps) and report.md."""

from __future__ import annotations

from typing import Any

import polars as pl
from matplotlib.figure import Figure

from tcplab.reproduce.figures import new_figure, write_figures
from tcplab.reproduce.findings import Check
from tcplab.reproduce.p1.beyond import GOOD_GOODPUT, GOOD_NIR, remedies_figure, rule_scores
from tcplab.reproduce.p1.checks import LARGE, SHORT, timeout_bound_mbps
from tcplab.reproduce.p1.constants import CEILING_MBPS, DCTCP_K, PER_CLIENT_MBPS, REMEDIES, RUN_CAP_S, SCHEME_ORDER
from tcplab.reproduce.p1.runs import summarise
from tcplab.reproduce.report import Report

__all__ = ["report", "write_figures_p1"]

_STYLE = {"standard": ("0.5", ":"), "FGTCP": ("C0", "-"), "LNRTCP": ("C2", "-"), "HYBTCP": ("C1", "-"),
          "HYBTCP-b": ("C1", "--"), "AHTCP": ("C3", "-"), "AHTCP/200ms": ("C3", ":")}


_REMEDY_VIEW = ["standard", "FGTCP", "FGTCP+rand", "DCTCP", "DCTCP+FG", "LNRTCP", "AHTCP", "AHTCP-peak"]
"""The schemes the remedies' table and figures set side by side."""


def _curves(summary: pl.DataFrame, model: str, value: str, title: str, ylabel: str) -> Figure:
    fig, (ax,) = new_figure()
    for scheme in SCHEME_ORDER:
        part = summary.filter((pl.col("model") == model) & (pl.col("scheme") == scheme)).sort("servers")
        if part.height == 0:
            continue
        color, style = _STYLE[scheme]
        ys, err = (part[c].cast(pl.Float64).fill_null(float("nan")).to_list() for c in (value, f"{value}_ci"))
        ax.errorbar(part["servers"].to_list(), ys, yerr=err, color=color,
                    linestyle=style, marker="o", markersize=3, capsize=2, label=scheme)
    if value == "goodput_mbps":
        ax.axhline(CEILING_MBPS[model], color="k", linewidth=0.8, linestyle="--", label="ceiling")
        if model == "A":
            ns = sorted(set(summary["servers"].to_list()))
            ax.plot(ns, [timeout_bound_mbps(n, CEILING_MBPS["A"]) for n in ns], color="0.5", linewidth=0.8, linestyle="-.",
                    label="one 200 ms timeout per block")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("active servers")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2)
    return fig


def _threshold_map(data: dict[str, Any]) -> Figure:
    fig, (a1, a2) = new_figure(2)
    s = data["thresholds"].group_by(["model", "servers", "threshold_mbps"], maintain_order=True).agg(
        pl.col("goodput_mbps").mean(), pl.col("nir").mean()).sort("threshold_mbps")
    for (model, n), part in s.group_by(["model", "servers"], maintain_order=True):
        label = f"model {model}, N = {n}"
        xs = [t / PER_CLIENT_MBPS[str(model)] for t in part["threshold_mbps"].to_list()]
        a1.plot(xs, part["goodput_mbps"].to_list(), marker="o", label=label)
        a2.plot(xs, part["nir"].to_list(), marker="o", label=label)
    for ax in (a1, a2):
        ax.axvline(1.0, color="k", linewidth=0.8, linestyle="--")
    a1.set_ylabel("AHTCP goodput (Mb/s)")
    a2.set_ylabel("AHTCP NIR")
    a2.set_xlabel("threshold / the most one client can receive (A: 963.6, B: 484.2 Mb/s)")
    a1.legend(fontsize=7, ncol=2)
    a1.set_title("AHTCP's fixed threshold, mapped")
    return fig


def write_figures_p1(data: dict[str, Any], summary: pl.DataFrame, out: Any) -> dict[str, Any]:
    """Figs. 3–6 (goodput and NIR against active servers, models A and B) and the threshold
    map, as PNG and SVG."""
    figs: dict[str, Figure] = {}
    models = set(summary["model"].to_list())
    for model, (g, n) in (("A", ("fig3_goodput_model_a", "fig4_nir_model_a")), ("B", ("fig5_goodput_model_b", "fig6_nir_model_b"))):
        if model in models:
            figs[g] = _curves(summary, model, "goodput_mbps", f"Goodput, model {model}", "goodput (Mb/s)")
            figs[n] = _curves(summary, model, "nir", f"NIR, model {model}", "NIR (packets sent / packets needed)")
    figs["map_threshold"] = _threshold_map(data)
    both = pl.concat([summary, summarise(data["remedies"])], how="diagonal_relaxed")
    for model in sorted(models):
        figs[f"remedies_model_{model.lower()}"] = remedies_figure(both, model, _REMEDY_VIEW)
    write_figures(figs, out)
    return figs


def _num(v: Any, fmt: str = ".3f") -> str:
    """A number for a table ("—" for none: a NIR of reads that did not complete)."""
    return "—" if v is None else format(v, fmt)


def _yes(v: Any) -> str:
    return "—" if v is None else ("yes" if v else "no")


def report(data: dict[str, Any], summary: pl.DataFrame, result: list[Check], mapped: dict[str, Any], figs: dict[str, Any]) -> Report:
    """report.md: the paper's findings with their sentences, the comparisons beyond it, the
    maps, the per-point means and the figures."""
    plan = data["plan"]
    rep = Report("Study 001 reproduced: TCP incast, FGTCP / LNRTCP / HYBTCP and AHTCP")
    rep.paragraph(
        f"Seeds {', '.join(map(str, plan['seeds']))} (the paper: 10 runs per point); active servers "
        f"{', '.join(map(str, plan['servers']))}; models {', '.join(plan['models'])} (`scenarios/p1_incast/model_a.toml`, "
        f"`model_b.toml`; their README gives every value with its sentence and every assumption). AHTCP's threshold "
        + ", ".join(f"{v} in model {k}" for k, v in data["ahtcp_threshold"].items())
        + " (the paper gives none: about half of what one client can receive in each model; see the map). An order between schemes is "
        "judged by the paired difference over the seeds (runs of one seed paired) and its 95 % Student-t interval: \"above\" / "
        "\"below\" when the interval lies above / below 0, \"slightly below but nearly equal\" when it lies below 0 and above −10 % "
        "of the other scheme's mean, \"equal\" when it lies within ±10 %; a level (a share of the ceiling, a bound) on the mean. "
        f"The comparisons of §4.3 at every N ≥ {LARGE}, the incast regime where FGTCP degrades. "
        f"{data['runs']} runs in {data['wall_s']:.0f} s wall time (the main sweeps {data['main_wall_s']:.0f} s)."
    )
    rep.paper_findings(result, "001_4a5546232f1d7630.txt")
    rep.heading("Beyond the paper")
    rep.checks([c for c in result if not c.paper], header=("where", "comparison", "measured", ""))
    _beyond(rep, data, summary, mapped)
    rep.heading("Map: AHTCP's threshold, per model")
    rep.paragraph(f"AHTCP at fixed thresholds in each model: fractions of what one client can receive there at most "
                  f"({', '.join(f'model {k}: {v:.1f} Mb/s' for k, v in PER_CLIENT_MBPS.items())}), the shipped threshold of each model "
                  "(*), and in model B model A's 500 Mb/s, which lies above what a B client can receive. The other schemes as in the main "
                  f"sweep; every finding judged again at N = {', '.join(map(str, plan['map_servers']))} (pass / FAIL; — where it does not "
                  "apply; n/j where no run lost nothing), and AHTCP's goodput (Mb/s), NIR and requests per run per N.")
    ids = _ids([r["verdicts"] for r in mapped["thresholds"]])
    rep.table(("model", "threshold (Mb/s)", "of a client's most", *(SHORT[i] for i in ids), "AHTCP per N: goodput, NIR, requests"),
              [(r["model"], f"{r['threshold_mbps']}{' *' if r['shipped'] else ''}", f"{r['fraction']:.2f}", *_marks(r["verdicts"], ids),
                _per_n(r["per_scheme"], "AHTCP")) for r in mapped["thresholds"]])
    rep.paragraph("The measured orders of §4.3 at each threshold (AHTCP − LNRTCP / HYBTCP, paired over the seeds: mean [95 % interval]):")
    rep.table(("model", "threshold (Mb/s)", "goodput", "NIR"),
              [(r["model"], r["threshold_mbps"], *(r["orders"].get(i, "—") for i in _ORDER_IDS[str(r["model"])]))
               for r in mapped["thresholds"]])
    rep.heading("Map: one unknown at a time, every finding")
    rep.paragraph(f"Each row changes one setting of the shipped model (the schemes it changes run again; the others keep their runs of the "
                  f"main sweep) at N = {', '.join(map(str, plan['map_servers']))}, and judges every finding of the paper on those runs "
                  "(the same checks as above, restricted to these N). Pass or FAIL in every direction: a setting that breaks a finding "
                  "that holds as shipped is shown as such. n/j: §4.2's \"exactly 1 where nothing was lost\" with no loss-free run "
                  "among the point's runs (model B loses packets even at N = 2), and no NIR below 1.")
    ids = _ids([r["verdicts"] for r in mapped["settings"]])
    rep.table(("setting", "model", *(SHORT[i] for i in ids), "hold"),
              [(r["setting"], r["model"], *_marks(r["verdicts"], ids), _held(r["verdicts"]))
               for r in mapped["settings"]])
    rep.table(("setting", "model", "per scheme/N: goodput (Mb/s), NIR"),
              [(r["setting"], r["model"], "; ".join(f"{k}: {v[0]:.0f}, {_num(v[1], '.2f')}" for k, v in r["per_scheme"].items()))
               for r in mapped["settings"]])
    rep.heading("Map: AHTCP's open decisions")
    ids = _ids([r["verdicts"] for r in mapped["decisions"]])
    rep.table(("decision", *(SHORT[i] for i in ids), "AHTCP per N: goodput, NIR, requests"),
              [(r["decision"], *_marks(r["verdicts"], ids), _per_n(r["per_scheme"], "AHTCP")) for r in mapped["decisions"]])
    rep.heading("Means per point")
    rep.paragraph(f"Means over the seeds with the 95 % Student-t half-width; drops are summed over the seeds, timeouts and requests "
                  f"are per run. A run stops at {RUN_CAP_S:g} s of simulated time at the latest; its goodput is then what it delivered over "
                  "the time it ran, and `unfinished` counts the connections whose reads it cut short (over all seeds).")
    rep.table(("model", "scheme", "N", "goodput (Mb/s)", "± 95 %", "NIR", "± 95 %", "drops", "timeouts", "requests", "unfinished"),
              [(r["model"], r["scheme"], r["servers"], f"{r['goodput_mbps']:.1f}", _num(r["goodput_mbps_ci"], ".1f"), _num(r["nir"]),
                _num(r["nir_ci"]), r["dropped"], f"{r['timeouts']:.0f}", f"{r['requests']:.0f}", r["unfinished"]) for r in summary.iter_rows(named=True)])
    speed = data["main"].filter(pl.col("servers") == max(plan["servers"]))
    if speed.height:
        rep.heading("Speed")
        rep.paragraph(f"At {max(plan['servers'])} servers: {float(speed['wall_time_s'].mean()):.3f} s wall time per run (mean), "  # type: ignore[arg-type]
                      f"{float(speed['events_per_packet'].mean()):.2f} events per data packet sent.")  # type: ignore[arg-type]
    rep.heading("Figures")
    rep.bullets(f"`{name}.png` / `.svg`" for name in figs)
    return rep


def _per_n(per: dict[str, list[Any]], scheme: str) -> str:
    """One scheme's goodput, NIR and requests per N from a map row's `per_scheme`."""
    rows = sorted((int(k.split("/")[1]), v) for k, v in per.items() if k.split("/")[0] == scheme)
    return "; ".join(f"{n}: {v[0]:.0f}, {_num(v[1])}, {v[2]:.0f}" for n, v in rows)


_ORDER_IDS = {"A": ("§4.3 s5 near", "§4.3 s6"), "B": ("§4.3 s7 equal", "§4.3 s7 nir")}


def _ids(rows: list[dict[str, bool]]) -> list[str]:
    """The finding ids judged in any of `rows`, in the report's order."""
    seen = {k for r in rows for k in r}
    return [i for i in SHORT if i in seen]


def _marks(verdicts: dict[str, bool | None], ids: list[str]) -> list[str]:
    """pass / FAIL per finding; "—" where it does not apply, "n/j" where nothing could judge it."""
    return ["—" if i not in verdicts else "n/j" if verdicts[i] is None else ("pass" if verdicts[i] else "**FAIL**") for i in ids]


def _held(verdicts: dict[str, bool | None]) -> str:
    judged = [v for v in verdicts.values() if v is not None]
    return f"{sum(judged)} of {len(judged)}"


def _beyond(rep: Report, data: dict[str, Any], summary: pl.DataFrame, mapped: dict[str, Any]) -> None:
    """The remedies since the paper beside AHTCP, and AHTCP's threshold rules."""
    plan = data["plan"]
    rep.heading("Remedies since the paper, beside AHTCP")
    rep.paragraph("Not findings of the paper: the fixes the field adopted since, in the same models and runs. "
                  + "; ".join(f"**{k}**: {v[1]}" for k, v in REMEDIES.items())
                  + f". DCTCP's ports mark at K = {DCTCP_K['1Gbps']} (Alizadeh et al. 2010, 1 Gb/s) under the same 40-packet buffer; "
                  "its senders are the shipped Reno hosts with DCTCP's window rules, NewReno recovery (no SACK) and ECN. "
                  f"Seeds {', '.join(map(str, plan['remedy_seeds']))}; goodput (Mb/s) and NIR, means over the seeds.")
    both = pl.concat([summary, summarise(data["remedies"])], how="diagonal_relaxed")
    ns = [n for n in (16, 64, 256) if n in plan["remedy_servers"]] or list(plan["remedy_servers"])
    rows = []
    for model in sorted(set(both["model"].to_list())):
        for scheme in _REMEDY_VIEW:
            part = both.filter((pl.col("model") == model) & (pl.col("scheme") == scheme))
            if part.height == 0:
                continue
            cells = []
            for n in ns:
                r = part.filter(pl.col("servers") == n)
                cells.append("—" if r.height == 0 else f"{r['goodput_mbps'][0]:.0f} / {_num(r['nir'][0], '.2f')}")
            rows.append((model, scheme, *cells))
    rep.table(("model", "scheme", *(f"N = {n}: goodput / NIR" for n in ns)), rows)
    rep.heading("AHTCP's threshold: fixed against the peak rule")
    rules = mapped["rules"]
    rep.paragraph("The paper's future work: a threshold chosen dynamically. The peak rule asks while the moving average is below half "
                  "the highest moving average of the last 50 ms — what this client has shown it can receive, wherever its bottleneck is. "
                  "The cases differ in what one client can receive (model, link rate, background), so that the fixed threshold that suits "
                  "one does not suit all. Each case runs AHTCP with every fixed threshold and with the peak rule "
                  f"(seeds {', '.join(map(str, plan['rule_seeds']))}). The best fixed threshold of a case is the one with the highest goodput "
                  f"(the lowest NIR among those within 2 %); a rule is *as good* when it reaches {GOOD_GOODPUT:.0%} of that goodput with a "
                  f"NIR at most {GOOD_NIR - 1:.0%} above its NIR. A case *separates* the rules when some fixed threshold is not as good there.")
    names = list(dict.fromkeys(k for r in rules for k in r["ok"]))
    rep.table(("case", "N", "best fixed", "peak / best: goodput, NIR", *(f"{k} ok" for k in names), "per rule: goodput (Mb/s), NIR"),
              [(r["condition"], r["servers"], r["best_fixed"], "—" if r["peak_vs_best"] is None else f"{r['peak_vs_best'][0]:.3f}, {r['peak_vs_best'][1]:.3f}",
                *(_yes(r["ok"].get(k)) for k in names),
                "; ".join(f"{k}: {v[0]:.0f}, {_num(v[1], '.2f')}" for k, v in r["per_rule"].items())) for r in rules])
    sc = rule_scores(rules)
    rep.table(("rule", f"as good, of {sc['cases']} cases", f"as good, of the {sc['separating']} that separate"),
              [(k, v[0], v[1]) for k, v in sc["score"].items()])
    bests = sorted({r["best_fixed"] for r in rules})
    rep.paragraph(f"The best fixed threshold varies over {', '.join(bests)}. The peak rule (fraction 0.5) is as good as the best fixed "
                  f"threshold in {sc['score'].get('peak', [0, 0])[0]} of {sc['cases']} cases; the best single fixed threshold in "
                  f"{sc['best_fixed_score']}. "
                  + ("The peak rule earns its place: it is as good in more cases than any one fixed threshold."
                     if sc["peak_earns"] else
                     "The peak rule does not earn its place by this comparison: some single fixed threshold is as good in as many cases or more."))
