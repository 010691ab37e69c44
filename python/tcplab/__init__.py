"""tcplab: a deterministic packet-level TCP simulator with a Rust core and a Python front.

Example:

    import tcplab
    result = tcplab.run("scenarios/smoke/smoke.toml", seed=1)
    result.flows              # polars DataFrame, one row per flow
    result.save("out/smoke")  # summary.json, scenario.toml, <trace>.parquet, metadata.json
"""

from tcplab._core import version as _core_version
from tcplab.result import Result
from tcplab.run import run
from tcplab.scenario import ScenarioError, load_scenario
from tcplab.sweeps import Sweep, SweepError, load_sweep, sweep, sweep_plot, sweep_summary

__version__: str = _core_version()

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
