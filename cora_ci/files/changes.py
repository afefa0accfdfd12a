"""A commit's files listed from a previous bundle's and what changed since its tree.

An update of the bundle of the previous commit (the sync hook's, a CI job's) needs what the commit
changed, not the whole tree: `git diff-tree` between the two trees costs what the commit changed,
where `git ls-tree` and the config's filter over every path cost ~0.3 s at 30,000 files. What a
full listing would find differently (a config that selects other files, a tree git lacks) makes
`snapshot_since` decline, and the caller lists the tree in full (`source.snapshot`).
"""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

from cora_ci import config as config_mod
from cora_ci.boosts import FILE_NAME as BOOSTS_FILE
from cora_ci.config import Config
from cora_ci.files.names import from_bytes
from cora_ci.files.source import GITLINK, Entry, Snapshot, boosts_of, commit_of, ls_tree, need_files, selected
from cora_ci.files.walk import git_toplevel

CONFIG_FILES = (".cora.toml", "pyproject.toml", BOOSTS_FILE)  # a source's config and boosts


def commit_settings(repo: Path, rev: str | None = None) -> Snapshot | None:
    """The commit `rev` (default HEAD) of the work tree holding `repo`, listing only its
    `CONFIG_FILES`, with the config and boosts they give, read as `snapshot` reads them: what an
    update from a previous bundle needs before `snapshot_since`, without listing the whole tree.
    None when there is no such commit or work tree (a bare repository, a plain directory, no
    commits yet)."""
    top = git_toplevel(repo.resolve())
    if top is None:
        return None
    found = commit_of(top, rev)
    if found is None:
        return None
    commit, tree, ctime = found
    listed = tuple(ls_tree(top, commit, CONFIG_FILES))
    raw = Snapshot(top, "rev", commit, tree, False, ctime, listed, Config())
    cfg = config_mod.discover_in(raw.read_text_file, f"{top.name}@{tree}")
    return replace(raw, config=cfg, boosts=boosts_of(raw.read_text_file(BOOSTS_FILE)))


def tree_changes(root: Path, old_tree: str, new_tree: str) -> list[Entry] | None:
    """What differs between two trees, path by path, as the new tree has it: an `Entry` with its
    new blob and mode (`000000` for a path the new tree lacks), both sides of a rename apart. None
    when git cannot tell (a tree it does not have: a shallow clone, a bundle built elsewhere)."""
    diff = ["git", "-C", str(root), "diff-tree", "-r", "-z", "--no-renames", old_tree, new_tree]
    out = subprocess.run(diff, capture_output=True, check=False)
    if out.returncode != 0:
        return None
    fields = out.stdout.split(b"\0")  # `:old_mode new_mode old_id new_id status`, then the path
    changes = []
    for meta, name in zip(fields[0:-1:2], fields[1::2], strict=True):
        _, mode, _, blob, _ = meta.decode().split(" ")
        changes.append(Entry(from_bytes(name), blob, mode))
    return changes


def snapshot_since(base: Snapshot, known: dict[str, str], tree: str, out_dir: Path | None) -> Snapshot | None:
    """What `snapshot` gives for the commit of `base` (from `commit_settings`), unscreened, at
    the cost of what changed: the files `known` (path -> blob) that a previous build found in
    `tree` with the same config, less the paths the commit changed, plus those of them its config
    selects. None when that cannot be told: git lacks `tree`, or a config file changed (a new
    selection may take or drop unchanged files). The known files keep no mode: they are not read."""
    changes = tree_changes(base.root, tree, str(base.tree))
    if changes is None or {e.path for e in changes} & set(CONFIG_FILES):
        return None
    files = dict(known)
    for e in changes:
        files.pop(e.path, None)
    now = [e for e in changes if e.mode.startswith("10") or e.mode == GITLINK]  # not gone, not a link
    # A path the previous build listed was selected by this same config: only new paths are
    # filtered (an edit, most commits' change, runs no glob).
    keep = {e.path for e in now if e.path in known}
    keep |= selected([e.path for e in now if e.path not in known], base.config, base.root, out_dir)
    entries = [Entry(p, b, "") for p, b in files.items()] + [e for e in now if e.path in keep]
    need_files(base, entries)
    return replace(base, entries=tuple(sorted(entries)), screened=False)
