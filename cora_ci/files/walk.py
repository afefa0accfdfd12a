"""Which files to chunk: git's view of a repository (so `.gitignore` holds), else a directory walk
that applies `.gitignore` files with pathspec; then the config's include/exclude globs."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from cora_ci.config import Config
from cora_ci.errors import CoraError
from cora_ci.files.langs import is_lock_file
from cora_ci.files.names import from_os

if TYPE_CHECKING:  # imported where a walk or a filter needs it: ~17 ms a query process does not
    import pathspec


class SourceFile(NamedTuple):
    abspath: Path
    relpath: str  # posix path relative to the root, as chunks and bundles name it


def git_toplevel(path: Path) -> Path | None:
    where = path if path.is_dir() else path.parent
    try:
        out = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "--show-toplevel"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    except OSError:
        return None
    return Path(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else None


def _git_files(root: Path, sub: Path) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard",
         "--", sub.relative_to(root).as_posix() or "."],
        capture_output=True, check=True,
    )  # fmt: skip
    names = {n.decode("utf-8", errors="surrogateescape") for n in out.stdout.split(b"\0") if n}
    return sorted(names)


def walk_files(root: Path) -> list[str]:
    """All regular files below `root` not ignored by any `.gitignore` on their way down; symlinks
    (to files or directories) are not followed: their target may be outside `root`."""
    import pathspec

    found: list[str] = []
    specs: list[tuple[str, pathspec.PathSpec]] = []  # type: ignore[type-arg,unused-ignore]
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root).as_posix()
        rel = "" if rel == "." else rel + "/"
        specs = [(base, sp) for base, sp in specs if rel.startswith(base)]
        if ".gitignore" in filenames:
            with open(os.path.join(dirpath, ".gitignore"), encoding="utf-8", errors="replace") as f:
                specs.append((rel, pathspec.GitIgnoreSpec.from_lines(f.read().splitlines())))

        dirnames[:] = sorted(d for d in dirnames if d != ".git" and not _ignored(specs, rel + d + "/")
                             and not os.path.islink(os.path.join(dirpath, d)))  # fmt: skip
        links = {f for f in filenames if os.path.islink(os.path.join(dirpath, f))}
        found.extend(from_os(rel + f) for f in filenames if f not in links and not _ignored(specs, rel + f))
    return sorted(found)


def _ignored(specs: list[tuple[str, pathspec.PathSpec]], path: str) -> bool:  # type: ignore[type-arg,unused-ignore]
    """Whether a .gitignore on the way down (each relative to its own directory) ignores `path`."""
    return any(sp.match_file(path[len(base) :]) for base, sp in specs)


def filter_names(names: Iterable[str], cfg: Config) -> list[str]:
    inc = exc = None
    if cfg.include or cfg.exclude:  # pathspec for globs only: ~10 ms of a sync that chunks nothing
        import pathspec

        inc = pathspec.GitIgnoreSpec.from_lines(cfg.include) if cfg.include else None
        exc = pathspec.GitIgnoreSpec.from_lines(cfg.exclude) if cfg.exclude else None
    return [
        n
        for n in names
        if (inc is None or inc.match_file(n))
        and not (exc and exc.match_file(n))
        and (cfg.lock_files or not is_lock_file(n))
    ]


def list_files(paths: list[Path], cfg: Config) -> list[SourceFile]:
    """Files named on the command line (always taken) and those below named directories."""
    out: dict[str, SourceFile] = {}
    for p in paths:
        if not p.exists() and not p.is_symlink():
            raise CoraError("CORA-IO-001", f"no such file or directory: {p}")
        top = git_toplevel(p.resolve())
        if p.is_file() and not p.is_symlink():
            root = top or Path.cwd().resolve()
            ap = p.resolve()
            rel = ap.relative_to(root).as_posix() if ap.is_relative_to(root) else ap.name
            out[rel] = SourceFile(ap, rel)
        elif p.is_dir():
            base = p.resolve()
            root = top or base
            names = _git_files(root, base) if top else walk_files(base)
            for name in filter_names(names, cfg):
                ap = root / name
                if ap.is_file() and not ap.is_symlink():
                    rel = ap.relative_to(root).as_posix()
                    out[rel] = SourceFile(ap, rel)
    return [out[k] for k in sorted(out)]
