"""The framework the study reproductions share: checks and verdicts, report.md and
results.json, figures, and finding a study's scenarios and a queue's buffer by name."""

import argparse
import json

import pytest
import tcplab
from tcplab.reproduce import STUDIES, p0
from tcplab.reproduce.figures import new_figure, write_figures
from tcplab.reproduce.findings import Check, missing_quotes, not_exercised, verdict
from tcplab.reproduce.report import Report, check_row, write_results_json
from tcplab.reproduce.scenarios import queue_override, scenario_value, study_dir, study_scenario
from tcplab.scenario import load_scenario


def test_verdict_counts_the_papers_findings_only():
    checks = [
        Check("Fig. 1", "a", "m", True),
        Check("Fig. 2", "b", "m", False),
        Check("§5", "c", "m", False, paper=False),
    ]
    assert verdict(checks) == (1, 2)
    assert verdict([]) == (0, 0)


def test_findings_are_numbered_with_their_quote_place_and_verdict():
    held = Check("Fig. 4", "streams diverge", "Jain 0.85", True, quote="速度格差が保存されている.", location="§4.1 ¶1")
    failed = Check("Fig. 9", "fair", "Jain 0.93", False, quote="全て同様の結果になった.", location="§4.2 ¶3")
    r = Report("t")
    r.findings([held, failed])
    text = r.text()
    assert "1. **streams diverge** (§4.1 ¶1; pass)\n   > 速度格差が保存されている.\n\n   Measured: Jain 0.85" in text
    assert "2. **fair** (§4.2 ¶3; **FAIL**)" in text
    assert "> 全て同様の結果になった." in text


def test_a_finding_the_runs_could_not_exercise_is_neither_pass_nor_fail():
    idle = Check("Fig. 9", "losses hit streams apart", "no overflow loss", False, quote="q", location="§5", exercised=False)
    held = Check("Fig. 4", "a", "m", True, quote="q", location="§4")
    failed = Check("Fig. 5", "b", "m", False, quote="q", location="§4")
    assert [c.status for c in (idle, held, failed)] == ["not exercised", "pass", "FAIL"]
    assert verdict([idle, held, failed]) == (1, 3) and not_exercised([idle, held, failed]) == 1
    with pytest.raises(ValueError, match="not exercised cannot pass"):
        Check("Fig. 9", "x", "m", True, exercised=False)
    r = Report("t")
    r.paper_findings([idle, held, failed], "seed.txt")
    text = r.text()
    assert "**1 of 3 findings of the paper hold** with the shipped settings (1 not exercised" in text
    assert "(§5; *not exercised*)" in text and "(§4; **FAIL**)" in text
    assert check_row(idle)[-1] == "*not exercised*"


def test_a_finding_of_the_paper_without_its_quote_or_place_is_listed():
    quoted = Check("Fig. 4", "a", "m", True, quote="q", location="§4.1")
    unplaced = Check("Fig. 5", "b", "m", True, quote="q")
    unquoted = Check("Fig. 6", "c", "m", False, location="§4.1")
    beyond = Check("not in the paper", "d", "m", True, paper=False)
    assert missing_quotes([quoted, unplaced, unquoted, beyond]) == [unplaced, unquoted]


def test_report_markdown():
    report = Report("Study 9 reproduced")
    report.paragraph("Seeds 1, 2.")
    report.heading("The paper's findings")
    report.checks(
        [Check("Fig. 1", "it holds", "0.9", True), Check("Fig. 2", "it fails", "0.1", False)]
    )
    report.table(("experiment", "seed", "order", ""), [("x", 1, [0, 1], ""), ("y", 2, [], "")])
    report.bullets(["`a.png` / `.svg`", "`b.png` / `.svg`"])
    assert report.text() == (
        "# Study 9 reproduced\n\nSeeds 1, 2.\n\n## The paper's findings\n\n"
        "| figure | the paper | measured | |\n|---|---|---|---|\n"
        "| Fig. 1 | it holds | 0.9 | pass |\n| Fig. 2 | it fails | 0.1 | **FAIL** |\n\n"
        "| experiment | seed | order | |\n|---|---|---|---|\n"
        "| x | 1 | [0, 1] | |\n| y | 2 | [] | |\n\n"
        "- `a.png` / `.svg`\n- `b.png` / `.svg`\n"
    )


def test_results_json_keeps_data_and_checks_but_not_results(smoke_path, tmp_path):
    result = tcplab.run(smoke_path)
    check = Check("Fig. 1", "a", "m", True, values={"jain": [0.5, float("nan")]})
    path = write_results_json({"plan": {"seeds": [1]}, "run": result}, [check], tmp_path / "r.json")
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert set(data) == {"plan", "checks"}
    assert data["checks"] == [
        {"figure": "Fig. 1", "claim": "a", "measured": "m", "passed": True, "paper": True,
         "values": {"jain": [0.5, pytest.approx(float("nan"), nan_ok=True)]}, "quote": "", "location": "", "exercised": True,
         "inconclusive": False}
    ]


def test_figures_are_written_as_png_and_svg(tmp_path):
    fig, (ax,) = new_figure()
    ax.plot([0, 1], [1, 0])
    written = write_figures({"one": fig}, tmp_path)
    assert written == [tmp_path / "one.png", tmp_path / "one.svg"]
    assert all(p.stat().st_size > 0 for p in written)


def test_study_scenarios_are_found_in_the_package():
    assert study_dir("p0_parallel_bic") == p0.SCENARIOS
    assert study_scenario("p0_parallel_bic", "simultaneous") == p0.SCENARIOS / "simultaneous.toml"
    with pytest.raises(FileNotFoundError, match=r"'p9_nothing'.*shipped: .*p0_parallel_bic"):
        study_dir("p9_nothing")
    with pytest.raises(FileNotFoundError, match="no such scenario"):
        study_scenario("p0_parallel_bic", "nothing")
    assert set(STUDIES) == {"p0", "p1", "p2", "p3", "p4"}
    assert study_scenario("p1_incast", "model_a").name == "model_a.toml"


def test_a_queue_is_found_by_name_in_either_direction():
    from tcplab.scenario import resolve_names

    sim, harm = load_scenario(p0.SCENARIOS / "simultaneous.toml"), load_scenario(p0.SCENARIOS / "harmonizer.toml")
    assert queue_override(sim, "sw_recv->sw_1g") == "queue(sw_recv->sw_1g)"
    assert resolve_names(sim, queue_override(sim, "sw_recv->sw_1g")) == "links.6.queue_a"
    assert resolve_names(sim, queue_override(sim, "sw_1g->sw_recv")) == "links.6.queue_b"
    # harmonizer.toml has one link more before the bottleneck: the same name, another index.
    assert p0.bottleneck_buffer_path("harmonizer") == p0.bottleneck_buffer_path() == "queue(sw_recv->sw_1g)"
    assert resolve_names(harm, p0.bottleneck_buffer_path("harmonizer")) == "links.7.queue_a"
    assert scenario_value(p0.SCENARIOS / "simultaneous.toml", "links.6.queue_a") == "500pkts"
    assert scenario_value(p0.SCENARIOS / "simultaneous.toml", "queue(sw_recv->sw_1g)") == "500pkts"
    with pytest.raises(KeyError, match="links.6.queue_b"):
        scenario_value(p0.SCENARIOS / "simultaneous.toml", "links.6.queue_b")
    with pytest.raises(ValueError, match="no link between s0 and r0"):
        queue_override(p0.SCENARIOS / "simultaneous.toml", "s0->r0")
    with pytest.raises(ValueError, match="not a queue name"):
        queue_override(p0.SCENARIOS / "simultaneous.toml", "sw_recv")


@pytest.mark.parametrize("queue", ["sw1->emu", "emu->sw1"])
def test_the_override_found_by_name_sets_that_queue(smoke_path, queue):
    # One packet of buffer at the named queue: the summary's queue of that name holds at most
    # one packet, and the others are untouched.
    spec = load_scenario(smoke_path)
    spec["defaults"]["queue"] = "1000pkts"
    spec["links"][1].pop("queue_a")
    path = queue_override(spec, queue)
    queues = {q["name"]: q for q in tcplab.run(spec, overrides={path: "1pkts"}).summary["queues"]}
    assert queues[queue]["max_packets"] <= 1
    assert max(q["max_packets"] for name, q in queues.items() if name != queue) > 1


def test_the_command_line_starts_without_the_study_modules():
    """Every spawned sweep worker re-imports the `tcplab` script, and with it the command
    line: the study modules (and their plotting) must wait until a study runs."""
    import subprocess
    import sys

    code = "import sys, tcplab.cli; print(sorted(m for m in sys.modules if m.startswith(('tcplab.reproduce.p', 'matplotlib'))))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert out == "[]", out


# --------------------------------------------------------------------------------------------
# --out: tcplab replaces only what it wrote; the report is published whole


def _tcplab(*args, cwd):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "tcplab", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=600, check=False)


@pytest.mark.parametrize("paper", ["p4", "p0", "p1", "p2", "p3"])
def test_reproduce_refuses_an_output_directory_holding_user_files(tmp_path, paper):
    """`mkdir r2; echo mine > r2/report.md; tcplab reproduce p4 --quick --out r2`: exit 2 naming
    report.md before anything runs, and r2 as it was."""
    out = tmp_path / "r2"
    out.mkdir()
    (out / "report.md").write_text("mine\n")
    proc = _tcplab("reproduce", paper, "--quick", "--out", "r2", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (
        f"error: out: {out}: holds 'report.md', which tcplab did not write; choose another "
        "output directory or remove it (tcplab only replaces its own earlier output)\n"
    )
    assert sorted(p.name for p in out.iterdir()) == ["report.md"]  # nothing ran: no runs/
    assert (out / "report.md").read_text() == "mine\n"


def test_reproduce_takes_workers_on_the_command_line(tmp_path, monkeypatch):
    """`tcplab reproduce p4 --quick --workers 1` runs the study with workers=1 (the API's
    `workers=`); without it, None (one per CPU); 0 or a word exits 2 before anything runs."""
    from tcplab.cli import main
    from tcplab.reproduce import STUDIES

    seen = []

    def fake(out, quick=False, progress=None, *, workers=None, cluster=None):
        seen.append((quick, workers))
        return [Check("Fig. 1", "a", "m", True)]

    monkeypatch.setattr(STUDIES["p4"], "reproduce", fake)
    assert main(["reproduce", "p4", "--quick", "--workers", "1", "--out", str(tmp_path / "a")]) == 0
    assert main(["reproduce", "p4", "--out", str(tmp_path / "b")]) == 0
    assert seen == [(True, 1), (False, None)]
    for bad in ("0", "two"):
        with pytest.raises(SystemExit) as e:
            main(["reproduce", "p4", "--workers", bad, "--out", str(tmp_path / "c")])
        assert e.value.code == 2
    assert seen == [(True, 1), (False, None)] and not (tmp_path / "c").exists()
    # The installed command line refuses it too (a separate process, before anything runs).
    proc = _tcplab("reproduce", "p4", "--workers", "x", cwd=tmp_path)
    assert proc.returncode == 2 and "--workers: not an integer: 'x'" in proc.stderr


TINY_P4 = dict(seeds=(1,), fig2_cells=(512, 1024, 3072), table2_cells=(768, 1024), socks_kib=(22, 46, 50), tol_mbps=35.0,
               spot_points=((1024, 46),), spot_cbrs=(60.0,), trace_seeds=(1,), bursts=(64,))
"""The plan of test_p4's tiny reproduction."""


def _executions(out):
    """Runs executed into the reproduction's stores (one runs.log line each)."""
    return sum(len(log.read_text().splitlines()) for log in (out / "runs").rglob("runs.log"))


def test_a_reproduction_resumes_into_its_directory_and_publishes_its_report_whole(tmp_path, monkeypatch):
    """A reproduction killed after its runs (only runs/ there) resumes into the same --out
    without running them again; a failure while the report is rendered (as a kill would)
    leaves the earlier report, figures and results.json as they were; a rerun replaces them."""
    from tcplab.cli.reproduce import _cmd
    from tcplab.reproduce.p4 import study

    monkeypatch.setattr(study.Plan, "make", staticmethod(lambda quick: study.Plan(**TINY_P4)))
    out = tmp_path / "out"
    study.experiment(study.Plan(**TINY_P4), out=out, workers=2)  # the runs, then "killed"
    ran = _executions(out)
    assert ran > 0 and sorted(p.name for p in out.iterdir()) == ["runs"]
    assert _cmd(argparse.Namespace(paper="p4", out=str(out), quick=True, workers=None)) in (0, 3)
    assert _executions(out) == ran, "the stored runs are reused, not run again"
    report = (out / "report.md").read_text()
    results = (out / "results.json").read_bytes()
    figures = {p.name: p.read_bytes() for p in out.glob("*.png")}
    assert "fig2_throughput_vs_cells.png" in figures

    def killed(data, views, tables, directory):
        (directory / "fig2_throughput_vs_cells.png").write_bytes(b"half-written")
        raise RuntimeError("killed while writing the figures")

    monkeypatch.setattr(study, "write_figures_p4", killed)
    with pytest.raises(RuntimeError, match="killed"):
        study.reproduce(out, quick=True)
    assert (out / "report.md").read_text() == report and (out / "results.json").read_bytes() == results
    assert {p.name: p.read_bytes() for p in out.glob("*.png")} == figures
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == [".tcplab-output.json"]

    monkeypatch.undo()
    monkeypatch.setattr(study.Plan, "make", staticmethod(lambda quick: study.Plan(**TINY_P4)))
    (out / "report.md").unlink()  # the user may delete what tcplab wrote
    study.reproduce(out, quick=True)
    assert (out / "report.md").read_text().split("\n", 3)[:2] == report.split("\n", 3)[:2]
    assert _executions(out) == ran
