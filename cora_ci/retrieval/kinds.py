"""What a path is, for ranking: test, benchmark, example, vendored, generated, changelog,
translation, template, migration, tooling (`path_class`); prose or a type stub (`prose_class`); or a
directory holding an older copy of the code (`superseded_dirs`). Each ranks below the code unless
the query asks for it (`scoring.demotion`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

# Path classes ranked lower unless asked for. Directory names, then file-name patterns.
_DIRS = {
    "test": {"test", "tests", "__tests__", "testing", "spec", "specs", "__mocks__", "e2e", "testdata"},
    "benchmark": {"benchmark", "benchmarks", "bench", "benches", "asv_bench", "jmh"},
    "example": {"example", "examples", "demo", "demos", "sample", "samples", "tutorial", "tutorials"},
    "vendored": {"vendor", "vendored", "_vendor", "third_party", "thirdparty", "third-party",
                 "node_modules", "bower_components", "extern", "external"},
    "generated": {"generated", "__generated__", "gen-src"},
    "translation": {"locale", "locales", "translations"},
    "template": {"ISSUE_TEMPLATE", "PULL_REQUEST_TEMPLATE", "DISCUSSION_TEMPLATE"},
}  # fmt: skip
# a directory of tests named for what they test: Django's `js_tests/`, `integration_tests/`,
# `tests_unit/`, a .NET solution's `MyApp.Tests/`
_TESTS_NAMED = re.compile(r"^(tests?[_-].+|.+[_.-]tests?)$", re.IGNORECASE)
# examples named for what they show: attrs' `typing-examples/` (the API as type checkers see it,
# whose `ValidatedOptionalOverTuple` came first for "a validator that makes an attribute
# optional"), `code_samples/`, `examples-advanced/`
_EXAMPLES_NAMED = re.compile(r"^((examples?|samples?|demos?)[_-].+|.+[_-](examples?|samples?|demos?))$", re.I)
# a build's test source set: Gradle's and Kotlin Multiplatform's `<target>Test` (okio's `jvmTest/`
# and `commonTest/`, Android's `androidTest/` and `androidUnitTest/`, a Gradle `integrationTest/`),
# Gradle's `testFixtures/`, and .NET's `UnitTests/`, `IntegrationTests/`; a test's helpers there
# (okhttp's `jvmTest/.../MockHttp2Peer.kt`) are named like code, and one came first for "websocket
# frames reading and writing"
_TEST_SOURCE_SET = re.compile(
    r"^([a-z][a-z0-9]*([A-Z][a-z0-9]*)*Tests?|test(Fixtures|Utils)|([A-Z][a-z]+)+Tests)$"
)
# Not code, yet full of code's names: the history of a project, its messages in other languages,
# its issue forms, and copies of well-known libraries. They rank below source unless asked for.
_TEXT_EXT = r"(\.(md|rst|txt|adoc|asciidoc|markdown|org))?$"
_CHANGELOG_FILE = re.compile(
    rf"^(CHANGE[SL]?(OG)?|HISTORY|NEWS|RELEASE[-_ ]?NOTES|WHATS[-_ ]?NEW){_TEXT_EXT}", re.I
)
# release notes kept one file per version, or per change (towncrier's fragments): text files only;
# "what's new" spelt as scientific Python writes it (scikit-learn's `doc/whats_new/v1.3.rst`,
# pandas' and IPython's `whatsnew/`, matplotlib's `next_whats_new/` and `next_api_changes/`,
# numpy's `upcoming_changes/`)
_CHANGELOG_DIRS = {"changelog.d", "changes", "newsfragments", "releasenotes", "release-notes",
                   "release_notes", "releases", "whatsnew", "whats_new", "whats-new", "next_whats_new",
                   "next_api_changes", "upcoming_changes"}  # fmt: skip
_NOTE_EXTS = {
    "md",
    "rst",
    "txt",
    "adoc",
    "asciidoc",
    "markdown",
    "org",  # and towncrier's fragment kinds
    "bugfix",
    "feature",
    "doc",
    "removal",
    "misc",
    "breaking",
    "deprecation",
    "trivial",
    "change",
}
_TRANSLATION_FILE = re.compile(r"\.(po|pot|mo|xlf|xliff)$")
_TEMPLATE_FILE = re.compile(
    r"^(ISSUE|PULL_REQUEST|BUG[-_]REPORT|FEATURE[-_]REQUEST)[-_]?TEMPLATE(\..*)?$", re.I
)
_VENDORED_FILE = re.compile(r"^(jquery|bootstrap|lodash|underscore|moment|d3|angular|react(-dom)?|vue)"
                            r"([-.]\d[\w.-]*)?(\.(min|slim|bundle))?\.js$", re.I)  # fmt: skip
# A test file's name by its runner's convention, around the stem of the file it checks (the named
# groups; `tested.subject_stem`): pytest's `test_x.py`, Go's `x_test.go`, Google's `x_unittest.cc`,
# Jest's `x.test.ts`, tsd's type tests `x.test-d.ts`, JUnit's, PHPUnit's and XCTest's `XTest.java`,
# `XTest.php`, `XTests.swift`, RSpec's and busted's `x_spec.rb`, `x_spec.lua`; and pytest's
# `conftest.py`, Bats' `x.bats`, a C project's one test program (hiredis' `test.c`).
# Not `XSpec.kt` (kotlinpoet's `FunSpec` is code) nor `x_spec.py` (TensorFlow's `tensor_spec`), nor
# a `test.py` (werkzeug's test client, Django's `test` command).
TEST_NAME = re.compile(
    r"^test_(?P<a>.+)\.(py|rb|c|cc|cpp|lua)$|^(?P<b>.+?)_(unit)?tests?\.\w+$"
    r"|^(?P<c>.+?)\.(test|spec|test-d)\.[cm]?[jt]sx?$"
    r"|^(?P<d>.*?)Tests?\.(java|cs|kt|kts|swift|php|scala|groovy|m|mm)$|^(?P<e>.+?)_spec\.(rb|lua)$"
    r"|^conftest\.py$|\.bats$"
    r"|^tests?\.(c|cc|cpp)$"
)
# a benchmark times the code it calls, as a test checks it: neither is what a question asks for
_BENCHMARK_FILE = re.compile(
    r"(^bench_.*\.py$|_bench(mark)?s?\.(py|go|rs|c|cc|cpp)$|\.bench\.[cm]?[jt]sx?$|Benchmarks?\.(java|cs|kt)$)"
)
# A schema's history, one file a change, written by a tool (Django's `migrations/0001_initial.py`,
# Rails' `db/migrate/20230101000000_create_users.rb`, Alembic's `versions/1975ea83b712_add.py`,
# Laravel's, Knex's, golang-migrate's, Flyway's `V2__add.sql`): full of the models' names, and the
# place of no change but the next one.
_MIGRATION_DIRS = {"migrations", "migration", "migrate", "alembic"}
_MIGRATION_FILE = re.compile(r"^(\d{3,}|[0-9a-f]{12}_|V\d+(?:[._]\d+)*__)", re.I)
_GENERATED_FILE = re.compile(
    r"(_pb2(_grpc)?\.pyi?$|\.pb\.\w+$|\.pbobjc\.[hm]$|\.generated\.\w+$|\.g\.cs$|\.[Dd]esigner\.cs$"
    r"|\.(g|freezed)\.dart$|\.min\.(js|css)$"
    r"|^(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|Cargo\.lock|uv\.lock)$)"
)


def in_test_module(lang: str, anchor: str | None) -> bool:
    """A Rust chunk of a `mod tests` (`#[cfg(test)]`, in the file it tests): its tests and helpers,
    which its path does not tell apart from the code (ripgrep's `tests.case_insensitive` was a
    callee, and such tests filled 14 of 100 first places of ten bug reports)."""
    if lang != "rust" or anchor is None or "::" not in anchor:
        return False
    parts = anchor.split("::", 1)[1].split(".")
    return "tests" in parts


def test_function(lang: str, kind: str, anchor: str | None, text: Callable[[], str]) -> bool:
    """A Rust function marked as a test outside a `mod tests` (`#[test]`, `#[tokio::test]`,
    `#[cfg(test)]` above it): ripgrep's flag definitions follow each flag with a `#[cfg(test)]
    #[test] fn test_type_add`, which ranked second for "parse the --type-add flag", above the flag's
    own `update`. Only a function named as a test (`test_x`, `x_test`, `x_tests`) has its text read."""
    if lang != "rust" or kind != "method" or anchor is None or "::" not in anchor:
        return False
    name = anchor.split("::", 1)[1].rpartition(".")[2].lower()
    if not name.startswith("test") and not name.endswith(("test", "tests")):
        return False
    head = text()
    return _RUST_TEST.search(head, 0, max(head.find("fn "), 0)) is not None


_RUST_TEST = re.compile(r"#\[\s*(?:cfg\(\s*test\s*\)|(?:\w+::)*test\b|rstest\b|test_case\b)")


@lru_cache(maxsize=1 << 16)
def path_class(path: str) -> str | None:
    """test | benchmark | example | vendored | generated | changelog | translation | template |
    migration | tooling (by path alone), or None for ordinary code and docs. Tooling is what a
    hidden file or directory holds: the configuration of CI, linters, editors and coding agents
    (`.github/`, `.coveralls.yml`, `.agents/skills/`), which answered "where is the request body
    parsed as JSON" with `.coveralls.yml`'s `json_path` third. Cached: a query asks it of
    every candidate, ~0.3 ms a 100 (a regex a class), and candidates share files, queries share
    repositories."""
    *dirs, name = path.split("/")
    if _GENERATED_FILE.search(name):
        return "generated"
    for cls, pattern in (("changelog", _CHANGELOG_FILE), ("translation", _TRANSLATION_FILE),
                         ("template", _TEMPLATE_FILE), ("vendored", _VENDORED_FILE)):  # fmt: skip
        if pattern.search(name):
            return cls
    notes = "." not in name or bool(_NOTE_EXTS & {x.lower() for x in name.split(".")[1:]})
    if notes and any(d.lower() in _CHANGELOG_DIRS for d in dirs):
        return "changelog"
    for d in dirs:
        bare = d.lstrip("_")  # Go's tools skip `_examples/`, `_test/`: the same classes
        lower = bare.lower()  # SwiftPM's `Tests/`, .NET's `Benchmarks/`
        for cls, names in _DIRS.items():
            if d in names or bare in names or lower in names:
                return cls
        if _TESTS_NAMED.match(bare) or _TEST_SOURCE_SET.match(bare):
            return "test"
        if _EXAMPLES_NAMED.match(bare):
            return "example"
    if _MIGRATION_FILE.match(name) and any(d.lower() in _MIGRATION_DIRS for d in dirs):
        return "migration"
    if TEST_NAME.search(name):
        return "test"
    if _BENCHMARK_FILE.search(name):
        return "benchmark"
    if name.startswith(".") or any(d.startswith(".") and d.strip(".") for d in dirs):
        return "tooling"
    return None


_PROSE_LANGS = frozenset({"markdown", "rst", "asciidoc", "org"})
_STUB = re.compile(r"\.(pyi|mli|d\.[cm]?ts)$")  # OCaml's interface: its `val` declarations, as a `.pyi`'s


def set_apart(path: str, lang: str) -> bool:
    """Not code by its path or language (`path_class`, `prose_class`): a test, an example,
    vendored or generated code, a changelog, ..., prose or a type stub."""
    return path_class(path) is not None or prose_class(path, lang) is not None


def prose_class(path: str, lang: str) -> str | None:
    """docs (prose: Markdown, reStructuredText, plain text files; and the data and markup of a
    documentation directory) | stub (.pyi, .mli, .d.ts) | None."""
    if _STUB.search(path):
        return "stub"
    name = path.rsplit("/", 1)[-1]
    if lang in _PROSE_LANGS or (lang == "text" and (name.endswith(".txt") or "." not in name)):
        return "docs"
    if lang == "text" and _MAN_PAGE.search(name):  # jq's `jq.1.prebuilt`, first for a question
        return "docs"
    if lang in _MARKUP_LANGS and any(d.lower() in _DOC_DIRS for d in path.split("/")[:-1]):
        return "docs"  # split only here: a query asks this of every candidate
    return None


# A documentation directory's pages kept as data or markup: jq's manual is YAML, one copy a version
# (`docs/content/manual/v1.7/manual.yml`), and its sections filled the first five places for "how
# are path expressions evaluated". Its code stays code: cobra's `doc/` package writes man pages.
_DOC_DIRS = frozenset({"doc", "docs", "documentation"})
_MAN_PAGE = re.compile(r"\.(?:[1-9][a-z]?|man|roff|mdoc)(?:\.(?:in|prebuilt))?$")  # troff manual pages
_MARKUP_LANGS = frozenset({"yaml", "json", "toml", "xml", "html", "css", "scss", "text"})


_LEGACY_DIRS = frozenset({"legacy", "deprecated", "obsolete"})
_VERSION_DIR = re.compile(r"v(\d+(?:\.\d+)*)")  # `v3`, and `v1.7` (jq's manual a version)
_OLDER_DIR = re.compile(
    r"(?:^|/)(?:v\d+(?:\.\d+)*|legacy|deprecated|obsolete)/", re.IGNORECASE | re.MULTILINE
)


# the directories a build writes its output to: a bundler's, and a C++ header library's
# amalgamation of its headers into one (nlohmann/json's and Catch2's `single_include/`,
# simdjson's `singleheader/`)
_BUILT = frozenset({"dist", "single_include", "singleheader", "amalgamation"})


def build_output_dirs(paths: list[str], strategies: list[str | None]) -> frozenset[str]:
    """The directories holding a build's output (`dist/`: rxjs's `dist/cjs`, `dist/esm`,
    `dist/esm5` beside its `src/`, an Action's committed bundle; `single_include/`), when code
    (a file its grammar parsed: strategy "structural") lies outside them too: a compiled copy of
    every function answers less well than its source (nlohmann/json's `parse` was first in its
    25,000-line amalgamation). A package that ships only its build (a bundle of `node_modules/x`)
    has no other code: its `dist/` is its code."""
    built: set[str] = set()
    source = False
    for path, strategy in zip(paths, strategies, strict=True):
        # substring tests first: 100,000 paths in ~6 ms
        if "dist/" in path or "single" in path or "amalgamation/" in path:
            parts = path.split("/")
            at = next((i for i, d in enumerate(parts[:-1]) if d in _BUILT), None)
            if at is not None:
                built.add("/".join(parts[: at + 1]))
                continue
        source = source or strategy == "structural"
    return frozenset(built) if source else frozenset()


def in_dirs(path: str, dirs: frozenset[str]) -> bool:
    """`path` lies under one of `dirs`."""
    d = path
    while dirs and "/" in d:
        d = d.rpartition("/")[0]
        if d in dirs:
            return True
    return False


def superseded_dirs(paths: list[str]) -> frozenset[str]:
    """Directories that hold an older copy of a repository's code: one named legacy, deprecated or
    obsolete; a version directory beside a newer one (zod's `src/v3/` beside `src/v4/`); or a
    version directory whose files shadow those of the directory holding it (pydantic's `v1/`,
    the previous major kept importable). Their code answers a question about the code as it is
    less well than the code that replaced it."""
    if not _OLDER_DIR.search("\n".join(paths)):  # most repositories: one pass in C, no sets
        return frozenset()
    return older_dirs(paths)


def older_dirs(paths: list[str]) -> frozenset[str]:
    """`superseded_dirs` worked out in full."""
    names: dict[str, set[str]] = {}
    for path in paths:
        d, _, name = path.rpartition("/")
        names.setdefault(d, set()).add(name)
        while d:
            d = d.rpartition("/")[0]
            names.setdefault(d, set())
    versions: dict[str, dict[tuple[int, ...], str]] = {}
    for d in names:
        parent, _, last = d.rpartition("/")
        if (m := _VERSION_DIR.fullmatch(last)) is not None:
            versions.setdefault(parent, {})[tuple(map(int, m.group(1).split(".")))] = d
    out = {d for d in names if d.rpartition("/")[2].lower() in _LEGACY_DIRS}
    for parent, found in versions.items():
        newest = max(found)
        for n, d in found.items():
            mine = names[d] - {"__init__.py", "index.ts", "index.js", "mod.rs"}
            if n < newest or (len(mine) >= 3 and len(mine & names[parent]) * 2 >= len(mine)):
                out.add(d)
    return frozenset(out)
