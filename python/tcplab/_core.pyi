"""Type stubs of `tcplab._core`, the Rust extension (crates/tcplab-py): a scenario goes in as
JSON text, the run advances in chunks of simulated time with the GIL released, and results come
out as a JSON summary and little-endian column buffers. See docs/core-interface.md
(`tcplab docs core-interface`)."""

import os
from typing import final

__all__ = ["ScenarioError", "Simulation", "packetdrill", "version"]

class ScenarioError(ValueError):
    """A scenario field is invalid: str(e) is 'path: reason' (`flows[1].tcp.mss: …`)."""

@final
class Simulation:
    """One simulation run of a scenario with a seed."""

    def __new__(
        cls, scenario_json: str, seed: int, capture_dir: str | os.PathLike[str] | None = None
    ) -> Simulation:
        """Validate and build a scenario given as JSON text; raises ScenarioError. `seed` is
        in [0, 2^64); taps stream their pcapng files into `capture_dir` (none are written
        without it)."""

    def capture_error(self) -> str | None:
        """The first error writing a capture file, if any (the run goes on)."""

    def resolved_toml(self) -> str:
        """The fully resolved scenario (every default filled in, the seed used) as TOML."""

    def scenario_hash(self) -> str:
        """16 hex digits identifying the resolved scenario, run.seed excluded."""

    @property
    def stop_time_s(self) -> float | None:
        """The scenario's stop time (run.duration) in seconds, if it has one."""

    @property
    def now_s(self) -> float:
        """Current simulated time, seconds."""

    @property
    def finished(self) -> bool:
        """True once the stop condition holds."""

    @property
    def events(self) -> int:
        """Events processed so far."""

    def advance(self, until_s: float) -> bool:
        """Run (GIL released) until simulated time reaches `until_s` seconds (an infinite
        value: no limit) or the stop condition; returns `finished`."""

    def run(self) -> None:
        """Run to the stop condition (GIL released)."""

    def summary_json(self) -> str:
        """The run summary as JSON text (no wall_time_s: Python adds it)."""

    def traces(self) -> dict[str, dict[str, tuple[str, bytes]]]:
        """Recorded traces: name → column → (dtype, little-endian bytes); dtype is one of
        "f64", "u64", "u32", "i64"."""

def packetdrill(path: str | os.PathLike[str], verbose: bool = False) -> str:
    """Run every packetdrill script under `path` (a directory or one `.pkt` file) against
    the TCP model; JSON: a list of {path, passed, line, kind, message, psh_lines,
    not_modelled, log}."""

def version() -> str:
    """The core's version, e.g. "0.1.0"."""
