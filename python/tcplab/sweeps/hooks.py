"""Per-run metric hooks: a Python function that computes extra table columns from a run's
`Result` (its traces included) in the worker, before the Result is dropped.

Summary metrics (`metrics`) read the run summary only; a hook can read anything a run gives
(`result.trace("events")`, `result.flows`, …). It is named by its import path
(`"package.module:function"` or `"package.module.function"`), so a process-pool or Dask worker
imports it by name, and called as `function(result, **args)` with the sweep's JSON-plain
`hook_args`. It returns a mapping of column name to value; the values are stored with the run
(`runs/<key>.parquet`, column `extra`, as JSON) so a resumed sweep reuses them, and a run
stored without them (or by another hook, or other arguments) is run again.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tcplab.sweeps.errors import SweepError

__all__ = ["RunHook", "decode_values", "encode_values", "load_function", "run_hook"]


@dataclass(frozen=True)
class RunHook:
    """A validated hook: the function's import path and the keyword arguments it gets."""

    name: str
    """`package.module:function`."""
    args: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments (JSON-plain), passed after the Result."""

    @property
    def identity(self) -> str:
        """What a stored run must have been computed with to be reused (name and arguments)."""
        return json.dumps({"name": self.name, "args": self.args}, sort_keys=True)

    def to_json(self) -> dict[str, Any]:
        """The hook as plain JSON data (in `sweep.json`)."""
        return {"name": self.name, "args": self.args}

    def __call__(self, result: Any) -> dict[str, Any]:
        """Run the hook on `result`; the columns it returns (TypeError if not a mapping with
        string keys)."""
        values = load_function(self.name)(result, **self.args)
        if not isinstance(values, Mapping) or not all(isinstance(k, str) for k in values):
            raise TypeError(f"hook {self.name} returned {type(values).__name__}, not a mapping of column name to value")
        return dict(values)


def load_function(name: str) -> Callable[..., Any]:
    """The function at import path `name` (`module:function` or `module.function`)."""
    module, sep, attr = name.partition(":")
    if not sep:
        module, _, attr = name.rpartition(".")
    if not module or not attr:
        raise ValueError(f"{name!r}: not an import path (package.module:function)")
    target: Any = importlib.import_module(module)
    for part in attr.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"{name}: not callable")
    return target  # type: ignore[no-any-return]


def run_hook(hook: str | Callable[..., Any] | None, args: Mapping[str, Any] | None = None) -> RunHook | None:
    """A validated `RunHook` from an import path or a module-level function (raises
    SweepError if it cannot be imported by name, e.g. a lambda or a nested function, or if
    `args` are not JSON-plain)."""
    if hook is None:
        if args:
            raise SweepError("hook_args: given without a hook")
        return None
    if callable(hook):
        name = f"{getattr(hook, '__module__', '')}:{getattr(hook, '__qualname__', '')}"
        try:
            found = load_function(name)
        except (ImportError, AttributeError, ValueError, TypeError):
            found = None
        if found is not hook:
            raise SweepError(f"hook: {hook!r} cannot be imported by name ({name}); a worker imports "
                             "the hook by name, so give a module-level function")
    elif isinstance(hook, str):
        name = hook if ":" in hook else ":".join(hook.rsplit(".", 1))
        try:
            load_function(name)
        except (ImportError, AttributeError, ValueError, TypeError) as e:
            raise SweepError(f"hook: {hook}: {e}") from None
    else:
        raise SweepError(f"hook: expected an import path or a function, got {hook!r}")
    plain = dict(args or {})
    try:
        text = json.dumps(plain, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise SweepError(f"hook_args: not JSON-plain ({e})") from None
    return RunHook(name, json.loads(text))


def encode_values(values: Mapping[str, Any]) -> str:
    """A hook's columns as JSON text (NaN kept as NaN; numpy scalars as Python numbers)."""
    return json.dumps(values, default=_plain)


def decode_values(text: str) -> dict[str, Any]:
    """The columns `encode_values` wrote."""
    values = json.loads(text)
    return values if isinstance(values, dict) else {}


def _plain(value: Any) -> Any:
    """A numpy scalar or array as the Python value JSON can hold."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"a hook value of type {type(value).__name__} cannot be stored")
