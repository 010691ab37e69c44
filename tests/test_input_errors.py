"""Bad scenario values and seeds: every entry point (TOML file, dict, --set, --seed, sweep)
gives a ScenarioError (or SweepError) naming the field, the CLI `error: ...` and status 2;
never a traceback, a RecursionError or a panic in the core."""

import json
import tempfile

import pytest

import tcplab
from tcplab import ScenarioError, SweepError, load_scenario
from tcplab.cli import main
from tcplab.scenario import apply_overrides, parse_value

MAX_DEPTH = 64
"""The documented nesting limit (tables and arrays, the scenario's top level included)."""

SMALL = {
    "name": "t",
    "run": {"duration": "10ms"},
    "hosts": [{"name": "a"}, {"name": "b"}],
    "links": [{"between": ["a", "b"], "rate": "1Gbps"}],
    "flows": [{"name": "f0", "src": "a", "dst": "b", "bulk": {"bytes": "10KB"}}],
}


def nested_list(depth):
    """`depth` lists, one inside the other, built without recursion."""
    value = []
    for _ in range(depth - 1):
        value = [value]
    return value


def nested_table(depth, key="a"):
    """`depth` tables {key: {key: ...}}, built without recursion."""
    value = {}
    for _ in range(depth - 1):
        value = {key: value}
    return value


def cli(capsys, *args):
    """Run the command line in this process: (status, stdout, stderr)."""
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """Point tempfile's default directory at an empty folder, to see what a run leaves there."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


# --------------------------------------------------------------------------------------------
# Deep nesting (defect 2)

TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"


@pytest.mark.parametrize("depth", [100, 600, 1000])
def test_deep_set_value_is_a_field_error(smoke_path, tmp_path, capsys, depth):
    out = tmp_path / "out"
    value = "[" * depth + "]" * depth
    status, _, err = cli(capsys, "run", smoke_path, "--quiet", "--set", f"x={value}", "--out", out)
    assert status == 2
    assert err.startswith("error: x[0][0]"), err[:200]
    assert TOO_DEEP in err
    assert "Traceback" not in err and "RecursionError" not in err
    assert not out.exists()


@pytest.mark.parametrize("depth", [100, 600, 1000])
def test_deep_toml_file_is_a_field_error(tmp_path, depth):
    path = tmp_path / "deep.toml"
    path.write_text(
        f'name = "t"\n[run]\nduration = {{ a = {"[" * depth}{"]" * depth} }}\n', encoding="utf-8"
    )
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert str(error.value).startswith("run.duration.a[0][0]")
    assert TOO_DEEP in str(error.value)


def test_deep_toml_headers_and_dotted_keys_are_field_errors(tmp_path):
    header = tmp_path / "header.toml"
    header.write_text("[" + ".".join(["t"] * 1000) + "]\nx = 1\n", encoding="utf-8")
    dotted = tmp_path / "dotted.toml"
    dotted.write_text(".".join(["d"] * 1000) + " = 1\n", encoding="utf-8")
    for path, start in [(header, "t.t.t."), (dotted, "d.d.d.")]:
        with pytest.raises(ScenarioError) as error:
            tcplab.run(path)
        assert str(error.value).startswith(start)
        assert TOO_DEEP in str(error.value)


@pytest.mark.parametrize(
    ("value", "start"),
    [(nested_list(1000), "x[0][0][0]"), (nested_table(1000), "x.a.a.a")],
)
def test_deep_python_values_are_field_errors(value, start):
    for call in [
        lambda: tcplab.run({**SMALL, "x": value}),
        lambda: load_scenario({**SMALL, "x": value}),
        lambda: apply_overrides(SMALL, {"x": value}),
        lambda: tcplab.run(SMALL, overrides={"x": value}),
    ]:
        with pytest.raises(ScenarioError) as error:
            call()
        assert str(error.value).startswith(start)
        assert TOO_DEEP in str(error.value)


def test_deep_override_path_is_a_field_error(capsys, smoke_path):
    path = ".".join(["p"] * 1000)
    status, _, err = cli(capsys, "run", smoke_path, "--quiet", "--set", f"{path}=1")
    assert status == 2
    assert err.startswith("error: p.p.p.") and TOO_DEEP in err


def test_nesting_up_to_the_limit_reaches_the_core():
    # One level short of the limit: not refused for depth; the core names the unknown key.
    with pytest.raises(ScenarioError) as error:
        tcplab.run({**SMALL, "x": nested_list(MAX_DEPTH - 1)})
    assert TOO_DEEP not in str(error.value)
    assert str(error.value).startswith("x")


def test_deep_sweep_file_is_a_sweep_error(smoke_path, tmp_path, capsys):
    path = tmp_path / "deep.toml"
    path.write_text(
        f'base = {json.dumps(str(smoke_path))}\n[axes]\n"x" = [{"[" * 800}{"]" * 800}]\n',
        encoding="utf-8",
    )
    status, _, err = cli(capsys, "sweep", path, "--quiet", "--workers", "1")
    assert status == 2
    assert "axes.x[0][0]" in err and TOO_DEEP in err and "Traceback" not in err
    with pytest.raises(SweepError, match=r"axes\[\('x', 'y'\)\].*" + TOO_DEEP):
        tcplab.sweep(smoke_path, axes={("x", "y"): [(1, nested_list(1000))]}, workers=1)


# --------------------------------------------------------------------------------------------
# NaN, infinities, dates, None, odd keys and types (defect 3)


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("loss = nan", "emulators[0].loss: nan is not a finite number"),
        ("loss = -inf", "emulators[0].loss: -inf is not a finite number"),
        ("loss = 1e400", "emulators[0].loss: inf is not a finite number"),
        ("loss = 1979-05-27", "emulators[0].loss: a TOML date/time is not a valid value"),
        ("loss = 07:32:00", "emulators[0].loss: a TOML date/time is not a valid value"),
        ("loss = [0.1, 1979-05-27T07:32:00Z]", "emulators[0].loss[1]: a TOML date/time"),
    ],
)
def test_non_finite_and_dates_in_a_file_name_the_field(smoke_path, tmp_path, capsys, toml, message):
    path = tmp_path / "s.toml"
    path.write_text(smoke_path.read_text().replace("loss = 0.0", toml), encoding="utf-8")
    with pytest.raises(ScenarioError) as error:
        tcplab.run(path)
    assert str(error.value).startswith(message)
    status, _, err = cli(capsys, "run", path, "--quiet")
    assert status == 2
    assert err.startswith(f"error: {message}")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("nan", "emulators[0].loss: nan is not a finite number"),
        ("inf", "emulators[0].loss: inf is not a finite number"),
        ("1e400", "emulators[0].loss: inf is not a finite number"),
    ],
)
def test_non_finite_set_values_name_the_field(smoke_path, capsys, value, message):
    status, _, err = cli(capsys, "run", smoke_path, "--quiet", "--set", f"emulators.0.loss={value}")
    assert status == 2
    assert err.startswith(f"error: {message}")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda s: s["flows"][0]["bulk"].update(bytes=None),
            "flows[0].bulk.bytes: None is not a valid value; leave the key out for the default",
        ),
        (lambda s: s["run"].update(duration=float("nan")), "run.duration: nan is not a finite"),
        (lambda s: s["links"][0].update(rate=float("-inf")), "links[0].rate: -inf is not a finite"),
        (lambda s: s["hosts"].append(None), "hosts[2]: None is not a valid value"),
        (lambda s: s["flows"][0].update({3: "x"}), "flows[0][3]: a key must be a string"),
        (lambda s: s["flows"][0]["bulk"].update(bytes=b"1KB"), "flows[0].bulk.bytes: a bytes is not a valid"),
        (lambda s: s["flows"][0]["bulk"].update(bytes={1, 2}), "flows[0].bulk.bytes: a set is not a valid"),
    ],
)
def test_bad_python_values_name_the_field(change, message):
    spec = json.loads(json.dumps(SMALL))
    change(spec)
    for call in [lambda: tcplab.run(spec), lambda: load_scenario(spec)]:
        with pytest.raises(ScenarioError) as error:
            call()
        assert str(error.value).startswith(message)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s["flows"][0].update(bytes="1KB"), "flows[0].bytes: moved to the flow's `bulk` table"),
        (lambda s: s["flows"][0].update(kind="udp-cbr", rate="1Mbps"), "flows[0].rate: moved to the flow's `cbr` table"),
        (lambda s: s["flows"][0].update(sru="1KB"), "flows[0].sru: moved to the flow's `block_read` table"),
        (lambda s: s["flows"][0].update(cbr={"rate": "1Mbps"}), 'flows[0].cbr: only for kind = "udp-cbr" flows (this one is kind = "tcp")'),
    ],
)
def test_a_flow_key_outside_the_table_of_its_kind_names_the_table(change, message):
    # The kind-specific keys live in the kind's table (bulk, cbr, block_read): a key written
    # directly in the flow, or a table of another kind, is refused by name before anything runs.
    spec = json.loads(json.dumps(SMALL))
    change(spec)
    with pytest.raises(ScenarioError) as error:
        tcplab.run(spec)
    assert str(error.value).startswith(message), str(error.value)


def test_none_in_overrides_names_the_field():
    with pytest.raises(ScenarioError) as error:
        tcplab.run(SMALL, overrides={"flows.0.bulk.bytes": None})
    assert str(error.value).startswith("flows[0].bulk.bytes: None is not a valid value; leave the key")
    with pytest.raises(ScenarioError) as error:
        apply_overrides(SMALL, {"flows.0.tcp": {"mss": float("nan")}})
    assert str(error.value).startswith("flows[0].tcp.mss: nan is not a finite number")


def test_tuples_are_arrays():
    spec = json.loads(json.dumps(SMALL))
    spec["links"][0]["between"] = ("a", "b")
    assert tcplab.run(spec).summary["flows"][0]["bytes_delivered"] > 0


def test_parse_value_keeps_dates_as_strings_and_refuses_deep_values():
    assert parse_value("1979-05-27") == "1979-05-27"
    with pytest.raises(ScenarioError, match=r"^value\[0\]\[0\].*" + TOO_DEEP):
        parse_value("[" * 2000 + "]" * 2000)


# --------------------------------------------------------------------------------------------
# Seeds: [0, 2^63) everywhere (defect 4)

BAD_SEEDS = [2**63, 2**64 - 1, 2**64, -1, 1.5, True, "1"]


def seed_message(seed):
    return f"run.seed: must be an integer in [0, 2^63), got {seed!r}"


@pytest.mark.parametrize("seed", BAD_SEEDS)
def test_api_seed_out_of_range_is_a_field_error(smoke_path, private_tmp, seed):
    with pytest.raises(ScenarioError) as error:
        tcplab.run(smoke_path, seed=seed)
    assert str(error.value) == seed_message(seed)
    with pytest.raises(ScenarioError) as error:
        tcplab.run(smoke_path, overrides={"run.seed": seed})
    assert str(error.value) == seed_message(seed)
    assert list(private_tmp.iterdir()) == []  # no capture directory leaked


def test_largest_seed_runs(smoke_path):
    spec = load_scenario(smoke_path)
    spec["run"]["duration"] = "50ms"
    result = tcplab.run(spec, seed=2**63 - 1)
    assert result.seed == 2**63 - 1
    assert "seed = 9223372036854775807" in result.resolved_toml


@pytest.mark.parametrize("seed", ["9223372036854775808", "18446744073709551615", "-1"])
def test_cli_seed_out_of_range_exits_2(smoke_path, tmp_path, capsys, private_tmp, seed):
    for args in [["--seed", seed], ["--set", f"run.seed={seed}"]]:
        status, _, err = cli(capsys, "run", smoke_path, "--quiet", "--out", tmp_path / "o", *args)
        assert status == 2
        assert err == f"error: {seed_message(int(seed))}\n"
    assert list(private_tmp.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tmp"]


def test_scenario_file_seed_out_of_range(smoke_path, tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(smoke_path.read_text().replace("seed = 1", "seed = 9223372036854775808"))
    status, _, err = cli(capsys, "run", path, "--quiet")
    assert status == 2
    assert err == f"error: {seed_message(2**63)}\n"
    # A --seed does not hide the file's bad run.seed.
    assert cli(capsys, "run", path, "--quiet", "--seed", "3")[0] == 2


def test_sweep_seeds_out_of_range(smoke_path, tmp_path, capsys):
    with pytest.raises(SweepError, match=r"seeds\[1\]: must be an integer in \[0, 2\^63\), got"):
        tcplab.sweep(smoke_path, seeds=[1, 2**63], workers=1)
    base = load_scenario(smoke_path)
    base["run"]["seed"] = 2**63 - 2
    with pytest.raises(SweepError, match=r"seeds: 3 seeds from 9223372036854775806 pass 2\^63"):
        tcplab.sweep(base, seeds=3, workers=1)
    base["run"]["seed"] = 2**63
    with pytest.raises(SweepError, match=r"base: run.seed: must be an integer in \[0, 2\^63\)"):
        tcplab.sweep(base, seeds=[1], workers=1)
    path = tmp_path / "sweep.toml"
    path.write_text(f"base = {json.dumps(str(smoke_path))}\nseeds = [9223372036854775808]\n")
    status, _, err = cli(capsys, "sweep", path, "--quiet", "--out", tmp_path / "out")
    assert status == 2
    assert "seeds[0]: must be an integer in [0, 2^63), got 9223372036854775808" in err
    assert not (tmp_path / "out").exists()
