#!/usr/bin/env python3
"""tcplab beside htsim on the same 10 Gb/s dumbbell: data packets per wall second.

    python3 benches/htsim/compare.py                      # N = 10 and 100 flows, 1 s, 5 repetitions
    python3 benches/htsim/compare.py --callgrind          # plus instructions per data packet
    python3 benches/htsim/compare.py --flows 100 --duration 0.2 --reps 9

Builds htsim and our driver (setup.sh: benches/htsim/build/) and tcplab's example
(`cargo build --release -p tcplab-core --example dumbbell`; CARGO_TARGET_DIR is honoured), then
runs, for each flow count, the sides in turn, repetition after repetition, rotating which goes
first (so a change in the machine's load falls on every side alike):

- tcplab: `examples/dumbbell N D`, the example as shipped (an ACK every second segment);
- tcplab-ack1: `examples/dumbbell N D 1`, every segment ACKed, as htsim's TcpSink does (unless
  --no-ack1);
- htsim: `build/htsim_dumbbell N D` (htsim_dumbbell.cpp).

Each side reports the wall time of its event loop alone. Prints per side data packets, wall
seconds and data packets per wall second (median and range), the ratio tcplab / htsim per
repetition and its median, and the sanity figures (goodput, drops, timeouts); with --callgrind,
instructions per data packet of each side under `valgrind --tool=callgrind` (N = 100, D = 0.2
by default). Writes benches/htsim/last_results.md. Standard library only. Run one benchmark at
a time: on a 2-core machine anything else running moves the wall times.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
HTSIM_BIN = HERE / "build" / "htsim_dumbbell"
RESULTS = HERE / "last_results.md"


def target_dir() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")


def tcplab_bin() -> Path:
    return target_dir() / "release" / "examples" / "dumbbell"


def sides(ack1: bool) -> list[str]:
    return ["tcplab", "tcplab-ack1", "htsim"] if ack1 else ["tcplab", "htsim"]


def command(side: str, flows: int, duration: float) -> list[str]:
    if side == "htsim":
        return [str(HTSIM_BIN), str(flows), repr(duration)]
    cmd = [str(tcplab_bin()), str(flows), repr(duration)]
    return cmd + ["1"] if side == "tcplab-ack1" else cmd


_NUM = r"([0-9.eE+-]+)"


def parse(side: str, out: str) -> dict:
    """The figures a side printed, as numbers."""
    pats = {
        "data": rf"data pkts {_NUM}",
        "events": rf"events {_NUM}",
        "wall": rf"wall {_NUM}s",
        "goodput": rf"goodput {_NUM} Mb/s",
        "flow_lo": rf"per-flow {_NUM}-",
        "flow_hi": rf"per-flow [0-9.]+-{_NUM} Mb/s",
        "drops": rf"bottleneck drops {_NUM}",
        "other_drops": rf"other drops {_NUM}",
        "timeouts": rf"timeouts {_NUM}",
    }
    pats["recoveries"] = rf"fast recoveries {_NUM}" if side == "htsim" else rf"fast retransmits {_NUM}"
    r = {}
    for k, p in pats.items():
        m = re.search(p, out)
        if not m:
            sys.exit(f"compare.py: {side}: no '{k}' in its output:\n{out}")
        r[k] = float(m.group(1))
    r["rate"] = r["data"] / r["wall"]
    return r


def run(side: str, flows: int, duration: float) -> dict:
    cmd = command(side, flows, duration)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"compare.py: {' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return parse(side, p.stdout)


def callgrind(side: str, flows: int, duration: float) -> tuple[int, dict]:
    """Instructions the whole process executed under callgrind, and what it printed."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out"]
        cmd += command(side, flows, duration)
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"compare.py: {' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}")
        m = re.search(r"Collected : (\d+)", p.stderr)
        if not m:
            sys.exit(f"compare.py: no instruction count from callgrind:\n{p.stderr}")
        return int(m.group(1)), parse(side, p.stdout)


def sh(cmd: list[str], **kw) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, **kw).stdout.strip()


def machine() -> list[str]:
    lines = [f"- `nproc`: {sh(['nproc'])}"]
    lscpu = sh(["lscpu"]).splitlines()
    model = next((l.split(":", 1)[1].strip() for l in lscpu if l.startswith("Model name")), "?")
    lines.append(f"- CPU: {model} ({platform.machine()}), kernel {platform.release()}")
    lines.append(f"- load average when the runs began: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    lines.append(f"- g++: {sh(['g++', '--version']).splitlines()[0]}; rustc: {sh(['rustc', '--version'])}")
    commit = sh(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"])
    # What the two binaries are built from (not the results or the README).
    built_from = ["crates", "Cargo.toml", "Cargo.lock", "benches/htsim/htsim_dumbbell.cpp", "benches/htsim/setup.sh"]
    dirty = " (with uncommitted changes)" if sh(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no", "--"] + built_from) else ""
    lines.append(f"- tcplab: commit {commit}{dirty}")
    src = HERE / "build" / "SOURCE"
    flags = HERE / "build" / "CXXFLAGS"
    if src.exists():
        lines.append(f"- htsim: {src.read_text().strip()}; driver built with `g++ {flags.read_text().strip() if flags.exists() else '?'}`")
    return lines


def fmt_int(x: float) -> str:
    return f"{x:,.0f}"


def med_range(xs: list[float], f=lambda x: f"{x:.3f}") -> str:
    return f"{f(statistics.median(xs))} ({f(min(xs))}–{f(max(xs))})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", type=int, nargs="+", default=[10, 100])
    ap.add_argument("--duration", type=float, default=1.0, help="simulated seconds (default 1)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--no-ack1", action="store_true", help="leave out tcplab with every segment ACKed")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions per data packet")
    ap.add_argument("--callgrind-flows", type=int, default=100)
    ap.add_argument("--callgrind-duration", type=float, default=0.2)
    ap.add_argument("--no-build", action="store_true", help="use the binaries as they are")
    args = ap.parse_args()
    side_list = sides(not args.no_ack1)

    if not args.no_build:
        subprocess.run(["bash", str(HERE / "setup.sh")], check=True)
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "tcplab-core", "--example", "dumbbell"], cwd=REPO, check=True)
    for b in (HTSIM_BIN, tcplab_bin()):
        if not b.exists():
            sys.exit(f"compare.py: {b} is missing (run without --no-build)")

    out: list[str] = [
        "# tcplab beside htsim: last results",
        "",
        f"Written by `benches/htsim/compare.py {' '.join(sys.argv[1:])}` on {_dt.datetime.now():%Y-%m-%d %H:%M}.",
        "",
    ]
    out += machine()
    out.append("")

    def emit(line: str = "") -> None:
        print(line, flush=True)
        out.append(line)

    for line in out:
        print(line)
    for flows in args.flows:
        for side in side_list:  # warm-up, not counted: page the binaries in
            run(side, flows, min(args.duration, 0.05))
        res: dict[str, list[dict]] = {s: [] for s in side_list}
        for rep in range(args.reps):
            k = rep % len(side_list)
            for side in side_list[k:] + side_list[:k]:
                res[side].append(run(side, flows, args.duration))
        emit(f"## N = {flows} flows, {args.duration:g} s simulated, {args.reps} repetitions")
        emit()
        emit("| side | data packets | events | wall s, median (range) | M data packets / wall s, median (range) | goodput Mb/s | per-flow Mb/s | bottleneck drops | other drops | fast recoveries | timeouts |")
        emit("|---|---|---|---|---|---|---|---|---|---|---|")
        for side in side_list:
            rs = res[side]
            m = lambda k: statistics.median(r[k] for r in rs)  # noqa: E731
            emit(
                f"| {side} | {fmt_int(m('data'))} | {fmt_int(m('events'))} | {med_range([r['wall'] for r in rs])} | "
                f"{med_range([r['rate'] / 1e6 for r in rs], lambda x: f'{x:.2f}')} | {m('goodput'):.1f} | "
                f"{min(r['flow_lo'] for r in rs):.1f}–{max(r['flow_hi'] for r in rs):.1f} | {fmt_int(m('drops'))} | "
                f"{fmt_int(m('other_drops'))} | {fmt_int(m('recoveries'))} | {fmt_int(m('timeouts'))} |"
            )
        emit()
        same = all(len({(r["data"], r["drops"], r["goodput"]) for r in res[s]}) == 1 for s in side_list)
        if same:
            emit("Each side simulated the same packets in every repetition (data packets, drops and goodput identical); only")
            emit("the wall time varies.")
        else:
            emit("**The repetitions of a side did not all simulate the same packets** (medians shown).")
        emit()
        for side in [s for s in side_list if s != "htsim"]:
            ratios = [a["rate"] / b["rate"] for a, b in zip(res[side], res["htsim"])]
            emit(
                f"- {side} / htsim, data packets per wall second, per repetition: "
                f"{', '.join(f'{x:.2f}' for x in ratios)}; **median {statistics.median(ratios):.2f}**"
            )
        emit()

    if args.callgrind:
        f, d = args.callgrind_flows, args.callgrind_duration
        emit(f"## Instructions per data packet (callgrind, N = {f}, {d:g} s simulated)")
        emit()
        emit("Whole process, as CONTRIBUTING.md measures tcplab (`valgrind --tool=callgrind BIN N D`); the fixed part")
        emit(f"(parsing, building, tearing down) is measured by the same run with {1e-6:g} s simulated and taken off for the last column.")
        emit()
        emit("| side | instructions | data packets | events | instructions / data packet | instructions / event | fixed part | (instructions − fixed) / data packet |")
        emit("|---|---|---|---|---|---|---|---|")
        per = {}
        for side in side_list:
            ir, r = callgrind(side, f, d)
            ir0, _ = callgrind(side, f, 1e-6)
            per[side] = (ir - ir0) / r["data"]
            emit(
                f"| {side} | {fmt_int(ir)} | {fmt_int(r['data'])} | {fmt_int(r['events'])} | {ir / r['data']:,.0f} | "
                f"{ir / r['events']:,.0f} | {fmt_int(ir0)} | {per[side]:,.0f} |"
            )
        emit()
        for side in [s for s in side_list if s != "htsim"]:
            emit(f"- htsim / {side}, instructions per data packet (net of the fixed part): {per['htsim'] / per[side]:.2f}")
        emit()

    RESULTS.write_text("\n".join(out) + "\n")
    print(f"wrote {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
