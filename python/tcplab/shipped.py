"""Files shipped inside the tcplab package: the scenarios and the user documents.

They are package data (`tcplab/scenarios/`, `tcplab/docs/` in the wheel), found through
`importlib.resources`, so an installed tcplab finds them from any working directory. In the
source tree, the top-level `scenarios` is a link to `python/tcplab/scenarios/`, and
`python/tcplab/docs/` holds links to the documents of the top-level `docs/` that messages cite.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import difflib

__all__ = [
    "doc_names", "doc_path", "doc_title", "docs_dir", "package_dir", "scenario_names",
    "scenario_path", "scenarios_dir", "study_readmes",
]


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


def scenario_names() -> list[str]:
    """The shipped scenarios as `family/name` (`p2_data_reservoir/fla`), sorted; the sweep
    files beside them (a top-level `base = "..."`, docs/sweeps.md) are not scenarios."""
    root = scenarios_dir()
    return sorted(
        p.relative_to(root).with_suffix("").as_posix()
        for p in root.glob("*/*.toml")
        if not _is_sweep(p)
    )


def _is_sweep(path: Path) -> bool:
    """A sweep file names its base scenario on a top-level `base = ` line."""
    return any(line.startswith("base ") or line.startswith("base=")
               for line in path.read_text(encoding="utf-8").splitlines())


def scenario_path(name: str) -> Path:
    """The file of the shipped scenario `name`: `family/name` (`p2_data_reservoir/fla`), with or
    without `.toml`, or a bare name (`fla`) when one family alone has it.

    Raises KeyError with a one-line reason: an ambiguous bare name lists its families, an
    unknown one the closest shipped names and where the shipped scenarios are.
    """
    names = scenario_names()
    key = name[:-5] if name.endswith(".toml") else name
    if key in names:
        return scenarios_dir() / f"{key}.toml"
    matches = [n for n in names if n.rsplit("/", 1)[-1] == key]
    if len(matches) == 1:
        return scenarios_dir() / f"{matches[0]}.toml"
    if matches:
        raise KeyError(f"{name!r} names {len(matches)} shipped scenarios: "
                       f"{', '.join(matches)}; give one of them")
    close = difflib.get_close_matches(key, names + [n.rsplit("/", 1)[-1] for n in names], n=3)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise KeyError(f"no scenario file {name!r} and no shipped scenario of that name; {hint}"
                   f"the {len(names)} shipped ones are in {scenarios_dir()}")


def docs_dir() -> Path:
    """The shipped documents (Markdown)."""
    return package_dir("docs")


def study_readmes() -> dict[str, Path]:
    """Each reproduced study's README by its `tcplab reproduce` name: `p2` for
    `scenarios/p2_data_reservoir/README.md`."""
    out = {}
    for family in sorted(scenarios_dir().iterdir()):
        study = family.name.split("_", 1)[0]
        if study[:1] == "p" and study[1:].isdigit() and (family / "README.md").is_file():
            out[study] = family / "README.md"
    return out


def doc_names() -> list[str]:
    """The names of the shipped documents, sorted: the documents (`scenario-format` for
    scenario-format.md, `readme` for the project's README) and each study's README (`p2`)."""
    return sorted([p.stem for p in docs_dir().glob("*.md")] + list(study_readmes()))


def doc_path(name: str) -> Path:
    """The file of the shipped document `name`; KeyError naming the shipped ones if unknown."""
    path = docs_dir() / f"{name}.md"
    if path.is_file():
        return path
    studies = study_readmes()
    if name in studies:
        return studies[name]
    raise KeyError(f"no document {name!r} (shipped: {', '.join(doc_names())})")


def doc_title(name: str) -> str:
    """The first heading of the shipped document `name` (its name if it has none)."""
    for line in doc_path(name).read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return name
