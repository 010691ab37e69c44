"""Scenario loading and dotted-path overrides (pure Python; the core is not run)."""

import json
import re
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcplab import ScenarioError, load_scenario
from tcplab.scenario import apply_overrides, parse_value

BASE = {
    "name": "t",
    "run": {"duration": "1s"},
    "hosts": [{"name": "a"}, {"name": "b"}],
    "links": [{"between": ["a", "b"], "rate": "1Gbps"}],
    "flows": [
        {"name": "f0", "src": "a", "dst": "b"},
        {"name": "f1", "src": "a", "dst": "b", "tcp": {"mss": 1460}},
        {"name": "f2", "src": "b", "dst": "a"},
    ],
}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("9000", 9000),
        ("-3", -3),
        ("1.5", 1.5),
        ("true", True),
        ("false", False),
        ('"x"', "x"),
        ("'single'", "single"),
        ("[1, 2]", [1, 2]),
        ('["20pkts", "100pkts"]', ["20pkts", "100pkts"]),
        ("{ classes = [1, 2] }", {"classes": [1, 2]}),
        ("5s", "5s"),
        ("40pkts", "40pkts"),
        ("155.52Mbps", "155.52Mbps"),
        ("newreno", "newreno"),
        ("sw->b", "sw->b"),
        ("", ""),
        ("1979-05-27", "1979-05-27"),
        ("1\nextra = 2", "1\nextra = 2"),
    ],
)
def test_parse_value(text, value):
    assert parse_value(text) == value
    assert type(parse_value(text)) is type(value)


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_parse_value_integers(n):
    assert parse_value(str(n)) == n


@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs"))))
def test_parse_value_quoted_strings(s):
    assert parse_value(json.dumps(s, ensure_ascii=False)) == s


@given(st.from_regex(r"\A[0-9]+(\.[0-9]+)?(ms|us|ns|s|Gbps|Mbps|kbps|MB|KB|KiB|B|pkts)\Z"))
def test_parse_value_quantities_stay_strings(s):
    assert parse_value(s) == s


def test_overrides_set_nested_and_indexed_values():
    out = apply_overrides(
        BASE,
        [
            "flows.0.tcp.mss=9000",
            "flows.1.tcp.mss = 536",
            "links.0.queue_b=40pkts",
            "run.duration=5s",
            "run.seed=7",
            'name="renamed"',
            "hosts.1.name=c",
        ],
    )
    assert out["flows"][0]["tcp"] == {"mss": 9000}
    assert out["flows"][1]["tcp"] == {"mss": 536}
    assert out["links"][0]["queue_b"] == "40pkts"
    assert out["run"] == {"duration": "5s", "seed": 7}
    assert out["name"] == "renamed"
    assert out["hosts"][1] == {"name": "c"}


def test_overrides_address_links_and_queues_by_name():
    base = {"links": [{"between": ["a", "sw"]}, {"between": ["client", "sw"], "rate": "1Gbps"}]}
    out = apply_overrides(base, ["queue(sw->client)=100pkts", "link(sw, client).delay=95us", "queue(a->sw)=5pkts"])
    assert out["links"][1] == {"between": ["client", "sw"], "rate": "1Gbps", "queue_b": "100pkts", "delay": "95us"}
    assert out["links"][0] == {"between": ["a", "sw"], "queue_a": "5pkts"}
    assert base["links"][1] == {"between": ["client", "sw"], "rate": "1Gbps"}, "input unchanged"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("queue(x->y)=1pkts", "queue(x->y): no link between 'x' and 'y'"),
        ("link(a)=1", "link(a): expected link(A,B)"),
        ("queue(a-sw).x=1", "queue(a-sw): expected queue(A->B)"),
        ("queue(a->b)=1pkts", "queue(a->b): 2 links between 'a' and 'b'"),
    ],
)
def test_a_name_that_matches_no_link_or_several_is_an_error(override, message):
    base = {"links": [{"between": ["a", "b"]}, {"between": ["b", "a"]}]}
    with pytest.raises(ScenarioError, match=re.escape(message)):
        apply_overrides(base, [override])


def test_overrides_leave_the_input_unchanged():
    before = json.dumps(BASE, sort_keys=True)
    apply_overrides(BASE, ["flows.0.tcp.mss=9000", "links.0.between.1=c"])
    assert json.dumps(BASE, sort_keys=True) == before


def test_overrides_from_a_mapping_take_python_values_as_they_are():
    overrides = {"flows.2.bulk.bytes": "10MB", "run.duration": "5", "defaults.tcp.sack": False}
    out = apply_overrides(BASE, overrides)
    assert out["flows"][2]["bulk"]["bytes"] == "10MB"
    assert out["run"]["duration"] == "5"
    assert out["defaults"] == {"tcp": {"sack": False}}


def test_overrides_create_missing_tables_for_the_core_to_judge():
    out = apply_overrides(BASE, ["trace.cwnd=true", "defaults.tcp.bogus.deeper=1"])
    assert out["trace"] == {"cwnd": True}
    assert out["defaults"] == {"tcp": {"bogus": {"deeper": 1}}}


def test_overrides_replace_a_whole_array_element():
    out = apply_overrides(BASE, ["links.0.between.1=c", "hosts=[]"])
    assert out["links"][0]["between"] == ["a", "c"]
    assert out["hosts"] == []


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("flows.7.tcp.mss=9000", "flows.7: index out of range (3 flows)"),
        ("flows.3=1", "flows.3: index out of range (3 flows)"),
        ("links.0.between.2=x", "links.0.between.2: index out of range (2 between)"),
        ("switches.0.name=sw", "switches.0: index out of range (0 switches)"),
        ("flows.first.name=x", "flows.first: expected an array index, flows is an array"),
        ("name.x=1", "name: is a string, not a table or array; cannot set name.x"),
        ("flows.0.name.0=1", "flows.0.name: is a string, not a table or array"),
        ("flows.1.tcp.mss.x=1", "flows.1.tcp.mss: is an integer"),
        ("run.duration", "override 'run.duration': expected PATH=VALUE"),
        ("flows..name=x", "empty path segment"),
        ("=5", "empty path segment"),
    ],
)
def test_override_errors(override, message):
    with pytest.raises(ScenarioError) as e:
        apply_overrides(BASE, [override])
    assert message in str(e.value)


def test_override_error_for_non_string_mapping_key():
    with pytest.raises(ScenarioError, match="override path must be a string"):
        apply_overrides(BASE, {("flows", 0): 1})


@given(
    st.lists(st.sampled_from(string.ascii_lowercase), min_size=1, max_size=4),
    st.one_of(st.integers(), st.booleans(), st.text(), st.lists(st.integers())),
)
def test_mapping_override_round_trip(keys, value):
    path = "extra." + ".".join(keys)
    out = apply_overrides(BASE, {path: value})
    node = out["extra"]
    for key in keys:
        node = node[key]
    assert node == value


def test_load_scenario_from_toml(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('name = "x"\n[run]\nduration = "1s"\n[[hosts]]\nname = "a"\n')
    expected = {"name": "x", "run": {"duration": "1s"}, "hosts": [{"name": "a"}]}
    assert load_scenario(path) == expected
    assert load_scenario(str(path)) == load_scenario(path)


def test_load_scenario_copies_a_dict():
    loaded = load_scenario(BASE)
    loaded["flows"][0]["name"] = "changed"
    assert BASE["flows"][0]["name"] == "f0"


def test_load_scenario_rejects_invalid_toml_with_the_file_name(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("name = \n")
    with pytest.raises(ScenarioError, match="bad.toml"):
        load_scenario(path)


def test_load_scenario_rejects_non_utf8(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes('name = "caf\xe9"\n'.encode("latin-1"))
    with pytest.raises(ScenarioError, match="latin1.toml"):
        load_scenario(path)


def test_load_scenario_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_scenario(tmp_path / "missing.toml")


def test_load_scenario_rejects_other_types():
    with pytest.raises(TypeError):
        load_scenario(42)


def test_a_json_scenario_runs_as_its_toml_twin(smoke_path, tmp_path):
    import json
    import tomllib

    import tcplab

    twin = tmp_path / "smoke.json"
    twin.write_text(json.dumps(tomllib.loads(smoke_path.read_text())))
    assert tcplab.load_scenario(twin) == tcplab.load_scenario(smoke_path)
    assert tcplab.run(twin).scenario_hash == tcplab.run(smoke_path).scenario_hash


@pytest.mark.parametrize(
    "text, message",
    [
        ("[1]", "a JSON scenario is one object (the TOML file's tables), not list"),
        ('{"name": ', "not valid JSON: Expecting value (line 1, column 10)"),
        ('{"name": null}', "name: None is not a valid value"),
    ],
)
def test_a_bad_json_scenario_is_one_clear_error(tmp_path, text, message):
    import tcplab

    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(tcplab.ScenarioError, match=re.escape(message)):
        tcplab.load_scenario(path)
