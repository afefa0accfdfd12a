"""Overload families and names told apart by case: the implementation first, every member
reachable, exact case before folded, a type before the blocks that extend it; on a real bundle of
a real git repository."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cora_ci.build import build
from cora_ci.bundle import open_bundle
from cora_ci.chunking import chunk_file
from cora_ci.config import Config
from cora_ci.render.query import Where, run_query, run_show

pytestmark = pytest.mark.usefixtures("private_cache")

BODY = "".join(f"    const step{i} = compute({i}, value, options);\n" for i in range(12))
SCALA_MEMBERS = "".join(
    f"  def {m}: Seq[String] = {{\n    val raw = parts.filter(_.nonEmpty).map(_.trim)\n"
    f'    raw.map(p => p.stripPrefix("/").stripSuffix("/")).filterNot(_ == ".").toSeq\n  }}\n\n'
    for m in ("segments", "names")
)
FILES = {
    "src/convert.ts": (
        "export function convert(value: string): number;\n"
        "export function convert(value: number): number;\n"
        "export function convert(value: string | number, options?: object): number {\n"
        f"{BODY}    return step1 + step2;\n}}\n"
    ),
    "src/shapes.py": (
        "from typing import overload\n\n\n"
        "class Scale:\n"
        "    @overload\n    def apply(self, x: int) -> int: ...\n\n"
        "    @overload\n    def apply(self, x: str) -> str: ...\n\n"
        "    def apply(self, x):\n"
        + "".join(f"        y{i} = self.factor * {i} + len(str(x))\n" for i in range(10))
        + "        return x if isinstance(x, str) else x * self.factor\n"
    ),
    "src/engine.rs": (  # the impl block first, and longer than the struct it extends
        "impl Engine {\n"
        + "".join(
            f"    pub fn step{i}(&self) -> u32 {{\n        self.speed * {i}\n    }}\n\n" for i in range(8)
        )
        + "}\n\n/// Runs the searches.\npub struct Engine {\n    speed: u32,\n}\n\n"
        + "impl std::fmt::Display for Engine {\n"
        + "    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {\n"
        + '        write!(f, "engine at speed {} with {} steps", self.speed, self.step1())\n    }\n}\n'
    ),
    "Sources/Tool/Info.swift": (
        "public struct ToolInfo: Codable {\n"
        + "".join(f"    var field{i}: String\n" for i in range(30))
        + "}\n"
    ),
    "Sources/Tool/Completions.swift": (  # an extension elsewhere, longer and full of the name
        "extension ToolInfo {\n"
        + "".join(
            f'    func completion{i}() -> String {{ return "ToolInfo \\(name) {i}" }}\n' for i in range(10)
        )
        + "}\n"
    ),
    "src/Path.scala": (  # class Path's segments, and another class's in the same file
        "class Path(parts: Seq[String]) {\n"
        + SCALA_MEMBERS
        + "}\n\nclass SegmentedPath(parts: Seq[String]) extends Path(parts) {\n"
        + SCALA_MEMBERS.replace("val raw", "// the path segments: Path segments, reversed\n    val raw")
        + "}\n"
    ),
    "src/describe.rs": (  # a trait's method, and impls of it that say more of its name
        "/// Things that describe themselves.\npub trait Describe {\n"
        + "".join(
            f"    /// The {m} of a thing, in words a reader of the log understands,\n"
            f"    /// with its identity and its state, for reports and for errors.\n"
            f"    fn {m}(&self) -> String;\n\n"
            for m in ("describe", "summary", "detail", "title")
        )
        + "}\n\n"
        + "".join(
            f"impl Describe for Part{i} {{\n    fn describe(&self) -> String {{\n"
            f"        let inner = self.describe_inner();\n"
            + "".join(
                f'        let line{j} = format!("describe part {i} line {j}: {{}}", inner);\n'
                for j in range(6)
            )
            + f'        format!("describe part {i}: describe {{}}", line0)\n    }}\n}}\n\n'
            for i in range(3)
        )
    ),
    "src/io.py": (
        "class Reader:\n    '''Reads records from a stream.'''\n\n"
        "    def __init__(self, stream):\n        self.stream = stream\n\n"
        "    def records(self):\n        return list(self.stream)\n\n\n"
        "def reader(path):\n    '''A Reader for the file at path.'''\n    return Reader(open(path))\n"
    ),
}


@pytest.fixture
def repo(make_repo: Callable[[dict[str, str]], Path]) -> Path:
    repo = make_repo(FILES)
    build(repo, model="none")
    return repo


@pytest.mark.parametrize(("query", "anchor_start", "line"), [
    ("convert", "src/convert.ts::convert(", 3),
    ("Scale.apply", "src/shapes.py::Scale.apply(", 11),
])  # fmt: skip
def test_the_implementation_outranks_bare_overload_signatures(repo: Path, query: str, anchor_start: str,
                                                              line: int) -> None:  # fmt: skip
    ans = run_query(query, Where.of(None, None, repo), k=5)
    first = ans.results[0]
    assert first.anchor is not None and first.anchor.startswith(anchor_start) and first.view.start == line


@pytest.mark.parametrize(("query", "anchor_start", "line"), [
    ("how does Scale.apply scale a str x", "src/shapes.py::Scale.apply(", 11),
    ("what does `convert` do with a string value", "src/convert.ts::convert(", 3),
])  # fmt: skip
def test_a_sentence_that_names_a_family_gets_its_implementation_first(repo: Path, query: str,
                                                                      anchor_start: str, line: int) -> None:  # fmt: skip
    """Named inside a sentence, a definition's bonus is small (0.15, 0.075 for the other members):
    requests' two `@overload` stubs of `Response.iter_content`, short and made of the question's
    words, ranked above the implementation. The rest of the family comes after it."""
    ans = run_query(query, Where.of(None, None, repo), k=5)
    anchors = [(r.anchor or "", r.view.start) for r in ans.results]
    first = ans.results[0]
    assert first.anchor is not None and first.anchor.startswith(anchor_start) and first.view.start == line
    assert sum(a.startswith(anchor_start) for a, _ in anchors) >= 2  # the stubs still come, behind


def test_every_member_of_a_family_is_reachable_and_the_bare_name_is_the_implementation(repo: Path) -> None:
    where = Where.of(None, None, repo)
    assert run_show("src/convert.ts::convert", where).view.start == 3
    assert run_show("src/shapes.py::Scale.apply", where).view.start == 11
    listed = subprocess.run([sys.executable, "-m", "cora_ci", "outline", "src/convert.ts"], cwd=repo,
                            capture_output=True, text=True).stdout  # fmt: skip
    overloads = re.findall(r"\(anchor: (src/convert.ts::convert\(.*\))\)$", listed, re.M)
    assert len(overloads) == 3, listed
    assert [run_show(a, where).view.start for a in overloads] == [1, 2, 3]


def test_a_small_implementation_merged_with_its_stubs_is_what_its_bare_name_shows(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """Python's `@overload` stubs and a short implementation are one chunk of small siblings: the
    bare name showed the first stub, and an answer was named after it."""
    repo = make_repo({"m.py": (
        "from typing import overload\n\n\n"
        "@overload\ndef parse(x: int) -> int: ...\n@overload\ndef parse(x: str) -> str: ...\n"
        'def parse(x):\n    """Parse a value."""\n    return x + 1 if isinstance(x, int) else x.strip()\n'
    )})  # fmt: skip
    build(repo, model="none")
    where = Where.of(None, None, repo)
    shown = run_show("m.py::parse", where)
    assert shown.view.text().startswith("def parse(x):\n") and shown.view.start == 8
    assert run_show("m.py::parse(x: str)", where).view.text() == "@overload\ndef parse(x: str) -> str: ..."
    (r,) = run_query("parse", where, k=1).results
    assert r.anchor == "m.py::parse(x)" and "def parse(x: int)" in r.text  # the family, named by its body


def test_a_member_merged_after_another_familys_overload_is_its_own_definition(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """argparse's `Argument::required` shares a chunk with an overload of `default_value`: it was
    ranked as a member of that family, behind its longest overload, and a method that says
    "required" three times came first."""
    body = "".join(f"    this.values.add(String.valueOf(value) + {i});\n" for i in range(12))
    repo = make_repo({"src/Argument.java": (
        "public class Argument {\n"
        f"  public Argument defaultValue(Object value) {{\n{body}    return this;\n  }}\n\n"
        "  public Argument defaultValue(String value) { return defaultValue((Object) value); }\n\n"
        "  public Argument required() { this.isRequired = true; return this; }\n\n"
        "  void throwRequiredError() {\n    throw new IllegalStateException(\"required argument, required: \" + required);\n  }\n"
        "}\n"
    )})  # fmt: skip
    build(repo, model="none")
    (r,) = run_query("Argument.required", Where.of(None, None, repo), k=1).results
    assert (r.anchor, r.text) == (
        "src/Argument.java::Argument.required",
        "  public Argument required() { this.isRequired = true; return this; }",
    )


def test_names_that_differ_only_in_case_exact_first(repo: Path) -> None:
    where = Where.of(None, None, repo)
    assert run_query("Reader", where, k=3).results[0].anchor == "src/io.py::Reader"
    assert run_query("reader", where, k=3).results[0].anchor == "src/io.py::reader"


def test_a_type_comes_before_the_blocks_that_extend_it(repo: Path) -> None:
    """Rust's `impl Engine` is not a definition of `Engine` but an addition to one: the struct is
    what the name asks for, though the impl comes first in the file and is longer."""
    ans = run_query("Engine", Where.of(None, None, repo), k=3)
    assert ans.results[0].view.start == 36, [(r.anchor, r.view.start) for r in ans.results]
    assert ans.results[1].view.start == 1


def test_a_type_comes_before_its_extensions_in_other_files(repo: Path) -> None:
    """A Swift `extension ToolInfo` in another file is no definition of `ToolInfo` either."""
    first = run_query("ToolInfo", Where.of(None, None, repo), k=3).results[0]
    assert first.view.path == "Sources/Tool/Info.swift", first.anchor


def test_a_qualifier_that_names_the_owner_outranks_the_file_it_is_in(repo: Path) -> None:
    """`Path.segments` is class Path's `segments`; `SegmentedPath.segments` in Path.scala matches
    only by the file's name standing for the qualifier, a weaker reading, and takes less of the
    definition bonus."""
    from cora_ci.bundle import open_bundle
    from cora_ci.retrieval import search

    b = open_bundle(repo / ".cora" / "index")
    bonus = {b.chunks.chunk(b.chunks.row_of[h.chunk_id]).anchor: h.explain["definition"]
             for h in search(b, "Path.segments", k=5)}  # fmt: skip
    assert bonus["src/Path.scala::Path.segments"] > bonus["src/Path.scala::SegmentedPath.segments"] > 0
    first = run_query("Path.segments", Where.of(None, None, repo), k=3).results[0]
    assert first.anchor == "src/Path.scala::Path.segments", first.anchor


def test_a_bare_name_asks_for_the_trait_method_not_an_impl_of_it(repo: Path) -> None:
    """`describe` is declared by trait Describe and implemented three times: the declaration
    first, the impls (`<Part0 as Describe>.describe`, what `Part0::describe` asks for) after it."""
    results = run_query("describe", Where.of(None, None, repo), k=4).results
    assert results[0].anchor == "src/describe.rs::Describe.describe", [r.anchor for r in results]
    first = run_query("Part1::describe", Where.of(None, None, repo), k=3).results[0]
    assert (first.anchor or "").startswith("src/describe.rs::<Part1 as Describe>"), first.anchor


def test_a_trait_impls_member_is_named_by_its_type(repo: Path) -> None:
    """`Engine::fmt` is the `fmt` of `impl Display for Engine` (anchored `<Engine as Display>.fmt`):
    an exact definition of the name, not one under another qualifier; the impl block itself is
    no definition of `Engine`."""
    from cora_ci.bundle import open_bundle
    from cora_ci.retrieval.catalog import catalog
    from cora_ci.retrieval.features import EXACT, definition_level

    cat = catalog(open_bundle(repo / ".cora" / "index"))
    metas = {m.anchor: m for m in map(cat.meta, cat.table.ids) if m is not None and m.anchor}
    assert definition_level(("Engine", "fmt"), metas["src/engine.rs::<Engine as Display>.fmt"]) == EXACT
    assert definition_level(("Engine",), metas["src/engine.rs::<Engine as Display>"]) == 0
    first = run_query("Engine::fmt", Where.of(None, None, repo), k=3).results[0]
    assert first.anchor == "src/engine.rs::<Engine as Display>.fmt", first.anchor


def test_a_deprecated_overload_with_a_long_doc_is_not_the_familys_principal(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A commons-lang trial: `Validate.notNull` answered with the deprecated `notNull(T)` first, a
    long javadoc over one line that calls the other: the longest overload, doc included. The
    principal is one not deprecated, then the one with the most code."""
    doc = "".join(f"     * Line {n} of a long description of what a null check does.\n" for n in range(12))
    java = (
        "package org.lang;\n\npublic class Validate {\n    /**\n"
        + doc
        + "     * @deprecated use the other\n     */\n"
        "    @Deprecated\n    public static <T> T notNull(final T object) {\n"
        '        return notNull(object, "The validated object is null");\n    }\n\n'
        "    /**\n     * Validate that the object is not null.\n     */\n"
        "    public static <T> T notNull(final T object, final String message, final Object... values) {\n"
        "        return Objects.requireNonNull(object, toSupplier(message, values));\n    }\n}\n"
    )
    repo = make_repo({".cora.toml": "min_tokens = 0\n", "src/org/lang/Validate.java": java})
    build(repo, model="none")
    got = [r.anchor for r in run_query("Validate.notNull", Where.of(None, None, repo), k=2).results]
    assert got[0] == "src/org/lang/Validate.java::Validate.notNull(T, String, Object...)", got


def test_a_familys_bare_name_shows_its_principal_whole(make_repo: Callable[[dict[str, str]], Path]) -> None:
    """A commons-lang trial: `show StringUtils.abbreviate` began mid-javadoc (the second part of the
    longest member was the longest chunk), and `Validate.notNull` showed the deprecated one. The
    bare name shows a member with a body, not deprecated, the longest, from its first part."""
    doc = "".join(f"     * Line {n} of what abbreviating a string does, told at length.\n" for n in range(30))
    body = "".join(f"        int w{n} = maxWidth + offset * {n};\n" for n in range(30))
    java = (
        "package org.lang;\n\npublic class Strings {\n"
        "    @Deprecated\n    public static String abbreviate(final String str) {\n        return str;\n    }\n\n"
        "    public static String abbreviate(final String str, final int maxWidth) {\n"
        '        return abbreviate(str, "...", 0, maxWidth);\n    }\n\n'
        "    /**\n" + doc + "     */\n"
        "    public static String abbreviate(final String str, final String marker, final int offset, final int maxWidth) {\n"
        + body
        + "        return str.substring(offset, maxWidth) + marker;\n    }\n}\n"
    )
    repo = make_repo({".cora.toml": "max_tokens = 300\n", "src/org/lang/Strings.java": java})
    build(repo, model="none")
    shown = run_show("src/org/lang/Strings.java::Strings.abbreviate", Where.of(None, None, repo))
    assert shown.view.start == 13 and shown.view.end == java.count("\n") - 1, (
        shown.view.start,
        shown.view.end,
    )


def test_an_overload_written_with_its_types_is_the_one_asked_for(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A commons-lang trial: `StringUtils.abbreviate(String, String, int)` (as a javadoc or a trace
    writes it) was read as a sentence and its overload came fifth; `join(Iterable, String)` lost to
    the family's longest. A name with its parameters' types asks for that overload (packages and
    type arguments aside)."""
    body = "".join(f"        int w{n} = maxWidth + {n};\n" for n in range(12))
    java = (
        "package org.lang;\n\nimport java.util.Iterator;\n\npublic class Strings {\n"
        "    public static String abbreviate(final String str, final int maxWidth) {\n"
        + body
        + "        return str;\n    }\n\n"
        "    public static String abbreviate(final String str, final String marker, final int maxWidth) {\n"
        "        return str + marker;\n    }\n\n"
        "    public static String join(final Iterable<?> items, final String sep) {\n        return sep;\n    }\n\n"
        "    public static String join(final Object[] items, final String sep) {\n"
        + body
        + "        return sep;\n    }\n}\n"
    )
    repo = make_repo({".cora.toml": "min_tokens = 0\n", "src/org/lang/Strings.java": java})
    build(repo, model="none")
    where = Where.of(None, None, repo)
    first = {q: run_query(q, where, k=2).results[0].anchor.split("::")[1] for q in (
        "Strings.abbreviate(String, String, int)", "Strings.abbreviate", "org.lang.Strings.join(java.lang.Iterable<?>, String)")}  # fmt: skip
    assert first == {
        "Strings.abbreviate(String, String, int)": "Strings.abbreviate(String, String, int)",
        "Strings.abbreviate": "Strings.abbreviate(String, int)",  # the family's principal: the most code
        "org.lang.Strings.join(java.lang.Iterable<?>, String)": "Strings.join(Iterable<?>, String)",
    }, first


def test_a_bare_name_finds_overloads_whose_signatures_are_long(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A semble trial: pydantic's `Field` is seven `@overload`s of ~40 parameters each (defaults and
    comments included) and their implementation. Each overload's anchor ends in its parameters, and
    they went into BM25's name field: names hundreds of words long, which its length norm sank
    below every short mention of a field, so the asked-for family was not even a candidate and the
    older copy in `v1/` came first. Names are indexed without the parameters."""
    params = "".join(
        f"    option_{i}: int | None = None,  # noqa: E501 what option {i} sets\n" for i in range(40)
    )
    stubs = "".join(
        f"@overload\ndef Field(\n    default: {t},\n    *,\n{params}) -> Any: ...\n\n\n"
        for t in ("int", "str", "bytes")
    )
    impl = f"def Field(\n    default: Any = None,\n    *,\n{params}) -> Any:\n    return FieldInfo(default)\n"
    files = {
        "pkg/fields.py": f"from typing import Any, overload\n\n\n{stubs}{impl}",
        "pkg/v1/fields.py": "def Field(default=None, **extra):\n    return FieldInfo(default, **extra)\n",
        "pkg/v1/main.py": "from .fields import Field\n\n\nclass Model:\n    pass\n",
        "pkg/main.py": "from .fields import Field\n\n\nclass Model:\n    pass\n",
    }
    for i in range(60):  # short chunks that say the name as a word: a field, its field, Field's
        files[f"pkg/models/m{i}.py"] = (
            f"def describe_{i}(model):\n    '''The field of model {i}: which Field it uses.'''\n"
            f"    return model.field_{i}\n"
        )
    repo = make_repo(files)
    build(repo, model="none")
    first = run_query("Field", Where.of(None, None, repo), k=3).results[0]
    assert first.anchor is not None and first.anchor.startswith("pkg/fields.py::Field("), first.anchor
    assert first.view.start == 4 + stubs.count("\n"), first.view.start  # the implementation


def test_a_short_implementation_outranks_longer_typescript_signatures(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """The family's principal had the most code: a forwarding implementation under signatures that
    spell out an options type lost to them. A signature without a body is a stub, whatever its length."""
    opts = "".join(f"    option{i}?: number;\n" for i in range(15))
    ts = (
        f"export function parse(input: string, options: {{\n{opts}}}): number;\n"
        f"export function parse(input: Uint8Array, options: {{\n{opts}}}): number;\n"
        "export function parse(input: any, options?: any): number {\n  return run(input, options);\n}\n"
    )
    repo = make_repo({".cora.toml": "min_tokens = 0\n", "src/parse.ts": ts})
    build(repo, model="none")
    first = run_query("parse", Where.of(None, None, repo), k=2).results[0]
    assert first.view.start == ts[: ts.index("input: any")].count("\n") + 1, (first.anchor, first.view.start)


def test_an_overloads_anchor_is_its_parameters_without_defaults_or_comments() -> None:
    """pydantic's `Field` overloads were anchored by their forty parameters as written, defaults and
    `# noqa` comments included: an anchor no one could type, and one a changed default moved."""
    py = (
        "from typing import overload\n\n\n"
        "@overload\ndef Field(default: int = {d},  # noqa: E501 the default\n"
        "          *, alias: str | None = None) -> int: ...\n\n\n"
        "@overload\ndef Field(default: str, *, alias: str | None = None) -> str: ...\n\n\n"
        "def Field(default=None, *, alias=None):\n    return default\n"
    )
    ts = (
        "export function f(a: number = {d}, b?: string): number;\n"
        "export function f(a: string, /* why */ b = 'y'): number;\n"
        "export function f(a: any, b?: any): number {{\n  return 1;\n}}\n"
    )
    want = {
        "a.py": ["a.py::Field(default: int, *, alias: str | None)", "a.py::Field(default: str, *, alias: str | None)",
                 "a.py::Field(default, *, alias)"],
        "a.ts": ["a.ts::f(a: number, b?: string)", "a.ts::f(a: string, b)", "a.ts::f(a: any, b?: any)"],
    }  # fmt: skip
    for path, src in (("a.py", py), ("a.ts", ts)):
        for d in (0, 7):  # another default: the same anchors
            cfg = Config(min_tokens=0)
            got = [
                a
                for c in chunk_file(path, src.format(d=d).encode(), cfg).chunks
                for a in c.anchors
                if "(" in a
            ]
            assert got == want[path], (path, d, got)


def test_a_sentence_that_matches_a_stub_gets_its_implementation_first(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A doc question of rxjs (`Observable.pipe`, "used to stitch together functional operators
    into a chain"): its overloads, short and made of `OperatorFunction` parameters, matched the
    words better than the implementation, which was not in the ten. A stub found by a sentence
    lends its score to its family's implementation, and follows it."""
    stubs = "".join(
        f"export function pipe<{', '.join(f'T{j}' for j in range(i + 2))}>("
        + ", ".join(f"op{j}: OperatorFunction<T{j}, T{j + 1}>" for j in range(i + 1))
        + f"): UnaryFunction<T0, T{i + 1}>;\n"
        for i in range(6)
    )
    steps = "".join(f"  const stage{i} = schedule(queue, {i});\n" for i in range(25))
    ts = (
        stubs
        + "export function pipe(...operations: Array<(x: any) => any>): (x: any) => any {\n"
        + steps
        + "  return (input) => reduceAll(operations, input);\n}\n\n"
        + "export function subscribe(observer: (value: number) => void): void {\n  observers.push(observer);\n}\n"
    )
    repo = make_repo({".cora.toml": "min_tokens = 0\n", "src/pipe.ts": ts})
    build(repo, model="none")
    ans = run_query(
        "chain functional operators together with OperatorFunction", Where.of(None, None, repo), k=3
    )
    first = ans.results[0]
    assert first.view.start == stubs.count("\n") + 1, (first.anchor, first.view.start)


def test_a_sentence_that_matches_a_prototype_gets_the_definition_first(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A cJSON trial: "minify json text in place" answered with the header's `cJSON_Minify;` (its
    doc comment holds the words) before the function in `cJSON.c`. A C or C++ prototype found by a
    sentence lends its score to its definition (among the candidates, or in a file of the header's
    name) and follows it; a C++ member declared in its class and defined out of line too."""
    body = "".join(f"    count += step(text, {i});\n" for i in range(20))
    files = {
        "include/minify.h": (
            "/* Minify json text in place: remove whitespace and comments from the text. */\n"
            "void json_minify(char *text);\n\n"
            "/* Print a json item to a string with indentation and line breaks. */\n"
            "char *json_print(const item *value);\n"
        ),
        "src/minify.c": (
            '#include "minify.h"\n\nvoid json_minify(char *text)\n{\n    int count = 0;\n'
            + body
            + "}\n\nchar *json_print(const item *value)\n{\n    return render(value, 1);\n}\n"
        ),
        "src/table.h": (
            "namespace store {\nclass Table {\n public:\n"
            "  // Compact the table: merge its sorted runs into one and drop deleted rows.\n"
            "  void Compact(int level);\n};\n}\n"
        ),
        "src/table.cc": (
            "namespace store {\nvoid Table::Compact(int level) {\n  int moved = 0;\n"
            + body.replace("text", "level")
            + "}\n}\n"
        ),
    }
    repo = make_repo({".cora.toml": "min_tokens = 0\n", **files})
    build(repo, model="none")
    where = Where.of(None, None, repo)
    for query, path in (
        ("minify json text in place", "src/minify.c"),
        ("merge sorted runs and drop deleted rows when compacting", "src/table.cc"),
    ):
        ans = run_query(query, where, k=3)
        got = [(r.view.path, r.symbol) for r in ans.results[:2]]
        assert got[0][0] == path and got[1][0] != path and got[1][1] == got[0][1].rpartition(":")[2], (
            query,
            got,
        )


def test_kotlin_and_swift_overloads_are_anchored_by_their_parameters() -> None:
    """okio's `Timeout.deadlineNanoTime` getter and setter were `deadlineNanoTime` and
    `deadlineNanoTime#2`: anchors by order, which an overload added above renumbers. Kotlin's and
    Swift's overloads are anchored by their parameters, without defaults, as other languages'."""
    kt = (
        "class Timeout {\n  fun deadlineNanoTime(): Long = deadline\n"
        "  fun deadlineNanoTime(deadlineNanoTime: Long, unit: Unit = Unit.NS): Timeout {\n"
        "    this.deadline = deadlineNanoTime\n    return this\n  }\n}\n"
    )
    sw = "struct Box {\n  func shake(times: Int = 1, hard: Bool) {}\n  func shake() {}\n}\n"
    got = {
        path: [a for c in chunk_file(path, src.encode(), Config(min_tokens=0)).chunks for a in c.anchors]
        for path, src in (("Timeout.kt", kt), ("Box.swift", sw))
    }
    assert got == {
        "Timeout.kt": ["Timeout.kt::Timeout", "Timeout.kt::Timeout.deadlineNanoTime()",
                       "Timeout.kt::Timeout.deadlineNanoTime(deadlineNanoTime: Long, unit: Unit)"],
        "Box.swift": ["Box.swift::Box", "Box.swift::Box.shake(times: Int, hard: Bool)", "Box.swift::Box.shake()"],
    }, got  # fmt: skip


def test_a_sentence_that_matches_merged_stubs_gets_their_implementation_first(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A doc question of click ("Returns the current click context."): `get_current_context`'s two
    `@overload` stubs, small siblings, are one chunk with two anchors, and it came first, above the
    implementation. Stubs of one family merged lend their score as a lone stub does."""
    body = "".join(f"    frame{i} = _stack.peek({i}, depth, limit)\n" for i in range(16))
    py = (
        "from typing import Literal, overload\n\n\n"
        "@overload\ndef current_context(silent: Literal[False] = False) -> Context: ...\n\n\n"
        "@overload\ndef current_context(silent: bool = ...) -> Context | None: ...\n\n\n"
        f"def current_context(silent: bool = False) -> Context | None:\n{body}    return frame0\n"
    )
    repo = make_repo({"app/state.py": py})
    build(repo, model="none")
    chunks = open_bundle(repo / ".cora" / "index").chunks
    merged = [chunks.chunk(row) for row in range(len(chunks)) if len(chunks.chunk(row).anchors) == 2]
    assert [(c.start_line, c.end_line) for c in merged] == [(4, 9)]  # the two stubs, one chunk
    got = run_query("the current context, or None when silent", Where.of(None, None, repo), k=3).results
    assert [r.view.start for r in got[:2]] == [12, 4], [(r.anchor, r.view.start) for r in got]


def test_a_sentence_that_matches_a_forwarder_gets_the_method_it_calls_first(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A viper trial: "how are config files watched for changes" answered with the package's
    `func WatchConfig() { v.WatchConfig() }` (its doc comment holds the words) and the method that
    watches seventh. A function whose code is one call of its own name on something else (a
    package's default instance: logrus' `Info` in exported.go, Python's `logging.info`) lends its
    score to that method, in its file or its directory, and follows it."""
    body = "".join(f"\tstep{i} := c.poll({i}, delay)\n\t_ = step{i}\n" for i in range(12))
    files = {
        "conf/exported.go": (
            "package conf\n\nvar std = New()\n\n"
            "// WatchFiles starts watching the config files for changes and reloads them.\n"
            "func WatchFiles() { std.WatchFiles() }\n"
        ),
        "conf/conf.go": (
            "package conf\n\ntype Conf struct{ paths []string }\n\nfunc New() *Conf { return &Conf{} }\n\n"
            f"func (c *Conf) WatchFiles() {{\n\tdelay := 10\n{body}}}\n"
        ),
        "log/log.py": (
            "class Logger:\n    def warn(self, msg):\n"
            + "".join(f"        self.emit({i}, msg, self.level)\n" for i in range(12))
            + "\n\nroot = Logger()\n\n\ndef warn(msg):\n"
            '    """Log a warning message on the root logger of the program."""\n    root.warn(msg)\n'
        ),
    }
    repo = make_repo({".cora.toml": "min_tokens = 0\n", **files})
    build(repo, model="none")
    where = Where.of(None, None, repo)
    for query, first, then in (
        ("start watching the config files for changes and reload them", "conf/conf.go", "conf/exported.go"),
        ("log a warning message on the root logger", "log/log.py::Logger.warn", "log/log.py::warn"),
    ):
        got = [r.anchor for r in run_query(query, where, k=3).results]
        assert got[0].startswith(first) and got[1].startswith(then), (query, got)


def test_a_bare_name_asks_for_the_top_level_definition_before_members_of_that_name(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """serde_json's `from_str` answered `Deserializer::from_str` before the crate's `from_str`,
    the two equal on BM25: a bare name is the whole name of the top-level one. A test's helper of
    the name is no such definition: the member stays first."""
    rs_body = "".join(f"        let step{i} = compute({i}, s, options);\n" for i in range(30))
    py_body = "".join(f"        step{i} = compute({i}, text, options)\n" for i in range(30))
    short_rs, short_py = rs_body[: rs_body.index("let step4")], py_body[: py_body.index("step4")]  # fmt: skip
    repo = make_repo({
        "src/de.rs": (
            "pub struct Deserializer { read: String }\n\n"
            "impl Deserializer {\n"
            "    /// Creates a JSON deserializer from a `&str`.\n"
            f"    pub fn from_str(s: &str) -> Self {{\n{short_rs}        Deserializer {{ read: s.to_string() }}\n    }}\n}}\n\n"
            "/// Deserialize an instance of type `T` from a string of JSON text.\n"
            "pub fn from_str(s: &str) -> Result<Value, Error> {\n"
            f"{rs_body.replace('        ', '    ')}    from_trait(read::StrRead::new(s))\n}}\n"
        ),
        "src/codec.py": (
            "class Encoder:\n"
            f'    def dumps(self, text):\n        """Write the value."""\n{py_body}        return step1\n\n\n'
            "class Decoder:\n"
            f'    def loads(self, text):\n        """Read the text."""\n{short_py}        return step1\n\n\n'
            f"def loads(text):\n{py_body.replace('        ', '    ')}    return _decode(text)\n"
        ),
        "tests/test_codec.py": f"def dumps(text):\n{py_body.replace('        ', '    ')}    return str(text)\n",
    })  # fmt: skip
    build(repo, model="none")
    first = {
        q: run_query(q, Where.of(None, None, repo), k=3).results[0].anchor
        for q in ("from_str", "loads", "dumps")
    }
    assert first == {"from_str": "src/de.rs::from_str", "loads": "src/codec.py::loads",
                     "dumps": "src/codec.py::Encoder.dumps"}  # fmt: skip


def test_a_file_standing_for_a_qualifier_stands_for_its_top_level_names_only(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """Alamofire's `Session.request` put `Session.Upload.request`, a nested type's property in
    Session.swift, above the class's own overloads of `request`; viper's `viper.Get` was the
    method `Viper.Get` as much as the package's function `Get`."""
    body = "".join(f"        let step{i} = compute({i}, convertible)\n" for i in range(20))
    go_body = "".join(f"\tstep{i} := compute({i}, key)\n" for i in range(20))
    repo = make_repo({
        "Source/Session.swift": (
            "open class Session {\n"
            "    struct Upload {\n        let request: any URLRequestConvertible\n        let retries: Int\n    }\n\n"
            f"    func request(_ convertible: URLConvertible) -> DataRequest {{\n{body}        return step1\n    }}\n\n"
            f"    func request(for task: URLSessionTask) -> Request? {{\n{body}        return step2\n    }}\n"
            "}\n"
        ),
        "viper/viper.go": (
            "package viper\n\nvar v *Viper\n\ntype Viper struct{ config map[string]any }\n\n"
            "// Get returns the value of a key.\nfunc Get(key string) any { return v.Get(key) }\n\n"
            f"// Get returns the value of a key.\nfunc (v *Viper) Get(key string) any {{\n{go_body}\treturn step1\n}}\n"
        ),
    })  # fmt: skip
    build(repo, model="none")
    top = [r.anchor for r in run_query("Session.request", Where.of(None, None, repo), k=3).results][:2]
    assert all((a or "").startswith("Source/Session.swift::Session.request(") for a in top), top
    first = run_query("viper.Get", Where.of(None, None, repo), k=2).results[0]
    assert first.anchor == "viper/viper.go::Get", first.anchor


def test_of_overloads_as_long_the_documented_one_is_the_principal(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """fmt's bare `format` answered `format(locale_ref, format_string, args...)`, first in the file,
    before the documented `format(format_string, args...)` below it, as long: a comment saying
    what an overload does marks the one the library offers."""
    repo = make_repo({
        "include/fmt/format.h": (
            "#include <string>\n\n"
            "template <typename... T>\n"
            "FMT_INLINE auto format(locale_ref loc, format_string<T...> fmt, T&&... args)\n"
            "    -> std::string {\n  return vformat(loc, fmt.str, vargs<T...>{{args...}});\n}\n\n"
            "/**\n * Formats `args` according to specifications in `fmt` and returns the result\n"
            " * as a string.\n */\n"
            "template <typename... T>\n"
            "FMT_NODISCARD FMT_INLINE auto format(format_string<T...> fmt, T&&... args)\n"
            "    -> std::string {\n  return vformat(fmt.str, vargs<T...>{{args...}});\n}\n"
        ),
    })  # fmt: skip
    build(repo, model="none")
    first = run_query("format", Where.of(None, None, repo), k=2).results[0]
    assert first.view.text().lstrip().startswith("/**"), first.view.text()


def test_a_go_package_and_a_cpp_library_are_their_directories(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """gin's `render.JSON` is render/json.go's type `JSON`: a Go qualifier names the package, its
    directory, not the file; it answered the method `JSON.Render` first. At the root, the package
    is named by go.mod's module path (`gin.Context`). fmt opens its namespace
    with a macro (`FMT_BEGIN_NAMESPACE`), so `fmt::format` is read from include/fmt/; it answered
    the C API's `fmt_format`."""
    methods = "".join(
        f"// Render{i} writes the data as JSON.\nfunc (r JSON) Render{i}(w http.ResponseWriter) error {{\n"
        "\treturn WriteJSON(w, r.Data)\n}\n\n"
        for i in range(3)
    )
    repo = make_repo({
        "render/json.go": f"package render\n\n// JSON contains the given interface object.\ntype JSON struct {{\n\tData any\n}}\n\n{methods}",
        "binding/json.go": "package binding\n\n// JSON binds a JSON body.\ntype JSON struct {\n\tStrict bool\n}\n",
        "go.mod": "module github.com/gin-gonic/gin/v2\n\ngo 1.22\n",
        "context.go": "package gin\n\n// Context carries a request.\ntype Context struct {\n\tKeys map[string]any\n}\n",
        "gin.go": (
            "package gin\n\n// HandleContext re-enters a context that has been rewritten.\n"
            "func (engine *Engine) HandleContext(c *Context) {\n\tengine.handleHTTPRequest(c)\n}\n"
        ),
        "render/context.go": "package render\n\n// Context is what a renderer writes with.\ntype Context struct {\n\tW Writer\n}\n",
        "include/fmt/format.h": (
            "FMT_BEGIN_NAMESPACE\n\ntemplate <typename... T>\n"
            "FMT_NODISCARD FMT_INLINE auto format(format_string<T...> fmt, T&&... args)\n"
            "    -> std::string {\n  return vformat(fmt.str, vargs<T...>{{args...}});\n}\n\nFMT_END_NAMESPACE\n"
        ),
        "include/fmt/fmt-c.h": (
            "/* fmt::format for C: format a string with fmt. */\n"
            "int fmt_format(char* buffer, size_t size, const char* fmt, ...);\n"
        ),
    })  # fmt: skip
    build(repo, model="none")
    asked = ("render.JSON", "gin.Context", "fmt::format")
    first = {q: run_query(q, Where.of(None, None, repo), k=3).results[0].anchor for q in asked}
    assert first == {"render.JSON": "render/json.go::JSON", "gin.Context": "context.go::Context",
                     "fmt::format": "include/fmt/format.h::format"}  # fmt: skip
