"""A test found for a sentence points at the code it checks (`cora_ci.retrieval.tested`)."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from conftest import dedent_files
from hypothesis import given
from hypothesis import strategies as st

from cora_ci.build import build
from cora_ci.bundle import Bundle, open_bundle
from cora_ci.retrieval import PARAMS, Hit, search, tested
from cora_ci.retrieval.catalog import catalog
from cora_ci.retrieval.kinds import path_class
from cora_ci.retrieval.tested import Subjects, lend, subject_stem

PATHS = [
    "django/db/migrations/autodetector.py",
    "django/contrib/auth/hashers.py",
    "django/core/hashers.py",
    "sklearn/linear_model/_ridge.py",
    "sympy/printing/latex.py",
    "src/parser.ts",
    "src/parser.js",
    "lib/parser.ts",
    "src/main/java/com/acme/Foo.java",
    "binding/json.go",
    "render/json.go",
    "lib/router.rb",
    "src/Local/LocalAdapter.php",
    "base/strings.cc",
    "lua/plenary/path.lua",
    "Sources/Parser.swift",
    "pkg/utils.py",
    *(f"m{i}/widget.py" for i in range(4)),
]


@pytest.mark.parametrize(
    ("test", "subjects"),
    [
        ("tests/migrations/test_autodetector.py", ("django/db/migrations/autodetector.py",)),
        ("sklearn/linear_model/tests/test_ridge.py", ("sklearn/linear_model/_ridge.py",)),  # a private module
        ("src/parser.test.ts", ("src/parser.ts",)),  # its own extension, inside its own directory
        ("src/parser.spec.ts", ("src/parser.ts",)),
        ("src/test/java/com/acme/FooTest.java", ("src/main/java/com/acme/Foo.java",)),
        ("binding/json_test.go", ("binding/json.go",)),  # beside it, not `render/json.go`
        ("spec/router_spec.rb", ("lib/router.rb",)),
        ("test/router_test.rb", ("lib/router.rb",)),  # minitest's
        ("src/Local/LocalAdapterTest.php", ("src/Local/LocalAdapter.php",)),  # PHPUnit's, beside it
        ("base/strings_unittest.cc", ("base/strings.cc",)),  # Chromium's
        ("tests/path_spec.lua", ("lua/plenary/path.lua",)),  # busted's
        ("Tests/ParserTests.swift", ("Sources/Parser.swift",)),  # XCTest's
        ("tests/auth_tests/test_hashers.py", ("django/contrib/auth/hashers.py",)),  # `auth_tests`: `auth`
        ("sympy/parsing/tests/test_latex.py", ()),  # the parser's test, not the printer's
        ("tests/test_utils.py", ()),  # a name too common to say which
        ("tests/test_widget.py", ()),  # four equally near
        ("tests/test_missing.py", ()),
        ("src/parser.ts", ()),  # not a test's name
    ],
)
def test_a_test_files_subject_is_the_file_its_name_names(test: str, subjects: tuple[str, ...]) -> None:
    assert Subjects(sorted(PATHS)).of(test) == subjects


@given(st.lists(st.from_regex(r"(src/|tests/|a/tests/|lib/)?(test_)?[a-c](_test)?\.(py|go)", fullmatch=True)))
def test_subjects_are_code_files_of_the_tests_stem_and_extension(paths: list[str]) -> None:
    s = Subjects(sorted(paths))
    for t in paths:
        got = s.of(t)
        assert len(got) <= 3 and t not in got
        for p in got:
            assert p in paths and p.rsplit(".", 1)[1] == t.rsplit(".", 1)[1]
            assert subject_stem(p) is None and path_class(p) is None
            assert p.rsplit("/", 1)[-1].split(".")[0] == subject_stem(t)


def _checked_by(paths: list[str], test: str) -> tuple[str, ...]:
    """`Subjects.of` spelled out over every path, for the property below."""
    stem = subject_stem(test)
    if stem is None:
        return ()
    dirs = test.split("/")[:-1]
    first = next((i for i, d in enumerate(dirs) if d in ("test", "tests", "spec")), len(dirs))
    prefix = "".join(d + "/" for d in dirs[:first])
    own = {d.removesuffix("_tests") for d in dirs if d not in ("test", "tests", "spec")}
    near = {
        p: len(own & set(p.split("/")[:-1]))
        for p in paths
        if p.startswith(prefix) and p.endswith("." + test.rsplit(".", 1)[1]) and subject_stem(p) is None
        and p.rsplit("/", 1)[-1].split(".")[0].lstrip("_") == stem and not {"test", "tests", "spec"} & set(p.split("/"))
    }  # fmt: skip
    best = [p for p, n in near.items() if n == max(near.values())]
    return tuple(sorted(best)) if len(best) <= 3 else ()


@given(
    st.lists(st.from_regex(r"((a|a-b|a\.b|ab|c_tests|tests)/){0,3}(test_)?_?(x|y)\.(py|go)", fullmatch=True))
)
def test_subjects_are_those_of_the_rule_over_every_path(paths: list[str]) -> None:
    s = Subjects(sorted(paths))
    for t in paths:
        assert tuple(sorted(s.of(t))) == _checked_by(paths, t)


def test_a_part_of_the_tree_too_large_to_read_is_left_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tested, "_LARGEST", 3)
    paths = sorted(
        ["pkg/parser.py", "pkg/lexer.py", "pkg/tests/test_parser.py", "other/a.py", "tests/test_lexer.py"]
    )
    s = Subjects(paths)
    assert s.of("pkg/tests/test_parser.py") == ("pkg/parser.py",)  # its package: 3 files
    assert s.of("tests/test_lexer.py") == ()  # the whole tree: 5


def test_a_test_lends_its_subject_what_it_scored_above_the_subjects_own_best() -> None:
    subjects = Subjects(
        sorted(["a/parser.py", "a/lexer.py", "a/tests/test_parser.py", "a/tests/test_lexer.py"])
    )
    found = [
        ("a/tests/test_parser.py", 0.3, "test"),  # 1.0 before tests were lowered to 0.3
        ("a/tests/test_parser.py", 0.15, "test"),
        ("a/parser.py", 0.4, None),
        ("a/parser.py", 0.2, "private"),  # lowered for another reason: not the file's own best
        ("a/tests/test_lexer.py", 0.06, "test"),  # 0.2: less than the lexer says itself
        ("a/lexer.py", 0.5, None),
    ]
    assert lend(found, subjects.of, 0.3) == pytest.approx({"a/parser.py": 0.6})


SHOP = {
    ".cora.toml": "min_tokens = 0\n",
    "shop/tokenizer.py": '''\
        def split_words(text):
            """Break a line into its tokens."""
            out, word, escaped = [], "", False
            for ch in text:
                word += ch
            return out
        ''',
    "shop/render.py": '''\
        def show_words(words):
            """Show the words of a line together, quoted, with their escapes kept."""
            return " ".join(repr(w) for w in words)
        ''',
    "shop/tests/test_tokenizer.py": """\
        from shop.tokenizer import split_words


        def test_quoted_words_with_escapes_stay_together():
            assert split_words('"quoted words" with escapes') == ["quoted words", "with", "escapes"]
        """,
}


def anchor(b: Bundle, h: Hit) -> str | None:
    return b.chunks.chunk(b.chunks.row_of[h.chunk_id]).anchor


def test_a_sentence_a_test_answers_lifts_the_code_it_tests(make_repo) -> None:  # type: ignore[no-untyped-def]
    """The words are the test's; the code they are about is the file the test is named for, which
    says them less than another file does."""
    repo = make_repo(dedent_files(SHOP))
    build(repo, model="none")
    b = open_bundle(repo / ".cora" / "index")
    query = "quoted words with escapes are kept together"

    def files(params: object) -> list[str]:
        hits = search(b, query, expand=False, params=params)  # type: ignore[arg-type]
        paths = [b.chunks.chunk(b.chunks.row_of[h.chunk_id]).path for h in hits]
        return [p for p in paths if path_class(p) is None]

    assert files(replace(PARAMS, tested=0.0))[:2] == ["shop/render.py", "shop/tokenizer.py"]
    assert files(PARAMS)[:2] == ["shop/tokenizer.py", "shop/render.py"]
    hits = search(b, query, expand=False)
    by_path: dict[str, Hit] = {}
    for h in hits:  # each file's best
        by_path.setdefault(b.chunks.chunk(b.chunks.row_of[h.chunk_id]).path, h)
    test = by_path["shop/tests/test_tokenizer.py"]
    assert test.explain["demoted"] == "test"
    lent = by_path["shop/tokenizer.py"].explain["tested"]
    assert isinstance(lent, float)
    assert 0 < lent < PARAMS.tested * test.score / PARAMS.demote  # what it says above the code's own
    assert by_path["shop/render.py"].explain["tested"] is None
    # a test that says less than its code lends nothing
    said = search(b, "break a line into its tokens", expand=False)
    assert anchor(b, said[0]) == "shop/tokenizer.py::split_words" and said[0].explain["tested"] is None
    # an identifier asks for what it names
    assert all(h.explain["tested"] is None for h in search(b, "split_words", expand=False))


def test_a_test_named_for_a_class_checks_the_file_defining_it() -> None:
    """Django's `tests/queries/test_q.py` (imports `Q`), `test_logentry.py` (`LogEntry`): no file
    has the name, the class does."""
    defs = {
        "Q": ["django/db/models/query_utils.py"],
        "LogEntry": ["django/contrib/admin/models.py", "tests/admin_utils/models.py", "docs/log_entry.txt"],
        "Cast": [f"pkg{i}/functions.py" for i in range(4)],
    }

    def defining(names: list[str]) -> list[str]:
        return sorted({p for n in names for p in defs.get(n, [])})

    assert tested.named_for("tests/queries/test_q.py", {"Q", "F", "SimpleTestCase"}, defining) == (
        "django/db/models/query_utils.py",
    )
    # `log_entry` and `LogEntry` are one name; the definer in a test directory and prose are not code
    assert tested.named_for("tests/admin_utils/test_log_entry.py", {"LogEntry"}, defining) == (
        "django/contrib/admin/models.py",
    )
    assert tested.named_for("tests/test_cast.py", {"Cast"}, defining) == ()  # four: which one?
    assert tested.named_for("tests/test_q.py", {"F"}, defining) == ()  # it does not use a Q
    assert tested.named_for("tests/q.py", {"Q"}, defining) == ()  # not a test's name


def test_named_for_among_some_files_reads_only_those_unless_it_must_count() -> None:
    """A query asks only about its candidates' files: the others are not asked whether they define
    the name, unless the name filter's files are too many to say without (a false match)."""
    maybe = {"Cast": [f"pkg{i}/functions.py" for i in range(5)], "Q": ["a/q.py", "b/q.py"]}
    really = {"pkg0/functions.py", "pkg1/functions.py", "pkg2/functions.py", "a/q.py", "b/q.py"}
    asked: list[str] = []

    def defines(path: str, names: list[str]) -> bool:
        asked.append(path)
        return path in really

    def named(test: str, used: set[str], among: set[str] | None) -> tuple[str, ...]:
        asked.clear()
        return tested.named_for(test, used, lambda ns: sorted({p for n in ns for p in maybe.get(n, [])}),
                                defines, among)  # fmt: skip

    assert named("tests/test_q.py", {"Q"}, None) == ("a/q.py", "b/q.py")
    assert named("tests/test_q.py", {"Q"}, {"b/q.py", "c/other.py"}) == ("b/q.py",)
    assert asked == ["b/q.py"]  # a/q.py: not a candidate, not read
    # five files may define `Cast`, three do: all five are asked, to count them
    assert named("tests/test_cast.py", {"Cast"}, {"pkg1/functions.py", "pkg4/functions.py"}) == (
        "pkg1/functions.py",
    )
    assert len(asked) == 5
    assert named("tests/test_cast.py", {"Cast"}, None) == tuple(f"pkg{i}/functions.py" for i in range(3))
    really.add("pkg3/functions.py")  # four define it: which one is meant, the name does not say
    assert named("tests/test_cast.py", {"Cast"}, {"pkg1/functions.py"}) == ()


def test_a_sentence_a_class_named_test_answers_lifts_the_class(make_repo) -> None:  # type: ignore[no-untyped-def]
    """The file is `tokenizer.py`, the test `test_splitter.py`: it imports the class it is named
    for, and its subject is the file defining that class."""
    files = dict(SHOP)
    files["shop/tokenizer.py"] = '''\
        class Splitter:
            def split(self, text):
                """Break a line into its tokens."""
                out, word, escaped = [], "", False
                for ch in text:
                    word += ch
                return out
        '''
    files["shop/render.py"] = files["shop/render.py"].replace(
        " together, quoted, with their escapes kept", ", quoted"
    )
    del files["shop/tests/test_tokenizer.py"]
    files["shop/tests/test_splitter.py"] = """\
        from shop.tokenizer import Splitter


        def test_quoted_words_with_escapes_stay_together():
            assert Splitter().split('"quoted words" with escapes') == ["quoted words", "with", "escapes"]
        """
    files["shop/expr.py"] = "class Q:\n    def __or__(self, other):\n        return (self, other)\n"
    files["shop/tests/test_q.py"] = "from shop.expr import Q\n\n\ndef test_or():\n    assert Q() | Q()\n"
    repo = make_repo(dedent_files(files))
    build(repo, model="none")
    b = open_bundle(repo / ".cora" / "index")
    assert catalog(b).subjects_of("shop/tests/test_splitter.py") == ("shop/tokenizer.py",)
    # a one-letter name is no reference of the graph's: the test's imports name it
    assert catalog(b).subjects_of("shop/tests/test_q.py") == ("shop/expr.py",)
    query = "quoted words with escapes are kept together"

    def code(params: object) -> list[str]:
        hits = search(b, query, expand=False, params=params)  # type: ignore[arg-type]
        paths = [b.chunks.chunk(b.chunks.row_of[h.chunk_id]).path for h in hits]
        return [p for p in dict.fromkeys(paths) if path_class(p) is None]

    assert code(replace(PARAMS, tested=0.0))[:2] == ["shop/render.py", "shop/tokenizer.py"]
    assert code(PARAMS)[:2] == ["shop/tokenizer.py", "shop/render.py"]


_WORDS = st.text(st.sampled_from("aBc_é İ-"), max_size=8)


@given(
    st.lists(_WORDS, max_size=20),
    st.text(st.sampled_from("aBc_é"), min_size=1, max_size=5).filter(lambda s: s.strip("_") != ""),
)
def test_words_like_finds_every_word_that_squashes_to_the_stem(texts: list[str], stem: str) -> None:
    want = stem.replace("_", "").lower()
    every = {w for t in texts for w in re.findall(r"\w+", t) if w.replace("_", "").lower() == want}
    assert tested.words_like(texts, stem) == every


def test_a_stored_test_files_names_are_read_without_decoding_each_chunks(make_repo) -> None:  # type: ignore[no-untyped-def]
    """`used_like` (its code, its name hashes) gives `named_names` what every chunk's decoded
    names give it: a comment naming `LogEntry` is no use of it, `log_entry` is."""
    repo = make_repo({
        "app/models.py": "class LogEntry:\n    pass\n\n\ndef log_entry(x):\n    return LogEntry()\n",
        "tests/test_log_entry.py": "from app.models import log_entry\n\n\n"
        "def test_one():\n    # a LogEntry is made\n    assert log_entry(1)\n",
        "tests/test_models.py": "from app import models\n\n\ndef test_two():\n    assert models.LogEntry()\n",
    })  # fmt: skip
    build(repo, model="none")
    cat = catalog(open_bundle(repo / ".cora" / "index"))
    for path in ("tests/test_log_entry.py", "tests/test_models.py", "app/models.py"):
        links = cat.links(path)
        assert links is not None
        every = {n for names in links.refs.values() for n in names} | {
            i.rpartition(".")[2] for i in links.imports
        }
        assert tested.named_names(path, cat._used_like(path)) == tested.named_names(path, every)
    assert tested.named_names("tests/test_log_entry.py", cat._used_like("tests/test_log_entry.py")) == [
        "log_entry"
    ]
