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

# tcplab TCP keys with no ns-3 attribute: the value the scenario gives must be what ns-3 does.
_FIXED_BEHAVIOUR = {
    "rtt_estimator": ("rfc6298", "ns-3 uses RttMeanDeviation (RFC 6298 gains)"),
    "rto_max": ("60s", "ns-3 caps the backed-off RTO at 60 s"),
    "rto_backoff": ("exponential", "ns-3 doubles the RTO"),
    "recovery": (("auto", "sack"), "ns-3 uses its SACK scoreboard; see --recovery"),
    "abc_limit": (1, "ns-3 slow start adds one segment per ACK"),
    "profile": ("rfc", "the linux-2.6.16 profile brings behaviour ns-3 does not have"),
    "quickack": (1, "ns-3 acknowledges the first data segment at once (TcpSocketBase::ProcessSynRcvd), later ones by DelAckCount"),
    "rcv_window_growth": (False, "ns-3 advertises its whole receive buffer from the start"),
    "cwnd_validation": (False, "ns-3 grows cwnd on every ACK, whether or not the sender is cwnd-limited"),
}
# BIC parameters: tcplab's defaults (Linux 2.6.16's module parameters), each mapped onto ns-3's
# TcpBic; `hz` only paces how often Linux recomputes `cnt` (ns-3 recomputes on every ACK).
# They are the keys of the `[defaults.tcp.bic]` table.
BIC_DEFAULTS = {"beta": 819, "max_increment": 16, "low_window": 14,
                "smooth_part": 20, "fast_convergence": True, "initial_ssthresh": 100}
_TCP_KEYS = {
    "cc", "mss", "sack", "timestamps", "window_scaling", "nagle", "sndbuf", "rcvbuf",
    "initial_cwnd", "initial_cwnd_rule", "initial_ssthresh", "delack_segments",
    "delack_timeout", "rto_min", "rto_granularity", "limited_transmit", "dupthresh",
    "rto_initial", "hz", "bic", *_FIXED_BEHAVIOUR,
}
CC_TYPES = {"newreno": "ns3::TcpNewReno", "bic": "ns3::TcpBic", "reno": None}


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
    for key in tcp.get("bic", {}):
        if key not in BIC_DEFAULTS:
            raise ValueError(f"defaults.tcp.bic.{key}: not translated to ns-3")
    for key, (want, why) in _FIXED_BEHAVIOUR.items():
        if key in tcp:
            ok = tcp[key] in want if isinstance(want, tuple) else str(tcp[key]) == str(want)
            if not ok:
                raise ValueError(f"defaults.tcp.{key} = {tcp[key]!r}: ns-3 cannot do that ({why})")
    if tcp.get("cc", "newreno") not in CC_TYPES or CC_TYPES[tcp.get("cc", "newreno")] is None:
        raise ValueError(f"defaults.tcp.cc = {tcp.get('cc')!r}: no ns-3 counterpart here")
    for i, fl in enumerate(sc["flows"]):
        if fl.get("kind", "tcp") != "tcp":
            raise ValueError(f"flows[{i}].kind: only tcp flows are translated")
        for key in fl:
            if key not in {"name", "kind", "src", "dst", "start", "count", "write_size"}:
                raise ValueError(f"flows[{i}].{key}: not translated to ns-3")
    for i, ln in enumerate(sc["links"]):
        for key in ln:
            if key not in {"between", "rate", "delay", "queue", "queue_a", "queue_b", "framing"}:
                raise ValueError(f"links[{i}].{key}: not translated to ns-3")
        if size_bytes(ln.get("framing", "0B")) != 2:
            raise ValueError(f"links[{i}].framing: must be \"2B\", the PPP header ns-3's "
                             "point-to-point device adds to every frame")
    if sc.get("run", {}).get("stop", "duration") != "duration":
        raise ValueError("run.stop: only a fixed duration is translated")
    return tcp


# --- ns-3 ------------------------------------------------------------------------------------

_CPP_HELPERS = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/applications-module.h"
#include "ns3/traffic-control-module.h"
#include <vector>

namespace tcplab_bench {
using namespace ns3;

std::vector<uint64_t> g_retx;      // retransmitted data segments, per flow
std::vector<uint64_t> g_recovery;  // entries into CA_RECOVERY (fast retransmits), per flow
std::vector<uint64_t> g_loss;      // entries into CA_LOSS (RTO episodes), per flow
uint64_t g_bottleneck_drops = 0;

void OnRetx(uint64_t i, Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
            Ptr<const TcpSocketBase>) { g_retx[i]++; }
void OnCongState(uint64_t i, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_RECOVERY) g_recovery[i]++;
    if (now == TcpSocketState::CA_LOSS) g_loss[i]++;
}
void OnDrop(Ptr<const Packet>) { g_bottleneck_drops++; }

// The BulkSend sockets exist once the applications have started: hook them then.
void HookSockets(ApplicationContainer apps)
{
    for (uint32_t i = 0; i < apps.GetN(); i++)
    {
        Ptr<Socket> s = DynamicCast<BulkSendApplication>(apps.Get(i))->GetSocket();
        NS_ABORT_MSG_IF(!s, "BulkSend socket not created yet");
        bool ok = s->TraceConnectWithoutContext("Retransmission", MakeBoundCallback(&OnRetx, (uint64_t)i));
        ok = ok && s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, (uint64_t)i));
        NS_ABORT_MSG_IF(!ok, "cannot hook the TCP socket traces");
    }
}
void ScheduleHook(ApplicationContainer apps, uint64_t at_ns)
{
    g_retx.assign(apps.GetN(), 0);
    g_recovery.assign(apps.GetN(), 0);
    g_loss.assign(apps.GetN(), 0);
    Simulator::Schedule(NanoSeconds(at_ns), &HookSockets, apps);
}
// Drops at the bottleneck's forward egress: its device queue, and the traffic-control layer
// (which drops when the device queue is stopped because it is full).
void HookBottleneck(Ptr<NetDevice> dev)
{
    Ptr<PointToPointNetDevice> p2p = DynamicCast<PointToPointNetDevice>(dev);
    bool ok = p2p->GetQueue()->TraceConnectWithoutContext("Drop", MakeCallback(&OnDrop));
    Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
    ok = ok && tc->TraceConnectWithoutContext("TcDrop", MakeCallback(&OnDrop));
    NS_ABORT_MSG_IF(!ok, "cannot hook the bottleneck drop traces");
}
uint64_t SinkRx(Ptr<Application> a) { return DynamicCast<PacketSink>(a)->GetTotalRx(); }
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


def run(path: str, sc: dict, tcp: dict, duration_ns: int, recovery: str, pcap: str | None = None) -> dict:
    t_import = time.perf_counter()
    ns, cppyy = _import_ns3()

    cppyy.cppdef('#include "ns3/point-to-point-module.h"\n' + _CPP_HELPERS)
    helpers = cppyy.gbl.tcplab_bench
    t_setup = time.perf_counter()

    # -- TCP: every value comes from the scenario; absent keys take tcplab's defaults --------
    cc = tcp.get("cc", "newreno")
    mss = int(tcp.get("mss", 1460))
    timestamps = bool(tcp.get("timestamps", False))
    seg = mss - 12 if timestamps else mss  # ns-3 SegmentSize is payload; tcplab's mss counts options
    D = ns.Config.SetDefault
    D("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName(CC_TYPES[cc])))
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
    elif "bic" in tcp:
        raise ValueError("[defaults.tcp.bic] needs cc = \"bic\"")
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

    # -- topology ---------------------------------------------------------------------------
    names = [h["name"] for h in sc.get("hosts", [])] + [s["name"] for s in sc.get("switches", [])]
    nodes = ns.NodeContainer()
    nodes.Create(len(names))
    node = {n: nodes.Get(i) for i, n in enumerate(names)}
    ns.InternetStackHelper().Install(nodes)

    default_q = sc.get("defaults", {}).get("queue", "1000pkts")
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
            q = ln.get(key, ln.get("queue", default_q))
            devs.Get(k).GetObject[ns.PointToPointNetDevice]().GetQueue().SetAttribute(
                "MaxSize", ns.QueueSizeValue(ns.QueueSize(queue_size(q))))
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
                              "write": size_bytes(fl.get("write_size", "128KiB"))})
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
                              "rto_episodes": int(helpers.g_loss[k])})
    ns.Simulator.Destroy()
    return {
        "simulator": "ns-3", "ns3_version": _ns3_version(), "scenario": sc.get("name"), "file": path,
        "duration_s": dur_s, "recovery": rec, "segment_size": seg, "mtu": mtu,
        "bottleneck": bottleneck[2], "bottleneck_drops": int(helpers.g_bottleneck_drops),
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
    args = ap.parse_args(argv)
    path, sc = load(args.scenario)
    tcp = check(sc)
    duration = args.duration or sc.get("run", {}).get("duration")
    if not duration:
        raise SystemExit("the scenario has no run.duration; give --duration")
    res = run(path, sc, tcp, time_ns(duration), args.recovery, args.pcap)
    res["full_duration_s"] = time_ns(sc["run"]["duration"]) / 1e9 if "duration" in sc.get("run", {}) else None
    sys.stdout.write(json.dumps(res) + "\n")
    sys.stdout.flush()
    os._exit(0)  # skip cppyy's slow teardown


if __name__ == "__main__":
    sys.exit(main())
