"""The code a test file checks, by the naming conventions of test runners.

A question or a bug report often reads most like a test (`test_rename_field_foreign_key_to_field`
says in words what a report says), and tests rank below the code they test. What a test is found
for points at its subject, the file its name names: `tests/migrations/test_autodetector.py` checks
`django/db/migrations/autodetector.py`, `sklearn/linear_model/tests/test_ridge.py` checks
`sklearn/linear_model/_ridge.py`, `src/parser.test.ts` checks `src/parser.ts`, `FooTest.java`
checks `Foo.java`; a test named for a class checks the file defining it (`tests/queries/test_q.py`
imports `Q`: `django/db/models/query_utils.py`; `named_for`). A test lends its subject what it
scored above the subject's own best (`lend`); `search.py` adds a share of that to the subject's
chunks.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from functools import lru_cache

import numpy as np

from cora_ci.bundle.ref_words import words_of
from cora_ci.retrieval.kinds import TEST_NAME

# stems too common to say which file is meant
_GENERIC = frozenset({
    "__init__", "index", "mod", "lib", "main", "utils", "util", "helpers", "common", "conftest", "setup",
    "fixtures", "base", "core", "types", "models", "views",
})  # fmt: skip
_TEST_DIRS = frozenset({"test", "tests", "__tests__", "testing", "spec", "specs", "unit", "integration"})
MOST = 3  # more files of that name than this, equally close: the name does not say which
_LARGEST = 20_000  # files of a part of the tree read for a test's subject (~20 ms)


def stem_of(name: str) -> str:
    """A file name without its extensions (`parser.test.ts`: `parser.test`); no leading `_`
    (a private module, `_ridge.py`, is what `test_ridge.py` checks)."""
    return name.split(".", 1)[0].lstrip("_")


def subject_stem(path: str) -> str | None:
    """The stem of the file a test file checks, by its name; None when the name is not a test's
    or says too little."""
    name = path.rsplit("/", 1)[-1]
    m = TEST_NAME.match(name)
    stem = next((g for g in m.groupdict().values() if g), None) if m else None
    if stem is None or not stem.strip("_"):
        return None
    stem = stem.lstrip("_")
    return None if stem.lower() in _GENERIC else stem


class Subjects:
    """Test file -> the code files it checks, over the paths of one bundle (sorted, as its file
    table is). Only the part of the tree a test may check is read: the package it sits in (a
    range of the sorted paths), or the whole tree for a tree of tests of its own; a part of more
    than `_LARGEST` files is not read (a monorepo's root `tests/`: ~1 us a path, once a process)."""

    def __init__(self, paths: Sequence[str]) -> None:
        self._paths = paths
        self._parts: dict[str, dict[str, list[str]] | None] = {}  # a package's files by stem
        self._seen: dict[str, tuple[str, ...]] = {}

    def of(self, test_path: str) -> tuple[str, ...]:
        """The files `test_path` checks: of its subject's stem and extension, not tests, inside the
        package the test sits in when it sits in one; of those, the ones sharing the most directory
        names with it (`tests/auth_tests/test_hashers.py`: `django/contrib/auth/hashers.py`);
        () when there are none or more than `MOST` equals."""
        got = self._seen.get(test_path)
        if got is None:
            got = self._seen[test_path] = self._find(test_path)
        return got

    def _find(self, test_path: str) -> tuple[str, ...]:
        stem = subject_stem(test_path)
        if stem is None:
            return ()
        parts = test_path.split("/")[:-1]
        first = next((i for i, d in enumerate(parts) if d.lower() in _TEST_DIRS), len(parts))
        inside = parts[:first]  # `sympy/parsing/tests/` checks `sympy/parsing/`, not `sympy/printing/`
        by_stem = self._part("".join(d + "/" for d in inside))
        own = {_bare(d) for d in parts if d.lower() not in _TEST_DIRS}
        near: dict[str, int] = {}
        for p in by_stem.get(stem, []) if by_stem is not None else []:
            if _checkable(test_path, p):
                near[p] = len(own.intersection(p.split("/")[:-1]))
        best = max(near.values(), default=0)
        out = tuple(p for p, n in near.items() if n == best)
        return out if len(out) <= MOST else ()

    def _part(self, prefix: str) -> dict[str, list[str]] | None:
        """The files under `prefix` ("" the whole tree, else ending in `/`) by stem; None when
        they are more than `_LARGEST`."""
        if prefix not in self._parts:
            lo = bisect.bisect_left(self._paths, prefix)
            hi = bisect.bisect_left(self._paths, prefix[:-1] + "0") if prefix else len(self._paths)  # "/" + 1
            by_stem: dict[str, list[str]] | None = None
            if hi - lo <= _LARGEST:
                by_stem = {}
                for p in self._paths[lo:hi]:
                    by_stem.setdefault(stem_of(p.rsplit("/", 1)[-1]), []).append(p)
            self._parts[prefix] = by_stem
        return self._parts[prefix]


_AFFIX = re.compile(r"^tests?_|_tests?$")


def _bare(d: str) -> str:
    """A directory name without a test affix (`auth_tests`, `test_auth`: `auth`)."""
    return _AFFIX.sub("", d) or d


MayDefine = Callable[[list[str]], list[str]]  # names -> the files that may define one (a superset)
Defines = Callable[[str, list[str]], bool]  # a file of those really defines one of the names


def named_for(test_path: str, used: Iterable[str], may_define: MayDefine,
              defines: Defines = lambda path, names: True,
              among: Collection[str] | None = None) -> tuple[str, ...]:  # fmt: skip
    """The code files defining what a test file is named for, among the names it uses: a test
    file a class (`tests/admin_utils/test_logentry.py` uses `LogEntry`, defined in
    `django/contrib/admin/models.py`; `tests/queries/test_q.py` `Q`; `test_cast.py` `Cast`), the
    other convention of test runners. () when none or more than `MOST` do. `may_define` gives a
    superset of the files defining some names, `defines` says of one of them; with `among`, only
    the files `among` it are given (`confirmed`)."""
    names = named_names(test_path, used)
    files = checkable(test_path, may_define(names)) if names else []
    return confirmed(files, names, defines, among)


def checkable(test_path: str, paths: Iterable[str]) -> list[str]:
    """Those of `paths` that are code a test file may check (`_checkable`)."""
    return [p for p in paths if _checkable(test_path, p)]


def confirmed(files: list[str], names: list[str], defines: Defines,
              among: Collection[str] | None = None) -> tuple[str, ...]:  # fmt: skip
    """`named_for`'s answer from the files that may define `names` (checkable ones): those that
    do, () when more than `MOST` do. With `among`, only those among it, and only they are asked
    unless the files must be counted (a query's candidates' files, as `lend` needs them: asking a
    file costs reading its shard)."""
    if len(files) > MOST:  # a superset: count those that really define it
        files = [p for p in files if defines(p, names)]
        if len(files) > MOST:
            return ()
        return tuple(p for p in files if among is None or p in among)
    return tuple(p for p in files if (among is None or p in among) and defines(p, names))


def named_names(test_path: str, used: Iterable[str]) -> list[str]:
    """The names among `used` that a test file is named for (`LogEntry` and `log_entry` for
    `test_log_entry.py`), sorted; none when its name is not a test's."""
    stem = subject_stem(test_path)
    if stem is None:
        return []
    want = _squashed(stem)
    return sorted({n for n in used if _squashed(n) == want})


def used_like(stem: str, code: Iterable[str], refs_h: bytes, spelled: Iterable[str],
              imports: Iterable[str]) -> set[str]:  # fmt: skip
    """The names a test file of `stem` uses that `named_names` may take, without the names each
    of its chunks uses: the words of its `code` like its stem that its name hashes (`refs_h`)
    hold, the names stored as their strings (`spelled`), and the last part of each import
    (`from x import Q` is in its imports only)."""
    from cora_ci.graph.build import name_hash

    hashed = set(np.frombuffer(refs_h, dtype="<u4").tolist())
    used = {w for w in words_like(code, stem) if name_hash(w) in hashed}
    return used | set(spelled) | {i.rpartition(".")[2] for i in imports}


def words_like(texts: Iterable[str], stem: str) -> set[str]:
    """The words of `texts` that name what a test file of `stem` is named for (`named_names`),
    found where its squashed letters occur in the lower-cased code (a pattern that begins with a
    letter is searched for in C; one that begins at every word boundary took ~0.3 ms a file)."""
    want, code = _squashed(stem), "\n".join(texts)
    low = code.lower()
    if not want or want not in low.replace("_", ""):  # a file without it: one pass in C, no pattern
        return set()
    if len(low) != len(code):  # a letter whose lower case is longer (`İ`): places would shift
        return {w for w in words_of(code) if _squashed(w) == want}
    out: set[str] = set()
    for m in _like(want).finditer(low):
        start, end = m.start(), m.end()
        while start and low[start - 1] == "_":
            start -= 1
        while end < len(low) and low[end] == "_":
            end += 1
        word = code[start:end]
        if (start == 0 or not _WORD_CHAR.match(code, start - 1)) and not _WORD_CHAR.match(code, end):
            out.add(word)
    return {w for w in out if _squashed(w) == want}


_WORD_CHAR = re.compile(r"\w")


@lru_cache(maxsize=256)
def _like(want: str) -> re.Pattern[str]:
    """`want`'s characters with underscores between them, in lower-cased text."""
    return re.compile("_*".join(map(re.escape, want)))


def _checkable(test_path: str, path: str) -> bool:
    """`path` is code a test file may check: of its extension, not a test by name or place."""
    return (path.endswith("." + test_path.rsplit(".", 1)[-1]) and subject_stem(path) is None
            and not _TEST_DIRS.intersection(d.lower() for d in path.split("/")[:-1]))  # fmt: skip


def _squashed(name: str) -> str:
    """`LogEntry`, `log_entry`, `logentry`: `logentry`."""
    return name.replace("_", "").lower()


Found = tuple[str, float, str | None]  # a candidate's path, score and demotion class ("test", None: code)


def lend(found: Iterable[Found], subjects: Callable[[str], Sequence[str]], demote: float) -> dict[str, float]:
    """Per file a test checks, what its best test among the candidates `found` scored before tests
    were lowered (its score over `demote`) above the file's own best. A test that says no more than
    its code lends nothing: a small repository's every test is a candidate, and a weak one must not
    lift a file over the answer."""
    tests: dict[str, float] = {}
    own: dict[str, float] = {}
    for path, score, demoted in found:
        if demoted == "test":
            for subject in subjects(path):
                tests[subject] = max(tests.get(subject, 0.0), score / demote)
        elif demoted is None:
            own[path] = max(own.get(path, 0.0), score)
    return {p: s - own.get(p, 0.0) for p, s in tests.items() if s > own.get(p, 0.0)}
