"""tcplab: a deterministic packet-level TCP simulator with a Rust core and a Python front.

Example:

    import tcplab
    result = tcplab.run("scenarios/smoke/smoke.toml", seed=1)
    result.flows              # polars DataFrame, one row per flow
    result.save("out/smoke")  # summary.json, scenario.toml, <trace>.parquet, metadata.json
"""

from typing import TYPE_CHECKING, Any

from tcplab._core import version as _core_version
from tcplab.run import run  # binds `tcplab.run` to the function before the module can claim it
from tcplab.scenario import ScenarioError, load_scenario

if TYPE_CHECKING:
    from tcplab.result import Result
    from tcplab.sweeps import Sweep, SweepError, load_sweep, sweep, sweep_plot, sweep_summary

__version__: str = _core_version()

# The public names are imported when first used (PEP 562), so that `import tcplab.cli` for
# `tcplab --version` or a sweep worker's start-up does not load polars, numpy or matplotlib.
_LAZY = {
    "Result": "tcplab.result",
    "Sweep": "tcplab.sweeps",
    "SweepError": "tcplab.sweeps",
    "load_sweep": "tcplab.sweeps",
    "sweep": "tcplab.sweeps",
    "sweep_plot": "tcplab.sweeps",
    "sweep_summary": "tcplab.sweeps",
}


def __getattr__(name: str) -> Any:
    """Import a public name of the package on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tcplab' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Result",
    "ScenarioError",
    "Sweep",
    "SweepError",
    "__version__",
    "load_scenario",
    "load_sweep",
    "run",
    "sweep",
    "sweep_plot",
    "sweep_summary",
]
