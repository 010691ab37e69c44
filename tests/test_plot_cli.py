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
    names = {p.name for p in figures.iterdir()}
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
