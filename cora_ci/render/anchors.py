"""An anchor as a person or an agent writes it, read as the bundle's anchor it means.

`show` and `related` take `path::Qualified.name`, as results give it. Written otherwise it is
still one symbol more often than not: without its path (`Router.url_path_for`), with another
language's separators (Ruby's `Rack::Request#params`, C++'s `fmt::format_to`), or with the
path the repository's root makes absolute. Each trial's agent spent a call on a refusal whose
hint named the very symbol; here a name that only one symbol of the bundle ends with is that
symbol, and a refusal's hints are the named file's names that look like it first.
"""

from __future__ import annotations

import re
from difflib import get_close_matches

from cora_ci.chunking.model import OVERLOAD
from cora_ci.errors import CoraError
from cora_ci.render.source import BundleChunks, unknown_anchor
from cora_ci.retrieval.catalog import catalog
from cora_ci.retrieval.query import split_qualified, untemplated

_DEFINERS = 50  # files defining the name that are looked at
# A Rust trait implementation's member, `<InteractivePrinter as Printer>.print_line`, is written
# by its type as a backtrace prints it: `InteractivePrinter::print_line`
_AS_TRAIT = re.compile(r"<(\S+?) as .+?>(?=\.|$)")


def meant(source: BundleChunks, anchor: str) -> str | None:
    """The one anchor of the bundle that `anchor`, written otherwise, means; None when there is
    none or several, or its path is no file of the bundle (then `refused` says why)."""
    path, parts = _written(source, anchor)
    if not parts or (path is not None and not source.file_chunks(path)):
        return None
    if path is not None and (plain := f"{path}::{'.'.join(parts)}") != anchor and source.by_anchor(plain):
        return plain
    found = _ending_with(source, parts, path)
    return found[0] if len(found) == 1 else None


def refused(source: BundleChunks, anchor: str) -> CoraError:
    """CORA-QRY-004 for a path the bundle has no file of, else CORA-QRY-002 with the anchors that
    look like it (the named file's first) or, for a name several symbols end with, those."""
    path, parts = _written(source, anchor)
    if path is not None and not source.file_chunks(path):
        elsewhere = _ending_with(source, parts, None)
        hint = (f"{'.'.join(parts)} is {', '.join(elsewhere[:3])}" if elsewhere
                else "a path relative to the repository root, as results give it")  # fmt: skip
        return CoraError("CORA-QRY-004", f"no file {path!r} in {source.bundle.root}", hint)
    if path is not None:  # the file's own names that look like it
        names = {
            a.partition("::")[2]: a for c in source.file_chunks(path) for a in c.anchors if c.kind != "file"
        }
        close = get_close_matches(".".join(parts), list(names), n=3, cutoff=0.6)
        if close:
            return CoraError("CORA-QRY-002", f"no symbol anchored {anchor!r} in {source.bundle.root}",
                             f"did you mean {', '.join(names[q] for q in close)}?")  # fmt: skip
    several = _ending_with(source, parts, path)
    if len(several) > 1:
        return CoraError("CORA-QRY-002", f"{anchor!r} names several symbols in {source.bundle.root}",
                         f"give one with its path: {', '.join(several[:4])}")  # fmt: skip
    return unknown_anchor(source, anchor)


def _written(source: BundleChunks, anchor: str) -> tuple[str | None, tuple[str, ...]]:
    """The file `anchor` names (relative; None when it names none: `Rack::Request#params`'s
    `Rack` is no path) and the qualified name's parts."""
    path, sep, qual = anchor.partition("::")
    rel = relative(source, path) if sep else path
    if sep and ("/" in rel or "." in rel.rsplit("/", 1)[-1]):  # `shop/x.py::f`, `x.py::f`
        return rel, split_qualified(qual)
    return None, split_qualified(anchor)


def relative(source: BundleChunks, path: str) -> str:
    """`path` relative to the working tree's root when it is written absolute inside it."""
    tree = source.tree
    if tree is None or not path.startswith("/"):
        return path
    root = str(tree.root).rstrip("/") + "/"
    return path[len(root) :] if path.startswith(root) else path


def _ending_with(source: BundleChunks, parts: tuple[str, ...], path: str | None) -> list[str]:
    """The anchors (overloads as their family, unless a parameter list is written) whose
    qualified name ends with `parts`, in the file `path` when given; else with fewer leading
    parts (a package or namespace the anchor does not hold: `com.google.gson.Gson#fromJson`,
    `fmt::format_to` where fmt's namespace is a macro), and a JVM binary name's `$` read as a
    member's dot (`MapTypeAdapterFactory$Adapter.read`)."""
    if any("$" in part for part in parts):
        binary = tuple(p for part in parts for p in re.split(r"\$(?=[A-Z\d])", part))
        if binary != parts and (found := _ending_with(source, binary, path)):
            return found
    for drop in range(len(parts)):
        found = _ends(source, parts[drop:], path)
        if found or len(parts) - drop <= 2:
            return found
    return []


def _ends(source: BundleChunks, parts: tuple[str, ...], path: str | None) -> list[str]:
    if not parts:
        return []
    want = ".".join(parts)
    name = OVERLOAD.sub("", parts[-1])
    defining = catalog(source.bundle).defining([name], _DEFINERS)
    out: list[str] = []
    for file, defs in sorted(defining.items()):
        if path is not None and file != path:
            continue
        for cid in defs.get(name, []):
            c = source.chunk(cid)
            for a in c.anchors if c is not None else ():
                qual = a.partition("::")[2]
                # C++'s `leveldb.DBImpl::Write` as `leveldb.DBImpl.Write`
                exact = ".".join(split_qualified(qual))
                bare = ".".join(split_qualified(untemplated(OVERLOAD.sub("", qual))))
                if exact == want or exact.endswith("." + want):  # `Gson.toJson(Object)`: that one
                    hit = a
                elif bare == want or bare.endswith("." + want):
                    hit = OVERLOAD.sub("", a)
                elif "<" in qual and _ends_as(_by_type(OVERLOAD.sub("", qual)), want):
                    hit = a  # Rust's `<Printer as Trait>.print`
                else:
                    continue
                if hit not in out:
                    out.append(hit)
    return out or _kept_whole(source, parts, path)


def _kept_whole(source: BundleChunks, parts: tuple[str, ...], path: str | None) -> list[str]:
    """A member of a small type kept whole, which has no chunk of its own (bat's `impl Default for
    PrettyPrinter<'_> { fn default() ... }`, merged with the struct after it): the anchor of the
    member, found among its owner's, when the owner's file holds it."""
    if len(parts) < 2:
        return []
    owner = ".".join(parts[:-1])
    out: list[str] = []
    for file in sorted(catalog(source.bundle).defining([OVERLOAD.sub("", parts[-2])], _DEFINERS)):
        if path is not None and file != path:
            continue
        for c in source.file_chunks(file):
            for a in c.anchors if c.kind == "type" else ():
                if _ends_as(_by_type(a.partition("::")[2]), owner) and source.inner(f"{a}.{parts[-1]}"):
                    out.append(f"{a}.{parts[-1]}")
    return out


def _by_type(qual: str) -> str:
    """A qualified name as dotted parts, a Rust trait implementation's owner by its type
    (`<InteractivePrinter as Printer>.print_line`: `InteractivePrinter.print_line`)."""
    return ".".join(split_qualified(untemplated(_AS_TRAIT.sub(r"\1", qual))))


def _ends_as(qual: str, want: str) -> bool:
    """`qual` is `want` or ends with it at a dot."""
    return qual == want or qual.endswith("." + want)
