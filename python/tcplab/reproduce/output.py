"""Where a reproduction writes: its `--out` directory, checked before anything runs, and its
report published as a whole.

The rule is `tcplab run --out`'s (`tcplab.outdir`): tcplab replaces only what it wrote. A
reproduction's directory may hold its earlier report (the files its manifest lists), `runs/`
(the sweep stores a rerun resumes from, written before any report exists) and the staging
directories of an earlier report; anything else is refused, naming it.

The report (figures, captures, report.md, results.json) is rendered into a staging directory
inside `out` first and moved into place only when complete: the earlier report.md and
results.json are removed, every new file is renamed in, report.md and results.json last, and
files of the earlier report the new one does not have are removed. A kill while rendering
leaves the earlier report as it was; a kill while renaming leaves no report.md or results.json
beside the new figures (never an older one), and the manifest lists every file either report
wrote, so the next run replaces them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from tcplab.outdir import check_output, is_staging, make_staging, manifest_files, output_path, write_manifest
from tcplab.sweeps.store import STORE_MARKER

__all__ = ["KIND", "REPORT_FILES", "RUNS", "check_out", "publish"]

RUNS = "runs"
"""The subdirectory of a reproduction's sweep stores."""

REPORT_FILES = ("report.md", "results.json")
"""Written last, removed first: present only beside the figures they describe."""

KIND = "reproduce"
"""The kind of output a reproduction's manifest records."""

_STAGE = "report"
"""The name a report's staging directories carry (`.report.tmp-<pid>-<hex>`)."""

T = TypeVar("T")


def check_out(out: str | os.PathLike[str]) -> Path:
    """The reproduction's output directory (absolute, symlinks resolved); an OSError naming
    the first entry tcplab did not write there (or saying it is not a directory)."""
    target = output_path(out)
    check_output(target, keep=_ours, kind=KIND)
    return target


def _ours(path: Path) -> bool:
    """Entries a reproduction keeps beside its report: `runs/` when it holds only sweep stores,
    and the staging directories of a report."""
    return (path.name == RUNS and _store_tree(path)) or is_staging(path, _STAGE)


def _store_tree(path: Path) -> bool:
    """Whether `path` is a real directory holding only sweep stores (at any depth; an empty one
    included)."""
    if path.is_symlink() or not path.is_dir():
        return False
    if (path / STORE_MARKER).is_file():
        return True
    return all(_store_tree(p) for p in path.iterdir())


def publish(out: str | os.PathLike[str], render: Callable[[Path], T]) -> T:
    """Render the report into a fresh staging directory inside `out` (`render(directory)`),
    then move it into place (see the module's docstring); returns what `render` returned.
    Raises an OSError naming a foreign entry of `out` (checked again after rendering, since
    someone may have added one meanwhile); the earlier report is then left as it was."""
    target = check_out(out)
    target.mkdir(parents=True, exist_ok=True)
    staging = make_staging(target / _STAGE)
    try:
        result = render(staging)
        check_output(target, keep=_ours, kind=KIND)
        new = {p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file() and not p.is_symlink()}
        old = manifest_files(target, KIND) or set()
        write_manifest(target, KIND, old | new)
        for name in REPORT_FILES:
            if name in old:
                (target / name).unlink(missing_ok=True)
        last = {name: i + 1 for i, name in enumerate(REPORT_FILES)}
        for rel in sorted(new, key=lambda f: (last.get(f, 0), f)):
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / rel, dest)
        for rel in sorted(old - new):
            path = target / rel
            if path.is_file() and not path.is_symlink():
                path.unlink()
            for parent in list(Path(rel).parents)[:-1]:
                try:
                    (target / parent).rmdir()
                except OSError:
                    break
        write_manifest(target, KIND, new)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return result
