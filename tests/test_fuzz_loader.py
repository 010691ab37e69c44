"""Fuzzing the scenario loader's Python side: TOML text (shipped scenarios mutated, and
generated), Python dicts (random nested values, shipped scenarios mutated), `--set` strings
on shipped scenarios, tiny runs and the command line. Every case must end in a scenario, a
ScenarioError (or OSError for a file that cannot be read): never another exception, a hang
or a crash.

Python-side loading runs in this process; building (`_core.Simulation`, which validates and
builds without running) and running go to a guarded worker process (tests/fuzz_worker.py)
with a timeout and a memory limit per case. Runs use a duration of at most 10 ms, flow
counts are clamped and their values come from a palette of sane quantities: the core accepts
some values that make a run (or a build) unbounded, which is the core's to fix; those inputs
are listed in KNOWN_CORE_ISSUES and only loaded, never built or run.

Bounded: the default profile runs about 3,000 cases in well under two minutes. For a longer
local run, TCPLAB_FUZZ_EXAMPLES=N runs N examples per test (when N is larger).
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from fuzz_worker import Guard
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

import tcplab
from tcplab import ScenarioError, load_scenario
from tcplab.scenario import apply_overrides, check_seed, scenario_json

REPO = Path(__file__).resolve().parent.parent
FUZZ_EXAMPLES = int(os.environ.get("TCPLAB_FUZZ_EXAMPLES", "0"))

BUILD_TIMEOUT_S = 20.0
RUN_TIMEOUT_S = 30.0
RUN_DURATION = "5ms"
MAX_RUN_COUNT = 8


def fuzz_settings(default: int):
    """`default` examples (TCPLAB_FUZZ_EXAMPLES raises it), a generous deadline: hangs are
    caught by the worker's timeout, not by Hypothesis."""
    return settings(
        max_examples=max(default, FUZZ_EXAMPLES),
        deadline=datetime.timedelta(seconds=60),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def _shipped() -> dict[str, str]:
    """Text of every shipped scenario (sweep files, which have a `base`, left out)."""
    texts = {}
    for path in sorted((REPO / "scenarios").rglob("*.toml")):
        text = path.read_text(encoding="utf-8")
        if "base" not in tomllib.loads(text):
            texts[str(path.relative_to(REPO))] = text
    return texts


SHIPPED = _shipped()
SHIPPED_SPECS = {name: tomllib.loads(text) for name, text in SHIPPED.items()}
SMOKE = REPO / "scenarios" / "smoke" / "smoke.toml"


# --------------------------------------------------------------------------------------------
# Inputs the core accepts but cannot build or run in bounded time or memory: such cases are
# loaded and checked in Python only. Each entry: what, and a test of it. None today: the core
# refuses at load the flow counts (> 100000 in all), periods (< 1 us) and times (> 10^6 s)
# that exhausted memory or never ended (tests in crates/tcplab-core/src/scenario/tests.rs).

KNOWN_CORE_ISSUES: dict[str, Any] = {}


def _flows(spec: Any) -> list[Any]:
    flows = spec.get("flows") if isinstance(spec, dict) else None
    return flows if isinstance(flows, list) else []


def known_core_issue(spec: Any) -> str | None:
    """The name of the known core issue `spec` runs into, if any."""
    return next((name for name, test in KNOWN_CORE_ISSUES.items() if test(spec)), None)


# --------------------------------------------------------------------------------------------
# Strategies

KEYS = [
    "name", "description", "run", "duration", "stop", "seed", "defaults", "queue", "tcp",
    "hosts", "switches", "emulators", "links", "taps", "flows", "coordinators", "trace",
    "between", "rate", "delay", "loss", "count", "bytes", "src", "dst", "kind", "mss", "cc", "bulk", "cbr", "block_read",
    "throughput_interval", "interval", "resolution", "queue_a", "queue_b", "classes",
]
QUANTITIES = [
    "0s", "1ps", "1ns", "10us", "1ms", "100ms", "1s", "10000000s", "1e7s", "-5ms", "5parsecs",
    "1Gbps", "0bps", "10bps", "155.52Mbps", "1e400Gbps", "1500B", "0B", "64KiB", "1e30B",
    "18446744073709551616B", "40pkts", "0pkts", "unlimited", "", " ", "1.5.5ms", "nan", "inf",
    "newreno", "cubic", "bic", "reno", "sack", "linux-2.6.16", "linux-modern", "udp-cbr",
    "tcp", "all", "both", "flows-done", "idle", "duration", "a", "sw1->emu", "\x00", "é",
]
HUGE_INTS = [
    2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 10**30, 10**400,
    -1, -(2**63), -(2**64),
]
SPECIAL_FLOATS = [float("nan"), float("inf"), -float("inf"), 5e-324, -0.0, 1e308, 0.5]

scalars = st.one_of(
    st.integers(),
    st.sampled_from(HUGE_INTS),
    st.floats(),
    st.sampled_from(SPECIAL_FLOATS),
    st.text(max_size=12),
    st.sampled_from(QUANTITIES),
    st.booleans(),
    st.none(),
    st.dates(),
    st.times(),
    st.datetimes(),
)
keys = st.one_of(st.sampled_from(KEYS), st.text(max_size=8), st.integers(0, 3))


def nested(depth: int, kind: str, leaf: Any = 1) -> Any:
    """`depth` lists or tables one inside the other (built without recursion)."""
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


class Deep:
    """A placeholder for `nested(depth, kind)`, put in place by `realize`: Hypothesis prints
    the values it draws, and printing a deep value would exceed Python's recursion limit."""

    def __init__(self, depth: int, kind: str):
        self.depth, self.kind = depth, kind

    def __repr__(self) -> str:
        return f"Deep({self.depth}, {self.kind!r})"


def realize(value: Any) -> Any:
    """`value` with every Deep placeholder replaced by its nested value (`value` is shallow)."""
    if isinstance(value, Deep):
        return nested(value.depth, value.kind)
    if isinstance(value, dict):
        return {k: realize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [realize(v) for v in value]
    return value


deep = st.builds(Deep, st.integers(min_value=50, max_value=3000), st.sampled_from(["list", "table"]))
values = st.recursive(
    st.one_of(scalars, deep),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(keys, children, max_size=4),
    max_leaves=12,
)
random_scenarios = st.dictionaries(keys, values, max_size=8)


def node_paths(spec: Any) -> list[tuple[Any, ...]]:
    """Every path (tuple of keys and indices) inside `spec`, listed without recursion."""
    paths, stack = [], [((), spec)]
    while stack:
        path, node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            paths.append((*path, key))
            stack.append(((*path, key), child))
    return sorted(paths, key=repr)


def _parent(spec: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        spec = spec[key]
    return spec


QUANTITY = re.compile(r"([0-9]+(?:\.[0-9]+)?)([A-Za-z]+)")
NUMBERS = [0, 1, 2, 3, 10, 40, 100, 1000, 65535, 10**6, 0.5, 1.5, 2**32, 2**63]
SAFE_NUMBERS = [1, 2, 3, 5, 10, 40, 100, 1000]


@st.composite
def tweaks(draw, value: Any, safe: bool = False) -> Any:
    """A value of the same kind as `value`: the same unit with another number, another
    integer or fraction, the other boolean. With `safe`, small numbers and no unit below a
    microsecond (a tiny run stays tiny)."""
    numbers = SAFE_NUMBERS if safe else NUMBERS
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return draw(st.sampled_from(numbers) | st.integers(min_value=0, max_value=max(numbers)))
    if isinstance(value, float):
        return draw(st.floats(min_value=0, max_value=1))
    if isinstance(value, str) and (m := QUANTITY.fullmatch(value)):
        unit = "us" if safe and m[2] in ("ps", "ns") else m[2]
        return f"{draw(st.sampled_from(numbers))}{unit}"
    return draw(st.sampled_from(QUANTITIES[:30] if not safe else ["1ms", "10Mbps", "1500B", "40pkts"]))


@st.composite
def mutated_scenarios(draw, value_strategy=values, safe: bool = False):
    """A shipped scenario with one to three mutations: a value replaced (by a value of the
    same kind, or any), a key deleted, an unknown key added, a value wrapped in a list."""
    name = draw(st.sampled_from(sorted(SHIPPED_SPECS)))
    spec = copy.deepcopy(SHIPPED_SPECS[name])
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = node_paths(spec)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, key = _parent(spec, path), path[-1]
        operation = draw(
            st.sampled_from(["tweak", "tweak", "tweak", "replace", "delete", "add", "wrap"])
        )
        if operation == "tweak":
            parent[key] = draw(tweaks(parent[key], safe))
        elif operation == "replace":
            parent[key] = draw(value_strategy)
        elif operation == "delete":
            del parent[key]
        elif operation == "add" and isinstance(parent, dict):
            parent[draw(keys)] = draw(value_strategy)
        elif operation == "wrap":
            parent[key] = [parent[key]]
    return spec


def dotted(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path)


# TOML text

TOML_VALUES = [
    "nan", "inf", "-inf", "+nan", "1e400", "-1e400", "1979-05-27", "07:32:00",
    "1979-05-27T07:32:00Z", "1979-05-27T07:32:00.999999-07:00", "true", "false", '"x"',
    "'lit'", '"""multi\nline"""', "[1, 2]", "[]", "{ a = 1 }", "{}", "18446744073709551616",
    "9223372036854775808", "-9223372036854775809", "0x10", "0o7", "0b1", "1_000", "-0",
    '"5ms"', '"1ps"', '"40pkts"', '"unlimited"', '"1e7s"', "[[[[[[]]]]]]", '"\\ud800"',
    "[" * 70 + "]" * 70, "{ a = " * 70 + "1" + " }" * 70, "[" * 2000 + "]" * 2000,
]


def toml_value(value: Any) -> str:
    """`value` as TOML value text (inline tables; deep values are written by `deep_text`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return json.dumps(value) if isinstance(value, str) else str(value)
    if isinstance(value, float):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(repr(value), repr(value))
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, Deep):
        return "[" * value.depth + "]" * value.depth if value.kind == "list" else (
            "{ a = " * value.depth + "1" + " }" * value.depth
        )
    return "None"  # not TOML: a decode error


@st.composite
def toml_texts(draw):
    """Shipped scenario text with one to three line or character mutations, or a generated
    document."""
    if draw(st.booleans()):
        spec = draw(st.dictionaries(keys, values, max_size=6))
        return "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in spec.items())
    lines = draw(st.sampled_from(sorted(SHIPPED.values()))).split("\n")
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        i = draw(st.integers(min_value=0, max_value=len(lines) - 1))
        operation = draw(st.sampled_from(["value", "value", "delete", "duplicate", "insert", "chars", "truncate"]))
        if operation == "value" and "=" in lines[i]:
            key = lines[i].split("=", 1)[0]
            lines[i] = f"{key}= {draw(st.sampled_from(TOML_VALUES) | st.builds(toml_value, values))}"
        elif operation == "delete":
            del lines[i]
        elif operation == "duplicate":
            lines.insert(i, lines[i])
        elif operation == "insert":
            lines.insert(i, draw(st.text(max_size=30)))
        elif operation == "chars":
            at = draw(st.integers(min_value=0, max_value=len(lines[i])))
            lines[i] = lines[i][:at] + draw(st.text(max_size=4)) + lines[i][at:]
        else:
            lines = lines[: i + 1]
        if not lines:
            lines = [""]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Checking one case


@pytest.fixture(scope="module")
def guard():
    worker = Guard()
    yield worker
    worker.close()


def expect_clean(outcome: tuple[str, Any], case: Any) -> None:
    """The outcome of a build or run in the worker: a result or a ScenarioError."""
    kind, detail = outcome
    event(f"worker: {kind}")
    assert kind in ("ok", "ScenarioError"), f"{kind} for {case!r:.2000}:\n{detail}"
    if kind == "ScenarioError":
        assert detail, "an empty message"


def build(guard: Guard, spec: Any, seed: Any = 1) -> None:
    """Check `spec` in Python; unless it is refused there or runs into a known core issue,
    build it in the worker. Raises nothing but assertion errors."""
    try:
        text = scenario_json(load_scenario(spec))
        check_seed(seed)
    except ScenarioError as e:
        event("refused in Python")
        assert str(e)
        return
    issue = known_core_issue(spec)
    if issue is not None:
        event(f"not built: {issue}")
        return
    expect_clean(guard.call("build", (text, seed), BUILD_TIMEOUT_S), spec)


# --------------------------------------------------------------------------------------------
# The fuzz tests


@fuzz_settings(700)
@given(toml_texts())
@example('name = "t"\nx = ' + "[" * 1000 + "]" * 1000)
@example(SMOKE.read_text().replace("loss = 0.0", "loss = nan"))
@example(SMOKE.read_text().replace("loss = 0.0", "loss = 1e400"))
@example(SMOKE.read_text().replace('duration = "10s"', "duration = 1979-05-27"))
@example(SMOKE.read_text().replace("seed = 1", "seed = 18446744073709551615"))
@example("[" + ".".join(["t"] * 1000) + "]\nx = 1\n")
def test_toml_text(guard, tmp_path_factory, text):
    path = tmp_path_factory.getbasetemp() / "fuzz.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        spec = load_scenario(path)
    except ScenarioError as e:
        event("not TOML or refused in Python")
        assert str(e)
        return
    build(guard, spec)


def test_unreadable_files_are_oserrors(tmp_path):
    for path in [tmp_path, tmp_path / "missing.toml"]:
        with pytest.raises(OSError):
            load_scenario(path)
        with pytest.raises(OSError):
            tcplab.run(path)


@fuzz_settings(700)
@given(random_scenarios, st.one_of(st.integers(), st.sampled_from(HUGE_INTS), st.just(1)))
@example({"name": "t", "x": Deep(1000, "list")}, 1)
@example({"name": "t", "run": {"duration": Deep(1000, "table")}}, 1)
@example({"name": "t", "flows": [{"bulk": {"bytes": None}}]}, 1)
@example({"name": "t", "emulators": [{"loss": float("nan")}]}, 1)
@example({"name": "t"}, 2**64 - 1)
def test_random_dicts(guard, spec, seed):
    build(guard, realize(spec), seed)


@fuzz_settings(700)
@given(mutated_scenarios())
@example(apply_overrides(SHIPPED_SPECS["scenarios/smoke/smoke.toml"], {"run.seed": 2**63}))
@example(apply_overrides(SHIPPED_SPECS["scenarios/smoke/smoke.toml"], {"flows.0.count": 10**7}))
def test_mutated_shipped_scenarios(guard, spec):
    build(guard, realize(spec))


set_paths = st.one_of(
    st.sampled_from(sorted({dotted(p) for s in SHIPPED_SPECS.values() for p in node_paths(s)})),
    st.lists(st.one_of(st.sampled_from(KEYS), st.text(max_size=5), st.integers(0, 12).map(str)),
             min_size=1, max_size=5).map(".".join),
    st.text(max_size=20),
)
set_values = st.one_of(st.sampled_from(TOML_VALUES), st.sampled_from(QUANTITIES), st.text(max_size=20),
                       st.builds(toml_value, values))


@st.composite
def set_strings(draw):
    """(a shipped scenario's name, PATH=VALUE pairs): mostly its own paths with a value of
    the same kind, else any path and value."""
    name = draw(st.sampled_from(sorted(SHIPPED_SPECS)))
    spec = SHIPPED_SPECS[name]
    leaves = [p for p in node_paths(spec) if not isinstance(_parent(spec, p)[p[-1]], (dict, list))]
    sets = []
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        if draw(st.integers(0, 2)):
            path = draw(st.sampled_from(leaves))
            value = toml_value(draw(tweaks(_parent(spec, path)[path[-1]])))
            sets.append((dotted(path), value))
        else:
            sets.append((draw(set_paths), draw(set_values)))
    return name, sets


@fuzz_settings(700)
@given(set_strings())
@example(("scenarios/smoke/smoke.toml", [("x", "[" * 1000 + "]" * 1000)]))
@example(("scenarios/smoke/smoke.toml", [("emulators.0.loss", "nan")]))
@example(("scenarios/smoke/smoke.toml", [("run.seed", "18446744073709551615")]))
@example(("scenarios/smoke/smoke.toml", [(".".join(["p"] * 1000), "1")]))
def test_set_strings(guard, name_and_sets):
    name, sets = name_and_sets
    texts = [f"{path}={value}" for path, value in sets]
    try:
        spec = apply_overrides(SHIPPED_SPECS[name], texts)
    except ScenarioError as e:
        event("override refused")
        assert str(e)
        return
    build(guard, spec)


# Tiny runs: mutations drawn from a palette of sane values (a few ms of simulated time).

RUN_VALUES = st.one_of(
    st.integers(min_value=0, max_value=5000),
    st.floats(min_value=0, max_value=1),
    st.booleans(),
    st.text(max_size=6),
    st.sampled_from([
        "1us", "100us", "1ms", "5ms", "1s", "1Mbps", "10Mbps", "1Gbps", "1500B", "64KB",
        "1MB", "40pkts", "unlimited", "newreno", "cubic", "bic", "reno", "sack", "linux",
        "linux-2.6.16", "linux-modern", "udp-cbr", "tcp", "all", "both", "a", "b", "sw1",
    ]),
)


def tiny(spec: dict[str, Any]) -> dict[str, Any]:
    """`spec` cut to RUN_DURATION of simulated time, with at most MAX_RUN_COUNT copies per flow."""
    spec = copy.deepcopy(spec)
    if not isinstance(spec.get("run"), dict):
        spec["run"] = {}
    spec["run"].update(duration=RUN_DURATION, stop="duration")
    for flow in _flows(spec):
        if isinstance(flow, dict) and isinstance(flow.get("count"), int):
            flow["count"] = min(flow["count"], MAX_RUN_COUNT)
    return spec


@fuzz_settings(150)
@given(mutated_scenarios(RUN_VALUES, safe=True))
@example(SHIPPED_SPECS["scenarios/smoke/smoke.toml"])
def test_tiny_runs(guard, spec):
    spec = tiny(realize(spec))
    try:
        text = scenario_json(load_scenario(spec))
    except ScenarioError as e:
        event("refused in Python")
        assert str(e)
        return
    if known_core_issue(spec) is None:
        expect_clean(guard.call("run", (text, 1), RUN_TIMEOUT_S), spec)


# The command line: exit 0 or 2, never a traceback.

CLI_CASES = [
    (["--set", "x=" + "[" * 1000 + "]" * 1000], 2),
    (["--set", "emulators.0.loss=nan"], 2),
    (["--set", "emulators.0.loss=1e400"], 2),
    (["--set", "flows.0.bulk.bytes=1979-05-27"], 2),
    (["--seed", "18446744073709551615"], 2),
    (["--seed", "9223372036854775807"], 0),
    (["--seed", "banana"], 2),
    (["--set", "run.seed=-1"], 2),
    (["--set", "nonsense"], 2),
    ([], 0),
]


def cli(guard: Guard, argv: list[str]) -> tuple[int, str]:
    kind, detail = guard.call("cli", argv, RUN_TIMEOUT_S)
    assert kind == "exit", f"{kind} for {argv!r:.2000}:\n{detail}"
    status, stderr = detail
    assert "Traceback" not in stderr, stderr
    return status, stderr


@pytest.mark.parametrize(("extra", "status"), CLI_CASES)
def test_cli_cases(guard, tmp_path, extra, status):
    argv = ["run", str(SMOKE), "--quiet", "--out", str(tmp_path / "out"),
            "--set", f"run.duration={RUN_DURATION}", *extra]
    got, stderr = cli(guard, argv)
    assert got == status, stderr
    if status == 2:
        assert stderr.startswith(("error: ", "usage: ")), stderr
        assert not (tmp_path / "out").exists()
    for args, status in [(["run", str(tmp_path)], 2), (["run", str(tmp_path / "missing.toml")], 2)]:
        assert cli(guard, args)[0] == status


CLI_VALUES = st.one_of(
    st.sampled_from(["nan", "inf", "1e400", "1979-05-27", "[" * 1000 + "]" * 1000, "-1",
                     "18446744073709551616", "true", '"x"', "[]", "{}", "", "{ a = [1] }"]),
    RUN_VALUES.map(str),
)


@fuzz_settings(40)
@given(st.lists(st.tuples(set_paths, CLI_VALUES), min_size=1, max_size=2))
def test_cli_set_strings(guard, sets):
    texts = [f"{path}={value}" for path, value in sets]
    try:  # the same overrides in Python first, to keep known core issues away from the run
        spec = apply_overrides(load_scenario(SMOKE), texts)
    except ScenarioError:
        spec = None
    if spec is not None and known_core_issue(spec) is not None:
        return
    argv = ["run", str(SMOKE), "--quiet"]
    for text in texts:
        argv += ["--set", text]
    argv += ["--set", f"run.duration={RUN_DURATION}", "--set", "run.stop=duration"]
    status, stderr = cli(guard, argv)
    event(f"exit {status}")
    assert status in (0, 2), stderr
    if status == 2:
        assert stderr.startswith(("error: ", "usage: ")), stderr


# Sweep sizes: seed counts and axis lengths whose product passes the limit are refused before
# anything is materialised, naming `seeds` or `axes`; never a MemoryError or a long silence.
# Loaded in the guarded worker (3 GB address space): a sweep is only loaded, never run.

SWEEP_TIMEOUT_S = 30.0
SWEEP_MAX_RUNS = 1_000_000
"""The documented limit on points × seeds (docs/sweeps.md)."""
SEED_COUNTS = [1, 2, 10, 1000, 10**5, 10**6, 10**6 + 1, 10**8, 10**9, 2**62, 2**63 - 1, 0, -1]
AXIS_LENGTHS = [1, 2, 10, 100, 1000, 10**4, 10**5, 10**5 + 1, 10**6]


@st.composite
def sweep_axes(draw) -> str:
    """A range or a list of one axis, its length drawn from AXIS_LENGTHS (or any)."""
    n = draw(st.sampled_from(AXIS_LENGTHS) | st.integers(min_value=1, max_value=200_000))
    form = draw(st.sampled_from(["step", "num", "factor", "list"]))
    if form == "step":
        return f"{{ start = 1, stop = {n}, step = 1 }}"
    if form == "num":
        return f"{{ start = 0, stop = 1, num = {n} }}"
    if form == "factor":
        return f"{{ start = 1, stop = {2 ** min(n, 62)}, factor = 2 }}"
    return "[" + ", ".join(map(str, range(min(n, 2000)))) + "]"


@st.composite
def sweep_texts(draw) -> str:
    """A sweep file over the smoke scenario with a seed count (or list) and up to three axes
    (one of them perhaps a [[zip]])."""
    if draw(st.integers(0, 4)):
        seeds = str(draw(st.sampled_from(SEED_COUNTS) | st.integers(min_value=-3, max_value=10**7)))
    else:
        seeds = "[" + ", ".join(map(str, range(draw(st.integers(1, 3000))))) + "]"
    lines = [f"base = {json.dumps(str(SMOKE))}", f"seeds = {seeds}", "[axes]"]
    for i in range(draw(st.integers(0, 3))):
        lines.append(f'"x.a{i}" = {draw(sweep_axes())}')
    if draw(st.booleans()):
        axis = draw(sweep_axes())
        lines += ["[[zip]]", f'"y.a" = {axis}', f'"y.b" = {axis}']
    return "\n".join(lines) + "\n"


@fuzz_settings(60)
@given(sweep_texts())
@example(f'base = {json.dumps(str(SMOKE))}\nseeds = 100000000\n')
@example(f'base = {json.dumps(str(SMOKE))}\n[axes]\n"x.a" = {{ start = 1, stop = 100000, step = 1 }}\n'
         f'"x.b" = {{ start = 0, stop = 1, num = 100000 }}\n')
@example(f'base = {json.dumps(str(SMOKE))}\n[axes]\n"x.a" = {{ start = 1, stop = {2**1100}, '
         'factor = 2 }\n')  # an integer beyond float range: was an OverflowError
def test_sweep_sizes(guard, tmp_path_factory, text):
    path = tmp_path_factory.getbasetemp() / "sweep-size.toml"
    path.write_text(text, encoding="utf-8")
    kind, detail = guard.call("sweep", str(path), SWEEP_TIMEOUT_S)
    event(f"sweep: {kind}")
    assert kind in ("ok", "SweepError"), f"{kind} for {text:.500}:\n{detail}"
    if kind == "ok":
        assert detail <= SWEEP_MAX_RUNS
    elif "a sweep may have at most" in detail:
        assert detail.startswith((f"{path}: seeds: ", f"{path}: axes: ")), detail


@pytest.mark.parametrize("body", ["seeds = 100000000\n",
                                  '[axes]\n"x.a" = { start = 1, stop = 100000, step = 1 }\n'
                                  '"x.b" = { start = 1, stop = 100000, step = 1 }\n'])
def test_cli_sweep_too_large(guard, tmp_path, body):
    path = tmp_path / "sweep.toml"
    path.write_text(f"base = {json.dumps(str(SMOKE))}\n{body}", encoding="utf-8")
    status, stderr = cli(guard, ["sweep", str(path), "--quiet", "--out", str(tmp_path / "out")])
    assert status == 2, stderr
    assert stderr.startswith(f"error: {path}: ") and ("seeds: " in stderr or "axes: " in stderr)
    assert not (tmp_path / "out").exists()
