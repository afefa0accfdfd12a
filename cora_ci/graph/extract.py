"""Per file: the modules it imports and, per chunk, the names the chunk references.

This is the unresolved half of the reference graph. It depends on one file only, so an
incremental build re-extracts changed files and keeps the stored `FileRefs` of all others.

Identifiers come from a tree-sitter query (never from comments or strings) and are attributed
to every chunk whose *verbatim* lines hold them: an elided member body counts for the member's
chunk, not its type's skeleton. Markdown gets a cheap fallback (identifiers inside code spans and
fenced blocks, which is where docs name code); other files without a grammar (YAML, JSON, TOML,
line-chunked text) reference nothing.
"""

from __future__ import annotations

import codecs
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from cora_ci.arrays import among
from cora_ci.chunking.model import OVERLOAD, Chunk
from cora_ci.chunking.nodes import text_of
from cora_ci.chunking.outline import SlowParse, parse
from cora_ci.chunking.secrets import contains_secret
from cora_ci.chunking.symbols import declaration
from cora_ci.files.langs import MARKUP, grammar_available
from cora_ci.files.text import decode
from cora_ci.graph.queries import refs_query

MAX_REFS = 200  # per chunk: the most frequent names win, ties by name
_DROP = frozenset({"self", "cls", "this", "super", "base", "crate", "_"})
_MD_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]+`", re.DOTALL)
_MD_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_QUALIFIER = re.compile(r"\.|::")
_CS_USING = re.compile(r"^(?:global\s+)?using\s+(?:static\s+)?(?:\w+\s*=\s*)?(?:global::)?([\w.]+)")
_JAVA_IMPORT = re.compile(r"^import\s+(?:static\s+)?([\w.]+(?:\.\*)?)")


class FileRefs(NamedTuple):
    """Unresolved references of one file; plain lists and dicts, so msgpack stores them as is."""

    imports: list[str]  # module specifiers as written, sorted unique
    refs: dict[int, list[str]]  # chunk id -> sorted unique names it references but does not bind


def extract_refs(path: str, lang: str, data: bytes, chunks: list[Chunk], tree: Any = None) -> FileRefs:
    """References of one file's chunks; `tree` is `chunk_file(..., keep_tree=True).tree` when known.

    `data` is the raw file: it is decoded exactly as `chunk_file` does, so line numbers agree.
    """
    if not chunks:
        return FileRefs([], {})
    src = source_bytes(data)
    if lang == "markdown":
        return FileRefs([], _markdown_refs(chunks))
    if tree is None:
        if lang in MARKUP or not grammar_available(lang) or _minified(chunks):
            return FileRefs([], {})
        try:
            tree = parse(lang, src)
        except SlowParse:
            return FileRefs([], {})
    query = refs_query(lang)
    if query is None:
        return FileRefs([], {})
    from tree_sitter import QueryCursor

    caps = QueryCursor(query).captures(tree.root_node)
    uses = _Occurrences(src, caps.get("ref", []), skip=caps.get("skip", []), spans=caps.get("skipall", []))
    binds = _Occurrences(src, caps.get("bind", []))
    offsets = _line_offsets(src)
    owners, lo, hi = _byte_ranges(chunks, offsets)
    _narrow_slices(chunks, src, owners, lo, hi)
    use_at, bind_names = uses.spans(lo, hi), binds.slices(lo, hi)
    counts: dict[int, Counter[bytes]] = {}
    bound: dict[tuple[str, ...] | int, set[bytes]] = {}  # per symbol: its parts share parameters
    ranges: dict[int, list[tuple[int, int]]] = {}
    for k, owner in enumerate(owners):
        a, b = use_at[k]
        counts.setdefault(owner, Counter()).update(uses.names[a:b])
        bound.setdefault(_symbol_key(chunks[owner]), set()).update(bind_names[k])
        ranges.setdefault(owner, []).append(use_at[k])
    refs: dict[int, list[str]] = {}
    cache: dict[bytes, str | None] = {}
    for k, c in enumerate(chunks):
        if k not in counts:
            continue
        defined = defined_names(c)
        skip = bound[_symbol_key(c)].union(s.encode() for s in defined)
        skip -= _delegated(c, defined, counts[k], uses, ranges[k], src)
        picked = _pick(counts[k], skip, cache)
        if picked:
            refs[c.id] = picked
    return FileRefs(_imports(lang, src, caps), refs)


def _delegated(c: Chunk, defined: list[str], counts: Counter[bytes], uses: _Occurrences,
               ranges: list[tuple[int, int]], src: bytes) -> set[bytes]:  # fmt: skip
    """The names `c` defines that it also calls as a member of something else (`x.name`, `x->name`).
    A function that forwards to the method of its own name (viper's package-level
    `func WatchConfig() { v.WatchConfig() }`, flask's `json.dumps` calling its app's provider's
    `dumps`) calls that method: dropped as a definition, the forwarder had no edge to it, and
    `related` no caller. Only as a member: a bare use of its own name is recursion, or another
    definition of the name in the file (a Rust impl's `type Error = Error;`, flask's test classes
    `Index` of one name, each naming itself), which a name alone cannot tell apart."""
    again = [n for n in defined if counts[n.encode()] > 1]  # most chunks name themselves once
    if not again:
        return set()
    declared = Counter(_QUALIFIER.split(OVERLOAD.sub("", a.split("::", 1)[-1]))[-1] for a in c.anchors)
    out: set[bytes] = set()
    for n in again:
        w = n.encode()
        if counts[w] > max(1, declared[n]) and any(
            uses.names[i] == w and _member(src, int(uses.starts[i])) for a, b in ranges for i in range(a, b)
        ):
            out.add(w)
    return out


def _member(src: bytes, at: int) -> bool:
    """Whether the name at byte `at` follows `.` or `->` (spaces and line breaks between)."""
    before = src[max(0, at - 80) : at].rstrip()
    return before.endswith((b".", b"->")) and not before.endswith(b"..")


def _minified(chunks: list[Chunk]) -> bool:
    """Minified code (`CORA-CHK-005`, on the first chunk) names nothing worth a link, and parsing
    a 50 MB line would take gigabytes."""
    return any(d.code == "CORA-CHK-005" for d in chunks[0].diagnostics)


def _symbol_key(c: Chunk) -> tuple[str, ...] | int:
    """Chunks with the same anchors are parts of one symbol; anonymous chunks stand alone."""
    return tuple(c.anchors) if c.anchors else c.id


def source_bytes(data: bytes) -> bytes:
    """The exact text `chunk_file` parses: decoded lines joined by LF, re-encoded as UTF-8.

    Plain UTF-8 with LF line ends (nearly every file) is already that, minus a final newline,
    which saves the decode and line split.
    """
    if b"\r" not in data and not data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return data[:-1] if data.endswith(b"\n") else data
    return "\n".join(decode(data).lines).encode("utf-8")


def _byte_ranges(
    chunks: list[Chunk], offsets: np.ndarray[Any, Any]
) -> tuple[list[int], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Every chunk's verbatim lines as half-open byte ranges: (chunk index per range, starts, ends)."""
    rows = len(offsets) - 1
    owners: list[int] = []
    first: list[int] = []
    last: list[int] = []
    for k, c in enumerate(chunks):
        for a, b in c.verbatim_ranges():
            if 1 <= a <= rows:
                owners.append(k)
                first.append(a - 1)
                last.append(min(b, rows))
    return owners, offsets[np.asarray(first, dtype=np.int64)], offsets[np.asarray(last, dtype=np.int64)]


def _narrow_slices(chunks: list[Chunk], src: bytes, owners: list[int], lo: np.ndarray[Any, Any],
                   hi: np.ndarray[Any, Any]) -> None:  # fmt: skip
    """A line over budget is sliced into consecutive chunks that all span that one line: each
    owns only its own bytes of it, so a 50 MB one-line file costs linear time and memory, not
    slices x names of the line."""
    pos: dict[int, int] = {}  # line start -> where the next slice of it begins
    for r, k in enumerate(owners):
        c = chunks[k]
        if c.start_line != c.end_line or c.elided:
            continue
        text = c.text.encode("utf-8")
        line_start, line_end = int(lo[r]), int(hi[r])
        if len(text) >= line_end - line_start - 1:  # the whole line (its range holds the newline)
            continue
        at = src.find(text, pos.get(line_start, line_start), line_end)
        if at >= 0:
            lo[r], hi[r] = at, at + len(text)
            pos[line_start] = at + len(text)


class _Occurrences:
    """Names of captured nodes sorted by position, to slice out those inside byte ranges fast."""

    def __init__(self, src: bytes, nodes: Sequence[Any], skip: Sequence[Any] = (), spans: Sequence[Any] = ()):
        starts = np.array([n.start_byte for n in nodes], dtype=np.int64)
        ends = np.array([n.end_byte for n in nodes], dtype=np.int64)
        keep = np.ones(len(nodes), dtype=bool)
        if skip:
            keep &= ~among(starts, np.array(sorted(n.start_byte for n in skip), dtype=np.int64))
        if spans:
            keep &= ~_inside(starts, spans)
        order = np.argsort(starts[keep], kind="stable")
        self.starts = starts[keep][order]
        kept_ends = ends[keep][order]
        self.names = [src[s:e] for s, e in zip(self.starts.tolist(), kept_ends.tolist(), strict=True)]

    def spans(self, lo: np.ndarray[Any, Any], hi: np.ndarray[Any, Any]) -> list[tuple[int, int]]:
        """The indexes [a, b) of the names inside each range [lo[k], hi[k])."""
        i = np.searchsorted(self.starts, lo).tolist()
        j = np.searchsorted(self.starts, hi).tolist()
        return list(zip(i, j, strict=True))

    def slices(self, lo: np.ndarray[Any, Any], hi: np.ndarray[Any, Any]) -> list[list[bytes]]:
        """The names inside each range [lo[k], hi[k])."""
        return [self.names[a:b] for a, b in self.spans(lo, hi)]


def _inside(starts: np.ndarray[Any, Any], spans: Sequence[Any]) -> np.ndarray[Any, Any]:
    """Which positions fall inside any of the (possibly nested) node spans."""
    pairs = sorted((n.start_byte, n.end_byte) for n in spans)
    lo = np.array([p[0] for p in pairs], dtype=np.int64)
    hi = np.maximum.accumulate(np.array([p[1] for p in pairs], dtype=np.int64))
    idx = np.searchsorted(lo, starts, side="right") - 1
    return (idx >= 0) & (starts < hi[np.maximum(idx, 0)])


def _line_offsets(src: bytes) -> np.ndarray[Any, Any]:
    """Byte offset of each row's start, plus one past the end: row r spans offsets[r]..offsets[r+1]."""
    newlines = np.flatnonzero(np.frombuffer(src, dtype=np.uint8) == 10) + 1
    return np.concatenate(([0], newlines, [len(src) + 1])).astype(np.int64)


def _name(raw: bytes, cache: dict[bytes, str | None]) -> str | None:
    """The identifier as text, or None for what is not worth a reference (`self`, `i`, non-names)."""
    text = raw.decode("utf-8", errors="replace")
    ok = len(text) > 1 and text not in _DROP and _identifier(text)
    cache[raw] = text if ok else None
    return cache[raw]


def _pick(counts: Counter[bytes], skip: set[bytes], cache: dict[bytes, str | None]) -> list[str]:
    """Sorted names, capped at MAX_REFS by frequency (ties by name) so the cap is deterministic."""
    names = [(cache[w] if w in cache else _name(w, cache), w) for w in counts.keys() - skip]
    kept = [(n, counts[w]) for n, w in names if n is not None]
    if len(kept) > MAX_REFS:
        kept = sorted(kept, key=lambda p: (-p[1], p[0]))[:MAX_REFS]
    return sorted(n for n, _ in kept)


def defined_names(c: Chunk) -> list[str]:
    """Identifiers a chunk defines: the last component of each symbol (`<P as Display>` -> `P`).
    C's declarations define nothing (`uv.h`'s `int uv_run(...);`): a use of `uv_run` is of the
    function `core.c` defines, as before prototypes were symbols (a chunk holds no other symbol)."""
    if c.kind in ("file", "module", "lines", "section", "key") or declaration(c.hierarchy):
        return []
    out: list[str] = []
    for sym in c.symbols:
        s = sym[1:].split(" as ", 1)[0] if sym.startswith("<") else sym
        last = _QUALIFIER.split(s.strip())[-1] if "." in s or ":" in s else s
        if _identifier(last):
            out.append(last)
    return out


def _identifier(name: str) -> bool:
    """A name the graph links: an identifier, `$` allowed, or a JavaScript class's private member
    (`#dispatch`: hono's `Hono.#dispatch` had neither callers nor callees)."""
    return name.removeprefix("#").replace("$", "_").isidentifier()


def owner(anchor: str | None) -> str | None:
    """The name of what an anchor's definition is a member of (`x.py::OrderedSet.pop`:
    `OrderedSet`; `v.go::Viper.find`: `Viper`; `a.rs::<Json as FromRequest>.from_request`: `Json`),
    None for a top-level one. Overloads' parameters and `#n` aside."""
    if not anchor or "::" not in anchor:
        return None
    qualified = OVERLOAD.sub("", anchor.split("::", 1)[1])
    parts = _QUALIFIER.split(qualified)
    if len(parts) < 2:
        return None
    last = parts[-2].strip()
    return last[1:].split(" as ", 1)[0].strip() if last.startswith("<") else last


def _markdown_refs(chunks: list[Chunk]) -> dict[int, list[str]]:
    refs: dict[int, list[str]] = {}
    cache: dict[bytes, str | None] = {}
    for c in chunks:
        words = Counter(w.encode() for m in _MD_CODE.finditer(c.text) for w in _MD_WORD.findall(m.group(0)))
        picked = _pick(words, set(), cache)
        if picked:
            refs[c.id] = picked
    return refs


# ---- imports -------------------------------------------------------------------------------------


def _imports(lang: str, src: bytes, caps: Mapping[str, list[Any]]) -> list[str]:
    """Module specifiers as written (`a.b`, `.x`, `./util`, `crate::a::B`, `fmt`), sorted unique."""
    out: set[str] = set()
    for node in caps.get("imp", []):
        out.update(_statement_specifiers(lang, src, node))
    for node in caps.get("str", []):
        spec = text_of(src, node).strip().strip("\"'`")
        if spec:
            out.add(spec)
    # A specifier can be a URL with a token in it; the manifest stores imports as written.
    return sorted(s for s in out if contains_secret(s) is None)


def _statement_specifiers(lang: str, src: bytes, node: Any) -> list[str]:
    text = text_of(src, node)
    if lang == "python":
        return _python_specifiers(src, node)
    if lang == "rust":
        return expand_use_tree(text)
    if lang == "csharp":
        m = _CS_USING.match(text.strip())
        return [m.group(1)] if m else []
    if lang == "java":
        m = _JAVA_IMPORT.match(text.strip())
        return [m.group(1)] if m else []
    return []


def _python_specifiers(src: bytes, node: Any) -> list[str]:
    """`import a.b` -> a.b; `from .x import y` -> .x and .x.y (y may be a submodule)."""

    def dotted(n: Any) -> str:
        if n.type == "aliased_import":
            n = n.child_by_field_name("name")
        return "".join(text_of(src, n).split()) if n is not None else ""

    names = [dotted(n) for n in node.children_by_field_name("name")]
    if node.type == "import_statement":
        return [n for n in names if n]
    module = node.child_by_field_name("module_name")
    if module is None:
        return []
    base = dotted(module)
    sep = "" if base.endswith(".") else "."
    return [base, *(base + sep + n for n in names if n)]


def expand_use_tree(text: str) -> list[str]:
    """`crate::a::{b, c::{D, E as F}}` -> crate::a::b, crate::a::c::D, crate::a::c::E (no recursion)."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.DOTALL)
    text = re.sub(r"\s+as\s+\w+", "", text)
    text = re.sub(r"\s+", "", text).rstrip(";")
    out: list[str] = []
    stack = [("", text)]
    while stack:
        prefix, s = stack.pop()
        i = s.find("{")
        if i < 0:
            path = re.sub(r"(::)?(\*|self)$", "", prefix + s)
            if path:
                out.append(path)
            continue
        head, body = prefix + s[:i], s[i + 1 : s.rfind("}")]
        stack.extend((head, part) for part in _split_top(body))
    return sorted(set(out))


def _split_top(body: str) -> list[str]:
    """Split on commas outside braces."""
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(body):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:k])
            start = k + 1
    parts.append(body[start:])
    return [p for p in parts if p]
