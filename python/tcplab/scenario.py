"""Scenario loading and dotted-path overrides.

A scenario is a TOML file or the equivalent Python dict (see docs/scenario-format.md). Python
loads and edits the data and refuses what is not a TOML value (`value_error`: None, NaN, dates,
deep nesting); the Rust core validates the rest and reports bad fields by path.
"""

from __future__ import annotations

import copy
import datetime
import json
import math
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from typing import Any

from tcplab._core import ScenarioError

__all__ = [
    "MAX_DEPTH",
    "MAX_SEED",
    "ScenarioError",
    "apply_overrides",
    "resolve_names",
    "check_scenario",
    "check_seed",
    "check_toml_depth",
    "load_scenario",
    "parse_value",
    "scenario_json",
    "value_error",
]

MAX_DEPTH = 64
"""Deepest nesting of tables and arrays in a scenario, its top-level table counting as 1 (real
scenarios reach about 5). Checked without recursion before anything copies or encodes it."""

MAX_SEED = 2**63 - 1
"""Largest seed: TOML integers are signed 64-bit, and the resolved scenario carries the seed."""


def load_scenario(path_or_dict: str | os.PathLike[str] | Mapping[str, Any]) -> dict[str, Any]:
    """Return a scenario as a fresh dict, read from a TOML file or deep-copied from a mapping.

    Raises ScenarioError for a file that is not valid TOML, for a value no scenario can hold
    (see `check_scenario`), and OSError for a file that cannot be read.
    """
    if isinstance(path_or_dict, Mapping):
        check_scenario(path_or_dict)
        return copy.deepcopy(dict(path_or_dict))
    if not isinstance(path_or_dict, (str, os.PathLike)):
        raise TypeError(f"expected a path or a dict, got {type(path_or_dict).__name__}")
    with open(path_or_dict, "rb") as f:
        data = f.read()
    if os.fspath(path_or_dict).lower().endswith(".json"):
        return _load_json(os.fspath(path_or_dict), data)
    try:
        text = data.decode("utf-8")
        check_toml_depth(text)
        spec = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ScenarioError(f"{os.fspath(path_or_dict)}: {e}") from None
    except RecursionError:  # a nesting the depth scan did not see
        raise ScenarioError(
            f"{os.fspath(path_or_dict)}: nested more than {MAX_DEPTH} levels deep"
        ) from None
    check_scenario(spec)
    return spec


def _load_json(path: str, data: bytes) -> dict[str, Any]:
    """A scenario file in JSON (`.json`): the same tables as the TOML format, as one object.
    JSON's null has no TOML counterpart and is refused with the rest by `check_scenario`."""
    try:
        spec = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ScenarioError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise ScenarioError(f"{path}: not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    except RecursionError:
        raise ScenarioError(f"{path}: nested more than {MAX_DEPTH} levels deep") from None
    if not isinstance(spec, dict):
        raise ScenarioError(f"{path}: a JSON scenario is one object (the TOML file's tables), "
                            f"not {type(spec).__name__}")
    check_scenario(spec)
    return spec


def check_scenario(spec: Mapping[str, Any]) -> None:
    """Raise ScenarioError naming the first field (`flows[1].tcp.mss`) that no scenario can
    hold: see `value_error`."""
    message = value_error(spec)
    if message is not None:
        raise ScenarioError(message)


def scenario_json(spec: Mapping[str, Any]) -> str:
    """The scenario as JSON text for the core, after `check_scenario`."""
    check_scenario(spec)
    return json.dumps(spec, allow_nan=False)


def value_error(value: Any, path: str = "", depth: int = 1) -> str | None:
    """`"<field>: <reason>"` for the first part of `value` (at `path`, nested `depth` deep)
    that is not a TOML value, else None.

    Refused: tables and arrays nested deeper than MAX_DEPTH, None, NaN and infinite floats,
    TOML dates and times, keys that are not strings, and any other type. Tuples count as
    arrays. Iterative, so any depth is safe.
    """
    stack = [(value, path, depth)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, (dict, list, tuple)):
            if depth > MAX_DEPTH:
                return f"{path}: nested more than {MAX_DEPTH} levels deep"
            if isinstance(value, dict):
                children = []
                for key, child in value.items():
                    if not isinstance(key, str):
                        return f"{path}[{key!r}]: a key must be a string, got {key!r}"
                    children.append((child, f"{path}.{key}" if path else key, depth + 1))
            else:
                children = [(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
            stack.extend(reversed(children))
        elif value is None:
            return f"{path}: None is not a valid value; leave the key out for the default"
        elif isinstance(value, float) and not math.isfinite(value):
            return f"{path}: {value!r} is not a finite number"
        elif isinstance(value, (datetime.date, datetime.time)):
            return f"{path}: a TOML date/time is not a valid value"
        elif not isinstance(value, (str, int, float)):
            return (
                f"{path}: a {type(value).__name__} is not a valid value "
                "(expected a string, number, boolean, table or array)"
            )
    return None


def check_seed(seed: Any, where: str = "run.seed") -> int:
    """`seed` if it is an integer in [0, 2^63), else ScenarioError `<where>: ...`."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ScenarioError(f"{where}: must be an integer in [0, 2^63), got {seed!r}")
    return seed


def parse_value(text: str, path: str = "value") -> Any:
    """Parse a command-line override value: a TOML value if it is one, else the plain string.

    `9000` -> 9000, `true` -> True, `"x"` -> "x", `[1, 2]` -> [1, 2], `5s` -> "5s". TOML dates
    and times are kept as strings, since scenarios have no such values. Arrays or tables
    nested more than MAX_DEPTH deep raise ScenarioError naming `path` (the field set).
    """
    check_toml_depth(f"v = {text}", rename=("v", path))
    try:
        parsed = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return text
    except RecursionError:  # a nesting the depth scan did not see
        raise ScenarioError(f"{path}: nested more than {MAX_DEPTH} levels deep") from None
    if parsed.keys() != {"v"} or not _is_plain(parsed["v"]):
        return text
    return parsed["v"]


def apply_overrides(
    scenario: Mapping[str, Any], overrides: Iterable[str] | Mapping[str, Any]
) -> dict[str, Any]:
    """Return a copy of `scenario` with `overrides` applied; the input is left unchanged.

    `overrides` is either `"PATH=VALUE"` strings (VALUE parsed by `parse_value`) or a mapping
    from PATH to a Python value. PATH is dotted, with integer indices into arrays:
    `flows.0.tcp.mss`, `links.2.queue_b`, `run.duration`. A link may be named by its ends
    instead of its index, `link(A,B).delay`, and a link's egress queue by its name,
    `queue(A->B)` (the queue at A of the link between A and B: `queue_a` or `queue_b` as the
    link is written). Missing tables on the way are created, so unknown keys reach the core,
    which rejects them by field path. An index out of range, a name that matches no link or
    more than one, or stepping into a value that is neither a table nor an array, raises
    ScenarioError.
    """
    result = copy.deepcopy(dict(scenario))
    if isinstance(overrides, Mapping):
        items = list(overrides.items())
    else:
        items = [_split_override(text) for text in overrides]
    for path, value in items:
        if not isinstance(path, str):
            raise ScenarioError(f"override path must be a string, got {path!r}")
        message = value_error(value, _field(path), path.count(".") + 2)
        if message is not None:
            raise ScenarioError(message)
        _set_path(result, resolve_names(result, path), copy.deepcopy(value))
    return result


_NAMED = re.compile(r"\A(link|queue)\(([^()]*)\)(?=\.|\Z)")


def resolve_names(scenario: Mapping[str, Any], path: str) -> str:
    """`path` with a leading `link(A,B)` or `queue(A->B)` replaced by the index path it names in
    `scenario` (`links.<i>`, `links.<i>.queue_a|queue_b`); other paths are returned as they are."""
    m = _NAMED.match(path)
    if m is None:
        return path
    kind, arg = m.group(1), m.group(2)
    sep = "," if kind == "link" else "->"
    ends = [e.strip() for e in arg.split(sep)]
    form = "link(A,B)" if kind == "link" else "queue(A->B)"
    if len(ends) != 2 or not all(ends):
        raise ScenarioError(f"{m.group(0)}: expected {form}")
    found = []
    for i, link in enumerate(scenario.get("links") or []):
        between = list(link.get("between") or []) if isinstance(link, Mapping) else []
        if between == ends:
            found.append(f"links.{i}" + (".queue_a" if kind == "queue" else ""))
        elif between == ends[::-1]:
            found.append(f"links.{i}" + (".queue_b" if kind == "queue" else ""))
    if len(found) != 1:
        what = "no link" if not found else f"{len(found)} links"
        raise ScenarioError(f"{m.group(0)}: {what} between '{ends[0]}' and '{ends[1]}'")
    return found[0] + path[m.end():]


def _field(path: str) -> str:
    """A dotted override path in the core's style: `flows.0.tcp.mss` -> `flows[0].tcp.mss`."""
    return re.sub(r"\.([0-9]+)(?=\.|$)", r"[\1]", path)


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
    return path.strip(), parse_value(value.strip(), _field(path.strip()))


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


_TOML_TOKEN = re.compile(
    r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{},=\n]',
    re.S,
)
_TOML_HEADER = re.compile(r"\[(\[?)([^\]\n]*)\]\]?")
_TOML_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([^.\s"\']+)')


def check_toml_depth(text: str, rename: tuple[str, str] | None = None) -> None:
    """Raise ScenarioError if TOML `text` nests arrays or inline tables more than MAX_DEPTH
    deep (tomllib would recurse past Python's limit), naming the field where it does.

    A token scan, not a parser: strings and comments are skipped, headers and keys followed
    so that the path matches `value_error`'s. Malformed text is left to tomllib to judge.
    `rename` = (first key, field) writes paths under `field` instead (for --set values).
    """
    pos, table, table_depth, key, stack = 0, "", 0, [], []
    counts: dict[str, int] = {}
    segment_start, after_equals = 0, False
    while (m := _TOML_TOKEN.search(text, pos)) is not None:
        token, pos = m.group(), m.end()
        if token == "\n" and not stack:
            segment_start, after_equals = pos, False
        elif token == "=" and (not stack or stack[-1][0] == "{"):
            parts = _toml_key(text[segment_start : m.start()])
            if stack:
                stack[-1][1] = ".".join(parts)
            else:
                key, after_equals = parts, True
        elif token == "[" and not stack and not after_equals:
            header = _TOML_HEADER.match(text, m.start())
            if header is None:
                continue
            pos = segment_start = header.end()
            parts = _toml_key(header.group(2))
            table, table_depth, key = ".".join(parts), len(parts), []
            if header.group(1):  # [[array.of.tables]]: one more level, and an index
                counts[table] = counts.get(table, 0) + 1
                table, table_depth = f"{table}[{counts[table] - 1}]", table_depth + 1
        elif token in "[{":
            stack.append([token, 0 if token == "[" else None])
            if token == "{":
                segment_start = pos
            if table_depth + len(key) + len(stack) > MAX_DEPTH:
                path = ".".join(([table] if table else []) + key)
                for kind, at in stack[:-1]:
                    path += f"[{at}]" if kind == "[" else f".{at}"
                if rename is not None and path.startswith(rename[0]):
                    path = rename[1] + path[len(rename[0]) :]
                raise ScenarioError(f"{path}: nested more than {MAX_DEPTH} levels deep")
        elif token in "]}" and stack:
            stack.pop()
        elif token == "," and stack:
            if stack[-1][0] == "[":
                stack[-1][1] += 1
            else:
                segment_start = pos


def _toml_key(text: str) -> list[str]:
    """The parts of a (possibly dotted, quoted) TOML key."""
    return [next(g for g in m.groups() if g is not None) for m in _TOML_KEY.finditer(text)]
