"""Writing a study's report: `report.md` (a Markdown builder) and `results.json`."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tcplab.reproduce.findings import Check, not_exercised, verdict
from tcplab.result import Result

__all__ = ["CHECK_HEADER", "Report", "check_row", "write_results_json"]

CHECK_HEADER = ("figure", "the paper", "measured", "")
"""Default header of a table of checks (the last column holds pass or **FAIL**)."""


def _mark(check: Check) -> str:
    """pass, **FAIL**, or *not exercised* (the runs never met the finding's situation)."""
    return {"pass": "pass", "FAIL": "**FAIL**"}.get(check.status, f"*{check.status}*")


def check_row(check: Check) -> tuple[str, str, str, str]:
    """The cells of one check in a table: figure, claim, measured, pass/**FAIL**."""
    return (check.figure, check.claim, check.measured, _mark(check))


class Report:
    """A Markdown document built block by block (headings, paragraphs, tables, lists), the
    blocks separated by one blank line.

        report = Report("Study 000 reproduced")
        report.paragraph("Seeds 1, 2, 3; …")
        report.heading("The paper's findings")
        report.checks([c for c in checks if c.paper])
        report.write(out / "report.md")
    """

    def __init__(self, title: str):
        """A document whose first line is `# title`."""
        self.blocks: list[str] = [f"# {title}"]

    def heading(self, text: str, level: int = 2) -> None:
        """A section heading (`## text` at the default level 2)."""
        self.blocks.append(f"{'#' * level} {text}")

    def paragraph(self, text: str) -> None:
        """A paragraph (one line of Markdown; it may be long)."""
        self.blocks.append(text)

    def table(self, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        """A table: `| a | b |` rows under a header; cells are written with `str`, an empty
        cell as `| |`."""
        lines = [_row(header), "|" + "|".join("---" for _ in header) + "|"]
        lines += [_row([str(cell) for cell in row]) for row in rows]
        self.blocks.append("\n".join(lines))

    def checks(self, checks: Iterable[Check], header: Sequence[str] = CHECK_HEADER) -> None:
        """A table of checks, one row each (`check_row`)."""
        self.table(header, [check_row(c) for c in checks])

    def findings(self, checks: Iterable[Check]) -> None:
        """Every check as a numbered finding: its place in the paper, the claim, the paper's
        own sentence as a quote, the measurement and pass or **FAIL** (failures included)."""
        lines = []
        for i, c in enumerate(checks, 1):
            where = c.location or c.figure
            verdict = _mark(c)
            lines.append(f"{i}. **{c.claim}** ({where}; {verdict})")
            if c.quote:
                lines.append(f"   > {c.quote}")
                lines.append("")
            lines.append(f"   Measured: {c.measured}")
        self.blocks.append("\n".join(lines))

    def paper_findings(self, checks: Iterable[Check], seed_file: str, note: str = "") -> None:
        """The section every study's report opens with: how many of the paper's findings hold
        (and `note`, what the count rests on), their table, and each numbered with its sentence
        from `seed_file` (failures included)."""
        paper = [c for c in checks if c.paper]
        held, total = verdict(paper)
        idle = not_exercised(paper)
        self.heading("The paper's findings")
        self.paragraph(f"**{held} of {total} findings of the paper hold** with the shipped settings"
                       + (f" ({idle} not exercised: the runs never met the situation the finding is about)" if idle else "") + "."
                       + (f" {note}" if note else ""))
        self.checks(paper)
        self.paragraph(f"Each finding with the paper's own sentence (seed `{seed_file}`):")
        self.findings(paper)

    def bullets(self, items: Iterable[str]) -> None:
        """A bulleted list."""
        self.blocks.append("\n".join(f"- {item}" for item in items))

    def text(self) -> str:
        """The document as Markdown text (ending in a newline)."""
        return "\n\n".join(self.blocks) + "\n"

    def write(self, path: str | Path) -> Path:
        """Write the document to `path` (UTF-8); returns the path."""
        path = Path(path)
        path.write_text(self.text(), encoding="utf-8")
        return path


def _row(cells: Sequence[str]) -> str:
    """One table line: `| a | b |`, an empty cell as `| |`."""
    return "|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|"


def write_results_json(data: Mapping[str, Any], checks: Iterable[Check], path: str | Path) -> Path:
    """Write `data` (without its Result objects) and the checks as JSON to `path`.

    Values JSON cannot hold natively (numpy numbers) are written as floats; NaN as `NaN`.
    """
    plain = {k: v for k, v in data.items() if not isinstance(v, Result)}
    plain["checks"] = [dataclasses.asdict(c) for c in checks]
    path = Path(path)
    path.write_text(json.dumps(plain, indent=2, default=float), encoding="utf-8")
    return path
