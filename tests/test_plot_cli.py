"""`tcplab plot RESULT_DIR`, run as `python -m tcplab` in a subprocess."""

import json
import subprocess
import sys

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


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


def assert_png(path):
    data = path.read_bytes()
    assert len(data) > 1000, path
    assert data.startswith(PNG_SIGNATURE), path


def assert_svg(path):
    text = path.read_text(encoding="utf-8")
    assert len(text) > 1000, path
    assert "<svg" in text and text.rstrip().endswith("</svg>"), path


def test_plot_renders_the_standard_set(smoke_path, tmp_path):
    out = tmp_path / "tmp"
    proc = tcplab("run", smoke_path, "--quiet", "--out", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = tcplab("plot", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    plots = out / "plots"
    recorded = set(json.loads((out / "metadata.json").read_text())["traces"])
    expected = {"throughput", "cwnd", "queue", "events"} & recorded
    assert expected == {"throughput", "cwnd", "queue", "events"}  # what smoke.toml records
    for stem in expected:
        assert_png(plots / f"{stem}.png")
        assert_svg(plots / f"{stem}.svg")
        assert f"wrote {plots / stem}.png" in proc.stdout
    assert not any(p.name.startswith("sequence") for p in plots.iterdir())  # no capture trace


def test_plot_with_a_capture_draws_sequence_graphs(smoke_path, tmp_path):
    out = tmp_path / "run"
    proc = tcplab(
        "run", smoke_path, "--quiet", "--set", "taps.0.trace=true", "--out", out, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / "capture.parquet").exists()
    figures = tmp_path / "figures"
    proc = tcplab("plot", out, "--out", figures, "--format", "png", "--bin", "0.2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    names = {p.name for p in figures.iterdir()} - {".tcplab-output.json"}  # the figures' manifest
    # Both TCP flows lose packets in smoke: a full and a zoomed graph each; none for UDP.
    for stem in ["sequence-bulk.0", "sequence-bulk.1"]:
        assert f"{stem}.png" in names
        assert f"{stem}-first-loss.png" in names
    assert not any(n.startswith("sequence-cbr") for n in names)
    assert not any(n.endswith(".svg") for n in names)
    for name in names:
        assert_png(figures / name)
    assert not (out / "plots").exists()


def test_plot_errors(tmp_path):
    proc = tcplab("plot", tmp_path / "missing", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "not a tcplab result directory" in proc.stderr

    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "metadata.json").write_text(json.dumps({"created_by": "tcplab", "traces": []}))
    proc = tcplab("plot", empty, cwd=tmp_path)
    assert proc.returncode == 1
    assert "no traces to plot" in proc.stderr

    proc = tcplab("plot", empty, "--format", "gif", cwd=tmp_path)
    assert proc.returncode == 2
    assert "formats must be among" in proc.stderr


MINE = b"my own figure"


def _saved_run(smoke_path, tmp_path):
    out = tmp_path / "run"
    proc = tcplab("run", smoke_path, "--quiet", "--out", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return out


def test_plot_refuses_an_output_directory_holding_user_files(smoke_path, tmp_path):
    """`tcplab plot RES --out figs` with a user's figs/throughput.png, and the default
    `tcplab plot RES` with a user's RES/plots/throughput.png: exit 2 naming the file, before
    anything is drawn, and the file untouched."""
    run = _saved_run(smoke_path, tmp_path)
    figs = tmp_path / "figs"
    figs.mkdir()
    (figs / "throughput.png").write_bytes(MINE)
    proc = tcplab("plot", run, "--out", figs, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (
        f"error: out: {figs}: holds 'throughput.png', which tcplab did not write; choose another "
        "output directory or remove it (tcplab only replaces its own earlier output)\n"
    )
    assert proc.stdout == ""
    assert sorted(p.name for p in figs.iterdir()) == ["throughput.png"]
    assert (figs / "throughput.png").read_bytes() == MINE

    (run / "plots").mkdir()
    (run / "plots" / "throughput.png").write_bytes(MINE)
    proc = tcplab("plot", run, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "holds 'throughput.png', which tcplab did not write" in proc.stderr
    assert sorted(p.name for p in (run / "plots").iterdir()) == ["throughput.png"]
    assert (run / "plots" / "throughput.png").read_bytes() == MINE
    assert not [p for p in run.iterdir() if p.name.startswith(".plots.")]  # no staging left


def test_plot_replaces_its_own_figures_only(smoke_path, tmp_path):
    """A second plot into the same directory replaces the figures the first one wrote (one
    format less: the old SVGs go); a file the user adds meanwhile makes it refuse."""
    run = _saved_run(smoke_path, tmp_path)
    figs = tmp_path / "figs"
    assert tcplab("plot", run, "--out", figs, cwd=tmp_path).returncode == 0
    assert (figs / "throughput.svg").is_file()
    proc = tcplab("plot", run, "--out", figs, "--format", "png", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in figs.iterdir())
    assert names == sorted([".tcplab-output.json", "cwnd.png", "events.png", "queue.png", "throughput.png"])
    assert_png(figs / "throughput.png")
    (figs / "notes.txt").write_text("mine")
    proc = tcplab("plot", run, "--out", figs, cwd=tmp_path)
    assert proc.returncode == 2 and "holds 'notes.txt'" in proc.stderr
    assert (figs / "notes.txt").read_text() == "mine" and not (figs / "throughput.svg").exists()
    # The saved run is tcplab's too, but not figures: plotting into it would replace it.
    saved = sorted(p.name for p in run.iterdir())
    proc = tcplab("plot", run, "--out", run, cwd=tmp_path)
    assert proc.returncode == 2 and "which tcplab did not write" in proc.stderr
    assert sorted(p.name for p in run.iterdir()) == saved


def test_a_new_run_replaces_the_plots_of_the_run_it_replaces(smoke_path, tmp_path):
    out = tmp_path / "out"
    assert tcplab("run", smoke_path, "--out", out, "--quiet", cwd=tmp_path).returncode == 0
    assert tcplab("plot", out, cwd=tmp_path).returncode == 0
    assert any((out / "plots").iterdir())
    again = tcplab("run", smoke_path, "--out", out, "--quiet", "--seed", "2", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert not (out / "plots").exists()  # they showed the earlier run
    assert json.loads((out / "summary.json").read_text())["seed"] == 2


def test_a_file_of_the_user_in_plots_keeps_the_run_from_replacing_anything(smoke_path, tmp_path):
    out = tmp_path / "out"
    assert tcplab("run", smoke_path, "--out", out, "--quiet", cwd=tmp_path).returncode == 0
    assert tcplab("plot", out, cwd=tmp_path).returncode == 0
    (out / "plots" / "notes.txt").write_text("mine")
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    again = tcplab("run", smoke_path, "--out", out, "--quiet", cwd=tmp_path)
    assert again.returncode == 2
    assert "holds 'plots/notes.txt', which tcplab did not write" in again.stderr
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
