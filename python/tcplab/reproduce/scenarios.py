"""A study's scenario files, found in the installed package, and the paths that override a
part of a scenario picked by name rather than by position.

A study's scenarios live in `tcplab/scenarios/<study>/` (the source tree's `scenarios/<study>/`):
`study_dir("p0_parallel_bic")` finds them from any working directory, installed or not.
Overrides may address arrays by index (`links.6.queue_a`); the studies name links and queues
instead (`link(A,B).delay`, `queue(A->B)`, resolved when the overrides are applied), so that a
study keeps working when links are added before the one it means; `queue_override` checks that
exactly one link carries a named queue.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tcplab.scenario import ScenarioError, load_scenario, resolve_names
from tcplab.shipped import scenarios_dir

__all__ = ["queue_override", "scenario_value", "study_dir", "study_scenario"]


def study_dir(study: str) -> Path:
    """The directory of a study's shipped scenarios (e.g. "p0_parallel_bic").

    Raises FileNotFoundError naming the shipped studies if there is none by that name.
    """
    root = scenarios_dir()
    path = root / study
    if not path.is_dir():
        shipped = ", ".join(sorted(p.name for p in root.iterdir() if p.is_dir()))
        raise FileNotFoundError(
            f"no shipped scenarios for {study!r} in {root} (shipped: {shipped})"
        )
    return path


def study_scenario(study: str, name: str) -> Path:
    """The file of scenario `name` (without `.toml`) of a study; FileNotFoundError if absent."""
    path = study_dir(study) / f"{name}.toml"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such scenario")
    return path


def queue_override(scenario: str | Path | Mapping[str, Any], queue: str) -> str:
    """The override path of the buffer of queue `queue` ("A->B": the egress queue at A of the
    link between A and B) in `scenario` (a path or a dict), by name: `queue(A->B)`, which
    `tcplab.scenario.resolve_names` turns into `links.<i>.queue_a` (the link written
    `between = ["A", "B"]`) or `links.<i>.queue_b` (`["B", "A"]`) when it is applied.

    Raises ValueError if the name is not "A->B" or if no link, or more than one, joins A and B.
    """
    spec = load_scenario(scenario)
    ends = queue.split("->")
    if len(ends) != 2 or not all(ends):
        raise ValueError(f"{queue!r}: not a queue name of the form A->B")
    joining = [link for link in spec.get("links") or [] if list(link.get("between") or []) in (ends, ends[::-1])]
    if len(joining) != 1:
        what = "no link" if not joining else f"{len(joining)} links"
        raise ValueError(f"{queue}: {what} between {ends[0]} and {ends[1]} in the scenario")
    return f"queue({queue})"


def scenario_value(scenario: str | Path | Mapping[str, Any], path: str) -> Any:
    """The value at a dotted override path (`links.6.queue_a`, or by name `queue(A->B)`) of
    `scenario` (a path or a dict); KeyError naming the path if it is not set."""
    node: Any = load_scenario(scenario)
    try:
        resolved = resolve_names(node, path)
    except ScenarioError as e:
        raise KeyError(str(e)) from None
    for part in resolved.split("."):
        try:
            node = node[int(part)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError):
            raise KeyError(f"{path}: not set in the scenario") from None
    return node
