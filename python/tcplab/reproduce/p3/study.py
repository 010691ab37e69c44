"""Reproduce study 003: the orchestrator. `reproduce(out, quick=False)` runs block A (accuracy
under UDP and TCP cross traffic, each trend rule), block B (the HZ sweep) and block D (the
background transfer beside UDP and TCP cross traffic), judges the slides' findings, writes the figures,
`results.json` and `report.md`, and returns the checks. The runs are kept in `out/runs/`
(resumable stores)."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tcplab.reproduce.findings import Check
from tcplab.reproduce.output import RUNS, check_out, publish
from tcplab.reproduce.p3 import checks as ck
from tcplab.reproduce.p3 import ablation, beyond, control, hz_map, moving
from tcplab.reproduce.p3.constants import BG_STAGE, CCS, HZ_GRID, LINUX_1KHZ, READINGS, RULES
from tcplab.reproduce.p3.report import write_report
from tcplab.reproduce.p3.runs import run

__all__ = ["Plan", "experiment", "reproduce"]

STEPS_S = (10.0, 20.0, 30.0)
"""The level changes of the accuracy scenarios' cross traffic (accuracy_*.toml)."""
ACC_END_S = 40.0
HZ_OVERRIDES = {"flows.1.cbr.schedule": [{"at": "0s", "rate": "50Mbps"}], "run.duration": "20s"}
"""Block B's path: accuracy_udp.toml with a constant 50 Mb/s CBR (free ≈ 47.5 Mb/s) for 20 s."""
F2_OVERRIDES = {"queue(r1->dn)": "1000pkts", "flows.1.cbr.schedule": [{"at": "0s", "rate": "20Mbps"}],
                "flows.0.bulk": {"bytes": "30MB"}, "run.duration": "10s"}
"""F2's loss-free transfer (the same loss pattern: none): 30 MB beside a 20 Mb/s CBR through a
1,000-packet bottleneck buffer, which a 1 MB window cannot fill."""


@dataclasses.dataclass(frozen=True)
class Plan:
    """How much to run."""

    seeds: tuple[int, ...]
    hz: tuple[int, ...]
    hz_seeds: tuple[int, ...]
    name: str
    buffers: tuple[int, ...] = ()
    """The bottleneck buffers (packets) mapped beside the shipped 50 (EVIDENCE §2.3), on `map_seeds`."""
    map_seeds: tuple[int, ...] = ()
    hz_map: tuple[int, ...] = ()
    """F18 beyond the slides: the HZ grid run on each path of `hz_map.PATHS`, on `hz_map_seeds`."""
    hz_map_seeds: tuple[int, ...] = ()
    late_seeds: tuple[int, ...] = ()
    """LEDBAT's latecomer beside the slides' controllers (`beyond.latecomer_points`), 600 s runs."""
    moving_buffers: tuple[int, ...] = (moving.HOP2_BUFFERS[0],)
    """Block F (`moving`): the second hop's buffers (packets), on `seeds`."""
    ticks: tuple[str, ...] = ()
    """The Dummynet host's tick (`emulators.0.tick`) mapped beside the shipped exact release
    (EVIDENCE §2.2: swept {exact, 1 ms}), on `seeds`: blocks A and D again."""
    moving_stage: bool = False
    """Block F with ImTCP-bg's RTT from the stage too (block D's mapped reading), at each buffer."""

    @staticmethod
    def make(quick: bool) -> Plan:
        """The quick plan (2 seeds, HZ {100, 20k, 100k}, block F at the shipped buffer) or the full
        one (10 seeds, the slides' six HZ, the maps, F18, the latecomer, block F at both buffers
        and with ImTCP-bg's other RTT reading)."""
        if quick:
            return Plan(seeds=(1, 2), hz=(100, 20_000, 100_000), hz_seeds=(1, 2), name="quick")
        return Plan(seeds=tuple(range(1, 11)), hz=HZ_GRID, hz_seeds=tuple(range(1, 11)), name="full",
                    buffers=(25, 100, 250), map_seeds=(1, 2, 3), hz_map=hz_map.GRID, hz_map_seeds=(1, 2, 3, 4, 5), late_seeds=(1, 2, 3, 4, 5),
                    moving_buffers=moving.HOP2_BUFFERS, moving_stage=True, ticks=("1ms",))


def experiment(plan: Plan, progress: Callable[[str], None] = lambda _: None, *, out: Path | None = None,
               workers: int | None = None, cluster: Any = None) -> dict[str, Any]:
    """Every run of `plan`, kept (`runs.keep`) per point and seed."""
    t0 = time.perf_counter()
    store = None if out is None else out / RUNS
    kw = {"out": store, "workers": workers, "cluster": cluster}
    progress("block A: accuracy (UDP and TCP cross traffic, three trend rules)")
    a_points = [(f"accuracy_{k}", {"flows.0.tcp.imtcp.trend.rule": r}) for k in ("udp", "tcp") for r in RULES]
    a = run(a_points, plan.seeds, hook_args={"measured": "imtcp"}, name="p3-accuracy", **kw)
    accuracy = {f"{k}/{r}": a[i] for i, (k, r) in enumerate((k, r) for k in ("udp", "tcp") for r in RULES)}
    progress("F2: a loss-free 30 MB transfer with and without the stage")
    f2 = run([("accuracy_udp", {**F2_OVERRIDES, "flows.0.tcp.variant": v}) for v in ("imtcp", "none")], plan.seeds,
             hook_args={"measured": "imtcp"}, name="p3-f2", **kw)
    progress(f"block B: HZ {list(plan.hz)}")
    b = run([("accuracy_udp", {**HZ_OVERRIDES, "defaults.tcp.hz": h}) for h in plan.hz], plan.hz_seeds,
            hook_args={"measured": "imtcp"}, name="p3-hz", **kw)
    hz = {h: b[i] for i, h in enumerate(plan.hz)}
    background, alone = {}, {}
    for kind, stem in (("udp", "background"), ("tcp", "background_tcp")):
        progress(f"block D: background transfer beside {kind.upper()} cross traffic")
        d_points = [(stem, {"flows.0.tcp.cc": c, "flows.0.tcp.variant": "imtcp" if c == "imtcp-bg" else "none"}) for c in CCS]
        d = run(d_points, plan.seeds, hook_args={"measured": "bg", "cwnd": True}, name=f"p3-{stem}", **kw)
        background[kind] = dict(zip(CCS, d, strict=True))
        alone[kind] = run([(f"{stem}_alone", {})], plan.seeds, hook_args={}, name=f"p3-{stem}-alone", **kw)[0]
    progress("F5, F6: the adaptive search range against a fixed one")
    abl = dict(zip(ablation.ARMS, run(ablation.points(), plan.seeds, hook_args={"measured": "imtcp"}, name="p3-range-ablation", **kw),
                   strict=True))
    readings: dict[str, Any] = {}
    for kind, stem in (("udp", "background"), ("tcp", "background_tcp")):
        progress(f"map: ImTCP-bg's RTT from the stage, TCP-LP (and Reno) on Linux hosts at 1 kHz, beside {kind.upper()} cross traffic")
        pts = {"imtcp-bg/stage": BG_STAGE, "tcp-lp/linux-1khz": {**LINUX_1KHZ, "flows.0.tcp.cc": "tcp-lp"},
               "reno/linux-1khz": {**LINUX_1KHZ, "flows.0.tcp.cc": "reno"}}
        if kind == "udp":  # F24's binding half, as shipped: beside UDP, with and without the cap
            pts["imtcp-bg/stage-nocap"] = {**BG_STAGE, "flows.0.tcp.imtcp_bg.cap": False}
        r = run([(stem, o) for o in pts.values()], plan.seeds, hook_args={"measured": "bg", "cwnd": True}, name=f"p3-{stem}-readings", **kw)
        readings[kind] = dict(zip(pts, r, strict=True))
    progress("beyond (block E): ImTCP with delayed ACKs")
    delayed = run([(f"accuracy_{k}", beyond.DELAYED_ACKS) for k in ("udp", "tcp")], plan.seeds, hook_args={"measured": "imtcp"},
                  name="p3-delayed-acks", **kw)
    progress("beyond (block E): ImTCP-bg with delayed ACKs")
    bg_delack = {}
    for kind, stem in (("udp", "background"), ("tcp", "background_tcp")):  # as shipped, and with the RTT rule off
        o = {**beyond.DELAYED_ACKS, "flows.0.tcp.cc": "imtcp-bg", "flows.0.tcp.variant": "imtcp"}
        on, off = run([(stem, o), (stem, {**o, **beyond.RULE_OFF})], plan.seeds, hook_args={"measured": "bg"}, name=f"p3-{stem}-delayed-acks", **kw)
        bg_delack[kind] = {"rule": on, "rule_off": off}
    rule_off = {}
    for kind, stem in (("udp", "background"), ("tcp", "background_tcp")):
        progress(f"beyond (F10): ImTCP-bg without its RTT rule beside {kind.upper()} cross traffic")
        rule_off[kind] = run([(stem, beyond.RULE_OFF)], plan.seeds, hook_args={"measured": "bg"}, name=f"p3-{stem}-rule-off", **kw)[0]
    progress("block C: ImTCP-bg's rules on every ACK (the cc_state trace)")
    ctl = {kind: run([(stem, {"flows.0.tcp.cc": "imtcp-bg", "flows.0.tcp.variant": "imtcp", "trace.cc_state": True})], plan.seeds,
                     hook_args={"measured": "bg"}, hook=control.HOOK, name=f"p3-{stem}-control", **kw)[0]
           for kind, stem in (("udp", "background"), ("tcp", "background_tcp"))}
    progress("block C (part): ImTCP-bg with its cap turned off")
    nocap = run([("background", {"flows.0.tcp.imtcp_bg.cap": False})], plan.seeds, hook_args={"measured": "bg", "cwnd": True},
                name="p3-background-nocap", **kw)[0]
    buffer_map: dict[int, Any] = {}
    for q in plan.buffers:
        progress(f"map: bottleneck buffer {q} packets")
        o = {"queue(r1->dn)": f"{q}pkts"}
        acc_q = run([("accuracy_udp", o)], plan.map_seeds, hook_args={"measured": "imtcp"}, name=f"p3-map-{q}", **kw)[0]
        d = run([("background", {**o, "flows.0.tcp.cc": c, "flows.0.tcp.variant": "imtcp" if c == "imtcp-bg" else "none"}) for c in CCS],
                plan.map_seeds, hook_args={"measured": "bg"}, name=f"p3-map-bg-{q}", **kw)
        al = run([("background_alone", o)], plan.map_seeds, hook_args={}, name=f"p3-map-alone-{q}", **kw)[0]
        buffer_map[q] = {"accuracy": acc_q, "background": dict(zip(CCS, d, strict=True)), "alone": al}
    by_path: dict[str, dict[int, Any]] = {}
    if plan.hz_map:
        progress(f"beyond (F18): HZ {list(plan.hz_map)} on bottlenecks {list(hz_map.PATHS)}")
        pts = hz_map.points(plan.hz_map)
        res = run([(s, o) for s, o, _, _ in pts], plan.hz_map_seeds, hook_args={"measured": "imtcp"}, name="p3-hz-map", **kw)
        for (_, _, path, h), r in zip(pts, res, strict=True):
            by_path.setdefault(path, {})[h] = r
    late: dict[str, dict[int, Any]] = {}
    if plan.late_seeds:
        progress("beyond: two flows of one controller, the second starting at 90 s (LEDBAT's latecomer)")
        pts = beyond.latecomer_points()
        res = run([(s, o) for s, o, _, _ in pts], plan.late_seeds, hook_args={}, name="p3-latecomer", **kw)
        for (_, _, cc, q), r in zip(pts, res, strict=True):
            late.setdefault(cc, {})[q] = r
    tick_map: dict[str, Any] = {}
    for tick in plan.ticks:
        progress(f"map: the Dummynet host's tick, {tick}")
        o = {"emulators.0.tick": tick}
        acc_t = run([(f"accuracy_{k}", o) for k in ("udp", "tcp")], plan.seeds, hook_args={"measured": "imtcp"}, name=f"p3-tick-{tick}", **kw)
        entry: dict[str, Any] = {"accuracy": dict(zip(("udp", "tcp"), acc_t, strict=True)), "background": {}, "alone": {}}
        for kind, stem in (("udp", "background"), ("tcp", "background_tcp")):
            d = run([(stem, {**o, "flows.0.tcp.cc": c, "flows.0.tcp.variant": "imtcp" if c == "imtcp-bg" else "none"}) for c in CCS],
                    plan.seeds, hook_args={"measured": "bg"}, name=f"p3-tick-{tick}-{stem}", **kw)
            entry["background"][kind] = dict(zip(CCS, d, strict=True))
            entry["alone"][kind] = run([(f"{stem}_alone", o)], plan.seeds, hook_args={}, name=f"p3-tick-{tick}-{stem}-alone", **kw)[0]
        tick_map[tick] = entry
    progress(f"beyond (block F): the bottleneck moves, hop-2 buffers {list(plan.moving_buffers)}")
    pts = moving.points(plan.moving_buffers)
    if plan.moving_stage:
        pts += [("moving", {"queue(r2->r3)": f"{q}pkts", **BG_STAGE}, "imtcp-bg/stage", q) for q in plan.moving_buffers]
    moved: dict[int, dict[str, Any]] = {}
    for group, args in ((False, {}), (True, {"measured": "bg"})):  # the ImTCP-bg runs keep their measurements
        part = [p for p in pts if p[2].startswith("imtcp-bg") == group]
        res = run([(s, o) for s, o, _, _ in part], plan.seeds, hook_args=args, hook=moving.HOOK,
                  name="p3-moving-bg" if group else "p3-moving", **kw)
        for (_, _, c, q), r in zip(part, res, strict=True):
            moved.setdefault(q, {})[c] = r
    return {"plan": dataclasses.asdict(plan), "tick": tick_map, "control": ctl, "moving": moved, "latecomer": late, "accuracy": accuracy, "hz": hz, "background": background, "map": buffer_map,
            "alone": alone, "readings": readings, "nocap": nocap, "f2": f2, "hz_map": by_path, "rule_off": rule_off, "ablation": abl, "delayed_acks": dict(zip(("udp", "tcp"), delayed, strict=True)), "bg_delayed_acks": bg_delack, "wall_s": time.perf_counter() - t0, "cpus": os.cpu_count()}


def judge(data: dict[str, Any]) -> list[Check]:
    """The slides' findings (the default trend rule judged; the other rules beside, not counted)."""
    acc = data["accuracy"]
    out: list[Check] = []
    for rule in RULES:
        judged = rule == RULES[0]
        for kind in ("udp", "tcp"):
            out.append(ck.f7(acc[f"{kind}/{rule}"], STEPS_S, ACC_END_S, kind.upper(), rule, judged=judged))
        for kind in ("udp", "tcp"):
            out.append(ck.f21(acc[f"{kind}/{rule}"], kind.upper(), rule, judged=judged))
    out.append(ck.f20([r for k in acc for r in acc[k]]))
    if data.get("ablation"):
        out += [ablation.f5(data["ablation"]), ablation.f6(data["ablation"])]
    out.append(ck.f2(data["f2"][0], data["f2"][1]))
    hz = {int(h): v for h, v in data["hz"].items()}
    out.append(ck.f14(hz))
    if 100 in hz and 100_000 in hz:
        out.append(ck.f15(hz[100], hz[100_000]))
    by_ablation = ck.f24(data["background"]["udp"]["imtcp-bg"], data["nocap"])
    if not data.get("control"):
        out.append(by_ablation)
    for kind, runs in data.get("control", {}).items():
        judged = kind == "udp"  # S9's run; the TCP cross traffic's beside, not counted
        c24 = control.f24(runs, kind.upper(), f"by ablation (`imtcp_bg.cap = false`): {by_ablation.measured}" if judged else "", judged=judged)
        c25 = control.f25(runs, kind.upper(), judged=judged)
        for c in (c24, c25, control.f26(runs, c24, c25, kind.upper(), judged=judged)):
            c.values = {**c.values, "block": "C"}
            out.append(c)
    for kind in data["background"]:
        bg, alone, k = data["background"][kind], data["alone"][kind], kind.upper()
        c28 = ck.f28(bg, alone, k)
        out += [ck.f27(bg, k), c28, ck.f29(c28, k), ck.f30(bg, alone, k), ck.f31(bg, alone, k)]
    out += judge_readings(data)
    out += judge_ticks(data, {c.figure: c.status for c in out if c.paper})
    for q, m in data.get("map", {}).items():
        label = f"UDP, buffer {q} pkts"
        c28 = ck.f28(m["background"], m["alone"], label)
        mapped = [ck.f21(m["accuracy"], label, RULES[0], judged=False), ck.f7(m["accuracy"], STEPS_S, ACC_END_S, label, RULES[0], judged=False),
                  ck.f27(m["background"], label), c28, ck.f30(m["background"], m["alone"], label), ck.f31(m["background"], m["alone"], label)]
        for c in mapped:
            c.paper = False
            c.values = {**c.values, "map_buffer": q}
        out += mapped
    out += hz_map.f18(data.get("hz_map", {}))
    for kind, off in data.get("rule_off", {}).items():
        out.append(beyond.f10(data["background"][kind]["imtcp-bg"], off, kind.upper()))
    out += beyond.latecomer(data.get("latecomer", {}))
    for q, by_cc in data.get("moving", {}).items():
        ccs, alone = {c: by_cc[c] for c in CCS}, by_cc["alone"]
        out += [moving.refind(ccs["imtcp-bg"], int(q)), moving.background(ccs, alone, int(q))]
        if "imtcp-bg/stage" in by_cc:
            out += [moving.refind(by_cc["imtcp-bg/stage"], int(q), "stage"),
                    moving.background({**ccs, "imtcp-bg": by_cc["imtcp-bg/stage"]}, alone, int(q), "stage")]
    for kind, runs in data.get("delayed_acks", {}).items():
        out.append(beyond.delayed_acks(runs, data["accuracy"][f"{kind}/{RULES[0]}"], kind.upper()))
    for kind, runs in data.get("bg_delayed_acks", {}).items():
        out.append(beyond.bg_delayed_acks(runs["rule"], data["background"][kind]["imtcp-bg"], data["alone"][kind], kind.upper(), runs["rule_off"]))
    return out


def judge_readings(data: dict[str, Any]) -> list[Check]:
    """Block D's F27, F30, F31 again with ImTCP-bg's RTT from the stage, TCP-LP on Linux 1 kHz
    hosts, and both (`READINGS`), on the same seeds as the shipped runs (not counted); and F24's
    binding half with the stage's RTT where its runs without the cap exist. Each check carries
    `map_reading` and `shipped`, the shipped reading's verdict of the same check."""
    out: list[Check] = []
    for kind, runs in data.get("readings", {}).items():
        if "imtcp-bg/stage-nocap" in runs and "nocap" in data:
            c = ck.f24(runs["imtcp-bg/stage"], runs["imtcp-bg/stage-nocap"], kind.upper())
            c.paper = False
            c.values = {**c.values, "kind": kind.upper(), "map_reading": "bg-stage",
                        "shipped": ck.f24(data["background"][kind]["imtcp-bg"], data["nocap"], kind.upper()).status}
            out.append(c)
        bg, alone, k = data["background"][kind], data["alone"][kind], kind.upper()
        shipped = {"F27": ck.f27(bg, k), "F30": ck.f30(bg, alone, k), "F31": ck.f31(bg, alone, k)}
        for name, swap in READINGS.items():
            mapped = {**bg, **{c: runs[key] for c, key in swap.items()}}
            for c in (ck.f27(mapped, k), ck.f30(mapped, alone, k), ck.f31(mapped, alone, k)):
                c.paper = False
                c.values = {**c.values, "kind": k, "map_reading": name, "shipped": shipped[c.values["id"]].status}
                out.append(c)
    return out


def judge_ticks(data: dict[str, Any], shipped: dict[str, str]) -> list[Check]:
    """F7, F21, F27–F31 again with the Dummynet host's tick (`data["tick"]`), the same seeds and
    criteria (not counted). Each check carries `map_tick` and `shipped`, the judged verdict of
    the same check with the exact release (`shipped`, by figure)."""
    out: list[Check] = []
    for tick, entry in data.get("tick", {}).items():
        for kind in ("udp", "tcp"):
            k = kind.upper()
            acc, bg, alone = entry["accuracy"][kind], entry["background"][kind], entry["alone"][kind]
            c28 = ck.f28(bg, alone, k)
            for c in (ck.f7(acc, STEPS_S, ACC_END_S, k, RULES[0], judged=False), ck.f21(acc, k, RULES[0], judged=False), ck.f27(bg, k), c28,
                      ck.f29(c28, k), ck.f30(bg, alone, k), ck.f31(bg, alone, k)):
                c.paper = False
                c.values = {**c.values, "kind": k, "map_tick": tick, "shipped": shipped.get(c.figure, "")}
                out.append(c)
    return out


def reproduce(out: str | Path, quick: bool = False, progress: Callable[[str], None] = lambda _: None, *,
              workers: int | None = None, cluster: Any = None) -> list[Check]:
    """Run study 003 and write figures, results.json and report.md into `out`; returns the checks."""
    target = check_out(out)
    data = experiment(Plan.make(quick), progress, out=target, workers=workers, cluster=cluster)
    checks = judge(data)
    return publish(target, lambda directory: write_report(data, checks, directory))
