"""Identifier Recall@1 by language: a bare name finds its definition first, in every language.

    python bench/definitions.py [--quick] [--repo NAME ...] [--per-repo N] [--json FILE]

bench/quality.py asks identifier queries of Python and TypeScript only. This asks them of the
semble subset's 14 checkouts (bench/semble.py: the same pinned commits, mirrors and cache; Go,
Rust, Java, Ruby, Python, JavaScript, TypeScript) and of 15 more repositories pinned here, one or
two a language the chunker handles its own way or by its generic rule (Kotlin, Swift, C++, C#,
PHP, Java, Elixir, Dart, Zig, Haskell, Lua, Scala, C, Bash, Rust; none of them in semble's 66, so
none in a held-out set of its kind). Asked: every name that one definition holds in its repository
(one anchor family among every anchored chunk, fields included: a split definition's parts and an
overload family are one; a Rust `impl`, Swift `extension` or Haskell `instance` is not a
definition of its type, so a type with such blocks counts once, as its declaration), a type,
function, method or property outside tests, examples and other code ranked lower by design
(`path_class`), at least four characters long, up to `--per-repo` of them a repository (by a hash
of the name, so the same names every run), asked as `cora_ci.retrieval.search` asks a bare name
(k=1); and the same for members asked with their owner as their language writes it
(`Parser.parse`, Rust's `Parser::parse`, also for a trait impl's member, Ruby's `Parser#parse`),
each pair one family holds (a constructor is left out: `Parser.Parser` is no way to ask for one;
so are names one does not type, templates and operators). A hit: the first result is a chunk of
that definition (any of its anchors). In the same run, the same names by the bundle's BM25 alone
and by bench/quality.py's 40-line-window BM25 (a hit: the first window holds the definition's
first line). Target (issue 16): identifier Recall@1 >= 0.97, here for each language.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import time
from collections import defaultdict
from dataclasses import replace
from typing import NamedTuple

import semble
from benchlib import Figures, json_option, load_average
from quality import WindowBM25

from cora_ci.build import build
from cora_ci.bundle import Bundle, open_bundle
from cora_ci.retrieval import PARAMS, search
from cora_ci.retrieval.catalog import OVERLOAD
from cora_ci.retrieval.definitions import prototype
from cora_ci.retrieval.kinds import path_class
from cora_ci.retrieval.query import split_qualified

TARGET = 0.97
_EXTENSIONS = ("impl:", "extension:")
BM25_ALONE = replace(PARAMS, vectors=False, features=False)
RANKERS = ("cora-ci", "BM25 alone", "40-line BM25")


class Name(NamedTuple):
    query: str  # the name as asked: bare, or qualified by its owner
    family: str  # anchor without its overload suffix
    lang: str
    path: str
    line: int  # the definition's first line


Spec = semble.Spec
OTHERS = (
    Spec("kotlinpoet", "square/kotlinpoet", "be2de914ce6eb3694092ed4e0f28626cbce1ffe0", "", False),
    Spec("swift-argument-parser", "apple/swift-argument-parser", "2f77f2fccb6e84fecff338c37b199e33e7dfd119",
         "Sources", False),
    Spec("argparse", "p-ranav/argparse", "d924b84eba1f0f0adf38b20b7b4829f6f65b6570", "", False),
    Spec("MediatR", "jbogard/MediatR", "8a64581e2570e7410c5f44835d9ea112beccbe6b", "src", False),
    Spec("flysystem", "thephpleague/flysystem", "072735c56cc0da00e10716dd90d5a7f7b40b36be", "src", False),
    Spec("javapoet", "square/javapoet", "b9017a9503b76e11b4ad4c1a9f050e2d29112cb0", "src/main", False),
    Spec("db_connection", "elixir-ecto/db_connection", "0c6e67bf1b90cdd7c9c2f63aa60d2d785f206460", "lib",
         False, True),
    Spec("equatable", "felangel/equatable", "f98a58960545ba72b51d0eacf746af393a0c6b24", "", False, True),
    Spec("http.zig", "karlseguin/http.zig", "86a44b63bda353338f2dbddc35eeb260f0f5c299", "src", False, True),
    Spec("doclayout", "jgm/doclayout", "aa2e9d853b7c26f49d3b540f7ca0625e612503ce", "src", False, True),
    Spec("plenary.nvim", "nvim-lua/plenary.nvim", "b9fd5226c2f76c951fc8ed5923d85e4de065e509", "lua", False),
    Spec("os-lib", "com-lihaoyi/os-lib", "e237000cbd4d97a4c4463df43d64556130d2bc50", "os/src", False),
    Spec("cJSON", "DaveGamble/cJSON", "a29814f285cc531c00223743ad3c55cd38c0dc56", "", False),
    Spec("nodenv", "nodenv/nodenv", "0e551cc2a4527cc6dab95048ac4b8fe3bee081d4", "", False),
    Spec("ripgrep", "BurntSushi/ripgrep", "3fce3b5bb0236da2df6d99672afb8a719642eca7", "crates", False),
)  # fmt: skip
SEPARATORS = {"rust": "::", "cpp": "::", "php": "::", "ruby": "#"}  # a member as each language writes it
FORMS = ("name", "Owner.member")


def _family(anchor: str) -> str:
    return OVERLOAD.sub("", anchor)


def _qualified(anchor: str) -> tuple[str, ...]:
    """An anchor's name as parts, a Rust trait impl's `<Type as Trait>` as `Type` (how one writes
    its member: `Type::method`)."""
    parts = split_qualified(_family(anchor).split("::", 1)[1])
    return tuple(_IMPL_FOR.sub(r"\1", p) for p in parts)


_IMPL_FOR = re.compile(r"^<([A-Za-z_]\w*) as [^<>]+>$")
_NAME = re.compile(r"[A-Za-z_$][\w$]*[?!=]?")  # a name as one types it: no template or operator


def names(bundle: Bundle, per_repo: int) -> dict[str, list[Name]]:
    """Per form, the names one definition family holds in the bundle, up to `per_repo` (by a hash
    of the name): bare (`parse`), and a member qualified by its owner as its language writes it
    (`Parser.parse`, `Parser::parse`, `Parser#parse`; a Rust trait impl's member by its type)."""
    t = bundle.chunks
    fams: dict[str, dict[str, set[str]]] = {f: defaultdict(set) for f in FORMS}
    first: dict[str, dict[str, Name]] = {f: {} for f in FORMS}
    for fi in range(len(bundle.manifest["files"]["path"])):
        for c in t.file_chunks(fi):
            if c.kind in ("file", "section", "key", "lines") or _extends(c.hierarchy):
                continue
            for a in c.anchors:
                if "::" not in a:
                    continue
                fam, parts = _family(a), _qualified(a)
                if not parts:
                    continue
                if prototype(c, parts[-1], lambda c=c: c.text):  # a Chunk has what it reads of a Meta
                    continue  # C's `int uv_run(...);`: what is asked for is its definition, not it
                own = not _family(a).rsplit(".", 1)[-1].startswith("<")  # an impl block names no type
                asked = {"name": parts[-1]} if own else {}
                owner = parts[-2] if len(parts) > 1 and c.kind in ("method", "property") else ""
                if _NAME.fullmatch(owner) and owner != parts[-1]:
                    asked["Owner.member"] = SEPARATORS.get(c.lang, ".").join(parts[-2:])
                for form, query in asked.items():
                    fams[form][query].add(fam)  # fields and modules too: a name they share is not unique
                    if (
                        c.kind not in ("type", "method", "property")
                        or len(parts[-1]) < 4
                        or path_class(c.path)
                    ):
                        continue
                    if not _NAME.fullmatch(parts[-1]):
                        continue
                    have = first[form].get(query)
                    if have is None or (c.path, c.start_line) < (have.path, have.line):
                        first[form][query] = Name(query, fam, c.lang, c.path, c.start_line)
    out = {}
    for form in FORMS:
        unique = [n for query, n in first[form].items() if len(fams[form][query]) == 1]
        unique.sort(key=lambda n: hashlib.sha1(n.query.encode()).hexdigest())
        out[form] = unique[:per_repo]
    return out


def _extends(hierarchy: list[str]) -> bool:
    return bool(hierarchy) and hierarchy[-1].startswith(_EXTENSIONS)


def defines(bundle: Bundle, chunk_id: int, family: str) -> bool:
    """The chunk is (part of) the definition: one of its anchors is of the family, and it is not a
    block that extends a type (which shares the type's anchor family)."""
    c = bundle.chunks.chunk(bundle.chunks.row_of[chunk_id])
    return not _extends(c.hierarchy) and any(_family(a) == family for a in c.anchors)


def run_repo(spec: semble.Spec, per_repo: int) -> dict[tuple[str, str], dict[str, list[bool]]]:
    """(language, form) -> ranker -> a hit per name."""
    src = semble.checkout(spec, semble.MIRRORS)
    out = semble.CACHE / "bundles" / f"{spec.name}-none"
    build(src, out, model="none")  # names and BM25 need no vectors; the cached semble bundles keep theirs
    bundle = open_bundle(out)
    windows = WindowBM25(src)
    hits: dict[tuple[str, str], dict[str, list[bool]]] = defaultdict(lambda: {r: [] for r in RANKERS})
    for form, asked in names(bundle, per_repo).items():
        for n in asked:
            row = hits[(n.lang, form)]
            for ranker, params in (("cora-ci", PARAMS), ("BM25 alone", BM25_ALONE)):
                got = search(bundle, n.query, k=1, params=params)
                row[ranker].append(bool(got) and defines(bundle, got[0].chunk_id, n.family))
            first = windows.search(n.query, 1)
            w = windows.windows[first[0]] if first else None
            row["40-line BM25"].append(w is not None and w[0] == n.path and w[1] <= n.line <= w[2])
    got = (
        f"{lang} {form} {sum(r['cora-ci'])}/{len(r['cora-ci'])}" for (lang, form), r in sorted(hits.items())
    )
    print(f"  {spec.name}: " + ", ".join(got), flush=True)
    return hits


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="semble's 4 quick repositories and 4 small others, 40 names each"
    )
    ap.add_argument(
        "--repo", nargs="+", choices=[s.name for s in (*semble.REPOS, *OTHERS)], help="only these"
    )
    ap.add_argument("--per-repo", type=int, default=200, help="names asked per repository")
    json_option(ap)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    per_repo = 40 if args.quick else args.per_repo
    print(f"definitions by name, model none, load average {load_average()}")
    specs = [s for s in (*semble.REPOS, *OTHERS) if (not args.repo or s.name in args.repo)]
    specs = [s for s in specs if s.quick or not args.quick]
    total: dict[tuple[str, str], dict[str, list[bool]]] = defaultdict(lambda: {r: [] for r in RANKERS})
    fig = Figures("definitions")
    for spec in specs:
        try:
            for key, row in run_repo(spec, per_repo).items():
                for r in RANKERS:
                    total[key][r] += row[r]
        except LookupError as e:
            print(f"  {spec.name}: skipped, {e}", flush=True)
            fig.skip(f"definitions.{spec.name}", f"{spec.name}: identifier Recall@1", "no mirror")
    title = "identifier Recall@1 by language (29 repositories)"
    print(f"\n| language | asked as | names | {' | '.join(RANKERS)} |\n|---|---|---|" + "---|" * len(RANKERS))
    for (lang, form), row in sorted(total.items()):
        cells = [sum(row[r]) / len(row[r]) for r in RANKERS]
        print(f"| {lang} | {form} | {len(row['cora-ci'])} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
        key, label = f"definitions.{lang}.{form.split('.')[0].lower()}", f"{lang}, asked as {form}"
        fig.add(key, f"identifier Recall@1, {label} ({len(row['cora-ci'])} names)", cells[0],
                target=(">=", TARGET), source="issue 16", cell=(title, label, "cora-ci"))  # fmt: skip
        fig.add(f"{key}.bm25", f"identifier Recall@1 by BM25 alone, {label}", cells[1],
                cell=(title, label, "BM25 alone"))  # fmt: skip
    print(f"\nran {time.perf_counter() - t0:.0f} s; load average {load_average()}")
    fig.write(args.json)


if __name__ == "__main__":
    main()
