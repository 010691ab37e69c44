"""Files shipped inside the tcplab package: the scenarios and the user documents.

They are package data (`tcplab/scenarios/`, `tcplab/docs/` in the wheel), found through
`importlib.resources`, so an installed tcplab finds them from any working directory. In the
source tree, the top-level `scenarios` is a link to `python/tcplab/scenarios/`, and
`python/tcplab/docs/` holds links to the documents of the top-level `docs/` that messages cite.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["doc_names", "doc_path", "doc_title", "docs_dir", "package_dir", "scenarios_dir"]


def package_dir(name: str) -> Path:
    """The directory `name` inside the installed tcplab package.

    Raises RuntimeError if tcplab is not installed as files (e.g. imported from a zip archive),
    FileNotFoundError if the directory is missing (a broken installation).
    """
    resource = resources.files("tcplab").joinpath(name)
    if not isinstance(resource, Path):
        raise RuntimeError(f"tcplab is not installed as files: cannot read its {name}/ directory")
    if not resource.is_dir():
        raise FileNotFoundError(f"{resource}: missing from the tcplab installation")
    return resource


def scenarios_dir() -> Path:
    """The shipped scenarios: one directory per family (`smoke/`, `p0_parallel_bic/`, …)."""
    return package_dir("scenarios")


def docs_dir() -> Path:
    """The shipped documents (Markdown)."""
    return package_dir("docs")


def doc_names() -> list[str]:
    """The names of the shipped documents, sorted (`scenario-format` for scenario-format.md)."""
    return sorted(p.stem for p in docs_dir().glob("*.md"))


def doc_path(name: str) -> Path:
    """The file of the shipped document `name`; KeyError naming the shipped ones if unknown."""
    names = doc_names()
    if name not in names:
        raise KeyError(f"no document {name!r} (shipped: {', '.join(names)})")
    return docs_dir() / f"{name}.md"


def doc_title(name: str) -> str:
    """The first heading of the shipped document `name` (its name if it has none)."""
    for line in doc_path(name).read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return name
