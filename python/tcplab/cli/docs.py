"""`tcplab docs [NAME] [--path]`: the documents shipped with tcplab.

Messages cite documents as `docs/NAME.md` (the source tree's path); an installed tcplab has
them inside the package, and this command shows them wherever tcplab is installed.

    tcplab docs              list the documents, and where the shipped scenarios are
    tcplab docs NAME         print document NAME (Markdown) to stdout: `readme` (the project's
                             README), a study's README by its name (`p2`), or a reference
                             document (`scenario-format`, `sweeps`, ...)
    tcplab docs NAME --path  print its path instead

Exit status: 0, or 2 for an unknown NAME.
"""

from __future__ import annotations

import argparse
import sys

from tcplab.cli.common import EXIT_BAD_INPUT, error
from tcplab.shipped import doc_names, doc_path, doc_title, docs_dir, scenarios_dir

__all__ = ["add_parser"]


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register the `docs` sub-command on `commands` (the `tcplab` sub-parsers)."""
    parser = commands.add_parser(
        "docs",
        help="list or print the documents shipped with tcplab (README, each study's README, "
        "scenario format, sweeps, …)",
        description="List the documents shipped with tcplab, or print one: `readme`, a study's "
        "README by its name (p0, p1, …), the reference documents. Messages that cite "
        "docs/NAME.md mean the document `tcplab docs NAME` prints.",
    )
    parser.add_argument("name", nargs="?", metavar="NAME", help="document to print")
    parser.add_argument(
        "--path", action="store_true", help="print the document's path (or the directory's)"
    )
    parser.set_defaults(handler=_cmd_docs)


def _cmd_docs(args: argparse.Namespace) -> int:
    """List the documents, or print one (or its path)."""
    if args.name is None:
        if args.path:
            print(docs_dir())
            return 0
        width = max(len(name) for name in doc_names())
        for name in doc_names():
            print(f"{name:<{width}}  {doc_title(name)}")
        print(f"\nshipped scenarios: {scenarios_dir()}")
        return 0
    try:
        path = doc_path(args.name)
    except KeyError as e:
        error(e.args[0])
        return EXIT_BAD_INPUT
    if args.path:
        print(path)
    else:
        sys.stdout.write(path.read_text(encoding="utf-8"))
    return 0
