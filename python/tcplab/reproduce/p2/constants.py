"""Study 002's values: the shipped scenarios, the bottleneck's rates, the experiments' points and
the noise rule the checks apply (decided before the runs: `dev`/scenario FINDINGS.md)."""

from __future__ import annotations

STUDY = "p2_data_reservoir"
SEED_FILE = "002_f76afbd10a60fff8.txt"

POS_IP_MBPS = 599.04 * 1500 / 1506
"""The OC-12c POS bottleneck's rate in IP bytes for 1500-byte packets: 596.653 Mb/s (SONET
STS-12c payload 599.04 Mb/s, 6 bytes of PPP/HDLC framing per packet, no byte stuffing)."""

MSS = 1448
"""The streams' segment size: a 1500-byte MTU less 20 (IP), 20 (TCP) and 12 (timestamps)."""

L2_EXTRA_BYTES = 14
"""Ethernet header bytes per packet counted in an "L2" rate (a capture's 1514-byte frame for a
1500-byte IP packet; the paper's 550 Mb/s is L2 with headers, §4.2 s5)."""

BOTTLENECK = "r-tokyo->r-far"
"""The bottleneck queue of the FLA and SC2002 scenarios."""

ORDER_SHARE = 0.8
"""An order holds when it holds in at least this share of the seeds (8 of 10) and the medians
differ by more than the larger inter-quartile range (FINDINGS.md, "How seed noise is judged")."""

STRAGGLER = 1.2
"""A stream is a straggler when it finishes after this multiple of the median completion time
of its run's streams (F9)."""

# Figs. 6-8: i×j×k shapes on the FLA path, and the random loss on the POS line (unknown, mapped).
FLA_SHAPES = {"full": ((1, 1), (2, 1), (4, 1), (2, 2), (4, 2)), "quick": ((1, 1), (2, 1), (4, 2))}
FLA_LOSSES = {"full": (0.0, 1e-5, 1e-4), "quick": (0.0, 1e-4)}
FLA_RTTS_MS = (200, 20)
"""RTTs of the FLA path: the paper's 200 ms and, for F24's and F32's comparisons, 20 ms."""

# The map of the unknowns on FLA's 1×4×2 at 200 ms (one unknown varied at a time, the others as
# shipped): A3 the POS router's buffer (0.1 and 1 BDP beside the shipped 0.5) and A14 the iSCSI
# command window (4 and 64 beside the shipped 32), at every mapped path loss.
MAP_UNKNOWNS = {
    "buffer": ("A3: bottleneck buffer", "links.1.queue", ("1.5MB", "15MB")),
    "window": ("A14: iSCSI command window", "flows.0.reservoir.iscsi.command_window", (4, 64)),
}

# Fig. 11: 1×j×2 at SC2002, exclusive.
SC_SERVERS = {"full": (1, 2, 4, 8, 12, 16, 20, 26), "quick": (1, 4, 8, 16, 26)}
SC_DURATION_S = {"full": 150.0, "quick": 30.0}

# §4.2 s6: SC2002 shared with other groups' traffic — bulk TCP flows over the same path (A18).
CROSS_FLOWS = {"full": (8, 26, 52), "quick": (26,)}
"""Background bulk TCP flows beside the 1×26×2 streams; the line to itself is Fig. 11's j = 26 point."""
SHARED_MBPS = 224.8
"""The Data Reservoir's rate in the shared case (§4.2 s6)."""

# Fig. 12: 1×1×1 through Comet Drop.
COMET_RTTS_MS = (0, 20, 50, 100, 150, 200)
COMET_RTTS_QUICK_MS = (0, 20, 200)
"""--quick's Comet Drop RTTs: the ends F20 divides and F19's middle point."""
NIC_SHIPPED = "356pkts"
"""The senders' NIC queue as shipped (A12): Linux 2.4's Ethernet txqueuelen 100 plus the GA620
(acenic) driver's 256-entry TX ring; `links.0.queue_a` of fla.toml, sc2002.toml, comet.toml."""

NIC_UNLIMITED = {"links.0.queue_a": "unlimited"}
"""The other reading of the sender's NIC queue (A12): no limit. As shipped the 356-packet queue
refuses a segment when full and the sender keeps it unsent and reduces its window once, as Linux
2.4 does (tcp_write_xmit stops, tcp_transmit_skb calls tcp_enter_cwr; the linux-2.4.18
profile's `tcp.local_congestion = "cwr"`); an unlimited queue never refuses."""

COMET_READINGS = {
    "shipped": {"label": "32 MB window, loss 7/65536 (comet.toml)", "overrides": {}},
    "shipped-nic": {"label": "32 MB window, loss 7/65536, NIC queue unlimited", "overrides": dict(NIC_UNLIMITED)},
    "no-loss": {"label": "32 MB window, no loss", "overrides": {"emulators.0.loss_65536": 0}},
    "no-loss-nic": {"label": "32 MB window, no loss, NIC queue unlimited", "overrides": {"emulators.0.loss_65536": 0} | NIC_UNLIMITED},
    "2.4-default": {"label": "2.4 default buffers (87380 B receive, 64 KB advertised), no loss",
                    "overrides": {"emulators.0.loss_65536": 0, "defaults.tcp.rcvbuf": "87380B", "defaults.tcp.sndbuf": "131072B"}},
}
COMET_QUICK_READINGS = ("shipped", "no-loss-nic")
"""--quick's Comet Drop readings: the one F20 is judged on and the loss-free one with the NIC
queue unlimited (the reading that shows what the window alone allows); the others are printed
only by the full plan."""
QUICK_LOSSY = (1e-4,)
"""--quick's path loss for the runs whose loss-free point no finding is judged on (FLA's other
readings, the coordinated windows): the lossy point only."""
COMET_NAMED = "shipped"
"""The reading F20 is judged on, named before the runs: the shipped scenario's (the paper's
Comet Drop setting of §3.1.3 s5 and the SC2002 window); the others are printed beside it."""
