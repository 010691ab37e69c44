"""Output directories of `Result.save`, `tcplab run --out`, `tcplab plot --out` and `tcplab
reproduce --out`: what may be replaced, staging beside the target, and the cleaning of what a
killed save left behind.

The rule: never delete what tcplab did not write. An existing output is replaced only when
every entry in it is a file tcplab wrote there: for a saved run, a file `Result.save` writes
(`summary.json`, `scenario.toml`, `metadata.json`, and the `<trace>.parquet` and `<tap>.pcapng`
files its metadata.json lists); for figures and reports, a file the directory's manifest
(`.tcplab-output.json`, written with them) lists. Staging directories are hidden siblings named
`.NAME.tmp-<pid>-<hex>` (an earlier output moved aside: `.NAME.old-<pid>-<hex>`), so a later
save can tell those of a dead process and remove them.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = [
    "MANIFEST", "check_output", "is_staging", "make_staging", "manifest_files", "move_into_place", "output_path",
    "write_manifest",
]

FIXED_FILES = ("metadata.json", "scenario.toml", "summary.json")
"""Files every saved output holds."""

MANIFEST = ".tcplab-output.json"
PLOTS_DIR = "plots"
"""Where `tcplab plot RESULT_DIR` writes its figures by default; a saved run owns it."""
"""The file that lists what tcplab wrote in a directory of figures or a report (relative paths):
what a later write there may replace."""

_SIBLING = re.compile(r"\.(?P<name>.+)\.(?P<tag>tmp|old)-(?P<pid>[0-9]+)-[0-9a-f]{12}")


def output_path(directory: str | os.PathLike[str]) -> Path:
    """The absolute directory a save to `directory` writes: symlinks resolved, so a link to a
    directory is written through (the link itself stays as it is)."""
    return Path(os.path.realpath(os.path.abspath(directory)))


def check_output(target: Path, keep: Callable[[Path], bool] | None = None, kind: str = "run") -> None:
    """Raise an OSError unless `target` may receive an output of `kind` ("run": a saved run;
    "plot", "reproduce": one with a manifest): absent, an empty directory, or an earlier output
    of that kind holding only files tcplab wrote there (and entries `keep` accepts). The message
    names the first foreign entry and what to do."""
    try:
        mode = target.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        raise FileExistsError(
            f"{target}: exists and is not a directory; choose another output directory"
        )
    foreign = _foreign_entries(target, keep, kind)
    if foreign:
        raise FileExistsError(
            f"{target}: holds {foreign[0]!r}, which tcplab did not write; choose another "
            f"output directory or remove it (tcplab only replaces its own earlier output)"
        )


def _foreign_entries(directory: Path, keep: Callable[[Path], bool] | None = None, kind: str | None = "run") -> list[str]:
    """Entries of `directory` (sorted; in a subdirectory, the first foreign path in it) that
    are not files tcplab wrote there as an output of `kind` (None: of any kind) nor accepted by
    `keep`; all of them when it holds no such output."""
    entries = sorted(os.listdir(directory))
    if not entries:
        return []
    own = _owned_files(directory, kind)
    foreign = []
    for entry in entries:
        path = directory / entry
        if keep is not None and keep(path):
            continue
        if entry in own:
            if _is_regular(path):
                continue
        elif _is_directory(path) and any(f.startswith(f"{entry}/") for f in own):
            inner = _foreign_inside(path, entry, own)
            if inner is None:
                continue
            entry = inner
        foreign.append(entry)
    return foreign


def _owned_files(directory: Path, kind: str | None) -> set[str]:
    """The relative paths of the files tcplab wrote in `directory` as an output of `kind`
    (None: any): a saved run's ("run", from its metadata.json), or those its manifest lists
    (and the manifest itself) when the manifest is of that kind."""
    own: set[str] = set()
    if kind not in (None, "run"):
        listed = manifest_files(directory, kind)
        return set() if listed is None else listed | {MANIFEST}
    try:
        metadata = json.loads((directory / "metadata.json").read_text(encoding="utf-8"))
        if metadata.get("created_by") != "tcplab":
            raise ValueError
        own |= set(FIXED_FILES)
        own |= {f"{name}.parquet" for name in metadata["traces"] if isinstance(name, str)}
        own |= {f"{name}.pcapng" for name in metadata["captures"] if isinstance(name, str)}
        # The figures `tcplab plot` wrote beside the run (its default RESULT_DIR/plots): they
        # show this run, so they go with it when a new run replaces it.
        plots = manifest_files(directory / PLOTS_DIR, "plot")
        if plots is not None:
            own |= {f"{PLOTS_DIR}/{f}" for f in plots | {MANIFEST}}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        pass
    listed = manifest_files(directory) if kind is None else None
    if listed is not None:
        own |= listed | {MANIFEST}
    return own


def _foreign_inside(path: Path, prefix: str, own: set[str]) -> str | None:
    """The first entry under directory `path` (as `prefix/…`) that is not an owned file or a
    directory holding only such; None when there is none."""
    for entry in sorted(os.listdir(path)):
        rel = f"{prefix}/{entry}"
        if rel in own and _is_regular(path / entry):
            continue
        if _is_directory(path / entry) and any(f.startswith(f"{rel}/") for f in own):
            inner = _foreign_inside(path / entry, rel, own)
            if inner is None:
                continue
            return inner
        return rel
    return None


def manifest_files(directory: Path, kind: str | None = None) -> set[str] | None:
    """The files `directory`'s manifest lists (relative paths), or None without a readable
    tcplab manifest (of `kind`, when given)."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("created_by") != "tcplab" or (kind is not None and manifest.get("kind") != kind):
            return None
        files = manifest["files"]
        return {f for f in files if isinstance(f, str) and _relative(f)}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _relative(name: str) -> bool:
    """Whether `name` is a plain relative path inside the directory (no `..`, not absolute)."""
    parts = name.split("/")
    return bool(name) and not name.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def write_manifest(directory: Path, kind: str, files: Iterable[str]) -> None:
    """Write `directory`'s manifest (through a temporary file and a rename): the files tcplab
    wrote there (relative paths), for a later write's check."""
    text = json.dumps({"created_by": "tcplab", "kind": kind, "files": sorted(set(files))}, indent=1) + "\n"
    temporary = directory / f".{MANIFEST}.tmp-{os.getpid()}-{secrets.token_hex(6)}"
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, directory / MANIFEST)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def is_staging(path: Path, name: str) -> bool:
    """Whether `path` is a staging directory tcplab makes for `name` (`.NAME.tmp-…`, `.NAME.old-…`)."""
    m = _SIBLING.fullmatch(path.name)
    return m is not None and m["name"] == name and _is_directory(path)


def _is_directory(path: Path) -> bool:
    """Whether `path` is a directory (not a link to one)."""
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


def _is_regular(path: Path) -> bool:
    """Whether `path` is a regular file (not a link, a directory or anything else)."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def make_staging(target: Path) -> Path:
    """Create and return a fresh hidden staging directory beside `target` (creating its parent),
    after removing the staging directories of dead processes."""
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(target)
    staging = _sibling(target, "tmp")
    staging.mkdir()
    return staging


def remove_stale(target: Path) -> None:
    """Remove `.NAME.tmp-*` and `.NAME.old-*` siblings of `target` whose process is gone."""
    try:
        siblings = list(target.parent.iterdir())
    except OSError:
        return
    for path in siblings:
        m = _SIBLING.fullmatch(path.name)
        if m is None or m["name"] != target.name or process_alive(int(m["pid"])):
            continue
        if m["tag"] == "tmp":
            shutil.rmtree(path, ignore_errors=True)
        else:
            _remove_output(path)


def process_alive(pid: int) -> bool:
    """Whether a process `pid` exists (this one included; another user's counts)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _sibling(target: Path, tag: str) -> Path:
    """A fresh hidden path beside `target` carrying this process's id."""
    return target.with_name(f".{target.name}.{tag}-{os.getpid()}-{secrets.token_hex(6)}")


def move_into_place(staging: Path, target: Path) -> None:
    """Rename `staging` to `target`, replacing an existing `target` directory (which
    `check_output` must have accepted). Only files of the earlier output are deleted."""
    if not target.exists():
        os.replace(staging, target)
        return
    aside = _sibling(target, "old")
    os.replace(target, aside)
    try:
        os.replace(staging, target)
    except BaseException:
        os.replace(aside, target)
        raise
    _remove_output(aside)


def _remove_output(directory: Path) -> None:
    """Delete the files of an earlier output in `directory`, then the directory if that
    emptied it (anything else found there is left where it is)."""
    try:
        own = _owned_files(directory, None)
        for rel in sorted(own, key=lambda f: (f == MANIFEST, f)):  # the manifest last
            path = directory / rel
            if _is_regular(path):
                path.unlink()
        parents = {"/".join(f.split("/")[:i]) for f in own for i in range(1, f.count("/") + 1)}
        for rel in sorted(parents, key=len, reverse=True):
            try:
                (directory / rel).rmdir()
            except OSError:
                pass
        directory.rmdir()
    except OSError:
        pass
