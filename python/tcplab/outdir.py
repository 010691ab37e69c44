"""Output directories of `Result.save` and `tcplab run --out`: what may be replaced, staging
beside the target, and the cleaning of what a killed save left behind.

The rule: never delete what tcplab did not write. An existing output is replaced only when
every entry in it is a file that `Result.save` writes (`summary.json`, `scenario.toml`,
`metadata.json`, and the `<trace>.parquet` and `<tap>.pcapng` files its metadata.json lists).
Staging directories are hidden siblings named `.NAME.tmp-<pid>-<hex>` (an earlier output moved
aside: `.NAME.old-<pid>-<hex>`), so a later save can tell those of a dead process and remove
them.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import stat
from pathlib import Path

__all__ = ["check_output", "make_staging", "move_into_place", "output_path"]

FIXED_FILES = ("metadata.json", "scenario.toml", "summary.json")
"""Files every saved output holds."""

_SIBLING = re.compile(r"\.(?P<name>.+)\.(?P<tag>tmp|old)-(?P<pid>[0-9]+)-[0-9a-f]{12}")


def output_path(directory: str | os.PathLike[str]) -> Path:
    """The absolute directory a save to `directory` writes: symlinks resolved, so a link to a
    directory is written through (the link itself stays as it is)."""
    return Path(os.path.realpath(os.path.abspath(directory)))


def check_output(target: Path) -> None:
    """Raise an OSError unless `target` may receive a save: absent, an empty directory, or an
    earlier output holding only files tcplab's save writes. The message names the first
    foreign entry and what to do."""
    try:
        mode = target.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        raise FileExistsError(
            f"{target}: exists and is not a directory; choose another output directory"
        )
    foreign = _foreign_entries(target)
    if foreign:
        raise FileExistsError(
            f"{target}: holds {foreign[0]!r}, which tcplab did not write; choose another "
            f"output directory or remove it (tcplab only replaces its own earlier output)"
        )


def _foreign_entries(directory: Path) -> list[str]:
    """Entries of `directory` (sorted) that are not files a save writes; all of them when its
    metadata.json is not tcplab's."""
    entries = sorted(os.listdir(directory))
    if not entries:
        return []
    own = set(FIXED_FILES)
    try:
        metadata = json.loads((directory / "metadata.json").read_text(encoding="utf-8"))
        if metadata.get("created_by") != "tcplab":
            raise ValueError
        own |= {f"{name}.parquet" for name in metadata["traces"] if isinstance(name, str)}
        own |= {f"{name}.pcapng" for name in metadata["captures"] if isinstance(name, str)}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return entries
    return [e for e in entries if e not in own or not _is_regular(directory / e)]


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
        if m is None or m["name"] != target.name or _alive(int(m["pid"])):
            continue
        if m["tag"] == "tmp":
            shutil.rmtree(path, ignore_errors=True)
        else:
            _remove_output(path)


def _alive(pid: int) -> bool:
    """Whether a process `pid` exists (this one included)."""
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
        foreign = set(_foreign_entries(directory))
        for entry in os.listdir(directory):
            if entry not in foreign:
                (directory / entry).unlink()
        directory.rmdir()
    except OSError:
        pass
