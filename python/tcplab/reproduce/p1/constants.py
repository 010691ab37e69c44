"""Study 001's constants: the schemes as settings, the two network models, the run's limits and
metrics, the unknowns and decisions the maps change, and the remedies beyond the paper. The
study's modules import them from here (none of them from another's orchestrator).

Every path that names a flow's own key (`flows.0.servers`, …) is spelled by `flow_path`, the
one place to change when flow keys move.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "AHTCP_THRESHOLD", "BOTTLENECKS", "CEILING_MBPS", "DCTCP_K", "DECISIONS", "FG_RTO_MIN", "FG_SCHEMES", "METRICS", "MODELS",
    "MODEL_A_LINKS", "MODEL_B_LINKS", "PEAK_FRACTIONS", "PER_CLIENT_MBPS", "REMEDIES", "RUN_CAP_S", "SCHEMES", "SCHEME_ORDER",
    "SCHEME_PATHS", "SETTINGS", "SETTING_FROM_MAIN", "STUDY", "THRESHOLD_FRACTIONS", "flow_path", "links_override",
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

MODEL_B_LINKS = (("server", "s0"), ("udp", "s0"), ("s0", "s1"), ("s0", "s2"), ("client_a", "s1"), ("client_b", "s2"))
"""Model B's links by their ends: every link of `model_b.toml`."""


def links_override(model: str, key: str, value: str) -> dict[str, str]:
    """The overrides that set `key` (`delay`, `rate`) of every link of `model` to `value`."""
    return {f"link({a},{b}).{key}": value for a, b in (MODEL_A_LINKS if model == "A" else MODEL_B_LINKS)}

FG_RTO_MIN = "200us"
"""FGTCP's RTOmin ("数 100 マイクロ秒"; 200 µs after Vasudevan et al., README A2)."""

AHTCP_THRESHOLD = {"A": "500Mbps", "B": "250Mbps"}
"""AHTCP's fixed threshold in each shipped model (`[defaults.tcp.ahtcp]`): the same fraction,
about half (0.52), of what one client can receive at most in that model (`PER_CLIENT_MBPS`:
963.6 Mb/s in A, 484.2 in B) — the paper's threshold detects incast as a client's throughput
being low (§3.1 s1), so it is a fraction of what that client receives without incast (README
A11). The threshold map runs `THRESHOLD_FRACTIONS` of it in each model."""

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

PER_CLIENT_MBPS = {m: v["ceiling_mbps"] / v["clients"] for m, v in MODELS.items()}
"""The goodput one client can receive at most (Mb/s): the model's ceiling over its clients
(963.6 in A; 1,936.9 / 4 = 484.2 in B, where two clients share each 1 Gb/s inter-switch port)."""

THRESHOLD_FRACTIONS = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9)
"""The threshold map's points, as fractions of `PER_CLIENT_MBPS` (every grounded reading lies
below 1: a threshold at or above what a client can receive marks it as in incast always). The
map adds the shipped threshold of each model and, in model B, model A's 500 Mb/s (the value
carried over before, above B's 484 Mb/s)."""

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


FG_SCHEMES = ("FGTCP", "LNRTCP", "HYBTCP", "AHTCP")
"""The schemes over FGTCP's RTOmin (LNRTCP and HYBTCP are FGTCP with another backoff; AHTCP
runs over it, README A12)."""

SETTINGS: dict[str, tuple[tuple[str, ...], tuple[str, ...], Callable[[str], dict[str, Any]]]] = {
    "base RTT ≈ 200 µs (every link 45 µs)": (("A", "B"), ("standard", *FG_SCHEMES), lambda m: links_override(m, "delay", "45us")),
    "base RTT ≈ 400 µs (every link 95 µs)": (("A", "B"), ("standard", *FG_SCHEMES), lambda m: links_override(m, "delay", "95us")),
    "FGTCP's RTOmin 100 µs (FGTCP, LNRTCP, HYBTCP, AHTCP)": (("A", "B"), FG_SCHEMES, lambda m: {"defaults.tcp.rto_min": "100us"}),
    "FGTCP's RTOmin 500 µs (FGTCP, LNRTCP, HYBTCP, AHTCP)": (("A", "B"), FG_SCHEMES, lambda m: {"defaults.tcp.rto_min": "500us"}),
    "AHTCP's own RTOmin 100 µs": (("A", "B"), ("AHTCP",), lambda m: {"defaults.tcp.rto_min": "100us"}),
    "AHTCP's own RTOmin 500 µs": (("A", "B"), ("AHTCP",), lambda m: {"defaults.tcp.rto_min": "500us"}),
    "AHTCP's own RTOmin 200 ms (AHTCP/200ms as AHTCP)": (("A", "B"), ("AHTCP",), lambda m: {"defaults.tcp.rto_min": "200ms"}),  # = AHTCP/200ms
    "backoff forgotten on an RTT sample only (RFC 6298, Linux)": (("A",), ("standard", *FG_SCHEMES), lambda m: {"defaults.tcp.rto_backoff_reset": "rtt-sample"}),
    "SACK (FullTcp/Sack)": (("A",), ("standard", *FG_SCHEMES), lambda m: {"defaults.tcp.sack": True}),
}
"""The unknowns mapped one at a time (README A2–A5, A12): label → (the models it runs in, the
schemes it changes, the overrides in a model). A scheme it does not change keeps its runs of
the main sweep (standard TCP under FGTCP's RTOmin); an override of a scheme's own setting
(`rto_min`) replaces that scheme's value (`runs.run_points`). Every finding of the paper is
judged at each point. The base RTT is 4d + 25 µs in A (2 links) and 6d + 37 µs in B (3 links),
d the per-link delay (EVIDENCE §2.7: same d in both models); the RTOmin points are EVIDENCE
§2.4's 100 and 500 µs around 200 µs, and its option A for AHTCP (the standard 200 ms)."""

SETTING_FROM_MAIN = {"AHTCP's own RTOmin 200 ms (AHTCP/200ms as AHTCP)": {"AHTCP": "AHTCP/200ms"}}
"""Settings whose changed schemes are schemes of the main sweep already (AHTCP over the
standard RTOmin is AHTCP/200ms): their runs are taken from it, not run again."""


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
