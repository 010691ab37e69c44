"""`tcplab run SCENARIO`: simulate one scenario and print per-flow and per-queue summaries.

    tcplab run SCENARIO [--seed N] [--set PATH=VALUE ...] [--out DIR] [--quiet]

Exit status: 0 after a run (written to --out when given), 1 when the run succeeded but its
output could not be written, 2 for an unreadable or invalid scenario or an --out directory that
cannot be used (checked before the run).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from tcplab.cli.common import EXIT_BAD_INPUT, EXIT_FAILURE, error, stdout_console
from tcplab.outdir import check_output, make_staging, output_path
from tcplab.run import run
from tcplab.scenario import ScenarioError
from tcplab.shipped import scenario_path

__all__ = ["add_parser"]

_STOP_NOTES = {
    "time-limit": "the run stopped at the simulated-time limit (1000000 s) before its flows "
    "finished: a flow that cannot finish (a path that loses every packet, a transfer that "
    "deadlocks) runs until this limit; the summary's per-flow counters show where it stopped",
    "idle": "nothing more could happen, yet not every flow finished",
}
"""What the CLI tells the user when a run ended before its flows finished, by stop reason."""


MAX_ROWS_SHOWN = 40
"""Flows (and queues) printed in full. A longer table shows its first HEAD_ROWS and last
TAIL_ROWS rows, a totals row and a line saying where the rest is (summary.json)."""

HEAD_ROWS = 30
TAIL_ROWS = 10


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register the `run` sub-command on `commands` (the `tcplab` sub-parsers)."""
    parser = commands.add_parser(
        "run",
        help="run one scenario and print per-flow and per-queue summaries",
        description="Run one scenario and print per-flow and per-queue summaries.",
    )
    parser.add_argument(
        "scenario",
        metavar="SCENARIO",
        help="scenario TOML file, or a shipped scenario's name (p2_data_reservoir/fla, or fla "
        "when unique)",
    )
    parser.add_argument(
        "--seed", type=_seed, help="random seed (default: the scenario's run.seed, else 1)"
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a scenario value, e.g. flows.0.tcp.mss=9000 or run.duration=5s "
        "(VALUE is read as TOML if it parses, else as a string); repeatable",
    )
    parser.add_argument(
        "--out", metavar="DIR", help="write summary, resolved scenario and traces to DIR"
    )
    parser.add_argument("--quiet", action="store_true", help="do not show a progress bar")
    parser.set_defaults(handler=_cmd_run)


def _seed(text: str) -> int:
    """Parse a --seed value: an integer (its range, [0, 2^63), is checked as run.seed's)."""
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def _cmd_run(args: argparse.Namespace) -> int:
    """`tcplab run`: simulate, print the tables, optionally save.

    SCENARIO is a file when one exists at that path, else a shipped scenario's name
    (`tcplab.shipped.scenario_path`); neither is a one-line error (exit 2): the missing file
    when SCENARIO looks like a path (a separator or `.toml`), else the unknown name.

    With --out, the output directory is checked before the run (exit 2 if it cannot be
    used) and captures stream into a hidden staging directory beside it, never into /tmp; that
    directory is removed on every way out (one left by a kill is removed by the next save).
    """
    if not os.path.exists(args.scenario):
        try:
            args.scenario = os.fspath(scenario_path(args.scenario))
        except KeyError as e:
            if os.sep not in args.scenario and not args.scenario.endswith(".toml"):
                error(f"SCENARIO: {e.args[0]}")
                return EXIT_BAD_INPUT
            # a path: the run reports the missing file as such
    staging = None
    if args.out is not None:
        try:
            target = output_path(args.out)
            check_output(target)
            staging = make_staging(target)
        except OSError as e:
            reason = f"cannot create {e.filename}: {e.strerror}" if e.filename else str(e)
            error(f"out: {reason}")
            return EXIT_BAD_INPUT
    try:
        return _run_and_report(args, staging)
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def _run_and_report(args: argparse.Namespace, staging: Path | None) -> int:
    """Run, print the tables, save to --out; captures go to `staging` when given."""
    try:
        result = run(
            args.scenario,
            seed=args.seed,
            overrides=args.overrides,
            progress=not args.quiet,
            capture_dir=staging,
        )
    except (ScenarioError, OSError) as e:
        error(e)
        return EXIT_BAD_INPUT

    console = stdout_console()
    summary = result.summary
    if args.out is not None:
        full = f"the full table is in {Path(os.path.abspath(args.out)) / 'summary.json'}"
    else:
        full = "give --out DIR to keep the full table (DIR/summary.json)"
    for table, omitted in (_flow_table(summary["flows"]), _queue_table(summary["queues"])):
        console.print(table)
        if omitted:
            what = table.title
            console.print(f"… {omitted:,} more {what}; {full}", highlight=False, markup=False,
                          soft_wrap=True)
    wall = summary["wall_time_s"]
    rate = f", {summary['events'] / wall:,.0f} events/s" if wall > 0 else ""
    console.print(
        f"simulated {summary['sim_time_s']:.6g} s in {wall:.3f} s wall time: "
        f"{summary['events']:,} events{rate} (seed {result.seed}, "
        f"scenario {summary['scenario_name']} {result.scenario_hash})",
        highlight=False,
        markup=False,
    )
    stopped = summary.get("traces_stopped_s")
    if stopped is not None:
        print(f"note: the traces stopped recording at {stopped:.6g} s, when they reached "
              "run.trace_memory (default 2GiB); the run went on to its end and its summary covers "
              "all of it; trace less (longer throughput bins, fewer traces) or raise "
              "run.trace_memory", file=sys.stderr)
    note = _STOP_NOTES.get(summary.get("stop_reason"))
    unfinished = [f["name"] for f in summary["flows"] if f.get("finish_s") is None]
    if note and unfinished:
        print(f"note: {note} ({', '.join(unfinished[:5])}{' …' if len(unfinished) > 5 else ''} "
              "did not finish)", file=sys.stderr)

    if args.out is not None:
        try:
            path = result.save(args.out)
        except OSError as e:
            error(e)
            return EXIT_FAILURE
        console.print(f"wrote {path}", highlight=False, markup=False)
    return 0


def _cut(rows: Sequence[Any]) -> tuple[list[Any], int, list[Any]]:
    """(first rows, number left out, last rows) of a table of `rows`, cut to MAX_ROWS_SHOWN."""
    if len(rows) <= MAX_ROWS_SHOWN:
        return list(rows), 0, []
    return list(rows[:HEAD_ROWS]), len(rows) - HEAD_ROWS - TAIL_ROWS, list(rows[-TAIL_ROWS:])


_FLOW_COUNTERS = ("segments_sent", "retransmits", "timeouts", "fast_retransmits")
"""The flow table's integer columns, after goodput and delivered."""


def _flow_table(flows: Sequence[dict[str, Any]]) -> tuple[Table, int]:
    """Per-flow summary (endpoints, congestion control, goodput and loss-recovery counters),
    cut to MAX_ROWS_SHOWN rows with a totals row; and the number of flows left out."""
    table = Table(title="flows", title_justify="left")
    table.add_column("flow")
    table.add_column("from→to")
    table.add_column("cc")
    for heading in [
        "goodput\nMbps",
        "delivered\nMB",
        "segments",
        "retx",
        "timeouts",
        "fast\nretx",
    ]:
        table.add_column(heading, justify="right")
    head, omitted, tail = _cut(flows)
    for f in head:
        table.add_row(*_flow_cells(f))
    if omitted:
        table.add_row(*(["…"] * len(table.columns)))
        for i, f in enumerate(tail, 1):
            table.add_row(*_flow_cells(f), end_section=i == len(tail))
        table.add_row(
            Text(f"all {len(flows):,}"),
            "",
            "",
            f"{sum(f['goodput_bps'] for f in flows) / 1e6:,.3f}",
            f"{sum(f['bytes_delivered'] for f in flows) / 1e6:,.3f}",
            *(f"{sum(f[key] for f in flows):,}" for key in _FLOW_COUNTERS),
        )
    return table, omitted


def _flow_cells(f: dict[str, Any]) -> list[Any]:
    """The cells of one flow's row."""
    return [
        Text(f["name"]),
        # A block read's connection is opened by its client (src) and carries data from dst.
        Text(f"{f['dst']}→{f['src']}" if f.get("download") else f"{f['src']}→{f['dst']}"),
        Text(f["cc"]),
        f"{f['goodput_bps'] / 1e6:,.3f}",
        f"{f['bytes_delivered'] / 1e6:,.3f}",
        *(f"{f[key]:,}" for key in _FLOW_COUNTERS),
    ]


def _queue_table(queues: Sequence[dict[str, Any]]) -> tuple[Table, int]:
    """Per-queue summary (packets enqueued and dropped, the largest backlog), cut to
    MAX_ROWS_SHOWN rows; and the number of queues left out."""
    table = Table(title="queues", title_justify="left")
    table.add_column("queue")
    for heading in ["enqueued", "dropped", "max\npkts"]:
        table.add_column(heading, justify="right")
    head, omitted, tail = _cut(queues)
    for i, q in enumerate(head + tail):
        if omitted and i == len(head):
            table.add_row(*(["…"] * len(table.columns)))
        table.add_row(
            Text(q["name"]), f"{q['enqueued']:,}", f"{q['dropped']:,}", f"{q['max_packets']:,}"
        )
    return table, omitted
