"""Study 004's ATM arithmetic: the MSS of an MTU, the cells of a segment, the window a socket
buffer gives, the bandwidth CBR leaves to UBR and the 2 % deadlock line."""

from __future__ import annotations

import math

from tcplab.reproduce.p4.constants import DEADLOCK_FRACTION, LINE_CELLS_PER_S, LINK_MBPS

__all__ = [
    "cbr_cells_per_s", "ceiling_mbps", "cells_per_packet", "deadlock_mbps", "link_deadlock_mbps", "mss_freebsd",
    "mss_plain", "window_bytes",
]


def mss_freebsd(mtu: int) -> int:
    """FreeBSD's MSS for an interface MTU (README A5): MTU − 40, and above MCLBYTES (2048)
    rounded down to a multiple of 2048 (9180 → 8192, 6500 → 6144, 4352 → 4096)."""
    m = mtu - 40
    return m if m <= 2048 else m // 2048 * 2048


def mss_plain(mtu: int) -> int:
    """The MSS without BSD's cluster rounding: MTU − 40 (9180 → 9140)."""
    return mtu - 40


def cells_per_packet(mss: int) -> int:
    """53-byte cells of one full segment over AAL5 with LLC/SNAP: ⌈(MSS + 40 + 8 + 8)/48⌉."""
    return math.ceil((mss + 40 + 8 + 8) / 48)


def window_bytes(sock: int, mss: int) -> int:
    """The window a socket buffer of `sock` bytes gives (BSD `tcp_mss()`, README A6): rounded
    up to whole MSS, or, below one MSS, the buffer itself (the MSS shrinks to it)."""
    if sock < mss:
        return sock
    return math.ceil(sock / mss) * mss


def cbr_cells_per_s(cbr_mbps: float, unit: str = "cell") -> float:
    """Cells per second CBR takes: its rate counted in 53-byte cells, or in 48-byte payload."""
    return cbr_mbps * 1e6 / 8 / (53 if unit == "cell" else 48)


def ceiling_mbps(cbr_mbps: float, mss: int, unit: str = "cell") -> float:
    """The bandwidth left to UBR as TCP payload (Mb/s): the cells CBR leaves × MSS / cells per
    packet (the paper's 有効帯域 in its second sense, §3.1 L77; README A9)."""
    return (LINE_CELLS_PER_S - cbr_cells_per_s(cbr_mbps, unit)) * mss / cells_per_packet(mss) * 8 / 1e6


def deadlock_mbps(cbr_mbps: float, mss: int, unit: str = "cell") -> float:
    """The deadlock line: 2 % of `ceiling_mbps`."""
    return DEADLOCK_FRACTION * ceiling_mbps(cbr_mbps, mss, unit)


def link_deadlock_mbps() -> float:
    """The link-based variant of the line: 2 % of 149.76 Mb/s (有効帯域 as the link, L67)."""
    return DEADLOCK_FRACTION * LINK_MBPS
