"""Results of one run: the summary, per-flow and per-queue tables, traces, and saving them."""

from __future__ import annotations

import html
import json
import os
import shutil
import weakref
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tcplab.outdir import check_output, make_staging, move_into_place, output_path

if TYPE_CHECKING:
    import pandas
    import polars as pl

# polars and numpy are imported where used, so that importing tcplab (for `tcplab --version`,
# a sweep worker's start-up) does not load them.

__all__ = ["Result"]

RawTraces = dict[str, dict[str, tuple[str, bytes]]]
"""Trace name -> column name -> (dtype, little-endian buffer), as `_core` returns them."""

_OPTIONAL_TIMES = ("finish_s", "data_start_s", "srtt_s")
"""Per-flow summary values, seconds, that are null when they do not exist (yet)."""

_NUMPY_DTYPES = {"f64": "<f8", "u64": "<u8", "u32": "<u4", "i64": "<i8"}


class Result:
    """The outcome of one simulation run.

    Attributes: `summary` (the core's summary dict plus `wall_time_s`), `traces` (trace name ->
    polars DataFrame), `resolved_toml` (the scenario with every default filled in), `captures`
    (tap name -> path of its pcapng file; after `save`, inside the saved directory).
    """

    def __init__(
        self,
        summary: dict[str, Any],
        raw_traces: RawTraces,
        resolved_toml: str,
        captures: dict[str, Path] | None = None,
        capture_dir: str | None = None,
    ):
        """Build a result from the core's summary, raw trace columns and resolved scenario.

        `captures` are pcapng files in `capture_dir`, a private temporary directory that is
        removed when the Result is garbage collected.
        """
        self.summary = summary
        self.resolved_toml = resolved_toml
        for name, columns in raw_traces.items():  # checked now, decoded on first use
            for column, (dtype, _) in columns.items():
                if dtype not in _NUMPY_DTYPES:
                    raise ValueError(f"trace {name}.{column}: unknown dtype {dtype!r}")
        self._raw_traces = raw_traces
        self.captures: dict[str, Path] = dict(captures or {})
        if capture_dir is not None:
            weakref.finalize(self, shutil.rmtree, capture_dir, True)

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Result:
        """Read back a result that `save` (or `tcplab run --out`) wrote to `directory`.

        The traces are read from their Parquet files, the captures are the saved pcapng files
        (left where they are). Raises FileNotFoundError when `directory` holds no saved result
        (no `metadata.json` written by tcplab) or a file it lists is missing.
        """
        root = Path(directory)
        meta_path = root / "metadata.json"
        if not meta_path.is_file():
            raise FileNotFoundError(f"{root}: no saved tcplab result here (no metadata.json)")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise ValueError(f"{meta_path}: not JSON ({e})") from None
        if not isinstance(meta, dict) or meta.get("created_by") != "tcplab":
            raise ValueError(f"{meta_path}: not written by tcplab (no created_by = tcplab)")

        def need(name: str) -> Path:
            path = root / name
            if not path.is_file():
                raise FileNotFoundError(f"{root}: {name} is missing from this saved result")
            return path

        import polars as pl

        result = cls.__new__(cls)
        result._raw_traces = {}
        result.summary = json.loads(need("summary.json").read_text(encoding="utf-8"))
        result.resolved_toml = need("scenario.toml").read_text(encoding="utf-8")
        result.traces = {name: pl.read_parquet(need(f"{name}.parquet")) for name in meta["traces"]}
        result.captures = {
            name: Path(os.path.abspath(need(f"{name}.pcapng"))) for name in meta["captures"]
        }
        return result

    def _repr_html_(self) -> str:
        """The run in a notebook: what ran, and its per-flow table."""
        s = self.summary
        head = (
            f"<p><b>tcplab result</b>: scenario <code>{html.escape(str(s.get('scenario_name')))}"
            f"</code> (hash {html.escape(str(s.get('scenario_hash')))}), seed {self.seed}, "
            f"{s.get('sim_time_s', 0):.6g} s simulated in {s.get('wall_time_s', 0):.3f} s; "
            f"traces: {html.escape(', '.join(self._trace_names()) or 'none')}; "
            f"captures: {html.escape(', '.join(sorted(self.captures)) or 'none')}</p>"
        )
        columns = ["name", "cc", "goodput_bps", "bytes_delivered", "retransmits", "timeouts",
                   "finish_s"]
        flows = self.flows.select([c for c in columns if c in self.flows.columns])
        return head + flows._repr_html_()

    def __repr__(self) -> str:
        return (
            f"Result(scenario={self.summary.get('scenario_name')!r}, seed={self.seed}, "
            f"sim_time_s={self.summary.get('sim_time_s')}, traces={self._trace_names()})"
        )

    @property
    def seed(self) -> int:
        """The seed the run used."""
        return self.summary["seed"]

    @property
    def scenario_hash(self) -> str:
        """16 hex chars identifying the resolved scenario (FNV-1a 64 of its canonical JSON)."""
        return self.summary["scenario_hash"]

    def _trace_names(self) -> list[str]:
        """The traces' names, sorted, without decoding them."""
        decoded = self.__dict__.get("traces")
        return sorted(decoded if decoded is not None else self._raw_traces)

    @cached_property
    def traces(self) -> dict[str, pl.DataFrame]:
        """Trace name -> polars DataFrame, decoded from the core's columns on first use."""
        raw, self._raw_traces = self._raw_traces, {}
        return {name: _decode_trace(name, columns, self.summary) for name, columns in raw.items()}

    @cached_property
    def flows(self) -> pl.DataFrame:
        """Per-flow counters, one row per flow (the summary's `flows` list). The times that may
        be missing (`finish_s` of a flow still running, `data_start_s`, `srtt_s` before an RTT
        sample or of a UDP flow) are Float64 columns with nulls, also when every row is null."""
        import polars as pl

        frame = pl.DataFrame(self.summary["flows"], infer_schema_length=None)
        return frame.with_columns(
            pl.col(c).cast(pl.Float64) for c in _OPTIONAL_TIMES if c in frame.columns
        )

    @cached_property
    def queues(self) -> pl.DataFrame:
        """Per-queue counters, one row per queue (the summary's `queues` list)."""
        import polars as pl

        return pl.DataFrame(self.summary["queues"], infer_schema_length=None)

    def trace(self, name: str) -> pl.DataFrame:
        """The trace `name` as a polars DataFrame; KeyError names the traces recorded."""
        try:
            return self.traces[name]
        except KeyError:
            recorded = ", ".join(sorted(self.traces)) or "none"
            raise KeyError(f"no trace {name!r} in this result (recorded: {recorded})") from None

    def cc_state(self, flow: int | str) -> pl.DataFrame:
        """The `cc_state` trace of one flow (id or name) with its controller's value columns
        named (`summary["cc_state"]["values"]`; the unnamed `v*` columns dropped). KeyError
        when the trace was not recorded or the flow has no controller (not TCP)."""
        frame = self.trace("cc_state")
        ids = {f["name"]: f["id"] for f in self.summary["flows"]}
        fid = ids.get(flow, flow) if isinstance(flow, str) else flow
        if isinstance(fid, str) or fid not in ids.values():
            raise KeyError(f"no flow {flow!r} (flows: {', '.join(ids)})")
        names = self.summary.get("cc_state", {}).get("values", {}).get(str(fid))
        if names is None:
            raise KeyError(f"flow {flow!r} has no controller state (not a TCP flow)")
        frame = frame.filter(frame["flow"] == fid)
        return frame.rename({f"v{i}": n for i, n in enumerate(names)}).drop(
            [c for c in frame.columns if c.startswith("v") and c[1:].isdigit() and int(c[1:]) >= len(names)]
        )

    def to_pandas(self, name: str) -> pandas.DataFrame:
        """The trace `name` as a pandas DataFrame (needs pandas: `pip install tcplab[pandas]`;
        ImportError saying so when it is missing)."""
        try:
            import pandas
        except ImportError:
            raise ImportError(
                "Result.to_pandas needs pandas, which is not installed: "
                "pip install 'tcplab[pandas]' (or use the polars frame, Result.trace)"
            ) from None

        frame = self.trace(name)
        return pandas.DataFrame({column: frame[column].to_numpy() for column in frame.columns})

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write the result to `directory` atomically and return its absolute path.

        Writes `summary.json`, `scenario.toml` (the resolved scenario), one `<trace>.parquet`
        per trace, one `<tap>.pcapng` per capture (moved, not copied) and `metadata.json`.
        Everything goes to a hidden staging directory beside the target first and is renamed
        into place; a symlink to a directory is written through. An existing target is
        replaced only if it is empty or holds nothing but an earlier save's files (else
        FileExistsError naming the first other entry: tcplab never deletes what it did not
        write). On failure the staging directory is removed and an existing target is left as
        it was; staging left by a killed save is removed by the next save to the same target.
        """
        shown = Path(os.path.abspath(directory))
        target = output_path(directory)
        check_output(target)
        staging = make_staging(target)
        moved: dict[str, Path] = {}
        try:
            self._write(staging)
            for name, path in self.captures.items():
                shutil.move(path, staging / f"{name}.pcapng")
                moved[name] = path
            check_output(target)  # again: the user may have added files meanwhile
            move_into_place(staging, target)
        except BaseException:
            for name, path in moved.items():  # give the captures back to this Result
                shutil.move(staging / f"{name}.pcapng", path)
            shutil.rmtree(staging, ignore_errors=True)
            raise
        self.captures = {name: shown / f"{name}.pcapng" for name in self.captures}
        return shown

    def _write(self, directory: Path) -> None:
        """Write every output file into the existing, empty `directory`."""
        _write_json(directory / "summary.json", self.summary)
        (directory / "scenario.toml").write_text(self.resolved_toml, encoding="utf-8")
        for name, frame in self.traces.items():
            frame.write_parquet(directory / f"{name}.parquet")
        metadata = {
            "created_by": "tcplab",
            "version": self.summary["version"],
            "scenario_name": self.summary["scenario_name"],
            "scenario_hash": self.scenario_hash,
            "seed": self.seed,
            "traces": sorted(self.traces),
            "captures": sorted(self.captures),
        }
        _write_json(directory / "metadata.json", metadata)


def _decode_trace(
    name: str, columns: dict[str, tuple[str, bytes]], summary: dict[str, Any]
) -> pl.DataFrame:
    """Turn raw column buffers into a DataFrame and add the `*_name` columns for id codes.

    A column with codes in `summary["trace_codes"]["<trace>.<column>"]` gets `<column>_name`;
    a `flow` column gets `flow_name` and a `queue` column `queue_name` from the summary's ids.
    """
    import numpy as np
    import polars as pl

    data = {}
    for column, (dtype, buffer) in columns.items():
        if dtype not in _NUMPY_DTYPES:
            raise ValueError(f"trace {name}.{column}: unknown dtype {dtype!r}")
        array = np.frombuffer(buffer, dtype=_NUMPY_DTYPES[dtype])
        data[column] = array.astype(array.dtype.newbyteorder("="), copy=False)
    frame = pl.DataFrame(data)

    names: dict[str, dict[int, str]] = {}
    for key, codes in summary.get("trace_codes", {}).items():
        trace, _, column = key.partition(".")
        if trace == name:
            names[column] = {int(code): label for code, label in codes.items()}
    if "flow" in frame.columns:
        names.setdefault("flow", {f["id"]: f["name"] for f in summary["flows"]})
    if "queue" in frame.columns:
        names.setdefault("queue", {q["id"]: q["name"] for q in summary["queues"]})

    if name == "cwnd":
        frame = _cwnd_nulls(frame)
    return frame.with_columns(
        pl.col(column)
        .replace_strict(labels, default=None, return_dtype=pl.String)
        .alias(f"{column}_name")
        for column, labels in names.items()
        if column in frame.columns
    )


UNSET_SSTHRESH = 2**62
"""At or above this, the core's ssthresh is unset: "unlimited" (RFC 5681's arbitrarily high;
the core writes 2⁶⁴ − 1). The same threshold as `tcplab.plots`."""


def _cwnd_nulls(frame: pl.DataFrame) -> pl.DataFrame:
    """The cwnd trace with nulls where a value does not exist yet: `srtt_s` before the first
    RTT sample (the core writes 0.0) and `ssthresh_bytes` while it is unlimited (the core writes
    2⁶⁴ − 1), so that neither is read as a number."""
    import polars as pl

    return frame.with_columns(
        pl.when(pl.col("srtt_s") > 0).then(pl.col("srtt_s")).alias("srtt_s"),
        pl.when(pl.col("ssthresh_bytes") < UNSET_SSTHRESH).then(pl.col("ssthresh_bytes"))
        .alias("ssthresh_bytes"),
    )


def _write_json(path: Path, value: Any) -> None:
    """Write `value` as indented JSON with a final newline."""
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
