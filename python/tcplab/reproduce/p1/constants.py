"""Study 001's constants: the schemes as settings, the two network models, the run's limits and
metrics, the unknowns and decisions the maps change, and the remedies beyond the paper. The
study's modules import them from here (none of them from another's orchestrator).

Every path that names a flow's own key (`flows.0.servers`, …) is spelled by `flow_path`, the
one place to change when flow keys move.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AHTCP_THRESHOLD", "BOTTLENECKS", "CEILING_MBPS", "DCTCP_K", "DECISIONS", "FG_RTO_MIN", "METRICS", "MODELS",
    "MODEL_A_LINKS", "PEAK_FRACTIONS", "REMEDIES", "RUN_CAP_S", "SCHEMES", "SCHEME_ORDER", "SCHEME_PATHS", "SETTINGS",
    "STUDY", "flow_path",
]

STUDY = "p1_incast"
"""The shipped scenarios' directory (`scenarios/p1_incast/`)."""


_KIND_TABLE = {"servers": "block_read", "sru": "block_read", "request": "block_read", "blocks": "block_read",
               "rate": "cbr", "packet_size": "cbr", "bytes": "bulk", "write_size": "bulk"}


def flow_path(flow: int, key: str) -> str:
    """The override path of key `key` of flow `flow` of a shipped model
    (`flows.0.block_read.servers`, `flows.2.cbr.rate`): the one place the study spells a
    flow's own keys, each in the table of its kind."""
    return f"flows.{flow}.{_KIND_TABLE[key]}.{key}"


MODEL_A_LINKS = (("server", "sw"), ("udp", "sw"), ("sw", "client"))
"""Model A's links by their ends (`between`), as `link(A,B)` names them: every link of
`model_a.toml`."""

FG_RTO_MIN = "200us"
"""FGTCP's RTOmin ("数 100 マイクロ秒"; 200 µs after Vasudevan et al., README A2)."""

AHTCP_THRESHOLD = "500Mbps"
"""AHTCP's fixed threshold in the shipped models (`[defaults.tcp.ahtcp]`): about half the client
link's goodput ceiling (README A11; the paper gives no value, and the threshold map shows where
each finding holds)."""

SCHEMES: dict[str, dict[str, Any]] = {
    "standard": {"defaults.tcp.rto_min": "200ms", "defaults.tcp.rto_backoff": "exponential", "defaults.tcp.variant": "none"},
    "FGTCP": {"defaults.tcp.rto_min": FG_RTO_MIN, "defaults.tcp.rto_backoff": "exponential", "defaults.tcp.variant": "none"},
    "LNRTCP": {"defaults.tcp.rto_min": FG_RTO_MIN, "defaults.tcp.rto_backoff": "linear", "defaults.tcp.variant": "none"},
    "HYBTCP": {"defaults.tcp.rto_min": FG_RTO_MIN, "defaults.tcp.rto_backoff": "hybrid", "defaults.tcp.variant": "none"},
    "HYBTCP-b": {"defaults.tcp.rto_min": FG_RTO_MIN, "defaults.tcp.rto_backoff": "hybrid-linear-first", "defaults.tcp.variant": "none"},
    "AHTCP": {"defaults.tcp.rto_min": FG_RTO_MIN, "defaults.tcp.rto_backoff": "exponential", "defaults.tcp.variant": "ahtcp"},
    "AHTCP/200ms": {"defaults.tcp.rto_min": "200ms", "defaults.tcp.rto_backoff": "exponential", "defaults.tcp.variant": "ahtcp"},
}
"""Each scheme as the three settings that tell them apart (zipped into one sweep axis).
HYBTCP is form (a), exponential for 3 backoffs then linear; HYBTCP-b linear for 3, then
exponential. AHTCP runs over FGTCP's RTOmin; AHTCP/200ms over the standard one (README A12)."""

SCHEME_ORDER = tuple(SCHEMES)
SCHEME_PATHS = ("defaults.tcp.rto_min", "defaults.tcp.rto_backoff", "defaults.tcp.variant")
"""The settings that tell the schemes apart (every scheme sets each)."""

MODELS: dict[str, dict[str, Any]] = {
    "A": {"scenario": "model_a", "servers": (flow_path(0, "servers"),), "clients": 1,
          "ceiling_mbps": (1000 - 10) * 1460 / 1500},
    "B": {"scenario": "model_b", "servers": (flow_path(0, "servers"), flow_path(1, "servers")), "clients": 4,
          "ceiling_mbps": 1000 * 1460 / 1500 + (1000 - 10) * 1460 / 1500},
}
"""The two network models: the shipped scenario, the paths of the active-server count, the
clients, and the goodput ceiling (Mb/s): each bottleneck's 1 Gb/s less the background where it
crosses (model A's client port; one of model B's two inter-switch ports), times 1460/1500."""

CEILING_MBPS = {m: v["ceiling_mbps"] for m, v in MODELS.items()}

RUN_CAP_S = 20.0
"""Simulated time a run may take at most: a setting under which the reads stall (AHTCP read
literally at 256 servers) ends there, its goodput counted over the time it ran and its
unfinished connections reported."""

METRICS = {
    "delivered": "sum(flows[kind=tcp].bytes_delivered)",
    "sent": "sum(flows[kind=tcp].segments_sent)",
    "first_start": "min(flows[kind=tcp].data_start_s)",
    "last_finish": "max(flows[kind=tcp].finish_s)",
    "finished": "count(flows[kind=tcp].finish_s)",
    "timeouts": "sum(flows[kind=tcp].timeouts)",
    "requests": "sum(flows[kind=tcp].requests)",
    "dropped": "sum(queues.dropped)",
    "events": "events",
    "sim_time": "sim_time_s",
    "connections": "count(flows[kind=tcp].bytes_delivered)",
}


SETTINGS: dict[str, dict[str, Any]] = {
    "base RTT ≈ 400 µs (every link 95 µs)": {f"link({a},{b}).delay": "95us" for a, b in MODEL_A_LINKS},
    "backoff forgotten on an RTT sample only (RFC 6298, Linux)": {"defaults.tcp.rto_backoff_reset": "rtt-sample"},
    "SACK (FullTcp/Sack)": {"defaults.tcp.sack": True},
}
"""The unknowns mapped across every scheme in model A (README A3, A4, A5): each row changes one
setting of the shipped model."""


DECISIONS = {
    "as shipped": {},
    "ask_empty = false (no request with nothing of an SRU held)": {"defaults.tcp.ahtcp.ask_empty": False},
    "restart = ceiling, ask_empty = false (the ceiling cannot answer a request with nothing held)":
        {"defaults.tcp.ahtcp.restart": "ceiling", "defaults.tcp.ahtcp.ask_empty": False},
    "restart = literal (eq. (1) on the byte numbers)": {"defaults.tcp.ahtcp.restart": "literal"},
    "restart = literal, ask_empty = false": {"defaults.tcp.ahtcp.restart": "literal", "defaults.tcp.ahtcp.ask_empty": False},
    "align = restart (literal; no request with nothing held)": {"defaults.tcp.ahtcp.align": "restart", "defaults.tcp.ahtcp.ask_empty": False},
    "targets = stalled-sample (quiet for 1 ms)": {"defaults.tcp.ahtcp.targets": "stalled-sample"},
    "targets = incomplete": {"defaults.tcp.ahtcp.targets": "incomplete"},
}
"""AHTCP's open decisions mapped against the shipped ones (README A13–A16)."""


DCTCP_K = {"1Gbps": "20pkts", "10Gbps": "65pkts"}
"""DCTCP's marking threshold K: 20 packets at 1 Gb/s and 65 at 10 Gb/s (Alizadeh et al.,
SIGCOMM 2010, §4.1: the values their switches used)."""

BOTTLENECKS = {"A": ("sw->client",), "B": ("s0->s1", "s0->s2")}
"""The 40-packet bottleneck ports of each model (where DCTCP's switch marks)."""

REMEDIES: dict[str, tuple[str, str]] = {
    "FGTCP+rand": ("FGTCP", "FGTCP with each timer randomised to RTO·(1 + U[0, 0.5)) (Vasudevan et al.)"),
    "DCTCP": ("standard", "DCTCP, ECN marking at K at the bottleneck ports, RTOmin 200 ms"),
    "DCTCP+FG": ("FGTCP", "DCTCP with FGTCP's 200 µs RTOmin"),
    "AHTCP-peak": ("AHTCP", "AHTCP with the peak threshold: half the highest moving average of the last 50 ms"),
}
"""The schemes added here: (the scheme of the main sweep they start from, what they change)."""


PEAK_FRACTIONS = (0.25, 0.75)
"""The peak rule's fraction mapped around its default 0.5 (an unknown of the rule itself)."""
