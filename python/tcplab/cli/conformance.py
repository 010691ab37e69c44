"""`tcplab conformance DIR`: Linux's packetdrill TCP tests run against tcplab's TCP model.

Usage:

    tcplab conformance DIR [--out REPORT.md] [--triage FILE] [--log SCRIPT]

DIR is a checkout of google/packetdrill's `gtests/net/tcp/` (or any directory of `.pkt`
scripts, or one script). Every script runs against the model's connection; the report gives the
pass rate per directory and, for every in-scope script that differs, its first difference and
why (the shipped triage, `tcplab/conformance/packetdrill.toml`, or --triage). --log SCRIPT prints
one script's event-by-event log (time, line, cwnd, ssthresh, state) and its result.

Exit status: 0 when every in-scope script passes or is triaged, 3 when a failure is not in the
triage or a triaged script now passes (the triage needs an update), 2 for a missing DIR or an
--out file that tcplab did not write.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tcplab.cli.common import EXIT_BAD_INPUT, EXIT_FINDINGS_DIFFER, error, stdout_console

__all__ = ["add_parser"]

REPORT_HEADER = "# packetdrill conformance (tcplab conformance)"
"""The first line of every report this command writes: an existing --out file is replaced only
when it starts with it."""


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register the `conformance` sub-command on `commands` (the `tcplab` sub-parsers)."""
    parser = commands.add_parser(
        "conformance",
        help="run Linux's packetdrill TCP tests against the TCP model and classify differences",
        description="Run every packetdrill script under DIR (google/packetdrill "
        "gtests/net/tcp/, not shipped) against tcplab's TCP model, with tcplab's own "
        "interpreter, and report the pass rate per directory and why each in-scope script "
        "that differs does.",
    )
    parser.add_argument("path", metavar="DIR", help="a directory of .pkt scripts, or one script")
    parser.add_argument("--out", metavar="REPORT.md", help="also write the report (Markdown)")
    parser.add_argument(
        "--triage", metavar="FILE", help="triage table (default: the shipped packetdrill.toml)"
    )
    parser.add_argument(
        "--log", action="store_true", help="print each script's event log (for one script)"
    )
    parser.set_defaults(handler=_cmd_conformance)


def _cmd_conformance(args: argparse.Namespace) -> int:
    """Run, classify, print, write."""
    from tcplab import conformance

    path = Path(args.path)
    if not path.exists():
        error(f"{path}: no such file or directory")
        return EXIT_BAD_INPUT
    if args.out is not None:
        out = Path(args.out)
        if out.is_dir() or (out.exists() and not _ours(out)):
            error(f"out: {out} exists and is not a report tcplab wrote; choose another file")
            return EXIT_BAD_INPUT
    try:
        triage = conformance.load_triage(args.triage)
    except (OSError, ValueError) as e:
        error(f"triage: {e}")
        return EXIT_BAD_INPUT
    results = conformance.run(path, verbose=args.log)
    if args.log:
        for r in results:
            print(f"== {r.path}")
            for line in r.log:
                print(line)
            print("PASS" if r.passed else f"FAIL line {r.line} [{r.kind}] {r.message}")
    report = conformance.classify(results, triage)
    text = conformance.markdown(report)
    _print_summary(report)
    if args.out is not None:
        tmp = Path(f"{args.out}.tmp-{os.getpid()}")
        tmp.write_text(text)
        os.replace(tmp, args.out)
    return 0 if report.ok else EXIT_FINDINGS_DIFFER


def _ours(path: Path) -> bool:
    """True when `path` is a report this command wrote (its first line)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.readline().rstrip("\n") == REPORT_HEADER
    except (OSError, UnicodeDecodeError):
        return False


def _print_summary(report) -> None:  # type: ignore[no-untyped-def]
    """The per-directory table and the unclassified failures, on stdout."""
    from rich.table import Table

    console = stdout_console()
    table = Table(title="packetdrill conformance")
    for col in ("directory", "scope", "passed", "scripts"):
        table.add_column(col, justify="right" if col in ("passed", "scripts") else "left")
    for d, (p, n) in report.by_directory().items():
        table.add_row(d, "in" if d in report.in_scope else "out", str(p), str(n))
    console.print(table)
    passed, total = report.scope_counts()
    console.print(f"in scope: {passed} of {total} pass; corpus: {report.corpus}")
    for r in report.unclassified:
        print(f"unclassified: {r.path}:{r.line} [{r.kind}] {r.message}", file=sys.stderr)
    for p in report.stale:
        print(f"now passes (remove its triage entry): {p}", file=sys.stderr)
