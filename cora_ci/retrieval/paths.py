"""Which of a bundle's files a path as a report writes it names (`Paths`): those sharing the longest
run of its trailing components (an installed copy's `site-packages/shop/x.py` is `src/shop/x.py`;
of a workspace's several `src/lib.rs`, the package's the path names), a compiled JavaScript file's
TypeScript sources, a file by its stem; a dotted name's module; the files defining the member a
frame printed without a file names (a JVM frame's source set in a Kotlin Multiplatform project).
`evidence.py` weighs what these point at."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property

from cora_ci.retrieval.catalog import Catalog
from cora_ci.retrieval.features import last_stem, stem_parts

NAMED_MOST = 2  # files of one stem a name may be: more, and it does not say which


class Paths:
    """The bundle's paths by file name, to match a path as written to the files it may be."""

    def __init__(self, cat: Catalog) -> None:
        self._cat = cat

    @cached_property
    def _by_name(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for p in self._cat.bundle.manifest["files"]["path"]:
            out.setdefault(p.rsplit("/", 1)[-1], []).append(p)
        return out

    @cached_property
    def _top_dirs(self) -> frozenset[str]:
        """The directories at the bundle's root."""
        return frozenset(p.split("/", 1)[0] for p in self._cat.bundle.manifest["files"]["path"] if "/" in p)

    @cached_property
    def _by_stem(self) -> dict[str, list[str]]:
        """Files by name without extension (`query` -> `django/db/models/query.py`), packages'
        `__init__`/`index` files also by their directory's name."""
        out: dict[str, list[str]] = {}
        for p in self._cat.bundle.manifest["files"]["path"]:
            out.setdefault(last_stem(p), []).append(p)
        return out

    def named(self, stem: str) -> list[str]:
        """The files whose stem is `stem` (`sqlmigrate` -> `.../commands/sqlmigrate.py`)."""
        return self._by_stem.get(stem, [])

    def module(self, dotted: tuple[str, ...]) -> list[str]:
        """The file a dotted name's module is (`django.db.models.query.QuerySet.delete`): the
        longest prefix that is a file's path without extension, by at least two components."""
        for i in range(len(dotted) - 1, 1, -1):
            head = list(dotted[:i])
            found = [p for p in self._by_stem.get(head[-1], []) if _common_tail(head, stem_parts(p)) >= 2]
            if found:
                return found
        return []

    def defined(self, dotted: tuple[str, ...], jvm: bool = False) -> list[str]:
        """The files defining the member a frame without a file names (`Polly.Outcome.GetResultOrRethrow`:
        a .NET package shipped without its symbols; a JVM's `Unknown Source`), by its owner and its
        name, and by as much of its namespace as the definition's name holds (a user's own
        `MyApp.Program.Main` is not a sample's `Samples.Program.Main`); none when more than
        `NAMED_MOST` files do (the name does not say which). A `jvm` frame's code is the JVM
        source set's where a Kotlin Multiplatform project has several (`_on_the_jvm`)."""
        if len(dotted) < 2:
            return []
        owner, name = dotted[-2:]
        definers = self._cat.definers
        named = set(definers.paths_with([name]))
        modules = named.intersection(self.named(owner))  # a Rust or Go function: its module is its file
        maybe = named.intersection(definers.paths_with([owner])) | modules
        cat = self._cat
        found = [
            p
            for p in sorted(maybe)
            if any(_names(dotted, n, p in modules) for r in cat.file_rows(p) for n in cat.row_meta(r).names)
        ]
        found = _on_the_jvm(found) if jvm else found
        return found if len(found) <= NAMED_MOST else []

    def match(self, written: str, built: bool = False) -> list[str]:
        """The bundle's files sharing the longest run of trailing components with `written`
        (`/usr/lib/python3/site-packages/django/db/models/query.py` -> `django/db/models/query.py`);
        a bare file name matches only a name held by one file. A written path whose directory
        agrees with none (the report's own `/home/me/proj/app/tasks.py` against the repository's
        `examples/celery/src/task_app/tasks.py`) is another file of that name, unless the
        repository's is at its root and the path goes through none of the repository's root
        directories (express's root `index.js` is not `node_modules/express/lib/router/index.js`,
        a file its `lib/` had once): a flask trial's own frame was taken for the innermost
        in-repository one."""
        parts = [p for p in re.split(r"[/\\]", written) if p not in ("", ".")]
        if not parts:
            return []
        found = self._by_name.get(parts[-1], [])
        if not found:
            return []
        scored = [(_common_tail(parts, p.split("/")), p) for p in found]
        best = max(n for n, _ in scored)
        top = [p for n, p in scored if n == best]
        if best == 1 and len(parts) > 1 and not built:  # a root file, if the path is in none of its dirs
            top = [p for p in top if "/" not in p and self._top_dirs.isdisjoint(parts[:-1])]
        if len(top) > 1:
            top = _packaged(parts[:-best], top, best)
        if len(top) > 1 and parts[-1].endswith(JVM_EXTS):
            top = _on_the_jvm(top)
        return top if best > 1 or len(top) == 1 else []

    def compiled(self, written: str) -> list[str]:
        """The TypeScript sources a compiled JavaScript file's path, or a declaration file's, may
        come from, as `match` finds them (`node_modules/hono/dist/cjs/utils/cookie.js` and
        `.../types/utils/cookie.d.ts` -> `src/utils/cookie.ts`): a package's users paste the frames
        and the type errors of what it ships. Its build's directories need not be its
        sources' (zod's `node_modules/zod/lib/ZodError.js` is `src/v3/ZodError.ts`): under
        `node_modules`, a file name the bundle holds once is that file."""
        stem, dot, ext = written.rpartition(".")
        if stem.endswith(".d") and ext in _DECLARED:  # a declaration file (`cart.d.ts`): its source's
            stem, ext = stem[:-2], _DECLARED[ext]
        built = "node_modules" in re.split(r"[/\\]", written)
        for source in _SOURCES.get(ext, ()) if dot else ():
            if found := self.match(f"{stem}.{source}", built):
                return found
        return []


_SOURCES = {"js": ("ts", "tsx"), "mjs": ("mts", "ts"), "cjs": ("cts", "ts"), "jsx": ("tsx",)}
_DECLARED = {"ts": "js", "mts": "mjs", "cts": "cjs"}  # a declaration file's extension: its JavaScript's


def _packaged(written: list[str], files: list[str], tail: int) -> list[str]:
    """Of the files a path's tail fits equally (a workspace's ten `src/lib.rs`), the ones in the
    directory of the package the path names above its tail: a package cache's directory holds its
    name (`.cargo/registry/.../grep-matcher-0.1.5/src/lib.rs`: `crates/matcher/src/lib.rs`; Go's
    `pkg/mod/.../cobra@v1.9.1`), of whose words the last one a file's directory has wins (`matcher`
    over the project's `grep`); all of them when none has one."""
    words = [w for part in written for w in re.split(r"[-_.@]", part.lower()) if w]
    last = {w: i for i, w in enumerate(words)}
    at = {f: max((last.get(d.lower(), -1) for d in f.split("/")[:-tail]), default=-1) for f in files}
    best = max(at.values())
    return [f for f in files if at[f] == best] if best >= 0 else files


JVM_EXTS = (".java", ".kt", ".kts", ".scala", ".groovy")
# Kotlin Multiplatform's source sets: `commonMain`, `jvmMain`, `nativeMain`
_SOURCE_SET = re.compile(r"[a-z][A-Za-z]*Main$")


def _on_the_jvm(files: list[str]) -> list[str]:
    """Of a Kotlin Multiplatform project's files a JVM frame may be (okio's `Buffer.kt` in
    `commonMain`, `jvmMain` and `nonJvmMain`), the JVM's and Android's source sets' (`jvmMain`,
    `androidMain`: the `actual` code that ran), else the common one's; all of them in any other
    layout."""

    def source_set(f: str) -> str | None:
        return next((d for d in f.split("/")[:-1] if _SOURCE_SET.fullmatch(d)), None)

    sets = {f: source_set(f) for f in files}
    if not any(sets.values()):
        return files
    on_jvm = [f for f in files if (sets[f] or "").startswith(("jvm", "android"))]
    return on_jvm or [f for f in files if sets[f] == "commonMain"] or files


def _names(dotted: tuple[str, ...], name: tuple[str, ...], module: bool) -> bool:
    """Whether a definition's qualified `name` is the member `dotted` names: its owner, its own
    name and as much of its namespace as `name` holds; in its module's file, its own name alone."""
    if module and name == dotted[-1:]:
        return True
    return 1 < len(name) <= len(dotted) and dotted[-len(name) :] == name


def _common_tail(a: Sequence[str], b: Sequence[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n
