#!/usr/bin/env python3
"""Contrastive training of cora-ci's static table on (doc sentence, code) pairs (issues 16, 18).

The shipped table was fitted to MiniLM's vectors of code and doc comments (tokenlearn_static.py),
so it can at best equal its teacher, a model trained on English sentence pairs, not on code. Here
the table learns the task itself, as code-search models are trained (CodeSearchNet and its
successors): a doc comment's first sentence and the code it documents, with the comment taken out,
should be nearer each other than the sentence and any other code. Supervision comes from code no
benchmark evaluates (tokenlearn_static.EXCLUDED and all 66 of semble's repositories), cut by
cora-ci's own chunker:

1. `pairs` (cora-ci's runtime venv, for the chunker): every function, method and class with a doc
   comment in the sources below; its comment is removed as bench/quality.py removes them (the same
   functions, so the same notion of "the code without its docs"), the stripped file is chunked with
   the default Config, and the sentence is paired with `document_text` of the smallest chunk that
   holds the declaration line (exactly what a build embeds), plus a second chunk of the same file as
   a hard negative. Go, Rust and Ruby document with line comments above a declaration
   (`strip_line_docs`); Go's leading name is dropped ("Handle registers ..." -> "Registers ...").
   Sentences seen twice are dropped (no single answer). Shuffled (seed 0), capped
   per source, written to pairs.jsonl.
2. `train` (torch venv): rows E initialised from the shipped table (int8 x scales); a text's vector
   is normalise(sum of E[ids]) with ids exactly as cora_ci.embedding.static tokenises. Loss:
   symmetric InfoNCE over the batch's codes and hard negatives (temperature `--temperature`), plus
   `--anchor` x the mean squared distance of the used rows from their initial values (so tokens the
   pairs rarely see keep what the teacher taught them). Adam; 3 % of the pairs held out, their
   MRR among each other decides the epoch kept. Writes the table in minilm_static's layout.

    PY=.venv/bin/python; BUILD=/tmp/train-venv/bin/python
    python3.11 -m venv /tmp/train-venv && $BUILD -m pip install torch-2.13.0+cpu-...whl numpy==2.4.6
    mkdir -p /tmp/ct/npm /tmp/ct/npm2
    (cd /tmp/ct/npm && npm pack typescript@5.6.3 lodash@4.17.21 @types/node@22.10.0 axios@1.7.9 \
        date-fns@4.1.0 effect@3.10.0 fp-ts@2.16.9)
    (cd /tmp/ct/npm2 && for p in @tanstack/query-core@5.59.0 immer@10.1.1 mobx@6.13.5 \
        @reduxjs/toolkit@2.3.0 io-ts@2.2.21 typeorm@0.3.20 @angular/core@18.2.0 ts-pattern@5.5.0 \
        kysely@0.27.4 drizzle-orm@0.36.0 neverthrow@8.1.1 ajv@8.17.1 yaml@2.6.0 \
        @effect/schema@0.75.5 hono@4.6.9 zustand@5.0.1; do npm pack $p; done)
    # Go, Rust, Ruby: `fetch` github:<owner>/<name> of each GIT_REPOS entry (bare mirrors), then
    $PY tools/model/contrast_static.py git --work /tmp/ct --mirrors /work/.mirror   # ~8,300 files
    $PY tools/model/contrast_static.py pairs --work /tmp/ct                 # 91,702 pairs, ~7 min
    $BUILD tools/model/contrast_static.py train --work /tmp/ct --out cora_ci/embedding/minilm_static \
        --init <the tokenlearn table> --epochs 12 --hard --batch 1024 --lr 2e-3   # ~2 min
    # then update the checksums in cora_ci/embedding/loading.py and minilm_static/NOTICE

The pairs depend on the two venvs' packages (tools/model/requirements-contrast.lock) and the
interpreter's standard library (3.11.7). Training is deterministic (seeds, one thread): two runs
gave the same bytes. Choices and their figures: tools/model/NOTES.md.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE), str(ROOT / "bench")]
from distill_static import quantise, sha256  # noqa: E402
from seeds import deterministic  # noqa: E402
from tokenlearn_static import _excluded  # noqa: E402  (the same evaluation repositories left out)

STDLIB = Path("/root/.pyenv/versions/3.11.7/lib/python3.11")
SITE = [Path("/tmp/train-venv/lib/python3.11/site-packages"), ROOT / ".venv/lib/python3.11/site-packages"]
NPM_GLOBAL = Path("/usr/lib/node_modules/npm")
JDK_SRC = Path("/usr/lib/jvm/temurin-25-jdk-amd64/lib/src.zip")
GIT_SRC = "git"  # <work>/git/<owner>+<name>/...: Go, Rust and Ruby files of git mirrors (see `sources`)
PY_EXT = (".py",)
JS_EXT = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".java")
MODULE_PIECES = 2  # chunks of a module paired with its docstring's sentence
CAPS = {"stdlib": 20000, "site": 40000, "npm": 30000, "npm-global": 4000, "jdk": 12000, "git": 40000}
SKIP_DIRS = {"test", "tests", "testing", "__pycache__", "site-packages", "idlelib", "lib2to3", "dist",
             "esm", "cjs", "fp", "build", "node_modules", "_vendor", "vendor", "examples"}  # fmt: skip


NPM_SKIP = {"test", "tests", "__tests__", "node_modules", "examples", "locale"}  # compiled dist/ is code
# semble's whole benchmark (66 repositories: ../shared/bench-data/semble/results/), of which our subset
# is 14: the others may judge cora-ci as held-out sets, so no pair comes from them either (httpx,
# requests, starlette and axios gave 461 pairs before this was added)
SEMBLE_REPOS = {
    "abseil-cpp", "aeson", "aiohttp", "alamofire", "axios", "axum", "bash-it", "bats-core", "cats",
    "chi", "circe", "click", "cobra", "commons-lang", "curl", "dapper", "dio", "ecto", "exposed",
    "express", "fastapi", "flask", "fmtlib", "gin", "gson", "guzzle", "http-dart", "http4s", "httpx",
    "jackson-databind", "kotlinx-coroutines", "ktor", "laravel-framework", "lazy.nvim", "libuv",
    "messagepack-csharp", "mini.nvim", "model2vec", "monolog", "newtonsoft-json", "nlohmann-json",
    "nvm", "pandoc", "phoenix", "plug", "pydantic", "rack", "rails", "redis", "redux", "requests",
    "riverpod", "rxswift", "serde", "sinatra", "starlette", "telescope.nvim", "tokio", "trpc", "vapor",
    "vitest", "xmonad", "zig", "zig-clap", "zls", "zod",
}  # fmt: skip
# Go, Rust and Ruby: the files of these repositories at these commits (`git` extracts them from bare
# mirrors, e.g. the `fetch` of github:<owner>/<name>); tests left out. None is in an evaluation set.
GIT_REPOS = {
    "golang/tools": "8f0f8c7bde0eea32e01e570a0e330c60a0cbaecc",
    "grpc/grpc-go": "4793ad0474669eafbd5346c8a3d098fdfa542498",
    "golang/net": "0ca694d2a5adcce7f36d4d65e5f8d72390d94051",
    "golang/crypto": "82adefa711cb8d9a1f12c7ea91b491007d21819f",
    "etcd-io/etcd": "c34dc7ee0048fd2bcc44d50beff002e5e8069b69",
    "prometheus/prometheus": "d15adb9ad7e5d9fbde3a9a8f30200593a5a14d86",
    "hyperium/hyper": "8fcaf1a62787b824fdd7b95a3e7c9ea81acd3449",
    "clap-rs/clap": "6982fb1c98c7247e38a6d4f04191b94e30497e7b",
    "rust-lang/regex": "2b527599eb9eea0dcc288c704584f242f26a5c61",
    "rayon-rs/rayon": "c4dac9f82ee03f61e855075b668229a9e4d759ad",
    "rust-lang/cargo": "af373f761aa4e42b093c2e453078fd73c8ce54dd",
    "dtolnay/syn": "8011b1c512dbe87c6b09627790735ecdaa65c0db",
    "tower-rs/tower": "8358ee712c4050650737e361fba242aa8c798ce2",
    "rubocop/rubocop": "3a42c622171794510e03999c8d55129b73c5dc8f",
    "puma/puma": "ff2e2126ee2f0f97e21c57ce1967afde1b6f05a1",
    "rubygems/rubygems": "69ec4a3a5f1cafa633c569671ed9ef502bbdaf61",
    "lostisland/faraday": "59334e0e9b1918bd26b143f4a7bbc8c765de3ac4",
    "Shopify/liquid": "7a5e45fc4784e6e2e3092f2eb6f613644f1e2e5a",
    "jekyll/jekyll": "202df571314ba1d18e9fccd81d12aaad4a703c38",
    "sidekiq/sidekiq": "1bb4aa06e5aa178a114a5e855f9f3d5c24f6c61b",
    "rspec/rspec-core": "aec5f49485d97908183dbe790a7fefb8baaa8091",
}
GIT_EXT = (".go", ".rs", ".rb")
GIT_SKIP = {"test", "tests", "testdata", "testing", "spec", "vendor", "examples", "benches", "fixtures",
            "third_party", "internal_test"}  # fmt: skip


def _held_out(parts: tuple[str, ...]) -> bool:
    """A path of an evaluation repository: bench/quality.py's, the localization set's, semble's."""
    return _excluded(parts) or any(
        p.lower() in SEMBLE_REPOS or p.lower().split("-")[0] in SEMBLE_REPOS for p in parts
    )


def sources(work: Path) -> Iterator[tuple[str, str, bytes]]:
    """(source, path, bytes) of every candidate file, in a fixed order."""
    for p in sorted(STDLIB.rglob("*.py")):
        rel = p.relative_to(STDLIB)
        if not SKIP_DIRS & set(rel.parts[:-1]):
            yield "stdlib", str(rel), p.read_bytes()
    seen: set[str] = set()
    for site in SITE:
        for p in sorted(site.rglob("*.py")):
            rel = p.relative_to(site)
            if str(rel) in seen or rel.parts[0].startswith(("cora_ci", "_pytest", "pip")):
                continue
            seen.add(str(rel))
            if p.is_file() and not _held_out(rel.parts) and not SKIP_DIRS & set(rel.parts[:-1]):
                yield "site", str(rel), p.read_bytes()
    for tgz in sorted(work.glob("npm*/*.tgz")):
        if _held_out((tgz.stem,)):
            continue
        with tarfile.open(tgz) as tf:
            for m in sorted(tf.getmembers(), key=lambda m: m.name):
                parts = tuple(m.name.split("/"))
                if m.isfile() and m.name.endswith(JS_EXT) and ".min." not in m.name \
                        and not NPM_SKIP & set(parts[:-1]):  # fmt: skip
                    f = tf.extractfile(m)
                    if f is not None:
                        yield "npm", f"{tgz.stem}/{m.name}", f.read()
    for p in sorted(NPM_GLOBAL.rglob("*")):
        rel = p.relative_to(NPM_GLOBAL)
        if p.suffix in JS_EXT and p.is_file() and not _held_out(rel.parts) and "test" not in rel.parts:
            yield "npm-global", str(rel), p.read_bytes()
    if JDK_SRC.is_file():
        with zipfile.ZipFile(JDK_SRC) as zf:
            for name in sorted(zf.namelist()):
                if name.startswith("java.base/java/") and name.endswith(".java"):
                    yield "jdk", name, zf.read(name)
    for repo in sorted((work / GIT_SRC).glob("*+*")):
        if _held_out(tuple(repo.name.split("+"))):
            continue
        for p in sorted(repo.rglob("*")):
            rel = p.relative_to(repo)
            if p.suffix in GIT_EXT and p.is_file() and not GIT_SKIP & set(rel.parts[:-1]) \
                    and not p.name.endswith(("_test.go", "_spec.rb", "_test.rb")):  # fmt: skip
                yield "git", f"{repo.name}/{rel}", p.read_bytes()


def strip_doc_comments(text: str) -> tuple[str, list[tuple[int, str]]]:
    """`/** ... */` blanked (newlines kept), with (declaration line, first sentence) of each that
    stands on its own lines before a declaration (JS, TS, Java: annotations skipped)."""
    from quality import _JSDOC, first_sentence  # the runtime venv's (quality imports cora-ci's build)

    docs = []
    for m in _JSDOC.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if text[line_start : m.start()].strip():
            continue
        rest = text[m.end() :].split("\n")[1:4]
        off = next((i for i, ln in enumerate(rest) if ln.strip() and not ln.strip().startswith("@")), None)
        body = "\n".join(ln.strip().lstrip("*").strip() for ln in m.group(0)[3:-2].splitlines())
        sentence = first_sentence(body)
        if off is not None and sentence:
            docs.append((text.count("\n", 0, m.end()) + 2 + off, sentence))
    return _JSDOC.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text), docs


# Go, Rust and Ruby document a declaration with the line comments right above it (Rust's
# attributes may stand between): (comment prefix, what starts a documented declaration).
_LINE_DOCS = {
    ".go": ("//", re.compile(r"(func|type|var|const)\b")),
    ".rs": ("///", re.compile(r"(pub(\([^)]*\))?\s+)?((async|const|unsafe|default)\s+"
                             r"|extern\s+\"[^\"]*\"\s+)*"
                             r"(fn|struct|enum|trait|impl|type|mod|const|static|union|macro_rules!)\W")),
    ".rb": ("#", re.compile(r"(def|class|module)\s|attr_(reader|writer|accessor)\b")),
}  # fmt: skip
_GO_NAME = re.compile(r"(?:func\s+(?:\([^)]*\)\s*)?|type\s+|var\s+|const\s+)(\w+)")


def strip_line_docs(path: str, text: str) -> tuple[str, list[tuple[int, str]]]:
    """The line comments documenting a declaration blanked (lines kept), with (declaration line,
    first sentence) of each. A Go comment's first word is the name it documents (the convention):
    it is dropped, so the sentence reads as a question would ("returns ..." not "Foo returns ...")."""
    from quality import first_sentence

    prefix, decl = _LINE_DOCS[Path(path).suffix]
    lines = text.split("\n")
    docs: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        if not _doc_line(lines[i], prefix):
            i += 1
            continue
        j = i
        while j < len(lines) and _doc_line(lines[j], prefix):
            j += 1
        k = j
        while k < len(lines) and path.endswith(".rs") and lines[k].lstrip().startswith("#["):
            k += 1
        if k < len(lines) and decl.match(lines[k].lstrip()):
            body = "\n".join(ln.lstrip()[len(prefix) :].strip() for ln in lines[i:j])
            sentence = first_sentence(body)
            if sentence and path.endswith(".go"):
                name = _GO_NAME.match(lines[k].lstrip())
                first, _, rest = sentence.partition(" ")
                if name and first == name.group(1) and rest:
                    rest = rest.removeprefix("is ").removeprefix("are ")  # "Mux is a router" -> "A router"
                    sentence = rest[0].upper() + rest[1:]
            if sentence:
                docs.append((k + 1, sentence))
                lines[i:j] = [""] * (j - i)
        i = j
    return "\n".join(lines), docs


def _doc_line(line: str, prefix: str) -> bool:
    s = line.lstrip()
    if not s.startswith(prefix):
        return False
    rest = s[len(prefix) :]
    if prefix == "///":
        return not rest.startswith("/")
    if prefix == "#":  # not `#!`, a magic comment or a directive
        return not rest.startswith(("!", " frozen_string_literal", " rubocop:", " encoding:", " typed:"))
    return not rest.startswith(("/", "go:", "nolint", "+build"))


def file_pairs(
    path: str, data: bytes, cfg: object, counter: object, rng: random.Random
) -> list[dict[str, str]]:
    from quality import strip_python

    from cora_ci.chunking.chunker import chunk_file
    from cora_ci.embedding import document_text

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return []
    module: tuple[str, int] | None = None
    if path.endswith(PY_EXT):
        stripped, found = strip_python(path, text)
        docs = [(d.line, d.sentence, d.name) for d in found]
        module = module_doc(text)
    elif path.endswith(GIT_EXT):
        stripped, found_lines = strip_line_docs(path, text)
        docs = [(line, sentence, "") for line, sentence in found_lines]
    else:
        stripped, found_js = strip_doc_comments(text)
        docs = [(line, sentence, "") for line, sentence in found_js]
    if not docs and not module:
        return []
    try:
        chunks = chunk_file(path, stripped.encode(), cfg, counter).chunks  # type: ignore[arg-type]
    except Exception as e:
        print(f"skip {path}: {e}", file=sys.stderr)
        return []
    out = []
    for line, sentence, name in docs:
        # the chunk must be the documented symbol's own (a nested helper's doc is not its parent's)
        holding = [
            c for c in chunks if c.start_line <= line <= c.end_line and (not name or name in c.symbols)
        ]
        if not holding:
            continue
        target = min(holding, key=lambda c: (c.end_line - c.start_line, c.start_line))
        others = [c for c in chunks if c.id != target.id and not (c.start_line <= line <= c.end_line)]
        neg = document_text(rng.choice(others)) if others else ""
        out.append({"q": sentence, "d": document_text(target), "n": neg, "path": path})
    if module:  # what a module is about, paired with pieces of its code (not with its docstring)
        sentence, doc_end = module
        body = [c for c in chunks if c.start_line > doc_end and c.kind != "module"]
        for c in rng.sample(body, min(MODULE_PIECES, len(body))):
            out.append({"q": sentence, "d": document_text(c), "n": "", "path": path, "kind": "module"})
    return out


def module_doc(text: str) -> tuple[str, int] | None:
    """A Python module docstring's first sentence and its last line."""
    import ast
    import inspect

    from quality import first_sentence

    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError):
        return None
    if not (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):  # fmt: skip
        return None
    sentence = first_sentence(inspect.cleandoc(body[0].value.value))
    return (sentence, body[0].end_lineno or 1) if sentence else None


def _package(path: str) -> str:
    return path.split("/")[0]


def unique_sentences(pairs: list[dict[str, str]]) -> list[dict[str, str]]:
    """One pair per sentence: a sentence that documents code of several packages has no single
    answer and is dropped; one package's copies (a .ts source, its .d.ts and compiled .js) keep
    the longest code. A module's sentence keeps its pieces."""
    groups: dict[str, list[dict[str, str]]] = {}
    for p in pairs:
        if p["d"].strip():
            groups.setdefault(p["q"].lower(), []).append(p)
    out = []
    for group in groups.values():
        if len({_package(p["path"]) for p in group}) > 1:
            continue
        modules = [p for p in group if "kind" in p]
        if modules and len({p["path"] for p in modules}) == 1 and len(modules) == len(group):
            out += modules
        elif not modules:
            out.append(max(group, key=lambda p: len(p["d"])))
    return out


def cmd_git(args: argparse.Namespace) -> None:
    """The Go, Rust and Ruby files of GIT_REPOS at their commits, from `<mirrors>/<owner>+<name>/repo`,
    into `<work>/git/<owner>+<name>/` (a blob the mirror lacks is skipped and counted)."""
    import subprocess

    for repo, commit in GIT_REPOS.items():
        git = ["git", f"--git-dir={Path(args.mirrors) / repo.replace('/', '+') / 'repo'}"]
        listing = subprocess.run([*git, "ls-tree", "-r", "-z", commit], capture_output=True, check=True)
        wanted = []
        for entry in filter(None, listing.stdout.split(b"\0")):
            meta, path = entry.split(b"\t", 1)
            _, kind, blob = meta.split()
            if kind == b"blob" and path.decode().endswith(GIT_EXT):
                wanted.append((path.decode(), blob.decode()))
        batch = subprocess.run([*git, "cat-file", "--batch"], capture_output=True, check=True,
                               input="".join(b + "\n" for _, b in wanted).encode()).stdout  # fmt: skip
        at, missing = 0, 0
        for path, _ in wanted:
            end = batch.index(b"\n", at)
            head = batch[at:end].split()
            if head[-1] == b"missing":
                at, missing = end + 1, missing + 1
                continue
            size = int(head[2])
            out = Path(args.work) / GIT_SRC / repo.replace("/", "+") / path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(batch[end + 1 : end + 1 + size])
            at = end + 1 + size + 1
        print(f"{repo}: {len(wanted) - missing} files, {missing} missing", flush=True)


def cmd_pairs(args: argparse.Namespace) -> None:
    from cora_ci.chunking.tokens import default_counter
    from cora_ci.config import Config

    work = Path(args.work)
    cfg, counter, rng = Config(), default_counter(), random.Random(0)
    by_source: dict[str, list[dict[str, str]]] = {k: [] for k in CAPS}
    t0 = time.time()
    for source, path, data in sources(work):
        for p in file_pairs(path, data, cfg, counter, rng):
            p["source"] = source
            by_source[source].append(p)
    pairs = []
    for source, ps in by_source.items():
        ps = unique_sentences(ps)
        rng.shuffle(ps)
        pairs += ps[: CAPS[source]]
        print(f"{source}: {len(ps)} pairs, kept {min(len(ps), CAPS[source])}", flush=True)
    rng.shuffle(pairs)
    with (work / "pairs.jsonl").open("w") as f:
        for p in pairs:
            f.write(json.dumps(p) + "\n")
    print(f"{len(pairs)} pairs in {time.time() - t0:.0f} s -> {work / 'pairs.jsonl'}")


# ----------------------------------------------------------------------------- training (torch)


def _tokenised(texts: list[str], emb: object) -> list[list[int]]:
    return [emb.ids(t) or [0] for t in texts]  # type: ignore[attr-defined]


def cmd_train(args: argparse.Namespace) -> None:
    import torch

    from cora_ci.embedding.loading import load_static_directory

    deterministic()
    torch.set_num_threads(args.threads)
    work = Path(args.work)
    emb = load_static_directory(Path(args.init))
    pairs = [json.loads(ln) for ln in (work / "pairs.jsonl").read_text().splitlines()]
    if args.pairs:
        pairs = pairs[: args.pairs]
    n_val = max(500, len(pairs) * 3 // 100)
    q_ids = _tokenised([p["q"] for p in pairs], emb)
    d_ids = _tokenised([p["d"] for p in pairs], emb)
    # a pair without a hard negative (a module's) takes another pair's code: an easy one
    n_ids = _tokenised([p["n"] or pairs[(i + 1) % len(pairs)]["d"] for i, p in enumerate(pairs)], emb)
    init = torch.tensor(emb._table.astype(np.float32) * emb._scales[:, None])
    table = torch.nn.Parameter(init.clone())
    opt = torch.optim.Adam([table], lr=args.lr)

    def bag(ids: list[list[int]]) -> torch.Tensor:
        flat = torch.tensor([i for x in ids for i in x])
        offsets = torch.tensor([0, *np.cumsum([len(x) for x in ids])[:-1].tolist()])
        v = torch.nn.functional.embedding_bag(flat, table, offsets, mode="sum")
        return torch.nn.functional.normalize(v, dim=1)

    def val_mrr() -> float:
        with torch.no_grad():
            q, d = bag(q_ids[:n_val]), bag(d_ids[:n_val])
            s = q @ d.T
            rank = (s > s.diag()[:, None]).sum(1) + 1
            return float(
                torch.where(rank <= 10, 1.0 / rank, torch.zeros_like(rank, dtype=torch.float)).mean()
            )

    order = list(range(n_val, len(pairs)))
    best, best_table, stale = val_mrr(), table.detach().clone(), 0
    print(f"{len(pairs)} pairs ({n_val} held out); start: val MRR@10 {best:.4f}", flush=True)
    rng = random.Random(0)
    for epoch in range(args.epochs):
        rng.shuffle(order)
        t0, total = time.time(), 0.0
        for i in range(0, len(order) - args.batch + 1, args.batch):
            b = order[i : i + args.batch]
            q = bag([q_ids[j] for j in b])
            d = bag([d_ids[j] for j in b] + ([n_ids[j] for j in b] if args.hard else []))
            logits = q @ d.T / args.temperature
            target = torch.arange(len(b))
            loss = torch.nn.functional.cross_entropy(logits, target)
            loss = loss + torch.nn.functional.cross_entropy(logits[:, : len(b)].T, target)
            if args.anchor:
                used = torch.unique(torch.tensor([t for j in b for t in (*q_ids[j], *d_ids[j])]))
                loss = loss + args.anchor * ((table[used] - init[used]) ** 2).sum(1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss)
        mrr = val_mrr()
        print(f"epoch {epoch + 1}: loss {total / max(1, len(order) // args.batch):.4f}, "
              f"val MRR@10 {mrr:.4f}, {time.time() - t0:.0f} s", flush=True)  # fmt: skip
        if mrr > best:
            best, best_table, stale = mrr, table.detach().clone(), 0
        else:
            stale += 1
            if stale >= args.patience:
                break
    settings = {k: v for k, v in vars(args).items() if k not in ("cmd", "work", "out", "init", "threads")}
    write_table(Path(args.out), Path(args.init), best_table.numpy(), settings, best, len(pairs))


def write_table(
    out: Path, init: Path, rows: np.ndarray, settings: dict[str, object], mrr: float, n: int
) -> None:
    import shutil

    import torch

    out.mkdir(parents=True, exist_ok=True)
    for name, array in quantise(rows.astype(np.float32), "int8").items():
        np.save(out / f"{name}.npy", array, allow_pickle=False)
    for name in ("tokens.txt", "LICENSE", "NOTICE"):
        shutil.copyfile(init / name, out / name)
    config = json.loads((init / "config.json").read_text())
    config.update({
        "model": "contrastive training (doc sentence -> code) of the tokenlearn static table",
        "init": "cora_ci/embedding/minilm_static (tokenlearn_static.py)",
        "pairs": n, "settings": settings, "validation_mrr10": mrr, "torch": torch.__version__,
        "files": {f: sha256(out / f) for f in ("scales.npy", "tokens.txt", "vectors.npy")},
    })  # fmt: skip
    for stale in ("teacher", "texts", "train", "validation", "validation_cosine", "init_made_by"):
        config.pop(stale, None)
    (out / "config.json").write_text(json.dumps(config, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out}: val MRR@10 {mrr:.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("git")
    g.add_argument("--work", required=True)
    g.add_argument("--mirrors", default="/work/.mirror")
    p = sub.add_parser("pairs")
    p.add_argument("--work", required=True)
    t = sub.add_parser("train")
    t.add_argument("--work", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--init", default=str(ROOT / "cora_ci/embedding/minilm_static"))
    t.add_argument("--epochs", type=int, default=8)
    t.add_argument("--batch", type=int, default=256)
    t.add_argument("--lr", type=float, default=1e-3)
    t.add_argument("--temperature", type=float, default=0.05)
    t.add_argument("--anchor", type=float, default=0.0)
    t.add_argument("--hard", action="store_true", help="a same-file chunk as each pair's hard negative")
    t.add_argument("--pairs", type=int, default=0, help="use only the first N pairs")
    t.add_argument("--patience", type=int, default=2)
    t.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    {"git": cmd_git, "pairs": cmd_pairs, "train": cmd_train}[args.cmd](args)


if __name__ == "__main__":
    main()
