"""Study 003's figures and report.md."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from tcplab.reproduce.figures import new_figure, write_figures
from tcplab.reproduce.findings import Check
from tcplab.reproduce.p3 import control, hz_map, moving
from tcplab.reproduce.p3.marks import criteria, mapped_table, mark
from tcplab.reproduce.p3.constants import CCS, RULES, SEED_FILE
from tcplab.reproduce.report import Report, write_results_json

__all__ = ["NO_VERDICT", "figures", "write_report"]

NO_VERDICT = [
    ("F16", "「*HZ* が大きすぎると実行速度に影響を与える」; 「タスク切り替えが頻発するようになるため」", "S6 L97–L98", "out of scope: no host CPU in the model"),
    ("F17", "「カーネルプログラムのコンパイルに要した処理時間 (※1)」", "S6 L101–L111", "out of scope: kernel build time against HZ"),
    ("F22", "「CPU へかかる負荷の比較 (HZ=20,000)」; 「平均負荷 [%]	18.62	19.12」", "S8 L136–L139", "out of scope: CPU load"),
    ("F23", "「CPU へかかる負荷は TCP Reno と比較してほとんど差が見られない」", "S8 L142", "out of scope: CPU load"),
]
"""Statements quoted and reported without verdict (dev/p3/FINDINGS.md)."""

NOT_RUN: list[tuple[str, str, str, str]] = []
"""Claims this version of the reproduction does not judge (said in the report, never counted)."""


def _beyond(rep: Report, checks: list[Check], fid: str, title: str, text: str, columns: tuple[str, str]) -> None:
    """A beyond-the-slides section for the checks of id `fid`, if any: heading, `text`, the
    criteria, and a table of (the value named `columns[0]`, measured, verdict)."""
    rows = [c for c in checks if c.values.get("id") == fid]
    if not rows:
        return
    rep.heading(f"Beyond the slides: {title}", 3)
    rep.paragraph(text)
    criteria(rep, rows)
    rep.table((columns[0], "measured", columns[1]), [(c.values[columns[0]], c.measured, mark(c)) for c in rows])




def figures(data: dict[str, Any]) -> dict[str, Any]:
    """estimate_vs_truth_{udp,tcp} (seed of the first run, default rule), background throughputs
    against the free bandwidth per cross-traffic kind, ImTCP-bg's cwnd over time (UDP cross traffic)."""
    figs: dict[str, Any] = {}
    for kind in ("udp", "tcp"):
        runs = data["accuracy"][f"{kind}/{RULES[0]}"]
        r = runs[0]
        fig, (ax,) = new_figure()
        b, m = r["bins"], r.get("meas") or {}
        ax.plot(b["time_s"], np.asarray(b["truth_bps"]) / 1e6, lw=0.8, color="0.5", label="truth A (100 ms bins)")
        if m.get("time_s"):
            flag = np.asarray(m["flag"])
            t, e = np.asarray(m["time_s"]), np.asarray(m["estimate_bps"]) / 1e6
            for f, lab, mk in ((0, "estimate (in range)", "o"), (1, "above range", "^"), (2, "below range", "v")):
                k = flag == f
                if k.any():
                    ax.plot(t[k], e[k], mk, ms=2.5, ls="", label=lab)
            ax.fill_between(t, np.asarray(m["low_bps"]) / 1e6, np.asarray(m["high_bps"]) / 1e6, step="post", alpha=0.15, label="search range")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("Mb/s")
        ax.set_title(f"ImTCP estimate vs truth, {kind.upper()} cross traffic (seed {r['seed']}, rule {RULES[0]})")
        ax.legend(fontsize=7)
        figs[f"estimate_vs_truth_{kind}"] = fig
    for kind in data["background"]:
        bg, alone = data["background"][kind], data["alone"][kind]
        fig, (ax,) = new_figure()

        def cross_of(r):
            return sum(v for k, v in r["steady_bps"].items() if k != "bg") / 1e6
        free = [r["capacity_bps"] / 1e6 - cross_of(r) for r in alone]
        names = [*CCS, "free"]
        vals = [[r["steady_bps"].get("bg", 0.0) / 1e6 for r in bg[c]] for c in CCS] + [free]
        cross = [[cross_of(r) for r in bg[c]] for c in CCS] + [[cross_of(r) for r in alone]]
        x = np.arange(len(names))
        ax.bar(x - 0.2, [np.mean(v) for v in vals], 0.4, yerr=[np.std(v) for v in vals], label="background flow (free: C − cross alone)")
        ax.bar(x + 0.2, [np.mean(v) for v in cross], 0.4, yerr=[np.std(v) for v in cross], label=f"{kind.upper()} cross traffic (free: alone)")
        ax.set_xticks(x, names)
        ax.set_ylabel("mean throughput after 5 s (Mb/s)")
        ax.set_title(f"S10: background transfer beside {kind.upper()} cross traffic")
        ax.legend(fontsize=7)
        figs[f"background_throughput_{kind}"] = fig
    bg = data["background"]["udp"]
    r = bg["imtcp-bg"][0]
    if r.get("cwnd"):
        fig, (ax,) = new_figure()
        c = r["cwnd"]
        ax.plot(c["time_s"], np.asarray(c["cwnd_bytes"]) / 1448, lw=0.7, label="cwnd (segments)")
        m = r.get("meas") or {}
        if m.get("time_s"):
            a, bar = None, []
            for e in m["estimate_bps"]:  # Ā ← (1 − 1/8)·Ā + 1/8·A_cur (S4 L54, S7 L124), the first sets Ā
                a = e if a is None else 0.875 * a + 0.125 * e
                bar.append(a)
            ax.step(m["time_s"], np.asarray(bar) * 0.030 / 8 / 1448, where="post", lw=0.7, label="Ā·30 ms (segments, from the trace)")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("segments")
        ax.set_title(f"ImTCP-bg window (seed {r['seed']})")
        ax.legend(fontsize=7)
        figs["imtcp_bg_cwnd"] = fig
    if data.get("control", {}).get("udp"):
        figs["imtcp_bg_rules"] = control.figure(data["control"]["udp"], "UDP")
    fig = moving.figure(data.get("moving", {}))
    if fig is not None:
        figs["moving_bottleneck"] = fig
    return figs


def write_report(data: dict[str, Any], checks: list[Check], out: Path) -> list[Check]:
    """Figures, results.json and report.md into `out`; returns `checks`."""
    write_figures(figures(data), out)
    plan = data["plan"]
    rep = Report("Study 003 (ImTCP / ImTCP-bg) reproduced")
    rep.paragraph(f"Plan **{plan['name']}**: seeds {list(plan['seeds'])}; HZ sweep {list(plan['hz'])} on seeds {list(plan['hz_seeds'])}."
                  f" Runs took {data['wall_s']:.1f} s of wall time on {data['cpus']} CPUs."
                  " Verdicts follow dev/p3/FINDINGS.md: one number per seed, a 95 % t-interval across seeds; an interval that straddles"
                  " the criterion is *inconclusive* (with 2 seeds, quick verdicts are indicative only).")
    judged = [c for c in checks if c.paper]
    counts = {s: sum(c.status == s for c in judged) for s in ("pass", "FAIL", "inconclusive", "not exercised")}
    rep.heading("The slides' findings (default trend rule, ties-split)")
    rep.paragraph(f"**{counts['pass']} of {len(judged)} judged findings hold**; {counts['FAIL']} FAIL, {counts['inconclusive']} inconclusive,"
                  f" {counts['not exercised']} not exercised.")
    rep.table(("id", "where", "criterion", "measured", "verdict"),
              [(c.values.get("id", ""), c.figure, c.claim, c.measured, mark(c)) for c in judged])
    rep.heading("The trend rule, an unknown: the other two rules beside (not counted)")
    rep.paragraph("EVIDENCE §3: the slides do not give the rule that decides a stream's delays rise. Rows where a rule flips the"
                  " default's verdict are marked.")
    default = {(c.values.get("id"), c.values.get("kind")): c.status for c in judged}
    rows = []
    for c in checks:
        if (c.paper or "map_buffer" in c.values or "map_reading" in c.values or "map_tick" in c.values or c.values.get("block") in ("C", "F")
                or c.values.get("id") in ("F18", "F10", "latecomer", "delayed-acks", "bg-delayed-acks")):
            continue
        flip = default.get((c.values.get("id"), c.values.get("kind")))
        rows.append((c.values.get("id", ""), c.figure, c.measured, mark(c), "**flips**" if flip and flip != c.status else ""))
    rep.table(("id", "where", "measured", "verdict", "vs ties-split"), rows)
    mapped = [c for c in checks if "map_buffer" in c.values]
    if mapped:
        rep.heading("The bottleneck buffer, an unknown: mapped (not counted)")
        rep.paragraph("EVIDENCE §2.3: the shipped 50 packets is the era's default; here 25, 100 and 250 packets on seeds "
                      f"{list(plan.get('map_seeds', []))}, the same criteria. The shipped 50 is the judged table above.")
        criteria(rep, mapped)
        rep.table(("buffer", "id", "measured", "verdict"), [(c.values["map_buffer"], c.values.get("id", ""), c.measured, mark(c)) for c in mapped])
    read = [c for c in checks if "map_reading" in c.values]
    if read:
        rep.heading("ImTCP-bg's RTT source and TCP-LP's timestamp clock, unknowns: mapped (not counted)")
        rep.paragraph("The shipped reading stays the headline. `bg-stage`: ImTCP-bg takes RTT_cur and RTT_min from the ImTCP stage's"
                      " own release-to-ACK samples (`imtcp_bg.rtt_source = \"stage\"`), so the time the stage holds a segment to space"
                      " its streams is not in them; shipped: from `tcp_output`, as FreeBSD times a segment (EVIDENCE §5). `lp-linux-1khz`:"
                      " TCP-LP's flow on two Linux 2.6.16 hosts with HZ = 1000 (TSval every 1 ms), EVIDENCE §6's [R] host for a Linux"
                      " module; shipped: FreeBSD 4.10 at HZ 20,000, where Linux's integer 1000/HZ is 0 and TCP-LP is Reno. `both`: the two"
                      f" together. Seeds {list(plan['seeds'])}, paired with the shipped runs of the other controllers; a changed verdict is"
                      " marked in both directions (shipped → mapped).")
        mapped_table(rep, read, "map_reading", "reading", "shipped verdict")
        rd = data.get("readings", {})
        rep.bullets([f"{k.upper()} {name}: throughput per seed {[round(r['steady_bps'].get('bg', 0.0) / 1e6, 2) for r in v]} Mb/s,"
                     f" timeouts {[next(f['timeouts'] for f in r['flows'] if f['name'] == 'bg') for r in v]}"
                     for k, d in rd.items() for name, v in d.items()])
    ticked = [c for c in checks if "map_tick" in c.values]
    if ticked:
        rep.heading("The Dummynet host's tick, an unknown: mapped (not counted)")
        rep.paragraph("EVIDENCE §2.2: Dummynet releases packets on its own host's clock (\"All times are rounded to 1/HZ\"; "
                      "`dummynet(4)` recommends HZ = 1000), which can bunch a 10-packet stream at 100 Mb/s (120 µs a packet). "
                      "The shipped scenarios release exactly; here blocks A and D again with `emulators.0.tick` as named, "
                      f"seeds {list(plan['seeds'])}, the same criteria; a verdict that differs from the exact release's is marked.")
        mapped_table(rep, ticked, "map_tick", "tick", "exact release")
    hz_map.section(rep, checks)
    _beyond(rep, checks, "F10", "the RTT rule when the estimate is wrong (F10)",
            "「ImTCP の計測結果が信頼できない場合がある」; 「RTT を用いた輻輳ウィンドウサイズの制御を併用する」 (S4 L60, L62). "
            "Block D's ImTCP-bg runs against the same seeds with `imtcp_bg.rtt_rule = false`; judged only where the estimate "
            "reads high (its bias's 95 % interval above 0).", ("kind", "verdict"))
    beside = [c for c in checks if c.values.get("block") == "C" and not c.paper]
    if beside:
        rep.heading("Block C beside TCP cross traffic (not counted)", 3)
        rep.paragraph("S9's figure is one run; F24–F26 are judged beside UDP cross traffic (above) and read the same way on "
                      "`background_tcp.toml`'s runs here.")
        criteria(rep, beside)
        rep.table(("id", "measured", "verdict"), [(c.values["id"], c.measured, mark(c)) for c in beside])
    moving.section(rep, checks)
    _beyond(rep, checks, "delayed-acks", "ImTCP with delayed ACKs (block E)",
            "The stage times each stream packet by its own ACK, so it refuses a receiver that ACKs every second segment "
            "unless `imtcp.delayed_ack = \"warn\"`; here the accuracy runs with `delack_segments = 2` against block A's "
            "(default trend rule), the same seeds.", ("kind", "error rises"))
    _beyond(rep, checks, "bg-delayed-acks", "ImTCP-bg with delayed ACKs (block E)",
            "Block D's ImTCP-bg runs with the receiver ACKing every second segment (`delack_segments = 2`, the stage told to "
            "run anyway) against the same seeds with an ACK per segment, beside each cross traffic.", ("kind", "cross traffic loses more"))
    _beyond(rep, checks, "latecomer", "LEDBAT's latecomer",
            "Two flows of one controller on the 100 Mb/s path (no cross traffic, 8 MB socket buffers), the second from 90 s, "
            "when the first LEDBAT flow holds about TARGET (100 ms) of queue; the latecomer's share over the last 100 s of "
            "600, per buffer. The claim is the literature's (Rossi et al., ICCCN 2010), not the slides'.", ("buffer", "LEDBAT latecomer > ½"))
    rep.heading("Each judged finding with the slides' sentence")
    rep.paragraph(f"Seed `{SEED_FILE}`.")
    rep.findings(judged)
    rep.heading("Quoted, not judged")
    rep.table(("id", "quote", "place", "why"), NO_VERDICT + NOT_RUN)
    rep.heading("Runs")
    walls = {k: [r["wall_time_s"] for r in v] for k, v in data["accuracy"].items()}
    rep.bullets([f"accuracy {k}: {len(v)} runs, {np.mean(v):.2f} s each" for k, v in walls.items()]
                + [f"background ({k}) {c}: timeouts per seed {[next(f['timeouts'] for f in r['flows'] if f['name'] == 'bg') for r in data['background'][k][c]]}"
                   for k in data["background"] for c in CCS]
                + [f"accuracy {k}: ImTCP flow timeouts per seed {[next(f['timeouts'] for f in r['flows'] if f['name'] == 'imtcp') for r in v]},"
                   f" first result at {[round(r['meas']['time_s'][0], 2) if r['meas']['time_s'] else None for r in v]} s" for k, v in data["accuracy"].items() if k.endswith(RULES[0])])
    rep.paragraph("Figures: estimate_vs_truth_udp, estimate_vs_truth_tcp, background_throughput_udp, background_throughput_tcp, imtcp_bg_cwnd,"
                  " imtcp_bg_rules, moving_bottleneck (PNG and SVG).")
    plain = {k: v for k, v in data.items() if k not in ("accuracy", "hz", "background", "alone", "nocap", "f2", "map", "hz_map", "rule_off", "latecomer", "delayed_acks", "bg_delayed_acks", "readings", "ablation", "moving", "control", "tick")}
    plain["summary"] = {"accuracy_results": {k: [len((r.get("meas") or {}).get("time_s", [])) for r in v] for k, v in data["accuracy"].items()},
                        "background_steady_bps": {k: {c: [r["steady_bps"] for r in v] for c, v in d.items()} for k, d in data["background"].items()},
                        "alone_steady_bps": {k: [r["steady_bps"] for r in v] for k, v in data["alone"].items()},
                        "readings_steady_bps": {k: {c: [r["steady_bps"] for r in v] for c, v in d.items()} for k, d in data.get("readings", {}).items()}}
    write_results_json(plain, checks, out / "results.json")
    rep.write(out / "report.md")
    _ = math
    return checks
