"""What the commands share: exit statuses, the `error: …` line and the stdout console."""

from __future__ import annotations

import argparse
import os
import re
import sys

from rich.console import Console

from tcplab.shipped import doc_names

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_FAILURE",
    "EXIT_FINDINGS_DIFFER",
    "EXIT_INTERRUPTED",
    "PIPE_WIDTH",
    "error",
    "stdout_console",
]

EXIT_FAILURE = 1
"""Exit status when the work failed after it started: a run's output could not be written,
nothing could be plotted, a sweep run failed, a study's reproduction stopped."""

EXIT_FINDINGS_DIFFER = 3
"""Exit status of `tcplab reproduce` when it ran to the end and wrote its complete report, but
one or more of the paper's findings do not hold in it (a result, not an error: report.md lists
each with its measured values)."""

EXIT_BAD_INPUT = 2
"""Exit status for bad input found before anything runs: the command line, an unreadable or
invalid scenario or sweep file, an output directory that cannot be used, a missing extra."""

EXIT_INTERRUPTED = 130
"""Exit status after Ctrl-C or SIGTERM (128 + SIGINT)."""

PIPE_WIDTH = 200
"""Console width when stdout is not a terminal, so that tables are not cut to 80 columns."""

_CITED_DOC = re.compile(r"\bdocs/([a-z0-9-]+)\.md\b")
"""A document cited in a message, e.g. `docs/scenario-format.md`."""


def stdout_console() -> Console:
    """A rich console on stdout: the terminal's width; when piped, `COLUMNS` if it is set to a
    positive number, else PIPE_WIDTH."""
    if sys.stdout.isatty():
        return Console()
    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() and int(columns) > 0 else PIPE_WIDTH
    return Console(width=width)


def error(e: object) -> None:
    """Print `error: <message>` for `e` (an exception or a message) to stderr.

    An OSError with a file name prints as `<file>: <reason>`. A message that cites a document
    shipped with tcplab (`docs/NAME.md`) is followed by a line `see: tcplab docs NAME`, since an
    installed tcplab has no docs/ directory beside it.
    """
    if isinstance(e, OSError) and e.strerror and e.filename is not None:
        message = f"{e.filename}: {e.strerror}"
    else:
        message = str(e)
    print(f"error: {message}", file=sys.stderr)
    shipped = doc_names()
    for name in dict.fromkeys(_CITED_DOC.findall(message)):
        if name in shipped:
            print(f"see: tcplab docs {name}", file=sys.stderr)


def positive_int(text: str) -> int:
    """Parse an option that takes an integer ≥ 1 (`--workers`): argparse exits 2 naming the
    option otherwise."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text}")
    return value
