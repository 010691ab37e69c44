"""Flow-completion times of a web-search workload on a leaf-spine fabric: CUBIC over
drop-tail, DCTCP over ECN marking, CUBIC over FQ-CoDel.

Four leaves, two spines, four hosts per leaf (10 Gb/s host links, 40 Gb/s leaf-spine links,
1 µs each, ECMP), so no leaf's uplinks are oversubscribed. Each leaf's hosts send web-search
flows (DCTCP's size CDF) to the next leaf's hosts as a Poisson stream at 50 % of their links'
rate; each configuration runs the same arrivals, sizes and pairs (the draws follow the seed,
not the controller). Every port holds 200 packets; DCTCP's ports mark at K = 65 packets (the
DCTCP paper's 10 Gb/s setting); FQ-CoDel runs Linux's defaults (target 5 ms, which on a 10 µs
fabric never acts before the buffer's hard limit, like a drop-tail FIFO per flow).

Prints, per configuration, the slowdown (FCT over the flow's ideal on its empty path) at the
median and 99th percentile for small (≤ 100 KB), medium and large (> 10 MB) flows, and draws
`websearch_fct.png`.

    python examples/websearch_fct.py [OUT_DIR] [--flows 200] [--seed 1]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import tcplab
from tcplab.analysis import fct, fct_by_size

EDGES = [0, 100e3, 10e6, 1e9]
BIN_NAMES = ["≤100KB", "100KB–10MB", ">10MB"]

CONFIGS: dict[str, tuple[dict, object]] = {
    "CUBIC, drop-tail": ({"profile": "linux-modern"}, "200pkts"),
    "DCTCP, ECN at 65 pkts": ({"profile": "linux-modern", "cc": "dctcp"}, {"limit": "200pkts", "ecn_threshold": "65pkts"}),
    "CUBIC, FQ-CoDel": ({"profile": "linux-modern"}, {"aqm": "fq-codel", "limit": "200pkts"}),
}


def scenario(tcp: dict, queue: object, flows: int) -> dict:
    """The fabric with one web-search workload per leaf, to the next leaf."""
    link = {"delay": "1us", "queue": queue}
    return {
        "name": "websearch_fct",
        "run": {"stop": "flows-done"},
        "routing": {"ecmp": True},
        "defaults": {"tcp": tcp},
        "topologies": [
            {
                "kind": "leaf-spine",
                "name": "ls",
                "leaves": 4,
                "spines": 2,
                "hosts_per_leaf": 4,
                "host_link": dict(link, rate="10Gbps"),
                "fabric_link": dict(link, rate="40Gbps"),
            }
        ],
        "flows": [
            {
                "name": f"w{i}",
                "kind": "workload",
                "src": f"ls.h{i}",
                "dst": f"ls.h{(i + 1) % 4}",
                "workload": {"flows": flows, "load": 0.5, "sizes": {"dist": "cdf", "cdf": "web-search"}},
            }
            for i in range(4)
        ],
    }


def compare(flows: int = 200, seed: int = 1) -> list[dict]:
    rows = []
    for name, (tcp, queue) in CONFIGS.items():
        t0 = time.perf_counter()
        r = tcplab.run(scenario(tcp, queue, flows), seed=seed)
        wall = time.perf_counter() - t0
        table = fct(r.flows)
        bins = fct_by_size(table, EDGES)
        row = {"config": name, "flows": table.height, "unfinished": int(table["fct_s"].null_count()), "wall_s": wall,
               "packets": r.summary["packets"]["created"], "sim_s": r.summary["sim_time_s"],
               "timeouts": int(r.flows["timeouts"].sum())}
        for label, b in zip(BIN_NAMES, bins.iter_rows(named=True)):
            row[f"{label} n"] = int(b["count"])
            row[f"{label} p50"] = b["p50"]
            row[f"{label} p99"] = b["p99"]
        rows.append(row)
    return rows


def draw(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
    for ax, q in zip(axes, ("p50", "p99")):
        width = 0.8 / len(rows)
        for k, row in enumerate(rows):
            values = [row[f"{b} {q}"] or float("nan") for b in BIN_NAMES]
            ax.bar([i + k * width for i in range(len(BIN_NAMES))], values, width, label=row["config"])
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(BIN_NAMES))], BIN_NAMES)
        ax.set_yscale("log")
        ax.set_title(f"slowdown, {q}")
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("FCT / ideal FCT")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=".")
    ap.add_argument("--flows", type=int, default=200, help="flows per leaf's workload (default 200)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rows = compare(args.flows, args.seed)
    for row in rows:
        cells = ", ".join(f"{b} p50 {row[f'{b} p50']:.1f} p99 {row[f'{b} p99']:.1f} (n {row[f'{b} n']})" for b in BIN_NAMES)
        print(f"{row['config']:24s} {cells}; timeouts {row['timeouts']}; {row['packets']:,} packets, "
              f"{row['sim_s']:.3f} s simulated in {row['wall_s']:.1f} s")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    draw(rows, out / "websearch_fct.png")
    print(f"wrote {out / 'websearch_fct.png'}")


if __name__ == "__main__":
    main()
