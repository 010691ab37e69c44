"""Linux's packetdrill TCP tests run against tcplab's TCP model, and the report that classifies
every difference.

The interpreter is tcplab's own (crates/tcplab-core/src/packetdrill/): it drives the model's
connection directly, with no kernel and no real time. The corpus (google/packetdrill
`gtests/net/tcp/`) is not shipped: point `run` at a checkout of it. `packetdrill.toml` beside
this file triages the known differences: a mechanism tcplab does not model (RACK, TLP, RST, …)
or something the interpreter does not run.

    results = conformance.run("packetdrill/gtests/net/tcp")
    report = conformance.classify(results)
    print(conformance.markdown(report))
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcplab import _core

__all__ = ["Report", "ScriptResult", "classify", "load_triage", "markdown", "run", "triage_path"]


@dataclass(frozen=True)
class ScriptResult:
    """One script's run: `passed`, else the first difference (`line`, `kind`, `message`)."""

    path: str
    passed: bool
    line: int
    kind: str
    message: str
    psh_lines: list[int]
    not_modelled: list[str]
    log: list[str]

    @property
    def directory(self) -> str:
        """The script's directory under the corpus root (`slow_start`), or "." at the top."""
        parts = self.path.split("/")
        return parts[0] if len(parts) > 1 else "."


def run(path: str | os.PathLike[str], verbose: bool = False) -> list[ScriptResult]:
    """Run every `.pkt` script under `path` (or the one file `path`)."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or directory")
    return [ScriptResult(**r) for r in json.loads(_core.packetdrill(str(p), verbose))]


def triage_path() -> Path:
    """The shipped triage file (`packetdrill.toml` beside this module)."""
    return Path(__file__).with_name("packetdrill.toml")


def load_triage(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The triage table: in-scope directories, out-of-scope ones, features, scripts."""
    with open(path or triage_path(), "rb") as f:
        return tomllib.load(f)


@dataclass
class Report:
    """The results, classified against the triage."""

    corpus: str
    results: list[ScriptResult]
    in_scope: list[str]
    out_of_scope: dict[str, str]
    features: dict[str, str]
    scripts: dict[str, dict[str, str]]
    unclassified: list[ScriptResult] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)

    def by_directory(self) -> dict[str, tuple[int, int]]:
        """Passed and total scripts per directory."""
        out: dict[str, tuple[int, int]] = {}
        for r in self.results:
            passed, total = out.get(r.directory, (0, 0))
            out[r.directory] = (passed + r.passed, total + 1)
        return dict(sorted(out.items()))

    def scope_counts(self) -> tuple[int, int]:
        """Passed and total scripts in the in-scope directories."""
        rs = [r for r in self.results if r.directory in self.in_scope]
        return sum(r.passed for r in rs), len(rs)

    @property
    def ok(self) -> bool:
        """No unclassified failure and no triage entry for a script that now passes."""
        return not self.unclassified and not self.stale


def classify(results: list[ScriptResult], triage: dict[str, Any] | None = None) -> Report:
    """Match each in-scope failure with its triage entry; list the failures that have none
    (unclassified) and the entries whose scripts now pass (stale)."""
    t = triage if triage is not None else load_triage()
    report = Report(
        corpus=t.get("corpus", ""),
        results=results,
        in_scope=list(t.get("in_scope", {}).get("dirs", [])),
        out_of_scope=dict(t.get("out_of_scope", {})),
        features=dict(t.get("features", {})),
        scripts=dict(t.get("scripts", {})),
    )
    seen = {r.path: r for r in results}
    for r in results:
        if r.directory not in report.in_scope:
            continue
        if not r.passed and r.path not in report.scripts:
            report.unclassified.append(r)
    for path in report.scripts:
        if path in seen and seen[path].passed:
            report.stale.append(path)
    return report


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(report: Report) -> str:
    """The report as Markdown: pass rates per directory, every in-scope failure with its class
    and reason, the features not modelled, and the out-of-scope directories."""
    passed, total = report.scope_counts()
    lines = [
        "# packetdrill conformance (tcplab conformance)",
        "",
        f"Corpus: {report.corpus}. In scope: {passed} of {total} scripts pass "
        f"({100 * passed / max(total, 1):.0f} %); every other in-scope script is listed below "
        "with why it differs.",
        "",
    ]
    if report.unclassified:
        lines += ["## Unclassified failures (possible tcplab bugs)", ""]
        lines += [f"- `{r.path}:{r.line}` [{r.kind}] {_cell(r.message)}" for r in report.unclassified]
        lines.append("")
    if report.stale:
        lines += ["## Triage entries for scripts that now pass (remove them)", ""]
        lines += [f"- `{p}`" for p in report.stale]
        lines.append("")
    lines += ["## Per directory", "", "| directory | scope | passed | scripts |", "|---|---|---|---|"]
    for d, (p, n) in report.by_directory().items():
        scope = "in" if d in report.in_scope else "out: " + report.out_of_scope.get(d, "not triaged")
        lines.append(f"| {d} | {_cell(scope)} | {p} | {n} |")
    lines += ["", "## In-scope differences", "", "| script | first difference | class | why |", "|---|---|---|---|"]
    for r in report.results:
        if r.directory in report.in_scope and not r.passed:
            entry = report.scripts.get(r.path, {})
            cls = entry.get("class", "unclassified")
            if entry.get("feature"):
                cls += f": {entry['feature']}"
            diff = f"line {r.line} [{r.kind}] {r.message}"
            lines.append(f"| `{r.path}` | {_cell(diff)} | {cls} | {_cell(entry.get('reason', ''))} |")
    psh = [r for r in report.results if r.passed and r.psh_lines]
    if psh:
        lines += [
            "",
            "Passing scripts where only PSH differed (Linux pushes at its sk_buff boundaries, "
            "which the model does not have; PSH is noted, not compared): "
            + ", ".join(f"`{r.path}`" for r in psh)
            + ".",
        ]
    lines += ["", "## Mechanisms not modelled", ""]
    lines += [f"- **{k}**: {_cell(v)}" for k, v in report.features.items()]
    lines.append("")
    return "\n".join(lines)
