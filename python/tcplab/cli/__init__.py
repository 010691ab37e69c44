"""The `tcplab` command line: one sub-command per module of this package.

    tcplab run SCENARIO [--seed N] [--set PATH=VALUE ...] [--out DIR] [--quiet]
    tcplab plot RESULT_DIR [--out DIR] [--format png,svg] [--bin SECONDS]
    tcplab sweep SWEEP [--workers N | --cluster ADDRESS] [--out DIR] [--traces] [--retry-failed]
    tcplab reproduce PAPER [--out DIR] [--quick] [--workers N]
    tcplab docs [NAME] [--path]
    tcplab conformance DIR [--out REPORT.md] [--triage FILE] [--log]

`main` is the console script's entry point (`tcplab = "tcplab.cli:main"`); `python -m tcplab`
runs it too.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tcplab import __version__
from tcplab.cli import conformance, docs, plot, reproduce, run, sweep
from tcplab.cli.common import EXIT_INTERRUPTED

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with `argv` (default: `sys.argv[1:]`) and return the exit status."""
    args = _parser().parse_args(argv)
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _parser() -> argparse.ArgumentParser:
    """The argument parser with one sub-parser per command."""
    parser = argparse.ArgumentParser(
        prog="tcplab", description="Deterministic packet-level TCP simulator."
    )
    parser.add_argument("--version", action="version", version=f"tcplab {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in (run, plot, sweep, reproduce, docs, conformance):
        command.add_parser(commands)
    return parser
