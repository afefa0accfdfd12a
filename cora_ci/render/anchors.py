"""An anchor as a person or an agent writes it, read as the bundle's anchor it means.

`show` and `related` take `path::Qualified.name`, as results give it. Written otherwise it is
still one symbol more often than not: without its path (`Router.url_path_for`), with another
language's separators (Ruby's `Rack::Request#params`, C++'s `fmt::format_to`), or with the
path the repository's root makes absolute. Each trial's agent spent a call on a refusal whose
hint named the very symbol; here a name that only one symbol of the bundle ends with is that
symbol, and a refusal's hints are the named file's names that look like it first.
"""

from __future__ import annotations

from difflib import get_close_matches

from cora_ci.chunking.model import OVERLOAD
from cora_ci.errors import CoraError
from cora_ci.render.source import BundleChunks, unknown_anchor
from cora_ci.retrieval.catalog import catalog
from cora_ci.retrieval.query import split_qualified

_DEFINERS = 50  # files defining the name that are looked at


def meant(source: BundleChunks, anchor: str) -> str | None:
    """The one anchor of the bundle that `anchor`, written otherwise, means; None when there is
    none or several (then `refused` says why)."""
    path, sep, qual = anchor.partition("::")
    path = relative(source, path) if sep else path
    in_file = bool(sep) and bool(source.file_chunks(path))
    parts = split_qualified(qual if in_file else anchor)
    if not parts:
        return None
    if in_file and f"{path}::{'.'.join(parts)}" != anchor and source.by_anchor(f"{path}::{'.'.join(parts)}"):
        return f"{path}::{'.'.join(parts)}"
    found = _ending_with(source, parts, path if in_file else None)
    return found[0] if len(found) == 1 else None


def refused(source: BundleChunks, anchor: str) -> CoraError:
    """CORA-QRY-004 for a path the bundle has no file of (and no symbol is so named), else
    CORA-QRY-002 with the anchors that look like it, those of the file it names first."""
    path, sep, qual = anchor.partition("::")
    rel = relative(source, path) if sep else path
    a_path = sep and ("/" in rel or "." in rel.rsplit("/", 1)[-1])  # `shop/x.py::f`, not `Rack::Request`
    if a_path and not source.file_chunks(rel) and not _ending_with(source, split_qualified(anchor), None):
        return CoraError("CORA-QRY-004", f"no file {rel!r} in {source.bundle.root}",
                         "a path relative to the repository root, as results give it")  # fmt: skip
    if sep and source.file_chunks(rel):  # the file's own names that look like it
        names = {
            a.partition("::")[2]: a for c in source.file_chunks(rel) for a in c.anchors if c.kind != "file"
        }
        close = get_close_matches(".".join(split_qualified(qual)), list(names), n=3, cutoff=0.6)
        if close:
            return CoraError("CORA-QRY-002", f"no symbol anchored {anchor!r} in {source.bundle.root}",
                             f"did you mean {', '.join(names[q] for q in close)}?")  # fmt: skip
    several = _ending_with(source, split_qualified(qual if sep and source.file_chunks(rel) else anchor), None)
    if len(several) > 1:
        return CoraError("CORA-QRY-002", f"{anchor!r} names several symbols in {source.bundle.root}",
                         f"give one with its path: {', '.join(several[:4])}")  # fmt: skip
    return unknown_anchor(source, anchor)


def relative(source: BundleChunks, path: str) -> str:
    """`path` relative to the working tree's root when it is written absolute inside it."""
    tree = source.tree
    if tree is None or not path.startswith("/"):
        return path
    root = str(tree.root).rstrip("/") + "/"
    return path[len(root) :] if path.startswith(root) else path


def _ending_with(source: BundleChunks, parts: tuple[str, ...], path: str | None) -> list[str]:
    """The anchors (overloads as their family) whose qualified name ends with `parts`, in the
    file `path` when given."""
    if not parts:
        return []
    want = ".".join(parts)
    defining = catalog(source.bundle).defining([parts[-1]], _DEFINERS)
    out: list[str] = []
    for file, defs in sorted(defining.items()):
        if path is not None and file != path:
            continue
        for cid in defs.get(parts[-1], []):
            c = source.chunk(cid)
            for a in c.anchors if c is not None else ():
                name = OVERLOAD.sub("", a.partition("::")[2])
                if (name == want or name.endswith("." + want)) and (family := OVERLOAD.sub("", a)) not in out:
                    out.append(family)
    return out
