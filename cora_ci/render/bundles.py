"""Which bundle a result comes from, when an answer draws on several.

A bundle is named by its source: the root directory name the manifest records (`requests`,
`my-app`), made unique with `#2`, `#3` in the order given, and described as `name@commit`. An
anchor can be qualified by that name, `requests:src/requests/api.py::get`, to pick one bundle when
several hold the same anchor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from cora_ci.errors import CoraError

T = TypeVar("T")
_NOT_HERE = ("CORA-QRY-002", "CORA-QRY-004")  # an unknown anchor or path: another bundle may have it


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


def first_answer(refs: list[BundleRef], target: str, run: Callable[[int, str], T]) -> tuple[T, int]:
    """`run(i, target)` on the bundle a qualified anchor or path names (`name:...`), else on each
    bundle in turn until one knows it (its CORA-QRY-002/004 are not errors while others remain);
    with the index of the bundle that answered."""
    at, plain = split_anchor(target, refs)
    first: CoraError | None = None
    for i in [at] if at is not None else range(len(refs)):
        try:
            return run(i, plain), i
        except CoraError as e:
            if e.code not in _NOT_HERE:
                raise
            first = first or e
    assert first is not None
    raise first
