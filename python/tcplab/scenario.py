"""Scenario loading and dotted-path overrides.

A scenario is a TOML file or the equivalent Python dict (see docs/scenario-format.md). Python
only loads and edits the data; the Rust core validates it and reports bad fields by path.
"""

from __future__ import annotations

import copy
import os
import tomllib
from collections.abc import Iterable, Mapping
from typing import Any

from tcplab._core import ScenarioError

__all__ = ["ScenarioError", "apply_overrides", "load_scenario", "parse_value"]


def load_scenario(path_or_dict: str | os.PathLike[str] | Mapping[str, Any]) -> dict[str, Any]:
    """Return a scenario as a fresh dict, read from a TOML file or deep-copied from a mapping.

    Raises ScenarioError for a file that is not valid TOML and OSError for one that cannot be
    read.
    """
    if isinstance(path_or_dict, Mapping):
        return copy.deepcopy(dict(path_or_dict))
    if not isinstance(path_or_dict, (str, os.PathLike)):
        raise TypeError(f"expected a path or a dict, got {type(path_or_dict).__name__}")
    with open(path_or_dict, "rb") as f:
        try:
            return tomllib.load(f)
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ScenarioError(f"{os.fspath(path_or_dict)}: {e}") from None


def parse_value(text: str) -> Any:
    """Parse a command-line override value: a TOML value if it is one, else the plain string.

    `9000` -> 9000, `true` -> True, `"x"` -> "x", `[1, 2]` -> [1, 2], `5s` -> "5s". TOML dates
    and times are kept as strings, since scenarios have no such values.
    """
    try:
        parsed = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return text
    if parsed.keys() != {"v"} or not _is_plain(parsed["v"]):
        return text
    return parsed["v"]


def apply_overrides(
    scenario: Mapping[str, Any], overrides: Iterable[str] | Mapping[str, Any]
) -> dict[str, Any]:
    """Return a copy of `scenario` with `overrides` applied; the input is left unchanged.

    `overrides` is either `"PATH=VALUE"` strings (VALUE parsed by `parse_value`) or a mapping
    from PATH to a Python value. PATH is dotted, with integer indices into arrays:
    `flows.0.tcp.mss`, `links.2.queue_b`, `run.duration`. Missing tables on the way are
    created, so unknown keys reach the core, which rejects them by field path. An index out of
    range, or stepping into a value that is neither a table nor an array, raises ScenarioError.
    """
    result = copy.deepcopy(dict(scenario))
    if isinstance(overrides, Mapping):
        items = list(overrides.items())
    else:
        items = [_split_override(text) for text in overrides]
    for path, value in items:
        if not isinstance(path, str):
            raise ScenarioError(f"override path must be a string, got {path!r}")
        _set_path(result, path, copy.deepcopy(value))
    return result


def _is_plain(value: Any) -> bool:
    """Whether `value` is made only of JSON-compatible types."""
    if isinstance(value, list):
        return all(_is_plain(v) for v in value)
    if isinstance(value, dict):
        return all(_is_plain(v) for v in value.values())
    return isinstance(value, (str, int, float, bool))


def _split_override(text: str) -> tuple[str, Any]:
    """Split `"PATH=VALUE"` into the path and the parsed value."""
    path, sep, value = text.partition("=")
    if not sep:
        raise ScenarioError(f"override {text!r}: expected PATH=VALUE")
    return path.strip(), parse_value(value.strip())


def _set_path(root: dict[str, Any], path: str, value: Any) -> None:
    """Assign `value` at dotted `path` inside `root`, creating missing tables."""
    parts = path.split(".")
    if not all(parts):
        raise ScenarioError(f"override {path!r}: empty path segment")
    node: Any = root
    for i, part in enumerate(parts):
        here = ".".join(parts[: i + 1])
        last = i == len(parts) - 1
        if isinstance(node, list):
            index = _index(node, part, here, parts[i - 1])
            if last:
                node[index] = value
            else:
                node = node[index]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                if part not in node:
                    node[part] = [] if _is_index(parts[i + 1]) else {}
                node = node[part]
        else:
            parent = ".".join(parts[:i])
            raise ScenarioError(
                f"{parent}: is {_type_name(node)}, not a table or array; cannot set {here}"
            )


def _index(items: list[Any], part: str, here: str, noun: str) -> int:
    """Validate `part` as an index into `items` (named `noun` in messages)."""
    if not _is_index(part):
        raise ScenarioError(f"{here}: expected an array index, {noun} is an array")
    index = int(part)
    if index >= len(items):
        if _is_index(noun):
            noun = "items"
        raise ScenarioError(f"{here}: index out of range ({len(items)} {noun})")
    return index


def _is_index(part: str) -> bool:
    """Whether a path segment is an array index (ASCII digits)."""
    return part.isascii() and part.isdigit()


def _type_name(value: Any) -> str:
    """Name of a scenario value's type in TOML terms, with its article."""
    match value:
        case bool():
            return "a boolean"
        case int():
            return "an integer"
        case float():
            return "a float"
        case str():
            return "a string"
        case _:
            return f"a {type(value).__name__}"
