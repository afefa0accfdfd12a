#!/usr/bin/env python3
"""Tokenlearn-style training of cora-ci's static table: fit the token rows so that a text's summed,
normalised vector matches MiniLM's vector of the same text (issue 18; see NOTES.md).

model2vec's `distill` (distill_static.py) gives each token the vector MiniLM makes of that token
alone; a text's vector is then a SIF-weighted sum. Tokenlearn (MinishLab, the potion models) goes a
step further: embed a corpus of real texts with the teacher and train the table by gradient
descent so that the student's pooled vector of each text points where the teacher's does. Here:

1. `corpus` (cora-ci's runtime venv: the chunker needs its tree-sitter grammars): code disjoint
   from every repository bench/quality.py evaluates, cut by cora-ci's own chunker with the default
   Config, each chunk as `document_text(chunk)` (exactly what a build embeds), plus "query-like"
   texts: the first paragraph of docstrings (Python, `ast`) and doc comments (`/** ... */` in
   JS/TS/Java). Sources: the build interpreter's standard library (tests left out), the
   site-packages of the build venv minus packages that are or overlap evaluation repositories
   (click, jinja2, markupsafe, pydantic, sympy, sklearn, ...), npm tarballs (`npm pack`
   typescript@5.6.3 lodash@4.17.21 @types/node@22.10.0 axios@1.7.9 date-fns@4.1.0), npm's own
   node_modules, and the JDK 25 `src.zip` (java.base). Deterministically sampled and shuffled
   (seed 0), written to texts.jsonl.
2. `teach` (runtime venv): MiniLM vectors of the texts with cora-ci's bundled ONNX embedder
   (`embed_documents`, 384-d, normalised; it sees the first 256 tokens), saved in parts of 2,048
   texts so an interrupted run keeps what it has; stop it whenever the budget is spent.
3. `train` (build venv: torch): student rows E (tokens x 256) initialised from `--init`: the shipped
   table (dequantised int8 x scales), or, as for the shipped table, distill_static.py's 384-d rows
   (SIF-weighted, no PCA) projected by the teacher's PCA below; student(text) = normalise(sum of
   E[ids]) with ids exactly as cora_ci.embedding.static tokenises (whole text, no window). The
   teacher is projected to 256-d by a PCA fitted on the teacher vectors of the training split (then
   re-normalised). Loss: 1 - cos(student, teacher) (+ optional in-batch contrastive term,
   `--contrast`). Adam, mini-batches, 95/5 split of the texts for early stopping. Writes the table
   in the layout of cora_ci/embedding/minilm_static/ (int8 rows + float32 scales, quantised as
   distill_static.py's `quantise`), config.json with checksums.

    PY=/work/wt-static/.venv/bin/python   # cora-ci runtime venv (onnxruntime, tree-sitter)
    BUILD=/tmp/distill-venv/bin/python     # build venv (torch, model2vec; see NOTES.md)
    $BUILD tools/model/distill_static.py --out /tmp/tl/raw384 --pca 0 --code-sif 1e-3 --dtype float32
    $PY tools/model/tokenlearn_static.py corpus --work /tmp/tl               # 108,251 texts
    $PY tools/model/tokenlearn_static.py teach --work /tmp/tl                # ~15 min at ~110/s
    $PY tools/model/tokenlearn_static.py corpus --work /tmp/tl --extend 70000   # 178,251 texts
    $PY tools/model/tokenlearn_static.py teach --work /tmp/tl                # the 70,000 new ones
    $BUILD tools/model/tokenlearn_static.py train --work /tmp/tl --init /tmp/tl/raw384 \
        --out cora_ci/embedding/minilm_static --epochs 6 --lr 5e-3 --contrast 0.1
    # then update the checksums in cora_ci/embedding/loading.py and minilm_static/NOTICE

(the shipped table: 6 epochs, ~6 min on one thread; the corpus was made in two steps because the
teacher's budget was not known in advance, and `--extend` keeps the first step's texts and vectors.)

Versions used: Python 3.11.7, torch 2.13.0+cpu, numpy 2.4.6 (build venv); onnxruntime of the
runtime venv; the bundled MiniLM int8 ONNX (sha256 in cora_ci/embedding/loading.py).
Determinism: seeds fixed, one torch thread, `torch.use_deterministic_algorithms(True)`.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from distill_static import quantise, sha256  # noqa: E402  (the same int8 rows and checksums)
from seeds import deterministic  # noqa: E402

# Evaluation repositories of bench/quality.py and bench/RESULTS.md, and packages overlapping them:
# never in the training corpus.
EXCLUDED = {
    "attrs", "attr", "click", "itsdangerous", "zod", "jinja2", "werkzeug", "markupsafe", "rxjs",
    "aiohttp", "axum", "chi", "cobra", "express", "fastapi", "gin", "gson", "pydantic",
    "pydantic_core", "serde", "sinatra", "trpc", "vitest", "django", "sympy", "isympy.py",
    "matplotlib", "sklearn", "scikit_learn", "astropy",
}  # fmt: skip
BUILD_VENV = Path("/tmp/distill-venv/lib/python3.11/site-packages")
STDLIB = Path("/root/.pyenv/versions/3.11.7/lib/python3.11")
NPM_PACKAGES = ("typescript@5.6.3", "lodash@4.17.21", "@types/node@22.10.0", "axios@1.7.9", "date-fns@4.1.0")
NPM_GLOBAL = Path("/usr/lib/node_modules/npm")
JDK_SRC = Path("/usr/lib/jvm/temurin-25-jdk-amd64/lib/src.zip")  # java-17's src.zip is absent
CODE_EXT = (".py", ".pyi", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".java")
# per source: the most chunks kept (a random sample), so no one package dominates
CAPS = {"stdlib": 30000, "site": 30000, "npm": 16000, "npm-global": 5000, "jdk": 0}  # jdk: first run had none
DOC_CAP = 40000
# `corpus --extend N`: N more texts appended (the first file's texts, and so its teacher vectors, kept):
# a sample of everything the caps above left out, under these larger caps
EXTEND_CAPS = {"stdlib": 30000, "site": 120000, "npm": 30000, "npm-global": 10000, "jdk": 15000}
EXTEND_DOC_CAP = 60000
PART = 2048


def _excluded(parts: tuple[str, ...]) -> bool:
    return any(p.split("-")[0].lower() in EXCLUDED or p.lower() in EXCLUDED for p in parts)


def sources() -> dict[str, list[tuple[str, bytes]]]:
    """(repository-relative path, bytes) of every candidate file, by source, in a fixed order."""
    out: dict[str, list[tuple[str, bytes]]] = {k: [] for k in CAPS}
    skip = {"test", "tests", "site-packages", "__pycache__", "idlelib", "lib2to3"}
    for p in sorted(STDLIB.rglob("*.py")):
        rel = p.relative_to(STDLIB)
        if not skip & set(rel.parts):
            out["stdlib"].append((str(rel), p.read_bytes()))
    for p in sorted(BUILD_VENV.rglob("*")):
        rel = p.relative_to(BUILD_VENV)
        if p.suffix in (".py", ".pyi") and p.is_file() and not _excluded(rel.parts) \
                and not {"tests", "test", "testing", "__pycache__"} & set(rel.parts):  # fmt: skip
            out["site"].append((str(rel), p.read_bytes()))
    npm = Path(WORK) / "npm"
    for tgz in sorted(npm.glob("*.tgz")):
        with tarfile.open(tgz) as tf:
            for m in sorted(tf.getmembers(), key=lambda m: m.name):
                if m.isfile() and m.name.endswith(CODE_EXT) and not m.name.endswith(".min.js"):
                    f = tf.extractfile(m)
                    if f is not None:
                        out["npm"].append((f"{tgz.stem}/{m.name}", f.read()))
    for p in sorted(NPM_GLOBAL.rglob("*")):
        rel = p.relative_to(NPM_GLOBAL)
        if p.suffix in CODE_EXT and p.is_file() and not _excluded(rel.parts) and "test" not in rel.parts:
            out["npm-global"].append((str(rel), p.read_bytes()))
    if JDK_SRC.is_file():
        with zipfile.ZipFile(JDK_SRC) as zf:
            for name in sorted(zf.namelist()):
                if name.startswith("java.base/java/") and name.endswith(".java"):
                    out["jdk"].append((name, zf.read(name)))
    return out


_JSDOC = re.compile(r"/\*\*(.*?)\*/", re.S)


def _first_paragraph(doc: str) -> str | None:
    lines = [ln.strip().lstrip("*").strip() for ln in doc.strip().splitlines()]
    para: list[str] = []
    for ln in lines:
        if not ln or ln.startswith("@") or ln.startswith(":param") or ln.startswith(">>>"):
            if para:
                break
            continue
        para.append(ln)
    text = " ".join(para)
    text = re.sub(r"\{@\w+\s+([^}]*)\}", r"\1", text)  # {@link Foo} -> Foo
    text = re.sub(r"<[^>]+>", "", text)  # html tags of javadoc
    if not (12 <= len(text) <= 400) or sum(c.isalpha() for c in text) < 0.6 * len(text):
        return None
    return text


def doc_texts(path: str, data: bytes) -> list[str]:
    """The first paragraph of each docstring / doc comment: natural language, as queries are."""
    try:
        src = data.decode("utf-8")
    except UnicodeDecodeError:
        return []
    docs: list[str] = []
    if path.endswith((".py", ".pyi")):
        try:
            tree = ast.parse(src)
        except (SyntaxError, ValueError):
            return []
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                d = ast.get_docstring(node)
                if d:
                    docs.append(d)
    else:
        docs = _JSDOC.findall(src)
    return [t for t in map(_first_paragraph, docs) if t]


def cmd_corpus(args: argparse.Namespace) -> None:
    from cora_ci.chunking.chunker import chunk_file
    from cora_ci.chunking.tokens import default_counter
    from cora_ci.config import Config
    from cora_ci.embedding import document_text

    caps, doc_cap = (EXTEND_CAPS, EXTEND_DOC_CAP) if args.extend else (CAPS, DOC_CAP)
    cfg, counter = Config(), default_counter()
    rng = random.Random(0)
    texts: list[dict[str, str]] = []
    seen: set[str] = set()
    docs: list[tuple[str, str]] = []
    stats: dict[str, dict[str, int]] = {}
    t0 = time.time()
    for src, files in sources().items():
        if not caps[src]:
            continue
        chunks: list[str] = []
        for path, data in files:
            try:
                res = chunk_file(path, data, cfg, counter)
            except Exception as e:
                print(f"skip {path}: {e}", file=sys.stderr)
                continue
            for c in res.chunks:
                t = document_text(c)
                if t not in seen:
                    seen.add(t)
                    chunks.append(t)
            docs.extend((src, d) for d in doc_texts(path, data))
        rng.shuffle(chunks)
        kept = chunks[: caps[src]]
        texts.extend({"source": src, "kind": "chunk", "text": t} for t in kept)
        stats[src] = {"files": len(files), "chunks": len(chunks), "kept": len(kept)}
        print(src, stats[src], f"{time.time() - t0:.0f}s", flush=True)
    uniq = list(dict.fromkeys(d for d in docs if d[1] not in seen))
    rng.shuffle(uniq)
    texts.extend({"source": s, "kind": "doc", "text": t} for s, t in uniq[:doc_cap])
    stats["doc"] = {"found": len(uniq), "kept": min(len(uniq), doc_cap)}
    rng.shuffle(texts)  # teacher vectors are made in this order: any prefix is a random sample
    out = Path(args.work)
    if args.extend:
        have = load_texts(out)
        old = {t["text"] for t in have}
        more = [t for t in texts if t["text"] not in old][: args.extend]
        texts = have + more
        stats["extend"] = {"before": len(have), "added": len(more)}
    with (out / "texts.jsonl").open("w") as f:
        for t in texts:
            f.write(json.dumps(t) + "\n")
    (out / f"corpus{'-extend' if args.extend else ''}.json").write_text(
        json.dumps({"texts": len(texts), "sources": stats}, indent=1)
    )
    print(len(texts), "texts", stats)


def load_texts(work: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in (work / "texts.jsonl").open()]


def cmd_teach(args: argparse.Namespace) -> None:
    from cora_ci.embedding import loading

    work = Path(args.work)
    texts = load_texts(work)[: args.limit or None]
    (work / "teacher").mkdir(exist_ok=True)
    emb = loading.load_minilm(workers=args.workers)
    t0, done = time.time(), 0
    for start in range(0, len(texts), PART):
        dest = work / "teacher" / f"{start // PART:05d}.npy"
        if dest.is_file() and len(np.load(dest, mmap_mode="r")) == min(PART, len(texts) - start):
            continue
        part = [t["text"] for t in texts[start : start + PART]]
        np.save(dest, emb.embed_documents(part).astype(np.float32))
        done += len(part)
        print(f"{start + len(part)} texts, {done / (time.time() - t0):.1f}/s", flush=True)


def teacher_vectors(work: Path) -> np.ndarray:
    parts = sorted((work / "teacher").glob("*.npy"))
    arrays = []
    for i, p in enumerate(parts):
        if p.name != f"{i:05d}.npy":
            break
        arrays.append(np.load(p))
    return np.concatenate(arrays)


def cmd_train(args: argparse.Namespace) -> None:
    import torch

    from cora_ci.embedding.info import ModelInfo
    from cora_ci.embedding.static import StaticEmbedder, parse_table

    deterministic()
    work, init = Path(args.work), Path(args.init)
    scales = init / "scales.npy"
    tokens, table = parse_table((init / "tokens.txt").read_bytes(), (init / "vectors.npy").read_bytes(),
                                scales.read_bytes() if scales.is_file() else None)  # fmt: skip
    teacher = teacher_vectors(work)[: args.texts or None]
    texts = load_texts(work)[: len(teacher)]
    info = ModelInfo("tl", table.shape[1], "", "", 0, "mean", "", "")
    emb = StaticEmbedder(info, tokens, table)
    ids = [emb.ids(t["text"]) for t in texts]
    keep = np.asarray([len(i) > 0 for i in ids])
    n = len(texts)
    order = np.random.RandomState(0).permutation(n)
    val = set(order[: max(1, n // 20)].tolist())
    tr_idx = [i for i in range(n) if i not in val and keep[i]]
    va_idx = [i for i in sorted(val) if keep[i]]
    dim = args.dim
    # The runtime can only sum and normalise, so the teacher is reduced by an uncentred PCA (the
    # top eigenvectors of the training split's second moment): a linear map, which passes through
    # the sum. A 384-d init (distill_static.py --pca 0) is projected by the same map, so student
    # and teacher share one basis from the first step.
    T = teacher.astype(np.float64)
    w, v = np.linalg.eigh(T[tr_idx].T @ T[tr_idx] / len(tr_idx))
    top = np.argsort(w)[::-1][:dim]
    comps = v[:, top]
    P = T @ comps
    P /= np.linalg.norm(P, axis=1, keepdims=True) + 1e-12
    if table.shape[1] == T.shape[1] and dim != table.shape[1]:
        table = (table.astype(np.float64) @ comps).astype(np.float32)
    elif table.shape[1] != dim:
        sys.exit(f"init has {table.shape[1]} dims; want {dim} or the teacher's {T.shape[1]}")
    print(f"{n} texts ({len(tr_idx)} train, {len(va_idx)} validation), teacher PCA keeps "
          f"{w[top].sum() / w.sum():.3f} of the second moment", flush=True)  # fmt: skip
    target = torch.tensor(P, dtype=torch.float32)
    E = torch.nn.EmbeddingBag(len(tokens), dim, mode="sum")
    with torch.no_grad():
        E.weight.copy_(torch.tensor(table) * args.init_scale)
    init_rows = torch.tensor(table) * args.init_scale
    opt = torch.optim.Adam(E.parameters(), lr=args.lr)
    flat = [torch.tensor(i, dtype=torch.long) for i in ids]

    def batch(idx: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        lens = torch.tensor([len(flat[i]) for i in idx])
        offsets = torch.cat([torch.zeros(1, dtype=torch.long), lens.cumsum(0)[:-1]])
        return torch.cat([flat[i] for i in idx]), offsets

    def student(idx: list[int]) -> torch.Tensor:
        x, off = batch(idx)
        return torch.nn.functional.normalize(E(x, off), dim=1)

    def evaluate() -> float:
        with torch.no_grad():
            cos = []
            for s in range(0, len(va_idx), 4096):
                b = va_idx[s : s + 4096]
                cos.append((student(b) * target[b]).sum(1))
            return float(torch.cat(cos).mean())

    best, best_w, bad = evaluate(), E.weight.detach().clone(), 0
    print(f"epoch 0: validation cosine {best:.4f}", flush=True)
    rng = np.random.RandomState(1)
    t0 = time.time()
    for epoch in range(1, args.epochs + 1):
        perm = rng.permutation(len(tr_idx))
        total = 0.0
        for s in range(0, len(perm), args.batch):
            b = [tr_idx[j] for j in perm[s : s + args.batch]]
            out = student(b)
            tgt = target[b]
            loss = (1 - (out * tgt).sum(1)).mean()
            if args.contrast:
                logits = out @ tgt.T / args.temperature
                loss = loss + args.contrast * torch.nn.functional.cross_entropy(logits, torch.arange(len(b)))
            if args.l2:
                loss = loss + args.l2 * ((E.weight - init_rows) ** 2).sum() / len(tokens)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(b)
        score = evaluate()
        print(f"epoch {epoch}: train loss {total / len(perm):.4f}, validation cosine {score:.4f}, "
              f"{time.time() - t0:.0f}s", flush=True)  # fmt: skip
        if score > best + 1e-4:
            best, best_w, bad = score, E.weight.detach().clone(), 0
        else:
            bad += 1
            if bad >= args.patience:
                break
    rows = best_w.numpy().astype(np.float32)
    write_table(Path(args.out), tokens, rows, {
        "model": "tokenlearn-style training of the static distillation of all-MiniLM-L6-v2",
        "init": str(init),
        "init_made_by": "tools/model/distill_static.py --pca 0 --code-sif 1e-3 --dtype float32",
        "teacher": "bundled all-MiniLM-L6-v2 int8 ONNX (cora-ci), embed_documents",
        "texts": n, "train": len(tr_idx), "validation": len(va_idx), "validation_cosine": best,
        "settings": {k: v for k, v in vars(args).items() if k not in ("func",)},
        "python": sys.version.split()[0], "torch": torch.__version__, "numpy": np.__version__,
    })  # fmt: skip


def write_table(out: Path, tokens: list[str], rows: np.ndarray, meta: dict[str, object]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "tokens.txt").write_text("".join(t + "\n" for t in tokens), encoding="utf-8")
    for name, array in quantise(rows, "int8").items():
        np.save(out / f"{name}.npy", array, allow_pickle=False)
    files = {p.name: sha256(p) for p in sorted(out.iterdir()) if p.suffix in (".txt", ".npy")}
    config = {**meta, "dim": int(rows.shape[1]), "dtype": "int8", "tokens": len(tokens), "files": files}
    (out / "config.json").write_text(json.dumps(config, indent=1, sort_keys=True) + "\n")
    print(json.dumps(config, indent=1, sort_keys=True))


WORK = "/tmp/tl"


def main() -> None:
    global WORK
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(required=True)
    c = sub.add_parser("corpus")
    c.add_argument("--extend", type=int, default=0, help="append N more texts to texts.jsonl")
    c.set_defaults(func=cmd_corpus)
    t = sub.add_parser("teach")
    t.add_argument("--limit", type=int, default=0)
    t.add_argument("--workers", type=int, default=2)
    t.set_defaults(func=cmd_teach)
    r = sub.add_parser("train")
    r.add_argument("--out", required=True)
    r.add_argument("--init", default=str(ROOT / "cora_ci/embedding/minilm_static"))
    r.add_argument("--init-scale", type=float, default=1.0)
    r.add_argument("--epochs", type=int, default=20)
    r.add_argument("--patience", type=int, default=2)
    r.add_argument("--batch", type=int, default=256)
    r.add_argument("--lr", type=float, default=1e-3)
    r.add_argument("--contrast", type=float, default=0.0)
    r.add_argument("--temperature", type=float, default=0.05)
    r.add_argument("--l2", type=float, default=0.0)
    r.add_argument("--dim", type=int, default=256)
    r.add_argument("--texts", type=int, default=0, help="use only the first N texts (0: all embedded)")
    r.set_defaults(func=cmd_train)
    for p in (c, t, r):
        p.add_argument("--work", default=WORK)
    args = ap.parse_args()
    WORK = args.work
    args.func(args)


if __name__ == "__main__":
    main()
