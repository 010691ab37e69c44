"""`tcplab plot RESULT_DIR`: render the standard figures of a saved run.

Usage:

    tcplab plot RESULT_DIR [--out DIR] [--format png,svg] [--bin SECONDS]

Exit status: 0 when the figures were written, 1 when nothing could be plotted or written, 2 for
a directory that is not a tcplab result, a bad option, or an output directory holding something
tcplab did not write (named; checked before anything is drawn: tcplab replaces only the figures
it wrote there).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tcplab.cli.common import EXIT_BAD_INPUT, EXIT_FAILURE

__all__ = ["add_parser"]

FORMATS = ("png", "svg", "pdf")
"""The file formats --format accepts."""


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register the `plot` sub-command on `commands` (the `tcplab` sub-parsers)."""
    parser = commands.add_parser(
        "plot",
        help="render the standard figures of a saved run (tcplab run --out DIR)",
        description="Render the standard figures of a saved run: throughput, cwnd, queue "
        "length and an event raster for the traces it recorded, and a time-sequence graph "
        "per TCP flow when it holds a capture.",
    )
    parser.add_argument("result_dir", metavar="RESULT_DIR", help="a tcplab run --out directory")
    parser.add_argument(
        "--out", metavar="DIR", help="where to write the figures (default: RESULT_DIR/plots)"
    )
    parser.add_argument(
        "--format",
        dest="formats",
        type=_formats,
        default=["png", "svg"],
        metavar="FMT[,FMT]",
        help=f"comma-separated file formats among {', '.join(FORMATS)} (default: png,svg)",
    )
    parser.add_argument(
        "--bin",
        dest="bin_s",
        type=_positive_seconds,
        metavar="SECONDS",
        help="throughput bin in seconds (a multiple of the trace interval; default: the "
        "trace's own bins, or 0.1 from a capture)",
    )
    parser.set_defaults(handler=_cmd_plot)


def _formats(text: str) -> list[str]:
    """Parse --format: a comma-separated list of known formats."""
    formats = [f.strip().lower() for f in text.split(",") if f.strip()]
    bad = [f for f in formats if f not in FORMATS]
    if not formats or bad:
        raise argparse.ArgumentTypeError(
            f"formats must be among {', '.join(FORMATS)}, got {text!r}"
        )
    return list(dict.fromkeys(formats))


def _positive_seconds(text: str) -> float:
    """Parse --bin: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text}")
    return value


def _cmd_plot(args: argparse.Namespace) -> int:
    """`tcplab plot`: build the standard figures and write them."""
    from tcplab.outdir import check_output, output_path
    from tcplab.plots import save_figures, standard_figures

    result_dir = Path(args.result_dir)
    out = Path(args.out) if args.out is not None else result_dir / "plots"
    try:
        # Before drawing anything: tcplab replaces only what it wrote there (run --out's rule).
        check_output(output_path(out), kind="plot")
    except OSError as e:
        reason = f"cannot use {e.filename}: {e.strerror}" if e.filename else str(e)
        print(f"error: out: {reason}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        figures = standard_figures(result_dir, bin_s=args.bin_s)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not figures:
        print(
            f"error: {result_dir}: no traces to plot (record some in the scenario's [trace] table)",
            file=sys.stderr,
        )
        return EXIT_FAILURE
    try:
        written = save_figures(figures, out, args.formats)
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_FAILURE
    for path in written:
        print(f"wrote {path}")
    return 0
