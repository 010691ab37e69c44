"""`tcplab conformance` and `tcplab.conformance`, on tcplab's own packetdrill scripts (the Linux
corpus is not in the repository; crates/tcplab-core/tests/packetdrill.rs runs it when present)."""

import shutil
import subprocess
import sys
from pathlib import Path

from tcplab import conformance

SCRIPTS = Path(__file__).resolve().parents[1] / "crates/tcplab-core/tests/packetdrill"


def tcplab(*args, cwd):
    """Run `python -m tcplab ARGS` and return the completed process."""
    return subprocess.run(
        [sys.executable, "-m", "tcplab", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_run_reports_each_script():
    results = conformance.run(SCRIPTS)
    by_path = {r.path: r for r in results}
    assert all(by_path[p].passed for p in by_path if p.startswith("pass/")), results
    wrong = by_path["fail/wrong-cwnd-assert.pkt"]
    assert (wrong.passed, wrong.line, wrong.kind) == (False, 10, "assertion")
    assert "tcpi_snd_cwnd = 10" in wrong.message


def test_an_untriaged_failure_in_scope_is_unclassified(tmp_path):
    triage = {"corpus": "own", "in_scope": {"dirs": ["fail", "pass"]}, "scripts": {}}
    report = conformance.classify(conformance.run(SCRIPTS), triage)
    assert {r.path for r in report.unclassified} == {
        "fail/late-retransmit.pkt",
        "fail/wrong-cwnd-assert.pkt",
        "fail/wrong-window.pkt",
    }
    assert not report.ok
    triage["scripts"] = {"pass/close-active.pkt": {"class": "not-modelled", "reason": "x"}}
    assert conformance.classify(conformance.run(SCRIPTS), triage).stale == ["pass/close-active.pkt"]


def test_the_shipped_triage_names_a_feature_for_every_not_modelled_script():
    t = conformance.load_triage()
    for path, entry in t["scripts"].items():
        assert entry["class"] in ("not-modelled", "unsupported", "open"), path
        assert entry["reason"], path
        if entry["class"] == "not-modelled":
            assert entry["feature"] in t["features"], path
        assert path.split("/")[0] in t["in_scope"]["dirs"], path


def test_cli_writes_the_report_and_exits_by_the_triage(tmp_path):
    proc = tcplab("conformance", SCRIPTS / "pass", "--out", tmp_path / "r.md", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "r.md").read_text()
    assert text.startswith("# packetdrill conformance")
    # A triage that puts the failing scripts in scope: exit 3, each named on stderr.
    triage = tmp_path / "t.toml"
    triage.write_text('corpus = "own"\n[in_scope]\ndirs = ["fail"]\n[scripts]\n')
    proc = tcplab("conformance", SCRIPTS, "--triage", triage, "--out", tmp_path / "r.md", cwd=tmp_path)
    assert proc.returncode == 3
    assert "unclassified: fail/wrong-window.pkt:11" in proc.stderr
    # One script's event log.
    proc = tcplab("conformance", SCRIPTS / "pass/slow-start-every-segment.pkt", "--log", cwd=tmp_path)
    assert proc.returncode == 0 and "cwnd 12" in proc.stdout, proc.stdout


def test_cli_refuses_a_missing_dir_and_a_foreign_out_file(tmp_path):
    proc = tcplab("conformance", tmp_path / "nope", cwd=tmp_path)
    assert proc.returncode == 2 and "no such file" in proc.stderr
    mine = tmp_path / "notes.md"
    mine.write_text("my notes\n")
    proc = tcplab("conformance", SCRIPTS / "pass", "--out", mine, cwd=tmp_path)
    assert proc.returncode == 2 and "out:" in proc.stderr
    assert mine.read_text() == "my notes\n", "the user's file is untouched"
    shutil.rmtree(tmp_path / "nope", ignore_errors=True)
