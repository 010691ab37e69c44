"""`tcplab reproduce PAPER [--out DIR] [--quick] [--workers N]`: rerun a study and write its report.

Exit status: 0 when the report is written and every finding of the paper holds; 3 when the
report is written and one or more findings do not hold (report.md lists them, measured values
and all); 1 when the reproduction could not finish; 2, before anything runs, when --out holds
something tcplab did not write (the message names it). Comparisons beyond the paper are
reported but do not decide.
"""

from __future__ import annotations

import argparse
import time

from rich.console import Console

from tcplab.scenario import ScenarioError
from tcplab.cli.common import EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_FINDINGS_DIFFER, error, positive_int
from tcplab.reproduce import STUDY_NAMES, verdict
from tcplab.shipped import doc_title, study_readmes
from tcplab.reproduce.findings import not_exercised

__all__ = ["add_parser"]


def study_titles() -> dict[str, str]:
    """Each study's title, the first heading of its README (its name where it has none)."""
    readmes = study_readmes()
    return {n: doc_title(n) if n in readmes else n for n in sorted(STUDY_NAMES)}


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register the `reproduce` sub-command."""
    p = commands.add_parser(
        "reproduce",
        help="rerun a study's experiments and write its figures and report.md",
        description="Rerun a study's experiments over several seeds; write the equivalents of "
        "its figures and a report.md setting each finding beside the measurement.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paper", choices=sorted(STUDY_NAMES), help="study to reproduce (below)")
    p.epilog = "studies:\n" + "\n".join(
        f"  {name}  {title}" for name, title in study_titles().items()
    ) + "\n\neach study's README: tcplab docs NAME"
    p.add_argument("--out", metavar="DIR", help="output directory (default: out/<paper>)")
    p.add_argument("--quick", action="store_true", help="shorter runs and fewer seeds (see the study's README for its time)")
    p.add_argument("--workers", type=positive_int, metavar="N", help="local worker processes for the runs (default: one per CPU)")
    p.set_defaults(handler=_cmd)



def _cmd(args: argparse.Namespace) -> int:
    """Run the reproduction; exit 0 when every finding of the paper holds, 3 when the report is
    complete but some do not (an error on the way raises, exit 1). Comparisons beyond the
    paper are printed and written to the report but do not decide."""
    from tcplab.reproduce import STUDIES  # the study modules, only when one runs
    from tcplab.reproduce.output import check_out
    from tcplab.reproduce.runner import RunsFailed
    from tcplab.sweeps.pool import kept_pools

    out = args.out or f"out/{args.paper}"
    try:
        # Before anything runs: tcplab replaces only what it wrote there (run --out's rule).
        check_out(out)
    except OSError as e:
        reason = f"cannot use {e.filename}: {e.strerror}" if e.filename else str(e)
        error(f"out: {reason}")
        return EXIT_BAD_INPUT
    console = Console(stderr=True)
    started = time.perf_counter()
    try:
        # One local pool for all the study's sweeps: its workers start once.
        with console.status("starting") as status, kept_pools():
            checks = STUDIES[args.paper].reproduce(out, quick=args.quick, progress=lambda msg: status.update(msg),
                                                   workers=args.workers)
    except (ScenarioError, RunsFailed, OSError) as e:
        # A shipped scenario the study's overrides make invalid, runs that failed, or an output
        # it cannot write: the reproduction stops with the reason, not a traceback.
        error(e)
        console.print(f"reproduce {args.paper}: stopped; {out}/report.md was not written")
        return EXIT_FAILURE
    for c in checks:
        mark = {"pass": "[green]pass[/]", "FAIL": "[red]FAIL[/]"}.get(c.status, "[yellow]n/e [/]")
        kind = "" if c.paper else " (beyond the paper)"
        console.print(f"{mark}  {c.figure}{kind}: {c.claim}\n      {c.measured}")
    held, total = verdict(checks)
    idle = not_exercised(checks)
    idle_text = f" ({idle} not exercised)" if idle else ""
    console.print(f"the paper's findings: {held} of {total} hold{idle_text}; wrote {out}/report.md in {time.perf_counter() - started:.0f} s")
    if held < total:
        console.print(f"{total - held} of the paper's findings do not hold here (exit status {EXIT_FINDINGS_DIFFER}); report.md says how each differs")
        return EXIT_FINDINGS_DIFFER
    return 0
