"""Five queues on one bottleneck: drop-tail, RED, CoDel, FQ-CoDel and PIE.

Eight CUBIC flows share a 100 Mb/s link (RTT about 20 ms, bandwidth-delay product about 170
packets) whose buffer holds 1000 packets: the shipped scenario `aqm/aqm.toml`, run once per
queue. Prints, per queue, the time-weighted queueing delay (mean and 99th percentile, from
2 s on), the utilisation, Jain's index over the flows' goodputs and the drops, and draws
`aqm_compare.png`.

    python examples/aqm_compare.py [OUT_DIR] [--duration 20s] [--seed 1]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import tcplab
from tcplab.analysis import jain_index, queue_occupancy
from tcplab.shipped import scenario_path

BOTTLENECK = "s1->s2"
LINE_BPS = 100e6

#: The bottleneck's queue in each run (the scenario ships with FQ-CoDel).
QUEUES: dict[str, object] = {
    "drop-tail": "1000pkts",
    "RED": {"aqm": "red", "limit": "1000pkts", "red": {"min_th": 20.0, "max_th": 60.0}},
    "CoDel": {"aqm": "codel", "limit": "1000pkts"},
    "FQ-CoDel": {"aqm": "fq-codel", "limit": "1000pkts"},
    "PIE": {"aqm": "pie", "limit": "1000pkts"},
}


def compare(duration: str = "20s", seed: int = 1, warmup_s: float = 2.0) -> list[dict[str, float | str]]:
    """One run per queue; a row of figures each."""
    rows = []
    for name, queue in QUEUES.items():
        r = tcplab.run(
            scenario_path("aqm/aqm"),
            seed=seed,
            overrides={f"queue({BOTTLENECK})": queue, "run.duration": duration},
        )
        end = r.summary["sim_time_s"]
        occ = queue_occupancy(r.trace("queue"), BOTTLENECK, column="bytes", start_s=warmup_s, end_s=end)
        q = r.queues.filter(r.queues["name"] == BOTTLENECK).row(0, named=True)
        goodputs = r.flows["goodput_bps"].to_list()
        rows.append(
            {
                "queue": name,
                "delay_mean_ms": occ["mean"] * 8 / LINE_BPS * 1e3,
                "delay_p99_ms": occ["p99"] * 8 / LINE_BPS * 1e3,
                "utilisation": q["bytes_transmitted"] * 8 / end / LINE_BPS,
                "jain": jain_index(goodputs),
                "dropped": q["dropped"],
                "goodput_mbps": sum(goodputs) / 1e6,
            }
        )
    return rows


def figure(rows: list[dict[str, float | str]], path: Path) -> None:
    """Queueing delay (mean and p99) against utilisation, one point per queue."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for row in rows:
        ax.errorbar(
            row["delay_mean_ms"],
            row["utilisation"] * 100,
            xerr=[[0], [row["delay_p99_ms"] - row["delay_mean_ms"]]],
            fmt="o",
            capsize=3,
            label=row["queue"],
        )
    ax.set_xscale("log")
    ax.set_xlabel("queueing delay at the bottleneck, ms (mean, bar to p99)")
    ax.set_ylabel("bottleneck utilisation, %")
    ax.set_title("8 CUBIC flows, 100 Mb/s, RTT 20 ms, 1000-packet buffer")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", default="out/aqm_compare")
    ap.add_argument("--duration", default="20s")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rows = compare(args.duration, args.seed)
    print(f"{'queue':<10} {'delay mean':>11} {'delay p99':>10} {'util':>6} {'Jain':>6} {'dropped':>8}")
    for r in rows:
        print(
            f"{r['queue']:<10} {r['delay_mean_ms']:>8.1f} ms {r['delay_p99_ms']:>7.1f} ms "
            f"{r['utilisation'] * 100:>5.1f}% {r['jain']:>6.3f} {r['dropped']:>8}"
        )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    figure(rows, out / "aqm_compare.png")
    print(f"figure: {out / 'aqm_compare.png'}")


if __name__ == "__main__":
    main()
