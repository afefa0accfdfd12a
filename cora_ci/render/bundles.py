"""Which bundle a result comes from, when an answer draws on several.

A bundle is named by its source: the root directory name the manifest records (`requests`,
`my-app`), made unique with `#2`, `#3` in the order given, and described as `name@commit`. An
anchor can be qualified by that name, `requests:src/requests/api.py::get`, to pick one bundle when
several hold the same anchor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class BundleRef:
    name: str  # short and unique among the bundles of one answer
    source: str  # `root@commit` (12 hex digits), or the root alone for a directory indexed as is
    path: str  # as the user named it (a directory or an archive)
    commit: str | None
    bundle_id: str | None


def refs_of(manifests: list[dict[str, Any]], paths: list[str], ids: list[str | None]) -> list[BundleRef]:
    """A `BundleRef` per bundle, in order."""
    out: list[BundleRef] = []
    seen: dict[str, int] = {}
    for manifest, path, bid in zip(manifests, paths, ids, strict=True):
        source = manifest.get("source") or {}
        root = str(source.get("root") or path.rstrip("/").rsplit("/", 1)[-1] or "bundle")
        seen[root] = seen.get(root, 0) + 1
        name = root if seen[root] == 1 else f"{root}#{seen[root]}"
        commit = source.get("commit")
        at = f"{root}@{str(commit)[:12]}" if commit else root
        out.append(BundleRef(name, at, path, str(commit) if commit else None, bid))
    return out


def split_anchor(anchor: str, refs: list[BundleRef]) -> tuple[int | None, str]:
    """(the bundle a qualified anchor or path names, it without its qualifier); (None, anchor)
    when it names none (`name:path::symbol`, `name:path`)."""
    name, sep, rest = anchor.partition(":")
    if sep and rest and not rest.startswith(":"):
        for i, r in enumerate(refs):
            if r.name == name:
                return i, rest
    return None, anchor
