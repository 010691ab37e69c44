"""The `tcplab sweep` command.

    tcplab sweep SWEEP [--workers N | --cluster ADDRESS] [--out DIR] [--traces]
                       [--retry-failed] [--quiet]

Exit status: 0 when every run succeeded, 1 when a run failed (or the sweep stopped on an error
after it started), 2 for a bad sweep file, output directory or cluster address, or --cluster
without Dask installed (nothing is run), 130 when interrupted (finished runs are kept; rerun to
resume).
"""

from __future__ import annotations

import argparse
import signal
import sys
from typing import TYPE_CHECKING, Any

from rich import box
from rich.table import Table
from rich.text import Text

from tcplab.cli.common import EXIT_BAD_INPUT, EXIT_INTERRUPTED, error, positive_int, stdout_console
from tcplab.cli.common import EXIT_FAILURE as EXIT_RUN_FAILED

if TYPE_CHECKING:
    import polars as pl

    from tcplab.sweeps import SweepOutcome

# tcplab.sweeps (and polars with it) is imported by the command itself, not when the command
# line is built: `tcplab --version` and `tcplab run` do not pay for it.

__all__ = ["add_parser"]

MAX_POINTS_SHOWN = 40
"""Axis points printed in the summary table (all of them are in results.parquet)."""

HEADING_WIDTH = 9
"""Width below which a metric's column is not narrowed: its heading wraps within it."""

MAX_ERRORS_SHOWN = 10
"""Failed runs printed, one line each, after the table (all of them are in the table)."""


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the `sweep` sub-command to the `tcplab` sub-parsers `commands`."""
    parser = commands.add_parser(
        "sweep",
        help="run a scenario over a grid of parameters and seeds",
        description="Run every point of a sweep file (base scenario, axes over --set paths, "
        "seeds, metrics) on a local process pool or a Dask cluster. With --out, finished runs "
        "are stored and a rerun skips them.",
    )
    parser.add_argument(
        "sweep", metavar="SWEEP", help="sweep TOML file (format: tcplab docs sweeps)"
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=positive_int,
        metavar="N",
        help="local worker processes (default: one per CPU)",
    )
    where.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run on the Dask cluster whose scheduler is at ADDRESS, e.g. tcp://10.0.0.1:8786 "
        "(needs the dask extra: pip install 'tcplab[dask]')",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="result store: one Parquet file per finished run and results.parquet; "
        "rerunning with the same DIR resumes (nothing is written without it)",
    )
    parser.add_argument(
        "--traces",
        action="store_true",
        help="also save each run's traces to DIR/traces/<key>/ (needs --out)",
    )
    parser.add_argument(
        "--retry-failed",
        action="store_true",
        help="rerun runs stored with an error (by default a rerun skips them)",
    )
    parser.add_argument("--quiet", action="store_true", help="do not show a progress bar")
    parser.set_defaults(handler=_cmd_sweep)
    return parser



def _cmd_sweep(args: argparse.Namespace) -> int:
    """`tcplab sweep`: validate, run, print a summary per axis point."""
    from tcplab.sweeps import (
        ClusterError,
        ClusterLost,
        DaskNotInstalled,
        StoreError,
        SweepError,
        WorkerMismatch,
        load_sweep,
        run_sweep,
    )

    if args.traces and args.out is None:
        error("--traces needs --out DIR")
        return EXIT_BAD_INPUT
    try:
        spec = load_sweep(args.sweep)
    except (SweepError, OSError) as e:
        error(e)
        return EXIT_BAD_INPUT

    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        outcome = run_sweep(
            spec,
            workers=args.workers,
            cluster=args.cluster,
            out=args.out,
            traces=True if args.traces else None,
            retry_failed=args.retry_failed,
            progress=not args.quiet,
        )
    except (SweepError, StoreError, ClusterError, DaskNotInstalled) as e:
        error(e)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        kept = f"; finished runs are kept in {args.out}, rerun to resume" if args.out else ""
        print(f"interrupted{kept}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (ClusterLost, WorkerMismatch, OSError) as e:
        kept = f" (finished runs are kept in {args.out}, rerun to resume)" if args.out else ""
        error(f"{e}{kept}")
        return EXIT_RUN_FAILED
    finally:
        signal.signal(signal.SIGTERM, previous)

    _report(outcome)
    return EXIT_RUN_FAILED if outcome.failed else 0


def _terminate(signum: int, frame: Any) -> None:
    """SIGTERM: stop like Ctrl-C (workers stopped, finished runs kept)."""
    raise KeyboardInterrupt


def _report(outcome: SweepOutcome) -> None:
    """Print the per-point table, the failures and a closing line."""
    import polars as pl

    from tcplab.sweeps.stats import axis_columns

    console = stdout_console()
    table = outcome.table
    console.print(_points_table(table))
    failures = table.filter(pl.col("error").is_not_null())
    axes = axis_columns(table)
    for row in failures.head(MAX_ERRORS_SHOWN).iter_rows(named=True):
        point = ", ".join(f"{a}={row[a]}" for a in axes) or "base"
        print(
            f"failed: point {row['point']} ({point}) seed {row['seed']}: {row['error']}",
            file=sys.stderr,
        )
    if failures.height > MAX_ERRORS_SHOWN:
        print(
            f"failed: … and {failures.height - MAX_ERRORS_SHOWN} more (see the error column)",
            file=sys.stderr,
        )
    rate = f", {outcome.executed / outcome.elapsed_s:.1f} runs/s" if outcome.executed else ""
    console.print(
        f"{table.height} runs: {outcome.executed} executed, {outcome.reused} reused, "
        f"{outcome.failed} failed; {outcome.elapsed_s:.1f} s{rate}",
        highlight=False,
        markup=False,
    )
    if outcome.store is not None:
        console.print(f"wrote {outcome.store / 'results.parquet'} (per flow and per queue: "
                      "flows.parquet, queues.parquet)", highlight=False, markup=False)


def _points_table(table: pl.DataFrame) -> Table:
    """One row per axis point: the axis values, runs (failed), and each metric's mean ± CI under
    a short heading with its unit (`metric_heading`); the caption maps headings to metrics."""
    from tcplab.sweeps.labels import metric_heading
    from tcplab.sweeps.stats import axis_columns, metric_columns, sweep_summary

    axes = axis_columns(table)
    metrics = [m for m in metric_columns(table) if table.schema[m].is_numeric()]
    headings = {m: metric_heading(m) for m in metrics}
    out = Table(title="sweep (mean ± 95 % CI over seeds)", title_justify="left",
                box=box.SIMPLE_HEAD, collapse_padding=True)
    legend = "; ".join(f"{headings[m][0]} = {m}" for m in metrics if headings[m][0] != m)
    out.caption = Text(legend) if legend else None  # Text: `[kind=tcp]` is not markup
    out.caption_justify = "left"
    rows: list[list[str]] = []
    if metrics:
        summary = sweep_summary(table, by=axes, value=metrics)
        cells: dict[tuple[Any, ...], dict[str, Any]] = {}
        for row in summary.iter_rows(named=True):
            point = tuple(row[a] for a in axes)
            cells.setdefault(point, {"runs": row["runs"], "failed": row["failed"]})[row["metric"]] = row
        for i, (point, stats) in enumerate(cells.items()):
            if i == MAX_POINTS_SHOWN:
                rows.append(["…"] * (len(axes) + 1 + len(metrics)))
                break
            runs = f"{stats['runs']}" + (f" ({stats['failed']} failed)" if stats["failed"] else "")
            rows.append([*(str(v) for v in point), runs,
                         *(_cell(stats[m], headings[m][2]) for m in metrics)])
    # Values never wrap (each column is at least as wide as its widest value); headings do.
    widths = [max((len(r[i]) for r in rows), default=1) for i in range(len(axes) + 1 + len(metrics))]
    for i, column in enumerate(axes):
        out.add_column(Text(column), min_width=widths[i], max_width=max(widths[i], 16),
                       overflow="fold")
    out.add_column("runs", justify="right", min_width=widths[len(axes)])
    for j, metric in enumerate(metrics):
        name, unit, _ = headings[metric]
        width = widths[len(axes) + 1 + j]
        out.add_column(Text(f"{name}\n{unit}" if unit else name), justify="right",
                       min_width=width, max_width=max(width, HEADING_WIDTH), overflow="fold")
    for r in rows:
        out.add_row(*(Text(c) for c in r))
    return out


def _cell(row: dict[str, Any], factor: float = 1.0) -> str:
    """A table cell: `mean±ci` in the column's unit (3 and 2 significant digits), `–`
    without a mean."""
    if row["mean"] is None:
        return "–"
    text = _number(row["mean"] * factor, 3)
    if row["ci"] is not None:
        text += f"±{_number(row['ci'] * factor, 2)}"
    return text


def _number(x: float, digits: int) -> str:
    """`x` to `digits` significant digits, without an exponent between 10⁻³ and 10⁶."""
    text = f"{x:.{digits}g}"
    if "e" in text and (x == 0 or 1e-3 <= abs(x) < 1e6):
        text = f"{float(text):f}".rstrip("0").rstrip(".")
    return text
