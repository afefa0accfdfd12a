"""What a bug report points at: traceback frames, file paths, dotted names and quoted messages,
matched to the bundle.

A report that pastes a traceback says where the failure went through; the innermost frame inside
the repository is the strongest single clue (the fix is there or a call or two up), the frames
around it weaker, a path or a `module.function` merely mentioned weaker still. Frames of the
standard library or of other packages match nothing in the bundle and fall away by themselves,
so "innermost" means innermost among the frames that resolve.

Frames and mentions are read by `frames.py`, as 17 languages' runtimes, debuggers and
sanitizers print them, and matched to the bundle's files by `paths.py`.

A report without a traceback often quotes the error or warning it got, or names a diagnostic's
code: the code that emits it is found by what it says (`emitted.py`), as strong a clue as a
mention; Python's own messages name the function or class at fault (`RST.__init__() got an
unexpected keyword argument ...`). And a title often names a command or a module by its bare
name (`named`): a mention of its file, when few chunks hold the word. Once scored, the chunks the
clues name keep the clues' order (`in_clue_order`).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol, TypeVar

from cora_ci.bundle.terms import terms
from cora_ci.retrieval.catalog import Catalog, Meta
from cora_ci.retrieval.definitions import family, leading
from cora_ci.retrieval.emitted import RARE, coded, named_by_errors, said
from cora_ci.retrieval.frames import Clue, clues
from cora_ci.retrieval.kinds import set_apart
from cora_ci.retrieval.paths import JVM_EXTS, NAMED_MOST, Paths
from cora_ci.retrieval.query import STOPWORDS
from cora_ci.retrieval.quoted import CALLED


class Resolved(NamedTuple):
    path: str  # a file of the bundle
    name: str | None
    line: int | None
    weight: float  # how strongly the report points at it (1.0: the innermost frame)
    frame: bool = False  # a traceback frame's (its code runs there), not a mention's
    owner: str | None = None  # the class or module it names the function of (`Outer$Inner.read`: Inner)
    code: str | None = None  # the line of code a Python frame prints


FRAME_DECAY = 0.6  # each frame further out from the innermost one that resolved
MENTION = 0.4  # a path or dotted name mentioned, not in a frame


Located = tuple[Clue, list[str], int | None]  # a clue, the bundle's files it names, its line in them


def locate(found: list[Clue], paths: Paths) -> list[Located]:
    """Each clue with the files it names (`_located`): the path matching, done once a report."""
    return [(c, *_located(c, paths)) for c in found]


def resolve(located: list[Located], outer: int = 0) -> list[Resolved]:
    """The located clues that name files of the bundle, weighted: 1.0 for the innermost frame that
    resolves, `FRAME_DECAY` less for each one further out, `MENTION` for mentions. A frame whose
    path several files end with is shared among them and leaves the next frame its place (a
    workspace's ten `src/lib.rs`, when the path's package does not say which); so does a frame
    that names no function when the next frame, in the same file, does, and that one's chunk is
    its place: Rust's `panicked at '...', src/lib.rs:131:9` is where its backtrace's
    `grep_matcher::Match::with_end` runs (line 131 is another version's)."""
    out: list[Resolved] = []
    frames = outer  # frames known to be inside the first one (a call that never ran)
    for i, (c, files, line) in enumerate(located):
        if not files:
            continue
        weight = FRAME_DECAY**frames if c.frame else MENTION
        same = c.frame and c.name is None and _named_next(located[i + 1 :], files)
        frames += c.frame and len(files) == 1 and not same
        owner = c.dotted[-2] if len(c.dotted) > 1 else None
        line = None if same else line  # its place is the named frame's chunk: its file's clue only
        out.extend(Resolved(f, c.name, line, weight / len(files), c.frame, owner, c.code) for f in files)
    return out


def _named_next(rest: list[Located], files: list[str]) -> bool:
    """Whether the next frame found is in `files` and names its function."""
    after = next(((c, f) for c, f, _ in rest if c.frame and f), None)
    return after is not None and after[1] == files and after[0].name is not None


def _located(c: Clue, paths: Paths) -> tuple[list[str], int | None]:
    """The bundle's files a clue names, and its line in them (none where the file is found by
    the frame's symbol, or is a compiled file's source)."""
    files = paths.match(c.path) if c.path else paths.module(c.dotted) if c.dotted else []
    if not files and c.frame and c.dotted:  # a frame naming no file of the bundle: where its symbol is
        jvm = (c.path or "").endswith(JVM_EXTS)  # (a JVM's `Buffer.java` now `Buffer.kt`)
        return paths.defined(c.dotted, jvm), None
    if not files and c.path and (files := paths.compiled(c.path)):
        return files, None
    return files, c.line


_PATHS: weakref.WeakKeyDictionary[Catalog, Paths] = weakref.WeakKeyDictionary()  # one per open bundle


class Pointed(NamedTuple):
    """Chunks a report points at: `at` the chunk a clue names (its function, or the line of its
    frame), `files` each file named, with the weight of its strongest clue."""

    at: dict[int, float]
    files: dict[str, float]


def pointed(cat: Catalog, text: str, title: str | None = None) -> Pointed:
    """What the clues of `text` point at in the bundle of `cat`: the chunks that emit the messages
    it quotes or hold the codes it names, the files its `title` names by their stem, and what its
    frames, paths and dotted names name."""
    found = clues(text)
    paths = _PATHS.get(cat)
    if paths is None:
        paths = _PATHS[cat] = Paths(cat)
    located = locate(found, paths)
    resolved = resolve(located)
    at = said(cat, text)
    called = named_by_errors(cat, text, {r.path for r in resolved if r.frame})
    for emits, weight in (*coded(cat, text).items(), *called.items()):
        at[emits] = max(at.get(emits, 0.0), weight)
    files: dict[str, float] = {}
    for emits, weight in at.items():
        m = cat.meta(emits)
        if m is not None:
            files[m.path] = max(files.get(m.path, 0.0), weight)
    if not found and title is None:
        return Pointed(at, files)
    titled = named(cat, title, paths) if title else {}
    for path, weight in titled.items():
        files[path] = max(files.get(path, 0.0), weight)
    if CALLED in called.values():  # a call Python refused (`f() got an unexpected keyword argument`)
        # never ran: the function it names is the innermost place, the frame that called it one
        # further out (sympy's `_print_SingularityFunction`, the innermost frame its caller's)
        resolved = resolve(located, outer=1)
    for r in resolved:
        files[r.path] = max(files.get(r.path, 0.0), r.weight)
        cid = _chunk_at(cat, r.path, r.name, r.line, r.frame, r.owner, r.code)
        if cid is not None:
            at[cid] = max(at.get(cid, 0.0), r.weight)
    pointed_in = {m.path for m in map(cat.meta, at) if m is not None} if titled else set()
    for path, weight in titled.items():  # a candidate though no word found it, unless a clue is there
        if title and path not in pointed_in and (cid := _titled(cat, path, title)) is not None:
            at[cid] = max(at.get(cid, 0.0), weight)
    return Pointed(at, files)


def named(cat: Catalog, title: str, paths: Paths) -> dict[str, float]:
    """The code files a report's title names by a bare word that is their stem: a command, a
    module (Django's "sqlmigrate wraps its output in BEGIN/COMMIT ...", "inspectdb should
    generate related_name ...", "numberformat ..."), each a mention shared among them. Only a
    word few chunks hold names something: "settings", "field" or "error" are the language's."""
    out: dict[str, float] = {}
    for word in dict.fromkeys(_TITLE_WORD.findall(title)):
        found = paths.named(word)
        if not found or word.lower() in STOPWORDS or cat.bundle.lexical.frequency(word.lower()) > RARE:
            continue
        code = [p for p in found if _code(cat, p)]
        if 1 <= len(code) <= NAMED_MOST:
            for p in code:
                out[p] = max(out.get(p, 0.0), MENTION / len(code))
    return out


_TITLE_WORD = re.compile(r"(?<![\w.])[A-Za-z_][A-Za-z0-9_]{3,}(?!\w|\.\w|\()")  # not `a.b`, not a call


def _code(cat: Catalog, path: str) -> bool:
    """`path` is code: not a test, an example, vendored or generated, a build's output, nor prose."""
    rows = cat.file_rows(path)
    return bool(rows) and not cat.built(path) and not set_apart(path, cat.row_meta(rows[0]).lang)


def _titled(cat: Catalog, path: str, title: str) -> int | None:
    """The chunk of a file a report's title names that holds most of the title's words (Django's
    `inspectdb.py` for "inspectdb should generate related_name ...": its relations' code), its
    first code chunk if none holds one."""
    words = set(terms(title))
    best: tuple[int, int] | None = None
    for row in cat.file_rows(path):
        m = cat.row_meta(row)
        if m.kind != "file":
            held = len(words.intersection(terms(cat.table.text(row))))
            if best is None or held > best[0]:
                best = (held, m.id)
    return best[1] if best is not None else None


def _chunk_at(cat: Catalog, path: str, name: str | None, line: int | None, frame: bool = False,
              owner: str | None = None, code: str | None = None) -> int | None:  # fmt: skip
    """The chunk of `path` defining `name`, `owner`'s if the file has one of its name (gson's
    `ReflectiveTypeAdapterFactory$Adapter.read` among its file's `read`s), one whose text holds
    the frame's `code` if one does (the report's file may be another version of this one): the
    one holding `line`; a frame's when none does, or it has no line: the nearest (`_nearest`), of
    overloads the implementation, where a trace runs, not the first signature in the file (or its
    runtime printed no lines); a mention's, the first. Else the innermost chunk holding `line`."""
    metas = [cat.row_meta(r) for r in cat.file_rows(path)]
    if name:
        named = [m for m in metas if name in m.symbols and m.kind != "file"]
        owned = [m for m in named if owner and any(n[-2:] == (owner, name) for n in m.names)]
        named = owned or named
        if code is not None and len(named) > 1:
            named = _saying(cat, named, code) or named
        holding = [m for m in named if line is not None and m.start_line <= line <= m.end_line]
        if holding:
            return min(holding, key=lambda m: m.start_line).id
        if named and (frame or line is not None):
            return leading(cat, _nearest(named, line)).id
        if named:  # a name mentioned (a dotted name, maybe with its overload's types)
            return min(named, key=lambda m: m.start_line).id
    if line is not None:
        holding = [m for m in metas if m.start_line <= line <= m.end_line]
        if holding:
            return min(holding, key=lambda m: m.end_line - m.start_line).id
    return None


def _saying(cat: Catalog, metas: list[Meta], code: str) -> list[Meta]:
    """Those of `metas` whose text holds the line `code`, spaces aside: django's 4.0.5 trace's
    `query.py, line 1507, in _fetch_all` under `self._result_cache = list(self._iterable_class(self))`
    is `QuerySet._fetch_all`, 4.0's `RawQuerySet._fetch_all` nearer the line."""
    want = "".join(code.split())
    return [m for m in metas if want in "".join(cat.table.text(m.row).split())]


def _nearest(named: list[Meta], line: int | None) -> list[Meta]:
    """Of definitions of one name none of which holds `line` (the report's file is another
    version), those of the family nearest it: a requests trace's `sessions.py, line 703, in send`
    was the mixin's `def send(...) -> Response: ...` on line 132, the file's first `send`, not
    `Session.send` on lines 752-829. All of them when there is no line."""
    if line is None:
        return named
    near = min(named, key=lambda m: (min(abs(line - m.start_line), abs(line - m.end_line)), m.start_line))
    return [m for m in named if family(m) == family(near)]


class Ranked(Protocol):
    """A scored candidate as `in_clue_order` reads and lifts it (`scoring.Cand`)."""

    meta: Meta
    score: float
    explain: dict[str, Any]


K = TypeVar("K")  # a candidate's key: a chunk id, or bundle and chunk id (`many.py`)


def in_clue_order(cands: Mapping[K, Ranked], told: Pointed) -> None:
    """Of the chunks a report's clues name, none below one a weaker clue names, nor below a chunk
    of its file that only the file's clue lifts: the innermost frame in the repository is the
    strongest single clue, yet an outer frame's code says the inner function's name (it calls it)
    and often more of the report's words, and ranked first (os-lib's, http's and hono's traces:
    the innermost frame second or third in 3 of 4; os-lib's `proc.call` below another chunk of
    its file). A frame's chunk and another file's chunk the file's clue lifts are not compared:
    their weights are not of one scale (sympy's `is_upper`, the outer frame a report's title
    names, went below every chunk of the innermost frame's file)."""
    named = {key: told.at[c.meta.id] for key, c in cands.items() if c.meta.id in told.at}
    filed: dict[str, float] = {}  # per file, the best score of its chunks only the file's clue lifts
    for key, c in cands.items():
        if key not in named and c.explain["evidence"]:
            filed[c.meta.path] = max(filed.get(c.meta.path, 0.0), c.score)
    for key in named:
        _above(cands[key], filed.get(cands[key].meta.path, 0.0))
    below = 0.0  # the best score of a weaker clue's chunks
    weight = -1.0
    best = 0.0  # ... of this clue's so far
    for w, _, key in sorted((w, cands[key].score, key) for key, w in named.items()):
        if w != weight:
            below, weight = max(below, best), w
        _above(cands[key], below)
        best = max(best, cands[key].score)


def _above(c: Ranked, floor: float) -> None:
    """`c` just above `floor` if it is not, in the order such chunks had (a test's demotion stays)."""
    if c.score <= floor:
        c.score = floor + 1e-6 * (1.0 + c.score)
