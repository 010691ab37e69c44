#!/usr/bin/env python3
"""The ns-3 side of the tcplab / ns-3 comparison (benches/ns3/README.md).

Run with the interpreter of the ns-3 virtualenv that `benches/ns3/setup.sh` creates:

    benches/ns3/.venv/bin/python benches/ns3/ns3_scenarios.py S2
    benches/ns3/.venv/bin/python benches/ns3/ns3_scenarios.py S3-10 --duration 2s

A scenario is read from the *tcplab* TOML file of the same name in `tcplab_scenarios/` (or any
path given instead of a name) and translated into an ns-3 simulation, so the two simulators
can never disagree about a rate, a delay, a buffer or a TCP setting: there is one description.
The translator accepts the subset of the tcplab format these scenarios use (hosts, switches,
point-to-point links, TCP flows, `[defaults.tcp]`) and refuses everything else, including TCP
settings that ns-3 cannot express or that differ from what ns-3 does.

Prints one JSON object on stdout: per-flow goodput (bytes received by the PacketSink divided
by the simulated duration) and retransmitted data segments (counted by a callback on
`TcpSocketBase`'s "Retransmission" trace source), bottleneck drops, and the wall time of
`Simulator::Run` alone (start-up of Python, cppyy and the topology are reported apart).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENARIO_DIR = HERE / "tcplab_scenarios"
SCENARIOS = {
    "S1-100": "s1-100.toml",
    "S1-100-offset": "s1-100-offset.toml",
    "S1-1000": "s1-1000.toml",
    "S2": "s2.toml",
    "S3-10": "s3-10.toml",
    "S3-100": "s3-100.toml",
    "M-newreno-8": "m-newreno-8.toml",
    "M-newreno-32": "m-newreno-32.toml",
    "M-cubic-8": "m-cubic-8.toml",
    "M-cubic-32": "m-cubic-32.toml",
    "M-dctcp-8": "m-dctcp-8.toml",
    "M-dctcp-32": "m-dctcp-32.toml",
    "M-bbr-4": "m-bbr-4.toml",
    "M-bbr-4-deep": "m-bbr-4-deep.toml",
}

# --- units (the tcplab syntax) -------------------------------------------------------------

_TIME = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_RATE = {"bps": 1, "kbps": 10**3, "Mbps": 10**6, "Gbps": 10**9, "Tbps": 10**12}
_SIZE = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
_QTY = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]+)\s*$")


def _split(value, table, what):
    m = _QTY.match(str(value))
    if not m or m.group(2) not in table:
        raise ValueError(f"bad {what}: {value!r}")
    return float(m.group(1)), table[m.group(2)]


def time_ns(value) -> int:
    """A tcplab duration ("150ms", "9980us", "10s") in integer nanoseconds."""
    x, unit = _split(value, _TIME, "time")
    return round(x * unit * 1e9)


def rate_bps(value) -> int:
    x, unit = _split(value, _RATE, "rate")
    return round(x * unit)


def size_bytes(value) -> int:
    if isinstance(value, int):
        return value
    x, unit = _split(value, _SIZE, "size")
    return round(x * unit)


def queue_size(value) -> str:
    """A tcplab queue limit as an ns-3 QueueSize string ("100p" or "64000B")."""
    s = str(value).strip()
    if s.endswith("pkts"):
        return f"{int(s[:-4])}p"
    if s == "unlimited":
        raise ValueError("unlimited queues are not translated")
    return f"{size_bytes(s)}B"


# --- the scenario, checked and resolved ----------------------------------------------------

# tcplab TCP keys with no ns-3 attribute: the value the scenario gives (or, where it gives none,
# tcplab's default: the first element) must be what ns-3 does. A value that depends on the
# congestion control is a dict by `cc`; a tuple lists the values accepted.
_FIXED_BEHAVIOUR = {
    "rtt_estimator": ("rfc6298", "rfc6298", "ns-3 uses RttMeanDeviation (RFC 6298 gains)"),
    "rto_max": ("60s", "60s", "ns-3 caps the backed-off RTO at 60 s"),
    "rto_backoff": ("exponential", "exponential", "ns-3 doubles the RTO"),
    "rto_backoff_reset": ("rtt-sample", "new-ack",
                          "ns-3's TcpSocketBase::NewAck recomputes the RTO from the estimator on every ACK "
                          "of new data, which forgets the backoff without an RTT sample"),
    "recovery": ("auto", ("auto", "sack"), "ns-3 uses its SACK scoreboard; see --recovery"),
    "abc_limit": (1, {"newreno": 1, "bic": 1, "dctcp": 2, "cubic": (1, 2), "bbr": (1, 2)},
                  "slow start per ACK: ns-3 TcpNewReno adds one segment; TcpLinuxReno (under TcpDctcp) "
                  "every segment the ACK covers, 2 with DelAckCount 2; tcplab's cubic and bbr ignore abc_limit"),
    "profile": ("rfc", "rfc", "the linux-2.6.16 profile brings behaviour ns-3 does not have"),
    "quickack": (0, 1, "ns-3 acknowledges the first data segment at once (TcpSocketBase::ProcessSynRcvd), later ones by DelAckCount"),
    "rcv_window_growth": (False, False, "ns-3 advertises its whole receive buffer from the start"),
    "cwnd_validation": (True, {"newreno": False, "bic": False, "dctcp": False, "cubic": True, "bbr": (True, False)},
                        "ns-3 TcpNewReno, TcpBic and TcpDctcp grow cwnd on every ACK; TcpCubic only while "
                        "m_isCwndLimited; BBR sets cwnd itself on every ACK in both (no effect)"),
    "cwnd_limited": ("flight", "flight", "ns-3 sets m_isCwndLimited = cwnd < BytesInFlight + MSS after each send"),
    "ecn": (None, {"newreno": False, "bic": False, "cubic": False, "dctcp": True, "bbr": False},
            "ECN is translated for DCTCP only (TcpDctcp turns it on; the others keep UseEcn = Off)"),
}
# BIC parameters: tcplab's defaults (Linux 2.6.16's module parameters), each mapped onto ns-3's
# TcpBic; `hz` only paces how often Linux recomputes `cnt` (ns-3 recomputes on every ACK).
# They are the keys of the `[defaults.tcp.bic]` table.
BIC_DEFAULTS = {"beta": 819, "max_increment": 16, "low_window": 14,
                "smooth_part": 20, "fast_convergence": True, "initial_ssthresh": 100}
# CUBIC parameters: tcplab's defaults (modern Linux tcp_cubic.c's module parameters), each mapped
# onto ns-3's TcpCubic in run(); the keys of the `[defaults.tcp.cubic]` table.
CUBIC_DEFAULTS = {"beta": 717, "bic_scale": 41, "fast_convergence": True, "tcp_friendliness": True,
                  "hystart": True, "hystart_low_window": 16, "hystart_ack_delta": "2ms"}
# DCTCP parameters: tcplab's defaults (Linux tcp_dctcp.c's), mapped onto ns-3's TcpDctcp.
DCTCP_DEFAULTS = {"shift_g": 4, "alpha_on_init": 1024}
# BBR parameters: tcplab's defaults (Linux tcp_bbr.c's constants), the keys of `[defaults.tcp.bbr]`.
# ns-3's TcpBbr has attributes for four of them (HighGain, BwWindowLength, RttWindowLength,
# ProbeRttDuration), mapped in run(); the others it hard-codes, and check() refuses any value but
# the one it hard-codes (BBR_NS3_FIXED). drain_gain: ns-3 uses 1/HighGain (0.3464), tcplab Linux's
# 88/256 (0.3438), which its 1/256 steps cannot make 0.3464; accepted, and documented (README.md).
BBR_DEFAULTS = {"high_gain": 2.885, "drain_gain": 1 / 2.885, "cwnd_gain": 2.0, "bw_rtts": 10,
                "min_rtt_win": "10s", "probe_rtt_time": "200ms", "cwnd_min_target": 4,
                "full_bw_thresh": 1.25, "full_bw_cnt": 3, "pacing_margin_percent": 1}
BBR_NS3_FIXED = {
    "drain_gain": (lambda v: int(v * 256) == int(BBR_DEFAULTS["drain_gain"] * 256),
                   "ns-3 drains at 1/HighGain; only tcplab's default (88/256) is accepted"),
    "cwnd_gain": (lambda v: float(v) == 2.0, "ns-3 TcpBbr::EnterProbeBW hard-codes m_cWndGain = 2"),
    "cwnd_min_target": (lambda v: int(v) == 4, "ns-3 TcpBbr hard-codes m_minPipeCwnd = 4 segments"),
    "full_bw_thresh": (lambda v: float(v) == 1.25, "ns-3 TcpBbr::CheckFullPipe hard-codes 1.25"),
    "full_bw_cnt": (lambda v: int(v) == 3, "ns-3 TcpBbr::CheckFullPipe hard-codes 3 rounds"),
    "pacing_margin_percent": (lambda v: int(v) == 1, "ns-3 TcpBbr hard-codes m_pacingMargin = 0.01"),
}


# --bbr-stream per-flow: flow i's TcpBbr draws from stream BBR_STREAM_BASE + i (ns-3's default
# Stream attribute, 4, for every flow with --bbr-stream same).
BBR_STREAM_BASE = 4


def bbr_unit(g: float) -> int:
    """A BBR gain as tcplab keeps it: Linux's 1/256, rounded down, with 2.885 -> 739 (Linux's
    bbr_high_gain = 2885 * 256 / 1000 + 1; tcplab's bbr.rs `to_unit`)."""
    return 739 if g == 2.885 else int(g * 256)
# tcplab's HyStart delay threshold is Linux's clamp(delay_min/8, 4 ms, 16 ms); ns-3's is
# clamp(delay_min, HyStartDelayMin, HyStartDelayMax). Both are 4 ms (ns-3 with Min = Max = 4 ms)
# while delay_min stays below 32 ms, which check() makes sure of.
HYSTART_DELAY_S = 0.004
HYSTART_DMIN_LIMIT_S = 0.032
_TCP_KEYS = {
    "cc", "mss", "sack", "timestamps", "window_scaling", "nagle", "sndbuf", "rcvbuf",
    "initial_cwnd", "initial_cwnd_rule", "initial_ssthresh", "delack_segments",
    "delack_timeout", "rto_min", "rto_granularity", "limited_transmit", "dupthresh",
    "rto_initial", "hz", "bic", "cubic", "dctcp", "bbr", *_FIXED_BEHAVIOUR,
}
CC_TYPES = {"newreno": "ns3::TcpNewReno", "bic": "ns3::TcpBic", "cubic": "ns3::TcpCubic",
            "dctcp": "ns3::TcpDctcp", "bbr": "ns3::TcpBbr", "reno": None}
_CC_TABLES = {"bic": BIC_DEFAULTS, "cubic": CUBIC_DEFAULTS, "dctcp": DCTCP_DEFAULTS, "bbr": BBR_DEFAULTS}


def load(name_or_path: str) -> tuple[str, dict]:
    path = (SCENARIO_DIR / SCENARIOS[name_or_path]) if name_or_path in SCENARIOS else Path(name_or_path).resolve()
    with open(path, "rb") as f:
        return str(path), tomllib.load(f)


def check(sc: dict) -> dict:
    """Refuse what the translation does not cover; return the resolved TCP settings."""
    for key in sc:
        if key not in {"name", "description", "run", "defaults", "hosts", "switches", "links", "flows"}:
            raise ValueError(f"{key}: not translated to ns-3")
    tcp = dict(sc.get("defaults", {}).get("tcp", {}))
    for key in tcp:
        if key not in _TCP_KEYS:
            raise ValueError(f"defaults.tcp.{key}: not translated to ns-3")
    cc = tcp.get("cc", "newreno")
    if cc not in CC_TYPES or CC_TYPES[cc] is None:
        raise ValueError(f"defaults.tcp.cc = {tcp.get('cc')!r}: no ns-3 counterpart here")
    for table, known in _CC_TABLES.items():
        for key in tcp.get(table, {}):
            if key not in known:
                raise ValueError(f"defaults.tcp.{table}.{key}: not translated to ns-3")
        if table in tcp and table != cc:
            raise ValueError(f"[defaults.tcp.{table}] needs cc = \"{table}\"")
    for key, (ok, why) in BBR_NS3_FIXED.items():
        if key in tcp.get("bbr", {}) and not ok(tcp["bbr"][key]):
            raise ValueError(f"defaults.tcp.bbr.{key} = {tcp['bbr'][key]!r}: {why}")
    for key, (default, want, why) in _FIXED_BEHAVIOUR.items():
        if isinstance(want, dict):
            want = want[cc]
        value = tcp.get(key, default)
        if key == "ecn" and value is None:  # tcplab: on with dctcp, off otherwise
            value = cc == "dctcp"
        if key == "cwnd_limited" and not _fixed_value(tcp, "cwnd_validation", cc):
            continue  # without validation the rule is never asked
        ok = value in want if isinstance(want, tuple) else str(value) == str(want)
        if not ok:
            what = f"= {value!r}" if key in tcp else f"left out (tcplab's default, {value!r})"
            raise ValueError(f"defaults.tcp.{key} {what}: ns-3 cannot do that ({why}); "
                             f"with cc = {cc!r} write {key} = {want!r}")
    for i, fl in enumerate(sc["flows"]):
        if fl.get("kind", "tcp") != "tcp":
            raise ValueError(f"flows[{i}].kind: only tcp flows are translated")
        for key in fl:
            if key not in {"name", "kind", "src", "dst", "start", "count", "bulk"}:
                raise ValueError(f"flows[{i}].{key}: not translated to ns-3")
        for key in fl.get("bulk", {}):
            if key != "write_size":
                raise ValueError(f"flows[{i}].bulk.{key}: not translated to ns-3")
    for i, ln in enumerate(sc["links"]):
        for key in ln:
            if key not in {"between", "rate", "delay", "queue", "queue_a", "queue_b", "framing"}:
                raise ValueError(f"links[{i}].{key}: not translated to ns-3")
        if size_bytes(ln.get("framing", "0B")) != 2:
            raise ValueError(f"links[{i}].framing: must be \"2B\", the PPP header ns-3's "
                             "point-to-point device adds to every frame")
        for key in ("queue", "queue_a", "queue_b"):
            if key in ln:
                queue_spec(ln[key], f"links[{i}].{key}")
    queue_spec(sc.get("defaults", {}).get("queue", "1000pkts"), "defaults.queue")
    if sc.get("run", {}).get("stop", "duration") != "duration":
        raise ValueError("run.stop: only a fixed duration is translated")
    if cc == "cubic" and bool(tcp.get("cubic", {}).get("hystart", True)):
        bound = max(rtt_bound_s(sc, fl, int(tcp.get("mss", 1460)) + 40) for fl in sc["flows"])
        if bound >= HYSTART_DMIN_LIMIT_S:
            raise ValueError(f"cubic with HyStart: a flow's RTT may reach {bound * 1e3:.1f} ms; from 32 ms on, "
                             "tcplab's HyStart delay threshold (delay_min/8) has no ns-3 counterpart")
    return tcp


def _fixed_value(tcp: dict, key: str, cc: str):
    default = _FIXED_BEHAVIOUR[key][0]
    return tcp.get(key, default)


def queue_spec(value, where: str) -> dict:
    """A tcplab queue (a limit, or a table with `limit` and `ecn_threshold`) as
    {"limit": "<n>p" or "<n>B", "ecn_threshold": packets or None}; refuses what is not translated."""
    if not isinstance(value, dict):
        return {"limit": queue_size(value), "ecn_threshold": None}
    for key in value:
        if key not in {"limit", "ecn_threshold", "ecn_unmarkable"}:
            raise ValueError(f"{where}.{key}: not translated to ns-3")
    if value.get("ecn_unmarkable", "drop") != "drop":
        raise ValueError(f"{where}.ecn_unmarkable: ns-3's RedQueueDisc drops what it cannot mark (\"drop\")")
    limit = queue_size(value.get("limit", "1000pkts"))
    if "ecn_threshold" not in value:
        return {"limit": limit, "ecn_threshold": None}
    k = str(value["ecn_threshold"]).strip()
    if not (k.endswith("pkts") and limit.endswith("p")):
        raise ValueError(f"{where}: an ECN threshold is translated in packets only (limit and ecn_threshold)")
    k = int(k[:-4])
    n = int(limit[:-1])
    # RED's forced-mark test also needs more than one packet in its own queue (K - 1 > 1).
    if not 3 <= k <= n:
        raise ValueError(f"{where}.ecn_threshold: translated for 3 <= K <= limit only")
    return {"limit": limit, "ecn_threshold": k}


def _paths(sc: dict) -> dict:
    """Adjacency of the topology: node -> [(neighbour, link, forward?)]."""
    adj = {}
    for ln in sc["links"]:
        a, b = ln["between"]
        adj.setdefault(a, []).append((b, ln, True))
        adj.setdefault(b, []).append((a, ln, False))
    return adj


def rtt_bound_s(sc: dict, fl: dict, mtu: int) -> float:
    """An upper bound on any RTT sample of flow `fl`: propagation both ways, every queue on the
    forward path full of MTU-sized packets and every queue on the reverse path full of pure
    ACKs (60 bytes), with the link framing. The path is the fewest-hops one (ns-3's global
    routing; a dumbbell has one)."""
    adj = _paths(sc)
    prev = {fl["src"]: None}
    todo = [fl["src"]]
    while todo:
        n = todo.pop(0)
        for m, ln, fwd in adj.get(n, []):
            if m not in prev:
                prev[m] = (n, ln, fwd)
                todo.append(m)
    default_q = sc.get("defaults", {}).get("queue", "1000pkts")
    total, n = 0.0, fl["dst"]
    while prev.get(n):
        p, ln, fwd = prev[n]
        rate = rate_bps(ln["rate"])
        framing = size_bytes(ln.get("framing", "0B"))
        total += 2 * time_ns(ln.get("delay", "0s")) / 1e9
        for key, size in ((("queue_a" if fwd else "queue_b"), mtu), (("queue_b" if fwd else "queue_a"), 60)):
            q = queue_spec(ln.get(key, ln.get("queue", default_q)), key)["limit"]
            pkts = int(q[:-1]) if q.endswith("p") else int(q[:-1]) // size
            total += (pkts + 1) * (size + framing) * 8 / rate
        n = p
    return total


# --- ns-3 ------------------------------------------------------------------------------------

_CPP_HELPERS = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/applications-module.h"
#include "ns3/traffic-control-module.h"
#include <cstdio>
#include <vector>

namespace tcplab_bench {
using namespace ns3;

// --events FILE: one CSV line per event, "time_ns,flow,event,a,b,c" (README.md, "Tracing").
std::FILE* g_ev = nullptr;
std::vector<uint32_t> g_cwnd, g_ssth;  // last traced values, per flow
bool g_ev_cwnd = false;               // also every change of cwnd (--events-cwnd)
bool g_ev_pacing = false;             // also every change of the pacing rate (--events-pacing)
void Ev(int64_t flow, const char* what, int64_t a, int64_t b, int64_t c)
{
    if (g_ev) std::fprintf(g_ev, "%lld,%lld,%s,%lld,%lld,%lld\n", (long long)Simulator::Now().GetNanoSeconds(),
                           (long long)flow, what, (long long)a, (long long)b, (long long)c);
}
void OpenEvents(const std::string& path)
{
    g_ev = std::fopen(path.c_str(), "w");
    NS_ABORT_MSG_IF(!g_ev, "cannot write " << path);
    std::fprintf(g_ev, "time_ns,flow,event,a,b,c\n");
}
void CloseEvents() { if (g_ev) std::fclose(g_ev); g_ev = nullptr; }
void OnCwnd(uint64_t i, uint32_t, uint32_t now)
{
    g_cwnd[i] = now;
    if (g_ev_cwnd) Ev(i, "cwnd", now, g_ssth[i], 0);
}
void OnSsth(uint64_t i, uint32_t, uint32_t now) { g_ssth[i] = now; Ev(i, "ssthresh", now, g_cwnd[i], 0); }

std::vector<uint64_t> g_retx;      // retransmitted data segments, per flow
std::vector<uint64_t> g_recovery;  // entries into CA_RECOVERY (fast retransmits), per flow
std::vector<uint64_t> g_loss;      // entries into CA_LOSS (RTO episodes), per flow
std::vector<uint64_t> g_cwr;       // entries into CA_CWR (window cuts for ECN-Echo), per flow
std::vector<uint64_t> g_rto;       // retransmission timeouts, each one (the RTO doubled), per flow
uint64_t g_bottleneck_drops = 0;
uint64_t g_bottleneck_marks = 0;
// The bottleneck device queue's occupancy (packets waiting, the one being serialized not
// counted, as tcplab counts), integrated over time for its time-weighted mean, and its maximum.
double g_q_area = 0;  // packet·ns
int64_t g_q_since = 0;
uint32_t g_q_len = 0, g_q_max = 0;
void OnQlen(uint32_t, uint32_t now)
{
    int64_t t = Simulator::Now().GetNanoSeconds();
    g_q_area += double(g_q_len) * double(t - g_q_since);
    g_q_since = t;
    g_q_len = now;
    if (now > g_q_max) g_q_max = now;
}
double QueueMean(int64_t end_ns)
{
    double area = g_q_area + double(g_q_len) * double(end_ns - g_q_since);
    return end_ns > 0 ? area / double(end_ns) : 0.0;
}
// TcpBbr draws PROBE_BW's first phase from a UniformRandomVariable on its `Stream` attribute
// (default 4 for every socket, so every flow draws the same phases). g_bbr_stream >= 0 gives
// flow i the stream g_bbr_stream + i instead (independent draws, as tcplab and Linux hosts).
int64_t g_bbr_stream = -1;
// A diagnostic variant's own hook on each sender socket (HookLinuxRecovery below), or none.
bool (*g_hook_extra)(Ptr<Socket>) = nullptr;
// BBR's pacing rate, per flow, for --events (event "pacing": a = bit/s)
void OnPacing(uint64_t i, DataRate, DataRate now) { Ev(i, "pacing", (int64_t)now.GetBitRate(), g_cwnd[i], 0); }

void OnRetx(uint64_t i, Ptr<const Packet>, const TcpHeader& h, const Address&, const Address&,
            Ptr<const TcpSocketBase>)
{
    g_retx[i]++;
    Ev(i, "retransmit", h.GetSequenceNumber().GetValue(), g_cwnd[i], 0);
}
void OnCongState(uint64_t i, TcpSocketState::TcpCongState_t before, TcpSocketState::TcpCongState_t now)
{
    Ev(i, "state", now, g_cwnd[i], g_ssth[i]);
    if (now == TcpSocketState::CA_RECOVERY) g_recovery[i]++;
    if (now == TcpSocketState::CA_LOSS) g_loss[i]++;
    if (now == TcpSocketState::CA_CWR) g_cwr[i]++;
}
// TcpSocketBase::ReTxTimeout is the only place that doubles m_rto (RFC 6298 5.5, capped at
// 60 s); an RTT sample sets it to max(SRTT + max(G, 4 RTTVAR), MinRto), which never doubles it
// from one value to the next with MinRto = 1 s and RTTs of milliseconds. A TracedValue fires
// on change only, so a timeout at the 60 s cap would be missed.
void OnRto(uint64_t i, Time before, Time now)
{
    if (now == before + before || (now == Seconds(60) && now > before))
    {
        g_rto[i]++;
        Ev(i, "timeout", now.GetNanoSeconds(), g_cwnd[i], g_ssth[i]);
    }
}
void OnDrop(Ptr<const Packet>) { g_bottleneck_drops++; Ev(-1, "drop", 0, 0, 0); }
void OnQdDrop(Ptr<const QueueDiscItem>) { g_bottleneck_drops++; Ev(-1, "drop", 0, 0, 0); }
void OnQdMark(Ptr<const QueueDiscItem>, const char*) { g_bottleneck_marks++; Ev(-1, "mark", 0, 0, 0); }

// The BulkSend sockets exist once the applications have started: hook them then.
void HookSockets(ApplicationContainer apps)
{
    for (uint32_t i = 0; i < apps.GetN(); i++)
    {
        Ptr<Socket> s = DynamicCast<BulkSendApplication>(apps.Get(i))->GetSocket();
        NS_ABORT_MSG_IF(!s, "BulkSend socket not created yet");
        bool ok = s->TraceConnectWithoutContext("Retransmission", MakeBoundCallback(&OnRetx, (uint64_t)i));
        ok = ok && s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, (uint64_t)i));
        ok = ok && s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&OnRto, (uint64_t)i));
        if (g_ev)
        {
            ok = ok && s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, (uint64_t)i));
            ok = ok && s->TraceConnectWithoutContext("SlowStartThreshold", MakeBoundCallback(&OnSsth, (uint64_t)i));
            if (g_ev_pacing)
                ok = ok && s->TraceConnectWithoutContext("PacingRate", MakeBoundCallback(&OnPacing, (uint64_t)i));
        }
        if (g_hook_extra) ok = ok && g_hook_extra(s);
        NS_ABORT_MSG_IF(!ok, "cannot hook the TCP socket traces");
        if (g_bbr_stream >= 0)
        {
            PointerValue cc;
            s->GetAttribute("CongestionOps", cc);
            Ptr<TcpBbr> bbr = cc.Get<TcpBbr>();
            NS_ABORT_MSG_IF(!bbr, "--bbr-stream: the socket's congestion control is not TcpBbr");
            bbr->SetAttribute("Stream", UintegerValue(g_bbr_stream + i));
        }
    }
}
void ScheduleHook(ApplicationContainer apps, uint64_t at_ns)
{
    g_retx.assign(apps.GetN(), 0);
    g_recovery.assign(apps.GetN(), 0);
    g_loss.assign(apps.GetN(), 0);
    g_cwr.assign(apps.GetN(), 0);
    g_rto.assign(apps.GetN(), 0);
    g_cwnd.assign(apps.GetN(), 0);
    g_ssth.assign(apps.GetN(), 0);
    Simulator::Schedule(NanoSeconds(at_ns), &HookSockets, apps);
}
// Drops at the bottleneck's forward egress: its device queue, the traffic-control layer
// (which drops when the device queue is stopped because it is full and no queue disc is
// installed), and the queue disc when there is one (an ECN-marking RED: its drops and marks).
void HookBottleneck(Ptr<NetDevice> dev)
{
    Ptr<PointToPointNetDevice> p2p = DynamicCast<PointToPointNetDevice>(dev);
    bool ok = p2p->GetQueue()->TraceConnectWithoutContext("Drop", MakeCallback(&OnDrop));
    Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
    ok = ok && tc->TraceConnectWithoutContext("TcDrop", MakeCallback(&OnDrop));
    ok = ok && p2p->GetQueue()->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&OnQlen));
    Ptr<QueueDisc> qd = tc->GetRootQueueDiscOnDevice(dev);
    if (qd)
    {
        ok = ok && qd->TraceConnectWithoutContext("Drop", MakeCallback(&OnQdDrop));
        ok = ok && qd->TraceConnectWithoutContext("Mark", MakeCallback(&OnQdMark));
    }
    NS_ABORT_MSG_IF(!ok, "cannot hook the bottleneck drop traces");
}
uint64_t SinkRx(Ptr<Application> a) { return DynamicCast<PacketSink>(a)->GetTotalRx(); }

// Diagnostic only (--ssthresh flightsize): TcpNewReno halving FlightSize = SND.MAX - SND.UNA
// (RFC 5681 eq. 4, RFC 6675 step 4.2, tcplab) instead of the BytesInFlight ns-3 passes it (with
// SACK, RFC 6675's pipe, which leaves out SACKed and lost segments).
class TcpNewRenoFlightSize : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpNewRenoFlightSize")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpNewRenoFlightSize>();
        return tid;
    }
    TcpNewRenoFlightSize() : TcpNewReno() {}
    TcpNewRenoFlightSize(const TcpNewRenoFlightSize& sock) : TcpNewReno(sock) {}
    std::string GetName() const override { return "TcpNewRenoFlightSize"; }
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t) override
    {
        uint32_t flight = static_cast<uint32_t>(tcb->m_highTxMark.Get() - tcb->m_lastAckedSeq);
        return std::max(2 * tcb->m_segmentSize, flight / 2);
    }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpNewRenoFlightSize>(this); }
};
// Diagnostic only (--variant dctcp-per-ack): TcpDctcp growing in congestion avoidance by
// MSS*MSS/cwnd per ACK, as RFC 5681 and tcplab's Reno rules (under its dctcp), instead of
// TcpLinuxReno's one segment per cwnd segments acknowledged (Linux tcp_cong_avoid_ai), which
// with delayed ACKs grows twice as fast.
class TcpDctcpPerAck : public TcpDctcp
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpDctcpPerAck")
                                .SetParent<TcpDctcp>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpDctcpPerAck>();
        return tid;
    }
    TcpDctcpPerAck() : TcpDctcp() {}
    TcpDctcpPerAck(const TcpDctcpPerAck& sock) : TcpDctcp(sock) {}
    std::string GetName() const override { return "TcpDctcpPerAck"; }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpDctcpPerAck>(this); }

  protected:
    void CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (segmentsAcked > 0)
        {
            double adder = static_cast<double>(tcb->m_segmentSize * tcb->m_segmentSize) / tcb->m_cWnd.Get();
            tcb->m_cWnd += static_cast<uint32_t>(std::max(1.0, adder));
        }
    }
};
// tcplab's ECN-threshold FIFO as a queue disc: an arrival that finds `Limit` packets waiting is
// dropped; one that finds `Threshold` waiting is marked CE, or dropped if it is not
// ECN-capable. "Waiting" counts this queue disc's packets and the device queue's, not the one
// being serialized, as tcplab does. (A RedQueueDisc sees its own queue only, so it is one
// short while the device queue holds a packet, and not when a departure and an arrival fall on
// the same nanosecond: the device queue is refilled by an event scheduled for "now", after the
// arrival. See --ecn-queue red.)
class EcnThresholdQueueDisc : public QueueDisc
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("ns3::TcplabEcnThresholdQueueDisc")
                .SetParent<QueueDisc>()
                .SetGroupName("TrafficControl")
                .AddConstructor<EcnThresholdQueueDisc>()
                .AddAttribute("Limit", "packets waiting at which an arrival is dropped", UintegerValue(100),
                              MakeUintegerAccessor(&EcnThresholdQueueDisc::m_limit), MakeUintegerChecker<uint32_t>())
                .AddAttribute("Threshold", "packets waiting at which an arrival is marked CE", UintegerValue(20),
                              MakeUintegerAccessor(&EcnThresholdQueueDisc::m_k), MakeUintegerChecker<uint32_t>());
        return tid;
    }
    EcnThresholdQueueDisc() : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE) {}
    void SetDeviceQueue(Ptr<Queue<Packet>> q) { m_devq = q; }

  private:
    uint32_t Waiting() { return GetInternalQueue(0)->GetNPackets() + (m_devq ? m_devq->GetNPackets() : 0); }
    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        uint32_t waiting = Waiting();
        if (waiting >= m_limit)
        {
            DropBeforeEnqueue(item, "limit");
            return false;
        }
        if (waiting >= m_k && !Mark(item, "threshold"))
        {
            DropBeforeEnqueue(item, "unmarkable");
            return false;
        }
        return GetInternalQueue(0)->Enqueue(item);
    }
    Ptr<QueueDiscItem> DoDequeue() override { return GetInternalQueue(0)->Dequeue(); }
    Ptr<const QueueDiscItem> DoPeek() override { return GetInternalQueue(0)->Peek(); }
    bool CheckConfig() override
    {
        if (GetNInternalQueues() == 0)
        {
            SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, m_limit));
            AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
                "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, m_limit))));
        }
        return GetNInternalQueues() == 1 && GetNQueueDiscClasses() == 0 && GetNPacketFilters() == 0;
    }
    void InitializeParams() override {}
    uint32_t m_limit;
    uint32_t m_k;
    Ptr<Queue<Packet>> m_devq;
};
std::string RegisterEcnQueueDisc() { return EcnThresholdQueueDisc::GetTypeId().GetName(); }
void AttachDeviceQueue(Ptr<NetDevice> dev)
{
    Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
    Ptr<EcnThresholdQueueDisc> qd = DynamicCast<EcnThresholdQueueDisc>(tc->GetRootQueueDiscOnDevice(dev));
    NS_ABORT_MSG_IF(!qd, "no ECN threshold queue disc on the device");
    qd->SetDeviceQueue(DynamicCast<PointToPointNetDevice>(dev)->GetQueue());
}

// Diagnostic only (--variant bbr-loss-log): TcpBbr as it is, counting the bytes its rate samples
// report as lost (TcpRateSample::m_bytesLoss, which TcpSocketBase::ReceivedAck computes as the
// absolute change of the send buffer's lost count over the ACK), in all and in CA_RECOVERY,
// where TcpBbr::ModulateCwndForRecovery takes them off cwnd.
double g_bbr_loss_bytes = 0, g_bbr_loss_bytes_recovery = 0;
class TcpBbrLossLog : public TcpBbr
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpBbrLossLog")
                                .SetParent<TcpBbr>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpBbrLossLog>();
        return tid;
    }
    TcpBbrLossLog() : TcpBbr() {}
    TcpBbrLossLog(const TcpBbrLossLog& sock) : TcpBbr(sock) {}
    std::string GetName() const override { return "TcpBbrLossLog"; }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpBbrLossLog>(this); }
    void CongControl(Ptr<TcpSocketState> tcb, const TcpRateOps::TcpRateConnection& rc,
                     const TcpRateOps::TcpRateSample& rs) override
    {
        g_bbr_loss_bytes += rs.m_bytesLoss;
        if (tcb->m_congState == TcpSocketState::CA_RECOVERY) g_bbr_loss_bytes_recovery += rs.m_bytesLoss;
        TcpBbr::CongControl(tcb, rc, rs);
    }
};

// Diagnostic only (--variant bbr-linux-recovery): TcpBbr with three of its loss rules made
// Linux's (tcp_bbr.c, bbr_set_cwnd_to_recover_or_restore), to test how much of a difference
// they make: (1) an ACK takes off cwnd only the bytes newly deemed lost (the send buffer's lost
// count grew over the ACK; Linux: rs->losses = tp->lost - prior_lost, a counter that never
// falls), where ns-3 passes the absolute change, so that the ACK of a retransmission counts as
// a new loss; (2) leaving recovery restores cwnd to at least the one saved on entering it,
// which TcpSocketBase overwrites with ssthresh (BBR's: one BDP at DRAIN's entry) right after
// TcpBbr::RestoreCwnd; (3) so does leaving a timeout's repair (CA_LOSS), where TcpBbr restores
// nothing. The cwnd saved is tcplab's (bbr.rs save_cwnd): the cwnd on entering recovery or a
// timeout from Open or Disorder, else the larger of it and the one saved before.
class TcpBbrLinuxRecovery : public TcpBbr
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpBbrLinuxRecovery")
                                .SetParent<TcpBbr>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpBbrLinuxRecovery>();
        return tid;
    }
    TcpBbrLinuxRecovery() : TcpBbr() {}
    TcpBbrLinuxRecovery(const TcpBbrLinuxRecovery& sock) : TcpBbr(sock) {}
    std::string GetName() const override { return "TcpBbrLinuxRecovery"; }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpBbrLinuxRecovery>(this); }
    void CongestionStateSet(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCongState_t newState) override
    {
        if (newState == TcpSocketState::CA_RECOVERY || newState == TcpSocketState::CA_LOSS)
        {
            if (tcb->m_congState < TcpSocketState::CA_RECOVERY && GetBbrState() != 3)
                m_saved = tcb->m_cWnd;
            else
                m_saved = std::max(m_saved, tcb->m_cWnd.Get());
        }
        TcpBbr::CongestionStateSet(tcb, newState);
    }
    void CongControl(Ptr<TcpSocketState> tcb, const TcpRateOps::TcpRateConnection& rc,
                     const TcpRateOps::TcpRateSample& rs) override
    {
        TcpRateOps::TcpRateSample r = rs;
        if (m_txb)
        {
            uint32_t now = m_txb->GetLost();
            r.m_bytesLoss = now > m_lostAtAck ? now - m_lostAtAck : 0;
        }
        if (m_prev >= TcpSocketState::CA_RECOVERY && tcb->m_congState < TcpSocketState::CA_RECOVERY)
            tcb->m_cWnd = std::max(tcb->m_cWnd.Get(), m_saved);
        m_prev = tcb->m_congState;
        TcpBbr::CongControl(tcb, rc, r);
    }
    Ptr<TcpTxBuffer> m_txb;   // the socket's send buffer (set by HookSockets)
    uint32_t m_lostAtAck = 0; // its lost bytes when the segment being processed arrived
    uint32_t m_saved = 0;
    TcpSocketState::TcpCongState_t m_prev = TcpSocketState::CA_OPEN;
};
void OnRxForBbr(Ptr<TcpBbrLinuxRecovery> b, Ptr<const Packet>, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    b->m_lostAtAck = b->m_txb->GetLost();
}
bool HookLinuxRecovery(Ptr<Socket> s)
{
    PointerValue cc;
    s->GetAttribute("CongestionOps", cc);
    Ptr<TcpBbrLinuxRecovery> b = cc.Get<TcpBbrLinuxRecovery>();
    if (!b) return true;
    PointerValue tb;
    s->GetAttribute("TxBuffer", tb);
    b->m_txb = tb.Get<TcpTxBuffer>();
    return s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRxForBbr, b));
}

std::string RegisterVariant(const std::string& name)
{
    if (name == "bbr-linux-recovery")
    {
        g_hook_extra = &HookLinuxRecovery;
        return TcpBbrLinuxRecovery::GetTypeId().GetName();
    }
    if (name == "bbr-loss-log") return TcpBbrLossLog::GetTypeId().GetName();
    if (name == "newreno-flightsize") return TcpNewRenoFlightSize::GetTypeId().GetName();
    if (name == "dctcp-per-ack") return TcpDctcpPerAck::GetTypeId().GetName();
    NS_ABORT_MSG("unknown variant " << name);
    return "";
}
}
"""


def _import_ns3():
    """`from ns import ns`, shielded from its library search.

    The bindings look for ns-3 libraries by globbing `**/*.so*` recursively in the current
    directory and in every PATH and LD_LIBRARY_PATH entry: from the repository root that walks
    `target/` and `.venv/` (seconds), and another ns-3 found that way aborts the import. So
    import from an empty directory, with PATH cut down to this interpreter's bin directory and
    /usr/bin:/bin, and LD_LIBRARY_PATH unset.
    cppyy then still parses the ns-3 headers: about 10 s on this machine.
    """
    import tempfile

    cwd = os.getcwd()
    saved = {k: os.environ.get(k) for k in ("PATH", "LD_LIBRARY_PATH")}
    with tempfile.TemporaryDirectory(prefix="ns3-import-") as empty:
        os.chdir(empty)
        os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"])
        os.environ.pop("LD_LIBRARY_PATH", None)  # read by the search only, not by the loader now
        try:
            import cppyy
            from ns import ns
        finally:
            os.chdir(cwd)
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    return ns, cppyy


def run(path: str, sc: dict, tcp: dict, duration_ns: int, recovery: str, pcap: str | None = None,
        events: str | None = None, variant: str = "none", events_cwnd: bool = False,
        ecn_queue: str = "threshold", conn_timeout: str = "ns3", bbr_stream: str = "per-flow",
        events_pacing: bool = False) -> dict:
    t_import = time.perf_counter()
    ns, cppyy = _import_ns3()

    cppyy.cppdef('#include "ns3/point-to-point-module.h"\n' + _CPP_HELPERS)
    helpers = cppyy.gbl.tcplab_bench
    if events:
        helpers.OpenEvents(str(Path(events).resolve()))
        helpers.g_ev_cwnd = events_cwnd
        helpers.g_ev_pacing = events_pacing
    t_setup = time.perf_counter()

    # -- TCP: every value comes from the scenario; absent keys take tcplab's defaults --------
    cc = tcp.get("cc", "newreno")
    mss = int(tcp.get("mss", 1460))
    timestamps = bool(tcp.get("timestamps", False))
    seg = mss - 12 if timestamps else mss  # ns-3 SegmentSize is payload; tcplab's mss counts options
    D = ns.Config.SetDefault
    cc_type = CC_TYPES[cc]
    if variant != "none":  # a diagnostic, not the translation: see --variant
        if not variant.startswith(cc + "-"):
            raise ValueError(f"--variant {variant} is for cc = {variant.split('-')[0]!r} only")
        cc_type = str(helpers.RegisterVariant(variant))
    D("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName(cc_type)))
    rec = {"classic": "ns3::TcpClassicRecovery", "prr": "ns3::TcpPrrRecovery"}[recovery]
    D("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TypeId.LookupByName(rec)))
    D("ns3::TcpSocket::SegmentSize", ns.UintegerValue(seg))
    D("ns3::TcpSocket::SndBufSize", ns.UintegerValue(size_bytes(tcp.get("sndbuf", "4MB"))))
    D("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(size_bytes(tcp.get("rcvbuf", "4MB"))))
    icw = int(tcp.get("initial_cwnd", 0))
    if icw == 0:  # tcplab's MSS-based rules, which ns-3 does not have: spell them out
        big = 1460 if tcp.get("initial_cwnd_rule", "rfc5681") == "linux" else 2190
        icw = 2 if mss > big else 3 if mss > 1095 else 4
    D("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(icw))
    iss = tcp.get("initial_ssthresh", "unlimited")
    iss = 0xFFFFFFFF if iss == "unlimited" else min(size_bytes(iss), 0xFFFFFFFF)
    if cc == "bic":
        bic = {k: tcp.get("bic", {}).get(k, v) for k, v in BIC_DEFAULTS.items()}
        D("ns3::TcpBic::Beta", ns.DoubleValue(bic["beta"] / 1024))
        D("ns3::TcpBic::MaxIncr", ns.UintegerValue(int(bic["max_increment"])))
        D("ns3::TcpBic::LowWnd", ns.UintegerValue(int(bic["low_window"])))
        D("ns3::TcpBic::SmoothPart", ns.UintegerValue(int(bic["smooth_part"])))
        D("ns3::TcpBic::FastConvergence", ns.BooleanValue(bool(bic["fast_convergence"])))
        if bic["initial_ssthresh"] > 0:  # Linux bictcp_init overrides the ssthresh
            iss = int(bic["initial_ssthresh"]) * seg
    elif cc == "cubic":
        cub = {k: tcp.get("cubic", {}).get(k, v) for k, v in CUBIC_DEFAULTS.items()}
        D("ns3::TcpCubic::Beta", ns.DoubleValue(cub["beta"] / 1024))
        D("ns3::TcpCubic::C", ns.DoubleValue(cub["bic_scale"] * 10 / 1024))  # Linux: C = bic_scale·10/1024
        D("ns3::TcpCubic::FastConvergence", ns.BooleanValue(bool(cub["fast_convergence"])))
        D("ns3::TcpCubic::TcpFriendliness", ns.BooleanValue(bool(cub["tcp_friendliness"])))
        D("ns3::TcpCubic::HyStart", ns.BooleanValue(bool(cub["hystart"])))
        D("ns3::TcpCubic::HyStartDetect", ns.StringValue("BOTH"))  # ACK train and delay, as Linux
        D("ns3::TcpCubic::HyStartLowWindow", ns.UintegerValue(int(cub["hystart_low_window"])))
        D("ns3::TcpCubic::HyStartAckDelta", ns.TimeValue(ns.NanoSeconds(time_ns(cub["hystart_ack_delta"]))))
        D("ns3::TcpCubic::HyStartMinSamples", ns.UintegerValue(8))  # Linux HYSTART_MIN_SAMPLES
        # Delay threshold: clamp(delay_min, Min, Max) in ns-3, clamp(delay_min/8, 4, 16 ms) in
        # Linux; equal (4 ms) with Min = Max = 4 ms while delay_min < 32 ms (check()).
        D("ns3::TcpCubic::HyStartDelayMin", ns.TimeValue(ns.NanoSeconds(round(HYSTART_DELAY_S * 1e9))))
        D("ns3::TcpCubic::HyStartDelayMax", ns.TimeValue(ns.NanoSeconds(round(HYSTART_DELAY_S * 1e9))))
        # Delay samples are ignored for 1 s after an epoch starts (Linux bictcp_acked: HZ
        # jiffies); ns-3's own default is 10 ms.
        D("ns3::TcpCubic::CubicDelta", ns.TimeValue(ns.Seconds(1)))
        D("ns3::TcpCubic::CntClamp", ns.UintegerValue(20))  # Linux: cnt at most 20 before the first loss
    elif cc == "bbr":
        bb = {k: tcp.get("bbr", {}).get(k, v) for k, v in BBR_DEFAULTS.items()}
        # STARTUP's gain as tcplab (and Linux) keep it, 739/256 = 2.8867 (ns-3's own: 2.89). ns-3's
        # DRAIN gain is 1/HighGain, Linux's 88/256 (0.3438 against 0.3464; README.md, "BBR").
        D("ns3::TcpBbr::HighGain", ns.DoubleValue(bbr_unit(float(bb["high_gain"])) / 256))
        D("ns3::TcpBbr::BwWindowLength", ns.UintegerValue(int(bb["bw_rtts"])))
        D("ns3::TcpBbr::RttWindowLength", ns.TimeValue(ns.NanoSeconds(time_ns(bb["min_rtt_win"]))))
        D("ns3::TcpBbr::ProbeRttDuration", ns.TimeValue(ns.NanoSeconds(time_ns(bb["probe_rtt_time"]))))
        # BBR paces in both. ns-3 needs pacing switched on (TcpBbr::InitPacingRate switches it on
        # with a warning); tcplab, like Linux, paces every data segment, the first window
        # included, which ns-3 leaves unpaced unless PaceInitialWindow. Both pace payload bytes
        # (ns-3: the gap is the segment's payload over the rate; tcplab likewise), and ns-3 caps
        # the rate at MaxPacingRate (4 Gb/s), which tcplab has not: raised out of reach.
        D("ns3::TcpSocketState::EnablePacing", ns.BooleanValue(True))
        D("ns3::TcpSocketState::PaceInitialWindow", ns.BooleanValue(True))
        D("ns3::TcpSocketState::MaxPacingRate", ns.DataRateValue(ns.DataRate(10**15)))
        if bbr_stream == "per-flow":
            helpers.g_bbr_stream = BBR_STREAM_BASE
    elif cc == "dctcp":
        dc = {k: tcp.get("dctcp", {}).get(k, v) for k, v in DCTCP_DEFAULTS.items()}
        D("ns3::TcpDctcp::DctcpShiftG", ns.DoubleValue(2.0 ** -int(dc["shift_g"])))
        D("ns3::TcpDctcp::DctcpAlphaOnInit", ns.DoubleValue(int(dc["alpha_on_init"]) / 1024))
        D("ns3::TcpDctcp::UseEct0", ns.BooleanValue(True))  # tcplab sends ECT(0)
        D("ns3::TcpSocketBase::UseEcn", ns.StringValue("On"))  # TcpDctcp::Init also sets it
    D("ns3::TcpSocket::InitialSlowStartThreshold", ns.UintegerValue(iss))
    D("ns3::TcpSocket::DelAckCount", ns.UintegerValue(int(tcp.get("delack_segments", 2))))
    D("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.NanoSeconds(time_ns(tcp.get("delack_timeout", "40ms")))))
    D("ns3::TcpSocket::TcpNoDelay", ns.BooleanValue(not tcp.get("nagle", True)))
    D("ns3::TcpSocketBase::Sack", ns.BooleanValue(bool(tcp.get("sack", True))))
    D("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(timestamps))
    D("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(bool(tcp.get("window_scaling", True))))
    D("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.NanoSeconds(time_ns(tcp.get("rto_min", "200ms")))))
    # ns-3 uses G only inside max(G, 4·RTTVAR); tcplab also rounds the RTO up to a multiple of G.
    D("ns3::TcpSocketBase::ClockGranularity",
      ns.TimeValue(ns.NanoSeconds(time_ns(tcp.get("rto_granularity", "0s")) or 1)))
    D("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(bool(tcp.get("limited_transmit", True))))
    D("ns3::TcpSocketBase::ReTxThreshold", ns.UintegerValue(int(tcp.get("dupthresh", 3))))
    # RTO before the first RTT sample: ns-3's initial RTT estimate (RTO = estimate + G there).
    D("ns3::RttEstimator::InitialEstimation", ns.TimeValue(ns.NanoSeconds(time_ns(tcp.get("rto_initial", "1s")))))
    # tcplab times a SYN or SYN-ACK out after rto_initial (doubling); ns-3 after ConnTimeout
    # (doubling), 3 s by default, which is kept: a SYN-ACK sent again reaches a sender that is
    # already established, and ns-3 then resets its cwnd and ssthresh to the initial values
    # (TcpSocketBase::DoForwardUp handles every segment with SYN so). README.md, "SYN-ACK
    # timeout"; --conn-timeout rto-initial sets it to tcplab's.
    if conn_timeout == "rto-initial":
        D("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.NanoSeconds(time_ns(tcp.get("rto_initial", "1s")))))

    # -- topology ---------------------------------------------------------------------------
    names = [h["name"] for h in sc.get("hosts", [])] + [s["name"] for s in sc.get("switches", [])]
    nodes = ns.NodeContainer()
    nodes.Create(len(names))
    node = {n: nodes.Get(i) for i, n in enumerate(names)}
    ns.InternetStackHelper().Install(nodes)

    default_q = sc.get("defaults", {}).get("queue", "1000pkts")
    ecn_devices = []  # (device, spec, link): ECN-marking queues, installed after Assign
    mtu = mss + 40  # IP MTU of every link: the largest data packet (20 B IP + 20 B TCP + MSS)
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("Mtu", ns.UintegerValue(mtu))
    addr_of = {}  # host -> its first interface address
    bottleneck = None
    slowest = None
    tch = ns.TrafficControlHelper()
    for i, ln in enumerate(sc["links"]):
        a, b = ln["between"]
        p2p.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(rate_bps(ln["rate"]))))
        p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.NanoSeconds(time_ns(ln.get("delay", "0s")))))
        devs = p2p.Install(node[a], node[b])
        for k, key in ((0, "queue_a"), (1, "queue_b")):
            q = queue_spec(ln.get(key, ln.get("queue", default_q)), f"links[{i}].{key}")
            if q["ecn_threshold"] is not None:
                ecn_devices.append((devs.Get(k), q, ln))
                q = {"limit": "1p"}  # the device holds the next packet only; RED holds the rest
            devs.Get(k).GetObject[ns.PointToPointNetDevice]().GetQueue().SetAttribute(
                "MaxSize", ns.QueueSizeValue(ns.QueueSize(q["limit"])))
        ip = ns.Ipv4AddressHelper()
        ip.SetBase(ns.Ipv4Address(f"10.{i // 256}.{i % 256}.0"), ns.Ipv4Mask("255.255.255.0"))
        ifs = ip.Assign(devs)  # also installs ns-3's default root queue disc (FqCoDel) ...
        tch.Uninstall(devs)  # ... which we remove: the device's drop-tail queue is the only queue
        for k, n in ((0, a), (1, b)):
            addr_of.setdefault(n, ifs.GetAddress(k))
        r = rate_bps(ln["rate"])  # the bottleneck: the slowest link, in its between[0] -> [1] direction
        if slowest is None or r < slowest[0]:
            slowest = (r, devs.Get(0), f"{a}->{b}")
    bottleneck = slowest
    # ECN marking at K. tcplab: an arrival that finds at least K packets waiting (the one being
    # serialized excluded) is marked CE, one that finds `limit` waiting is dropped. ns-3, by
    # default: a queue disc of our own (EcnThresholdQueueDisc above) that does exactly that,
    # counting its own packets and the 1-packet device queue's. With --ecn-queue red: ns-3's
    # RedQueueDisc as its dctcp example marks, with QW = 1 (the instantaneous queue), Gentle off
    # and MinTh = MaxTh, so that every ECN-capable arrival that finds the threshold is marked (a
    # forced mark; UseHardDrop off) and no other is. RED counts its own queue only: while the
    # link is busy the device queue holds one more waiting packet, hence threshold K - 1 and
    # limit - 1 packets, which is one too few when a departure and an arrival fall on the same
    # nanosecond (README.md, "ECN marking").
    for dev, q, ln in ecn_devices:
        k, limit = q["ecn_threshold"], int(q["limit"][:-1])
        tq = ns.TrafficControlHelper()
        if ecn_queue == "red":
            tq.SetRootQueueDisc("ns3::RedQueueDisc",
                                "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{limit - 1}p")),
                                "MinTh", ns.DoubleValue(k - 1), "MaxTh", ns.DoubleValue(k - 1),
                                "QW", ns.DoubleValue(1.0), "Gentle", ns.BooleanValue(False),
                                "UseEcn", ns.BooleanValue(True), "UseHardDrop", ns.BooleanValue(False),
                                "MeanPktSize", ns.UintegerValue(mtu),
                                "LinkBandwidth", ns.DataRateValue(ns.DataRate(rate_bps(ln["rate"]))),
                                "LinkDelay", ns.TimeValue(ns.NanoSeconds(time_ns(ln.get("delay", "0s")))))
            tq.Install(dev)
        else:
            tq.SetRootQueueDisc(str(helpers.RegisterEcnQueueDisc()),
                                "Limit", ns.UintegerValue(limit), "Threshold", ns.UintegerValue(k))
            tq.Install(dev)
            helpers.AttachDeviceQueue(dev)
    helpers.HookBottleneck(bottleneck[1])
    if pcap:  # frames sent (at their first bit) and received by the bottleneck's sending device
        p2p.EnablePcap(pcap, bottleneck[1], False, True)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    # -- flows ------------------------------------------------------------------------------
    flows = []
    for fl in sc["flows"]:
        n = int(fl.get("count", 1))
        for j in range(n):
            flows.append({"name": fl["name"] if n == 1 else f"{fl['name']}.{j}", "src": fl["src"],
                              "dst": fl["dst"], "start_ns": time_ns(fl.get("start", "0s")),
                              "write": size_bytes(fl.get("bulk", {}).get("write_size", "128KiB"))})
    senders, sinks = ns.ApplicationContainer(), ns.ApplicationContainer()
    stop = ns.NanoSeconds(duration_ns)
    for k, f in enumerate(flows):
        port = 5000 + k
        sink = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                                   ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        sinks.Add(sink.Install(node[f["dst"]]))
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory",
                                 ns.InetSocketAddress(addr_of[f["dst"]], port).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bulk.SetAttribute("SendSize", ns.UintegerValue(f["write"]))  # tcplab's write_size
        app = bulk.Install(node[f["src"]])
        app.Start(ns.NanoSeconds(f["start_ns"]))
        senders.Add(app)
    sinks.Start(ns.Seconds(0))
    helpers.ScheduleHook(senders, max(f["start_ns"] for f in flows) + 1)
    ns.Simulator.Stop(stop)

    t_run, c_run = time.perf_counter(), time.process_time()
    ns.Simulator.Run()
    wall, cpu = time.perf_counter() - t_run, time.process_time() - c_run

    dur_s = duration_ns / 1e9
    out_flows = []
    for k, f in enumerate(flows):
        rx = int(helpers.SinkRx(sinks.Get(k)))
        span = dur_s - f["start_ns"] / 1e9
        out_flows.append({"name": f["name"], "src": f["src"], "dst": f["dst"], "bytes_delivered": rx,
                              "goodput_bps": rx * 8 / span if span > 0 else 0.0,
                              "retransmits": int(helpers.g_retx[k]),
                              "fast_retransmits": int(helpers.g_recovery[k]),
                              "timeouts": int(helpers.g_rto[k]),
                              "rto_episodes": int(helpers.g_loss[k]),
                              "ecn_reductions": int(helpers.g_cwr[k])})
    ns.Simulator.Destroy()
    helpers.CloseEvents()
    return {
        "simulator": "ns-3", "ns3_version": _ns3_version(), "scenario": sc.get("name"), "file": path,
        "duration_s": dur_s, "recovery": rec, "socket_type": cc_type,
        "ecn_queue": ecn_queue if ecn_devices else None, "conn_timeout": conn_timeout, "segment_size": seg, "mtu": mtu,
        "bottleneck": bottleneck[2], "bottleneck_drops": int(helpers.g_bottleneck_drops),
        "bottleneck_marks": int(helpers.g_bottleneck_marks),
        "bottleneck_queue_mean_pkts": float(helpers.QueueMean(duration_ns)),
        "bottleneck_queue_max_pkts": int(helpers.g_q_max),
        "bbr_stream": bbr_stream if cc == "bbr" else None,
        **({"bbr_loss_bytes": float(helpers.g_bbr_loss_bytes),
            "bbr_loss_bytes_recovery": float(helpers.g_bbr_loss_bytes_recovery)} if variant == "bbr-loss-log" else {}),
        "flows": out_flows, "total_goodput_bps": sum(f["goodput_bps"] for f in out_flows),
        "total_retransmits": sum(f["retransmits"] for f in out_flows),
        "wall_time_s": wall, "cpu_time_s": cpu, "setup_time_s": t_run - t_setup, "import_time_s": t_setup - t_import,
    }


def _ns3_version() -> str:
    try:
        from importlib.metadata import version
        return version("ns3")
    except Exception:  # noqa: BLE001
        return "unknown"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", help=f"one of {', '.join(SCENARIOS)}, or a tcplab TOML path")
    ap.add_argument("--duration", help="simulate this long instead of run.duration (e.g. 2s)")
    ap.add_argument("--recovery", choices=["classic", "prr"], default="classic",
                    help="ns-3 recovery: classic = RFC 6675-style (matches tcplab; default), "
                         "prr = ns-3's own default (RFC 6937)")
    ap.add_argument("--pcap", metavar="PREFIX",
                    help="also write a pcap of the bottleneck's sending device to PREFIX.pcap "
                         "(to compare packet by packet with a tcplab tap on the same link)")
    ap.add_argument("--events", metavar="FILE",
                    help="also write the senders' events to FILE (CSV: time_ns, flow index, event, a, b, c): "
                         "state (a = new TcpCongState, b = cwnd, c = ssthresh), ssthresh (a = value, b = cwnd), "
                         "retransmit (a = sequence number, b = cwnd), timeout (a = new RTO in ns, b = cwnd, "
                         "c = ssthresh), and the bottleneck's drop and mark (flow -1)")
    ap.add_argument("--events-cwnd", action="store_true",
                    help="with --events, also every change of cwnd (cwnd: a = cwnd, b = ssthresh)")
    ap.add_argument("--ecn-queue", choices=["threshold", "red"], default="threshold",
                    help="how an ECN-threshold queue is built: 'threshold' (default) counts exactly as tcplab; "
                         "'red' is ns-3's RedQueueDisc as in its dctcp example, one packet early at "
                         "simultaneous arrivals and departures")
    ap.add_argument("--conn-timeout", choices=["ns3", "rto-initial"], default="ns3",
                    help="SYN and SYN-ACK timeout: ns-3's ConnTimeout (3 s, default) or tcplab's rto_initial")
    ap.add_argument("--bbr-stream", choices=["per-flow", "same"], default="per-flow",
                    help="TcpBbr's random stream (PROBE_BW's first phase): 'per-flow' (default) gives flow i "
                         f"stream {BBR_STREAM_BASE} + i, independent draws as in tcplab (a seeded stream per "
                         "flow) and Linux (one per host); 'same' keeps ns-3's default, stream 4 for every "
                         "flow, so that every flow draws the same phases")
    ap.add_argument("--events-pacing", action="store_true",
                    help="with --events, also every change of the pacing rate (pacing: a = bit/s, b = cwnd)")
    ap.add_argument("--variant", choices=["none", "newreno-flightsize", "dctcp-per-ack", "bbr-loss-log", "bbr-linux-recovery"],
                    default="none",
                    help="diagnostic, not the translation: change one ns-3 behaviour to tcplab's to test "
                         "an explanation of a difference (README.md): newreno-flightsize halves FlightSize "
                         "at a loss instead of BytesInFlight (the RFC 6675 pipe); dctcp-per-ack grows "
                         "MSS*MSS/cwnd per ACK in congestion avoidance instead of one segment per window; "
                         "bbr-loss-log changes nothing and reports the bytes TcpBbr's rate samples call lost; "
                         "bbr-linux-recovery makes TcpBbr's loss rules Linux's (newly lost bytes only, cwnd "
                         "restored after recovery and after a timeout; README.md, \"BBR\")")
    args = ap.parse_args(argv)
    path, sc = load(args.scenario)
    tcp = check(sc)
    duration = args.duration or sc.get("run", {}).get("duration")
    if not duration:
        raise SystemExit("the scenario has no run.duration; give --duration")
    res = run(path, sc, tcp, time_ns(duration), args.recovery, args.pcap, args.events, args.variant, args.events_cwnd,
              args.ecn_queue, args.conn_timeout, args.bbr_stream, args.events_pacing)
    res["full_duration_s"] = time_ns(sc["run"]["duration"]) / 1e9 if "duration" in sc.get("run", {}) else None
    sys.stdout.write(json.dumps(res) + "\n")
    sys.stdout.flush()
    os._exit(0)  # skip cppyy's slow teardown


if __name__ == "__main__":
    sys.exit(main())
