"""Spurious retransmissions in study 002's runs: what Linux 2.4's D-SACK and timestamp undo
could revert.

Linux 2.4 undoes a window reduction only when the retransmissions of the episode were not
needed (`tcp_try_undo_recovery`/`_loss`/`_dsack`: every retransmission D-SACKed, or the ACK
echoes a timestamp older than the first retransmission, `tcp_packet_delayed`). Both require
the original segment to have reached the receiver. tcplab does not model that undo, so this
script counts, at a tap on each receiver's NIC link (after every lossy element), the data
segments whose sequence range the receiver had already been sent, i.e. received twice. Where
that count is zero, the undo could never have fired and its absence changes no result.

    .venv/bin/python dev/p2/spurious.py [seeds] [loss ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

import tcplab
from tcplab.analysis._frames import select_tap
from tcplab.analysis.tcpevents import mark_retransmissions

ROOT = Path(__file__).resolve().parents[2]
SCEN = ROOT / "scenarios" / "p2_data_reservoir"


def receiver_taps(spec: dict, receiver: str, count: int) -> list[dict]:
    """One in-memory tap per receiver host's NIC link (both directions)."""
    return [{"name": f"rx{i}", "link": [f"{receiver}.{i}", "sw-far"], "pcap": False, "trace": True} for i in range(count)]


def received_twice(data: pl.DataFrame) -> int:
    """Data packets all of whose bytes had already arrived at this tap, per flow (a union of
    the ranges seen so far, in arrival order)."""
    n = 0
    for (_flow,), rows in data.group_by(["flow"], maintain_order=True):
        seen: list[tuple[int, int]] = []  # disjoint [start, end) ranges, sorted
        for seq, ln in zip(rows["seq"].to_list(), rows["len"].to_list()):
            lo, hi = seq, seq + ln
            if any(a <= lo and hi <= b for a, b in seen):
                n += 1
                continue
            merged = []
            for a, b in seen:
                if b < lo or a > hi:
                    merged.append((a, b))
                else:
                    lo, hi = min(lo, a), max(hi, b)
            merged.append((lo, hi))
            seen = sorted(merged)
    return n


def count(name: str, receiver: str, hosts: int, loss: float, seed: int, extra: dict | None = None) -> dict:
    spec = tcplab.load_scenario(SCEN / name)
    for em in spec.get("emulators", []):
        if em["name"] == "path":
            em["loss"] = loss
    spec["taps"] = receiver_taps(spec, receiver, hosts)
    if extra:
        spec = tcplab.scenario.apply_overrides(spec, extra)
    res = tcplab.run(spec, seed=seed)
    cap = res.trace("capture")
    dup = resent = 0
    for i in range(hosts):
        data = mark_retransmissions(select_tap(cap, i))
        # below the flow's highest byte at this tap: a repair of a hole (or a duplicate) ...
        resent += int(data["retransmitted"].sum())
        # ... and a duplicate only when every byte of it had already passed this tap.
        dup += received_twice(data)
    flows = res.flows
    return {
        "scenario": name, "loss": loss, "seed": seed,
        "retransmits": int(flows["retransmits"].sum()), "timeouts": int(flows["timeouts"].sum()),
        "arrived_below_highest": resent, "received_twice": dup,
    }


def self_check() -> None:
    """The counter counts: a hole repaired is not a duplicate, a copy of a received range is."""
    frame = pl.DataFrame({"flow": [1] * 5, "seq": [0, 2000, 1000, 1000, 500], "len": [1000] * 5})
    assert received_twice(frame) == 2, received_twice(frame)


def main() -> None:
    self_check()
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    losses = [float(x) for x in sys.argv[2:]] or [1e-5, 1e-4]
    rows = []
    for loss in losses:
        for seed in range(1, seeds + 1):
            rows.append(count("fla.toml", "fla", 4, loss, seed))
            print(rows[-1], flush=True)
    # SC2002's 1x26x2 at path loss 0: its losses are the bottleneck's overflow (30 s of it).
    for seed in range(1, seeds + 1):
        rows.append(count("sc2002.toml", "booth", 26, 0.0, seed, {"run.duration": "30s"}))
        print(rows[-1], flush=True)
    print(pl.DataFrame(rows))


if __name__ == "__main__":
    main()
