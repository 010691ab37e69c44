"""`tcplab reproduce PAPER [--out DIR] [--quick]`: rerun a study and write its report.

Exit status: 0 when every finding of the paper holds, 1 when one does not (comparisons beyond
the paper are reported but do not decide).
"""

from __future__ import annotations

import argparse
import time

from rich.console import Console

from tcplab.cli.common import EXIT_FAILURE
from tcplab.reproduce import STUDIES, verdict

__all__ = ["add_parser"]


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register the `reproduce` sub-command."""
    p = commands.add_parser(
        "reproduce",
        help="rerun a study's experiments and write its figures and report.md",
        description="Rerun a study's experiments over several seeds; write the equivalents of "
        "its figures and a report.md setting each finding beside the measurement.",
    )
    p.add_argument("paper", choices=sorted(STUDIES), help="study to reproduce")
    p.add_argument("--out", metavar="DIR", help="output directory (default: out/<paper>)")
    p.add_argument("--quick", action="store_true", help="shorter runs and fewer seeds (under a minute)")
    p.set_defaults(handler=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    """Run the reproduction; exit 0 when every finding of the paper holds, 1 otherwise.
    Comparisons beyond the paper are printed and written to the report but do not decide."""
    out = args.out or f"out/{args.paper}"
    console = Console(stderr=True)
    started = time.perf_counter()
    with console.status("starting") as status:
        checks = STUDIES[args.paper].reproduce(out, quick=args.quick, progress=lambda msg: status.update(msg))
    for c in checks:
        mark = "[green]pass[/]" if c.passed else "[red]FAIL[/]"
        kind = "" if c.paper else " (beyond the paper)"
        console.print(f"{mark}  {c.figure}{kind}: {c.claim}\n      {c.measured}")
    held, total = verdict(checks)
    console.print(f"the paper's findings: {held} of {total} hold; wrote {out}/report.md in {time.perf_counter() - started:.0f} s")
    return 0 if held == total else EXIT_FAILURE
