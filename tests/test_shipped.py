"""What an installed tcplab carries: the scenarios and the documents its messages cite
(`tcplab docs`), and the type information (`py.typed`, `_core.pyi`)."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tcplab
from tcplab import _core, shipped
from tcplab.cli import main

REPO = Path(__file__).resolve().parents[1]
PACKAGE = Path(tcplab.__file__).resolve().parent


def test_the_scenarios_are_package_data_and_the_repository_links_to_them():
    assert shipped.scenarios_dir().resolve() == PACKAGE / "scenarios"
    assert (REPO / "scenarios").resolve() == PACKAGE / "scenarios"
    for family in ("smoke", "dumbbell", "p0_parallel_bic"):
        assert list((shipped.scenarios_dir() / family).glob("*.toml")), family


def test_every_document_a_message_cites_is_shipped():
    cited = set()
    sources = [
        *(REPO / "python" / "tcplab").rglob("*.py"),
        *(REPO / "crates").glob("*/src/**/*.rs"),
    ]
    for path in sources:
        cited |= set(re.findall(r"\bdocs/([a-z0-9-]+)\.md\b", path.read_text(encoding="utf-8")))
    assert {"scenario-format", "sweeps"} <= cited
    assert cited <= set(shipped.doc_names())
    studies = shipped.study_readmes()
    for name in shipped.doc_names():
        if name in studies:
            source = REPO / "scenarios" / studies[name].parent.name / "README.md"
        elif name == "readme":
            source = REPO / "README.md"
        else:
            source = REPO / "docs" / f"{name}.md"
        assert shipped.doc_path(name).read_bytes() == source.read_bytes(), name
    assert set(studies) == {"p0", "p1", "p2", "p4"} | ({"p3"} if (REPO / "scenarios" / "p3_imtcp").is_dir() else set())


def test_docs_lists_and_prints_the_documents(capsys):
    assert main(["docs"]) == 0
    listing = capsys.readouterr().out
    for name in ("scenario-format", "sweeps", "core-interface", "readme", "p0", "p2"):
        assert name in listing
    assert "Study 002: the Data Reservoir" in listing
    assert f"shipped scenarios: {shipped.scenarios_dir()}" in listing
    assert main(["docs", "sweeps"]) == 0
    assert capsys.readouterr().out == (REPO / "docs" / "sweeps.md").read_text(encoding="utf-8")
    assert main(["docs", "sweeps", "--path"]) == 0
    assert Path(capsys.readouterr().out.strip()) == shipped.doc_path("sweeps")


def test_an_unknown_document_is_one_line_naming_the_shipped_ones(capsys):
    assert main(["docs", "nope"]) == 2
    err = capsys.readouterr().err
    assert err == ("error: no document 'nope' (shipped: core-interface, "
                   f"{', '.join(sorted(shipped.study_readmes()))}, readme, scenario-format, sweeps, tcp-settings)\n")


def test_an_error_citing_a_document_says_how_to_read_it(smoke_path, capsys):
    status = main(["run", str(smoke_path), "--quiet", "--set", "links.0.rate=5"])
    assert status == 2
    err = capsys.readouterr().err
    first, second = err.splitlines()
    assert first.startswith("error: ") and "docs/scenario-format.md" in first
    assert second == "see: tcplab docs scenario-format"


def test_the_package_is_typed_and_the_stubs_cover_the_extension():
    assert (PACKAGE / "py.typed").is_file()
    stubs = ast.parse((PACKAGE / "_core.pyi").read_text(encoding="utf-8"))
    top = {node.name for node in stubs.body if isinstance(node, (ast.ClassDef, ast.FunctionDef))}
    exported = {name for name in dir(_core) if not name.startswith("_")}
    assert top == exported
    [simulation] = [n for n in stubs.body if isinstance(n, ast.ClassDef) and n.name == "Simulation"]
    methods = {n.name for n in simulation.body if isinstance(n, ast.FunctionDef)}
    assert methods - {"__new__"} == {n for n in dir(_core.Simulation) if not n.startswith("_")}


@pytest.mark.parametrize("command", ["run", "plot", "sweep", "reproduce", "docs"])
def test_every_command_has_help(command):
    proc = subprocess.run(
        [sys.executable, "-m", "tcplab", command, "--help"], capture_output=True, text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"usage: tcplab {command}")


def test_scenario_path_resolves_family_and_bare_names(tmp_path, monkeypatch):
    from tcplab import shipped

    for family, name in (("a", "x"), ("b", "x"), ("b", "y")):
        (tmp_path / family).mkdir(exist_ok=True)
        (tmp_path / family / f"{name}.toml").write_text('name = "n"\n')
    (tmp_path / "b" / "sweep.toml").write_text('base = "y.toml"\n')
    monkeypatch.setattr(shipped, "scenarios_dir", lambda: tmp_path)
    assert shipped.scenario_names() == ["a/x", "b/x", "b/y"]
    assert shipped.scenario_path("y") == tmp_path / "b" / "y.toml"
    assert shipped.scenario_path("a/x.toml") == tmp_path / "a" / "x.toml"
    with pytest.raises(KeyError, match="names 2 shipped scenarios: a/x, b/x"):
        shipped.scenario_path("x")
    with pytest.raises(KeyError, match="no shipped scenario of that name"):
        shipped.scenario_path("sweep")


def test_docs_prints_the_readme_and_a_study_readme(capsys):
    assert main(["docs", "readme"]) == 0
    assert capsys.readouterr().out == (REPO / "README.md").read_text(encoding="utf-8")
    assert main(["docs", "p4"]) == 0
    assert capsys.readouterr().out == (REPO / "scenarios" / "p4_atm" / "README.md").read_text(encoding="utf-8")


def test_reproduce_help_gives_each_study_its_title(capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    out = capsys.readouterr().out
    for name, family in (("p0", "p0_parallel_bic"), ("p1", "p1_incast"), ("p2", "p2_data_reservoir"), ("p4", "p4_atm")):
        title = (REPO / "scenarios" / family / "README.md").read_text(encoding="utf-8").splitlines()[0][2:]
        assert f"  {name}  {title}" in out
