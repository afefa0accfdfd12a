"""What a query hands back is the code asked for: each result its own lines, its parent apart and
around it, `k` distinct results, no line twice, named after what matched; on real bundles of real
git repositories, through the library and the command line."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from cora_ci.build import build
from cora_ci.bundle import open_bundle
from cora_ci.render.query import Where, run_query
from cora_ci.render.siblings import sibling, siblings

pytestmark = pytest.mark.usefixtures("private_cache")

VERBS = ["fetch", "store", "parse", "render", "merge", "split", "encode", "decode", "load", "save",
         "open", "close", "send", "poll", "sort", "scan"]  # fmt: skip
NOUNS = ["record", "header", "column", "packet"] * 3
NOUNS = [f"{n}{i // 4}" for i, n in enumerate(NOUNS)]  # 12 distinct nouns: 16 x 12 > 160 methods


def _big_class() -> str:
    """A class of 160 methods, each a few lines with its own words."""
    out = ['"""A registry of handlers."""\n\n\nclass Registry:\n    """Every handler, by name."""\n\n']
    for i in range(160):
        verb, noun = VERBS[i % 16], NOUNS[i // 16]
        out.append(
            f"    def {verb}_{noun}(self, item):\n"
            f'        """{verb.capitalize()} one {noun} item for the registry."""\n'
            f"        value = self.table.get('{noun}', {i})\n"
            f"        return self.{verb}er(item, value)\n\n"
        )
    return "".join(out)


def _cora(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cora_ci", *args], cwd=cwd, capture_output=True, text=True)


@pytest.fixture
def repo(make_repo: Callable[[dict[str, str]], Path]) -> Path:
    repo = make_repo({
        "src/registry.py": _big_class(),
        "src/auth.py": (
            "class Auth:\n"
            "    def hash(self, word):\n        return word[::-1]\n\n"
            "    def login(self, user, password):\n        return self.hash(password) == user.secret\n\n"
            "    def audit(self, name):\n"
            + "".join(f"        step_{i} = compute({i}, name, other_argument)\n" for i in range(40))
            + "        return step_1\n"
        ),
    })  # fmt: skip
    build(repo, model="none")
    return repo


def test_a_method_of_a_class_of_160_is_its_own_lines_with_its_class_around(repo: Path) -> None:
    ans = run_query("decode column1 item", Where.of(None, None, repo), k=5)
    first = ans.results[0]
    lines = (repo / "src/registry.py").read_text().splitlines()
    assert first.anchor == "src/registry.py::Registry.decode_column1"
    assert lines[first.view.start - 1].strip() == "def decode_column1(self, item):"
    assert first.view.end - first.view.start == 3 and "class Registry" not in first.text
    p = first.parent
    assert p is not None and p.anchor == "src/registry.py::Registry" and p.text == "class Registry:"
    last = max(n for n, line in enumerate(lines, 1) if line.strip())
    assert p.start == 4 and p.end == last and p.start <= first.view.start <= first.view.end <= p.end


def test_every_parent_holds_its_result_and_no_line_is_shown_twice(repo: Path) -> None:
    for words in ("registry item value", "handler registry", "load save column", "Registry"):
        ans = run_query(words, Where.of(None, None, repo), k=10)
        shown = [(r.view.path, n) for r in ans.results for n, _ in r.view.rendered() if n is not None]
        assert len(shown) == len(set(shown)), words
        for r in ans.results:
            if r.parent is not None:
                assert r.parent.start <= r.view.start <= r.view.end <= r.parent.end, (words, r.anchor)


@pytest.mark.parametrize("k", [1, 3, 10, 25])
def test_k_means_k_distinct_results(repo: Path, k: int) -> None:
    """The class skeleton and its methods overlap: merged, they must not leave fewer than `k`."""
    ans = run_query("registry item value", Where.of(None, None, repo), k=k)
    assert len(ans.results) == k
    assert len({r.chunk.id for r in ans.results}) == k


def test_a_chunk_of_several_members_is_named_after_the_one_asked_for(repo: Path) -> None:
    bundle = open_bundle(repo / ".cora" / "index")
    t = bundle.chunks
    merged = next(t.chunk(r) for r in range(len(t)) if "login" in t.chunk(r).symbols)
    assert merged.symbols == ["hash", "login"]  # small siblings, one chunk
    out = _cora("query", "login user password", "--format", "json", "-k", "1", cwd=repo)
    (r,) = json.loads(out.stdout)["results"]
    assert (r["symbol"], r["anchor"]) == ("login", "src/auth.py::Auth.login")


def test_a_chunk_of_several_members_is_named_after_the_one_whose_lines_the_words_are_in(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """requests' fourteen small exceptions share a chunk: "the server sent an invalid chunk" is
    `ChunkedEncodingError`'s doc, not the first of them whose name holds "invalid"."""
    errors = {
        "InvalidSchema": "The URL scheme provided is either invalid or unsupported.",
        "InvalidURL": "The URL provided was somehow invalid.",
        "ChunkedEncodingError": "The server declared chunked encoding but sent an invalid chunk.",
        "ContentDecodingError": "Failed to decode response content.",
    }
    src = "".join(f'class {n}(RequestException):\n    """{doc}"""\n\n\n' for n, doc in errors.items())
    text = "class RequestException(IOError):\n    pass\n\n\n" + src
    repo = make_repo({"src/exceptions.py": text})
    build(repo, model="none")
    (r,) = run_query("the server sent an invalid chunk", Where.of(None, None, repo), k=1).results
    assert len(r.chunk.symbols) > 2 and "ChunkedEncodingError" in r.chunk.symbols  # merged
    assert (r.symbol, r.anchor) == ("ChunkedEncodingError", "src/exceptions.py::ChunkedEncodingError")
    own = siblings(r.view, r.chunk)  # each member's lines, found in one pass as one by one
    assert own == [sibling(r.view, r.chunk, a) for a in r.chunk.anchors]
    assert [v.start for v in own] == [n for n, t in enumerate(text.splitlines(), 1) if t.startswith("class")]


@pytest.mark.parametrize("query", ["login", "Auth.login", "where is `login` defined"])
def test_a_name_asked_for_is_its_own_lines_where_small_siblings_share_a_chunk(repo: Path, query: str) -> None:
    """`hash` and `login` are one chunk: asked for by name, `login` is its own two lines, not
    `hash`'s too (a C header's 23 prototypes in one chunk answered `uv_close` with all of them)."""
    (r,) = run_query(query, Where.of(None, None, repo), k=1).results
    assert (r.symbol, r.anchor) == ("login", "src/auth.py::Auth.login")
    assert r.text == "    def login(self, user, password):\n        return self.hash(password) == user.secret"
    assert (r.view.start, r.view.end) == (5, 6)
    words = run_query("login user password hash", Where.of(None, None, repo), k=1).results[0]
    assert "def hash" in words.text and "def login" in words.text  # a sentence: the chunk as it is


def test_a_member_is_its_own_lines_where_its_sibling_calls_or_quotes_it(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """Small siblings share a chunk, and one's body names the next (`return !isOpen();`, `return
    "bar()";`): that body line is not the next one's declaration (commons-lang's `isOpen()` came
    back as lines 147-156 from `return !isOpen();`, its `bar(Integer)` as `bar(double)`'s body)."""
    java = """\
        package cb;

        public class Breaker {
            public boolean isClosed() {
                return !isOpen();
            }

            public boolean isOpen() {
                return state;
            }

            public static String bar() {
                return "bar()";
            }
        }
        """
    repo = make_repo({"src/Breaker.java": textwrap.dedent(java)})
    build(repo, model="none")
    for query, start, first in (
        ("isOpen", 8, "public boolean isOpen() {"),
        ("bar", 12, "public static String bar"),
    ):
        (r,) = run_query(query, Where.of(None, None, repo), k=1).results
        assert (r.view.start, r.text.splitlines()[0].strip()[: len(first)]) == (start, first), query


def test_a_method_asked_for_with_its_owner_is_not_the_function_of_its_name(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """Go's package functions wrap the methods of the same name (viper's `Debug` and
    `Viper.Debug`, one chunk): `Viper.Debug` is the method's own lines, not the function's."""
    go = """\
        package viper

        // Debug prints the configuration.
        func Debug() { v.Debug() }

        // Debug prints the configuration of v.
        func (v *Viper) Debug() { v.DebugTo(os.Stdout) }
        """
    repo = make_repo({"viper.go": textwrap.dedent(go)})
    build(repo, model="none")
    for query, anchor, line in (
        ("Viper.Debug", "viper.go::Viper.Debug", "func (v *Viper) Debug() { v.DebugTo(os.Stdout) }"),
        ("Debug", "viper.go::Debug", "func Debug() { v.Debug() }"),
    ):
        (r,) = run_query(query, Where.of(None, None, repo), k=1).results
        assert (r.anchor, r.text.splitlines()[-1]) == (anchor, line), query


def test_a_parent_whose_doc_fills_its_first_part_is_shown_by_its_declaration(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """commons-lang's `StringUtils` opens with 50 lines of javadoc, its first part: every hit in it
    showed its parent as `/**`, not `public class StringUtils {`."""
    doc = "".join(
        f"     * Line {i} of what the utilities do with strings and their parts.\n" for i in range(60)
    )
    methods = "".join(
        f'    public static String pad{i}(final String s) {{\n        return s + "{i}";\n    }}\n\n'
        for i in range(40)
    )
    java = f"package u;\n\n/**\n{doc}     */\npublic class TextUtils {{\n\n{methods}}}\n"
    repo = make_repo({".cora.toml": "max_tokens = 300\n", "src/TextUtils.java": java})
    build(repo, model="none")
    (r,) = run_query("TextUtils.pad7", Where.of(None, None, repo), k=1).results
    assert r.anchor == "src/TextUtils.java::TextUtils.pad7"
    assert r.parent is not None and r.parent.text == "public class TextUtils {"


def test_a_caller_among_merged_siblings_is_its_own_lines(make_repo: Callable[[dict[str, str]], Path]) -> None:
    """ "what uses `keyDelimiter`": of two small functions merged, the one that uses it, named after
    it and cut to its lines (it was named after the first, `find`, which does not)."""
    go = """\
        package conf

        const keyDelimiter = "."

        func find(name string) error {
            if name == "" {
                return nil
            }
            return nil
        }

        func split(key string) []string {
            return strings.Split(key, keyDelimiter)
        }
        """
    repo = make_repo({"conf/conf.go": textwrap.dedent(go)})
    build(repo, model="none")
    results = run_query("what uses keyDelimiter", Where.of(None, None, repo), k=3).results
    caller = next(r for r in results if r.hit.explain.get("related"))
    assert (caller.anchor, caller.view.start, caller.view.end) == ("conf/conf.go::split", 12, 14)


def test_a_private_field_above_a_member_is_not_its_comment(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """JavaScript's `#name` is a private member, not a comment attached to the next: hono's
    `Context.finalized` came back with the `#var` line above it."""
    body = "".join(f"    const step{i} = compute({i}, this.#status, other_argument)\n" for i in range(30))
    ts = f"""\
        export class Context {{
          #var: number = 0
          finalized: boolean = false
          #status = 200

          render(): number {{
        {body}    return 1
          }}
        }}
        """
    repo = make_repo({"src/context.ts": textwrap.dedent(ts)})
    build(repo, model="none")
    (r,) = run_query("Context.finalized", Where.of(None, None, repo), k=1).results
    assert (r.anchor, r.view.start, r.view.end) == ("src/context.ts::Context.finalized", 3, 3)


def test_an_overload_family_merged_with_a_neighbour_is_the_family(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """`@overload` stubs, their implementation and `put` after them share a chunk: `Pool.get` is
    the three `get`s, named after the implementation, not `put` too nor the first stub's name."""
    py = """\
        import typing


        class Pool:
            @typing.overload
            def get(self, key: int) -> int: ...
            @typing.overload
            def get(self, key: str) -> str: ...
            def get(self, key):
                return key

            def put(self, key, value):
                self.data = value
        """
    repo = make_repo({"mod.py": textwrap.dedent(py)})
    build(repo, model="none")
    (r,) = run_query("Pool.get", Where.of(None, None, repo), k=1).results
    assert (r.anchor, r.view.start, r.view.end) == ("mod.py::Pool.get(self, key)", 5, 10)
    assert "def put" not in r.text


def test_the_bare_name_of_typescript_overloads_shows_the_implementation(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """hono's `HonoRequest.param`: its first signature carries the JSDoc, so it was the longest
    member and `show` printed it instead of the implementation (semicolons or none)."""
    from cora_ci.render.source import BundleChunks, show

    doc = "".join(f"   * Line {i} of the parameter's documentation.\n" for i in range(12))
    ts = (
        "export class HonoRequest {\n  /**\n" + doc + "   */\n"
        "  param(key: string): string\n  param(): Record<string, string>\n"
        "  param(key?: string): unknown {\n    return key ? this.one(key) : this.all()\n  }\n\n"
        "  other(): number {\n    return 1\n  }\n}\n"
    )
    repo = make_repo({"src/request.ts": ts})
    build(repo, model="none")
    shown = show(
        BundleChunks(open_bundle(repo / ".cora" / "index"), None), "src/request.ts::HonoRequest.param"
    )
    assert shown.view.text().splitlines()[0].strip() == "param(key?: string): unknown {"


def test_asking_again_for_more_hits_does_not_pour_members_into_their_class(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """An answer whose hits merged asks the ranking for more (`filled`); hits past the first `k`
    that would only merge into a result already there are left out: an httpx trial's
    `SENSITIVE_HEADERS -k 4` printed the whole 240-line `Headers` class that `-k 3` gave as its
    outline."""
    methods = "".join(
        f'    def header_{i}(self, name):\n        """Header number {i}."""\n'
        + "".join(f"        step_{j} = compute({j}, name, self.headers, other_argument)\n" for j in range(6))
        + "        return step_1\n\n"
        for i in range(12)
    )
    py = (
        'SENSITIVE_HEADERS = {"authorization", "proxy-authorization"}\n\n\n'
        "def obfuscate_sensitive_headers(items):\n"
        "    return [(k, '[secure]' if k in SENSITIVE_HEADERS else v) for k, v in items]\n\n\n"
        'class Headers:\n    """HTTP headers, sensitive ones hidden when printed."""\n\n' + methods
    )
    repo = make_repo({"src/headers.py": py})
    build(repo, model="none")
    widest = {}
    for k in (3, 4, 6):
        results = run_query("SENSITIVE_HEADERS", Where.of(None, None, repo), k=k).results
        widest[k] = max(len(r.text.splitlines()) for r in results)
    assert widest[4] <= widest[3] + 9 and widest[6] <= widest[3] + 3 * 9, widest  # not the whole class


def test_the_budget_counts_what_is_printed_and_keeps_rank_order(repo: Path) -> None:
    from cora_ci.chunking.tokens import default_counter

    counter = default_counter()
    for fmt in ("json", "cora", "text"):
        out = _cora("query", "registry item value", "--format", fmt, "-k", "8", "--budget", "400", cwd=repo)
        assert out.returncode == 0, out.stderr
        assert sum(counter.count_lines(out.stdout.split("\n"))) <= 400 * 1.05, fmt  # what is printed
    doc = json.loads(_cora("query", "registry item value", "--format", "json", "-k", "8", "--budget", "400",
                           cwd=repo).stdout)  # fmt: skip
    elided = [r["elided"] for r in doc["results"]]
    assert elided == sorted(elided)  # never a result in full below an elided one


def test_results_the_budget_leaves_out_are_said_and_the_note_is_counted(repo: Path) -> None:
    """A flask trial's `-k 5 --budget 600` printed one result and nothing of the four left out."""
    from cora_ci.chunking.tokens import default_counter
    from cora_ci.render.formats import as_json, code_budget, overhead

    whole = run_query("registry item value", Where.of(None, None, repo), k=8)
    assert len(whole.results) == 8 and not whole.notes
    tight = run_query("registry item value", Where.of(None, None, repo), k=8, budget=120)
    left = 8 - len(tight.results)
    assert left > 0 and tight.notes == [
        f"{left} more results did not fit the token budget: a larger budget shows them"
    ]
    loose = run_query("registry item value", Where.of(None, None, repo), k=8, budget=100_000)
    assert len(loose.results) == 8 and not loose.notes
    counter, bundle = default_counter(), str(repo / ".cora" / "index")
    for budget in range(380, 700, 7):  # JSON prints the note among the results: it counts, as `query` does
        ans = run_query("registry item value", Where.of(None, None, repo), k=8,
                        budget=code_budget("json", budget, whole.query, bundle), overhead=overhead("json", k=8))  # fmt: skip
        out = as_json(ans.query, bundle, ans.results, False, ans.bundle_id, (), ans.notes)
        printed = sum(counter.count_lines(out.split("\n")))
        assert printed <= budget or len(ans.results) == 1, budget  # (the best is shown whatever it costs)
    text = _cora("query", "registry item value", "--format", "text", "-k", "8", "--budget", "400", cwd=repo)
    assert text.returncode == 0 and re.search(r"^note: \d+ more results? did not fit", text.stderr, re.M)


def test_boosted_results_come_beyond_the_k(repo: Path) -> None:
    ans = run_query("registry item value", Where.of(None, None, repo), k=3, boosts=("path:src/auth.py",))
    pinned = [r for r in ans.results if r.hit.full]
    assert pinned and {r.view.path for r in pinned} == {"src/auth.py"}
    assert len(ans.results) - len(pinned) == 3


def _errors_module() -> str:
    """A module of exception classes between module code: `__all__` at the top and a comment
    before each family, so the module-code chunk's range spans every class."""
    families = {
        "Timeout": ["ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout"],
        "Network": ["ReadError", "WriteError", "ConnectError", "CloseError"],
        "Protocol": ["LocalProtocolError", "RemoteProtocolError", "UnsupportedProtocol", "ProxyError"],
    }
    names = [n for members in families.values() for n in members]
    out = ["import typing\n\n__all__ = [\n", *(f'    "{n}",\n' for n in names), "]\n\n"]
    for family, members in families.items():
        out.append(f"\n# {family} exceptions: what goes wrong while talking to the host.\n\n")
        out.append(
            f'class {family}Failure(Exception):\n    """The base class of {family.lower()} errors."""\n\n'
        )
        for n in members:
            out.append(
                f'\nclass {n}({family}Failure):\n    """Raised on {n} while the transport is busy."""\n'
            )
            out.append(
                f"\n    def describe(self):\n        return '{n.lower()} of the {family.lower()} family'\n\n"
            )
    out.append("\n# Stream exceptions: a stream read twice, or closed.\n")
    return "".join(out)


def test_a_hit_inside_module_code_is_that_code_not_the_file_around_it(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """Module code's range spans the classes it elides; a class hit merged with it by range was
    reported as (nearly) the whole file, named after the class."""
    repo = make_repo({"errors.py": _errors_module()})
    build(repo, model="none")
    t = open_bundle(repo / ".cora" / "index").chunks
    module = next(t.chunk(r) for r in range(len(t)) if t.chunk(r).kind == "module")
    lines = (repo / "errors.py").read_text().splitlines()
    ans = run_query("connect error host transport", Where.of(None, None, repo), k=len(t))
    assert any(r.chunk.id == module.id for r in ans.results)  # the module code is in the answer too
    by_anchor = {r.anchor: r for r in ans.results}
    hit = by_anchor["errors.py::ConnectError"]
    family = lines.index("# Network exceptions: what goes wrong while talking to the host.") + 1
    assert (
        family
        < hit.view.start
        <= hit.view.end
        < lines.index("# Protocol exceptions: what goes wrong while talking to the host.")
    )
    assert "class ConnectError(NetworkFailure):" in hit.text and "__all__" not in hit.text
    shown = [n for r in ans.results for n, _ in r.view.rendered() if n is not None]
    assert len(shown) == len(set(shown))  # still no line twice


def test_a_merged_instance_or_impl_is_shown_as_its_own_lines(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """An aeson trial: small instances merge into one chunk, and `show '<Text as FromJSON>'`
    printed the chunk's 84 lines from the first instance's: an instance's name (`<Text as
    FromJSON>`) is written in no line, so its declaration (`instance FromJSON Text where`, a
    Rust `impl Priced for Cart`) was not found. Each is its own lines now."""
    from cora_ci.render.query import run_show

    hs = "".join(f"instance FromJSON {t} where\n    parseJSON = withText \"{t}\" pure\n\n"
                 for t in ("Int8", "Word", "Text", "LT.Text", "Version"))  # fmt: skip
    rs = "".join(
        f"impl Priced for {t} {{\n    fn price(&self) -> u32 {{ 1 }}\n}}\n\n" for t in ("Cart", "Item", "Fee")
    )
    repo = make_repo({"src/FromJSON.hs": "module FromJSON where\n\n" + hs, "src/price.rs": rs})
    build(repo, model="none")
    where = Where.of(None, None, repo)
    shown = run_show("src/FromJSON.hs::<Text as FromJSON>", where).view
    assert (shown.start, shown.end) == (9, 10), shown
    assert run_show("src/FromJSON.hs::<LT.Text as FromJSON>", where).view.start == 12
    assert run_show("src/price.rs::<Item as Priced>", where).view.start == 5


def test_the_parts_of_a_long_function_are_one_result(make_repo: Callable[[dict[str, str]], Path]) -> None:
    """A semble trial: pydantic's `Field -k 2` was the implementation's first part and its fifth,
    two of the two results for one function. Parts of one split definition are one result, its
    parts shown together, and the `k` results are `k` definitions."""
    steps = "".join(f"    total += weights[{i}] * values[{i}]\n" for i in range(120))
    body = (
        "def blend_colour_channels(values, weights):\n    '''Blend the colour channels of a pixel.'''\n"
        "    total = 0\n"
        + steps
        + "    # blend colour channels once more: the alpha channel of the pixel\n"
        + "    alpha = blend_alpha_channel(values) + colour_channel_bias(weights)\n"
        + steps
        + "    return total\n"
    )
    others = "".join(
        f"def helper_{i}(pixel):\n    '''The colour channel {i} of a pixel.'''\n    return pixel[{i}]\n\n\n"
        for i in range(4)
    )
    repo = make_repo(
        {".cora.toml": "max_tokens = 400\nmin_tokens = 0\n", "src/blend.py": body, "src/channels.py": others}
    )
    build(repo, model="none")
    b = open_bundle(repo / ".cora" / "index")
    parts = [
        r for r in range(len(b.chunks)) if b.chunks.chunk(r).anchor == "src/blend.py::blend_colour_channels"
    ]
    assert len(parts) >= 3  # split: the test needs hits on two parts that do not touch
    ans = run_query("blend colour channels alpha channel of the pixel", Where.of(None, None, repo), k=3)
    anchors = [r.anchor for r in ans.results]
    assert len(anchors) == len(set(anchors)) == 3, anchors
    whole = next(r for r in ans.results if r.anchor == "src/blend.py::blend_colour_channels")
    shown = {n for n, _ in whole.view.rendered() if n is not None}
    assert 1 in shown and body[: body.index("alpha =")].count("\n") + 1 in shown  # head and alpha line
    rows = whole.view.rendered()
    for (a, _), (b, _) in itertools.pairwise(rows):  # lines left out between parts: a `. . .` there
        assert a is None or b is None or b == a + 1, (a, b)
    # its commentary says which parts it holds and their lines, not only the best one's "Part 3 of 5."
    spans = whole.view.spans
    assert len(spans) >= 2 and all(b + 1 < c for (_, b), (c, _) in itertools.pairwise(spans)), spans
    assert {n for n, _ in rows if n is not None} <= {n for a, b in spans for n in range(a, b + 1)}
    question = "blend colour channels alpha channel of the pixel"
    cora = _cora("query", "-k", "3", "--format", "cora", question, cwd=repo).stdout
    assert (
        f'lines="{spans[0][0]}-{spans[-1][1]}"' in cora
    )  # the metadata's one range, as the Cora spec has it
    parts = re.search(r"Parts ([\d, ]+) and (\d+) of (\d+), lines ([\d, -]+)\.", cora)
    assert parts is not None and len(spans) <= len(parts[1].split(", ")) + 1 <= int(parts[3]), cora
    assert parts[4] == ", ".join(f"{a}-{b}" for a, b in spans)
