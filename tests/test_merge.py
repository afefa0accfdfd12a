"""`cora-ci merge`: shard bundles of one tree merge into exactly the bundle a full build of that
tree writes (same bytes), with references across shards resolved; and it refuses shards that do
not make up one tree, with CORA-BND-011."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import git
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_incremental import assert_same

from cora_ci.build import build
from cora_ci.bundle import open_bundle
from cora_ci.files.shard import ShardSpec, assign
from cora_ci.merge import merge

CORA = shutil.which("cora-ci", path=os.path.dirname(sys.executable)) or "cora-ci"


pytestmark = pytest.mark.usefixtures("private_cache")


def cora(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CORA, *args], capture_output=True, text=True, check=False)


def same_bytes(a: Path, b: Path) -> None:
    """Two bundle directories hold the same files with the same bytes."""
    files = sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file())
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def file_edges(out: Path) -> set[tuple[str, str]]:
    """The reference graph between files: (path of a referencing chunk, path of its target)."""
    b = open_bundle(out)
    path = {cid: b.chunks.chunk(r).path for r, cid in enumerate(b.chunks.ids)}
    g = b.graph
    return {
        (path[g.ids[i]], path[g.ids[j]])
        for i in range(len(g.ids))
        for j in g.indices[g.indptr[i] : g.indptr[i + 1]]
    }


def tree(root: str) -> dict[str, str]:
    """Calls, C# usings and TS imports between files; `root` prefixes every path."""
    return {
        f"{root}/lib/invoice.py": 'def compute_invoice_total(lines):\n    """Sum the invoice lines."""\n'
        "    return sum(line.amount for line in lines)\n",
        f"{root}/app/checkout.py": f"from {root}.lib.invoice import compute_invoice_total\n\n\n"
        'def checkout(cart):\n    """Charge the customer for the cart."""\n'
        "    return compute_invoice_total(cart.lines)\n",
        f"{root}/Shop/Core/Price.cs": "namespace Shop.Core\n{\n    public class PriceCalculator\n    {\n"
        "        public decimal Total(decimal a) { return a * 2; }\n    }\n}\n",
        f"{root}/Shop/Legacy/Price.cs": "namespace Shop.Legacy\n{\n    public class PriceCalculator\n    {\n"
        "        public decimal Total(decimal a) { return a * 3; }\n    }\n}\n",
        f"{root}/Shop/Web/Cart.cs": "using Shop.Core;\n\nnamespace Shop.Web\n{\n    public class CartController\n"
        "    {\n        public decimal Sum(decimal a)\n        {\n            var calc = new PriceCalculator();\n"
        "            return calc.Total(a);\n        }\n    }\n}\n",
        f"{root}/web/api.ts": "export function fetchCart(id: number): string {\n  return `cart/${id}`;\n}\n",
        f"{root}/web/legacy.ts": "export function fetchCart(id: number): string {\n  return `old/${id}`;\n}\n",
        f"{root}/web/page.ts": "import { fetchCart } from './api';\n\n"
        "export function renderPage(id: number): string {\n  return fetchCart(id).toUpperCase();\n}\n",
        f"{root}/README.md": "# Shop\n\n## Install\n\nRun the shop.\n",
    }


CROSS = [  # (referencing file, referenced file), under the root
    ("app/checkout.py", "lib/invoice.py"),
    ("Shop/Web/Cart.cs", "Shop/Core/Price.cs"),
    ("web/page.ts", "web/api.ts"),
]


def shards_of(files: dict[str, str], n: int) -> dict[str, int]:
    """Each file's 0-based shard, as `cora-ci index --shard` computes it."""
    paths = sorted(files)
    return dict(zip(paths, assign([(p, len(files[p].encode())) for p in paths], n), strict=True))


def split_tree(n: int) -> tuple[str, dict[str, str]]:
    """A root under which every pair of CROSS lands in two different shards."""
    for k in range(1000):
        files = tree(f"r{k}")
        where = shards_of(files, n)
        if all(where[f"r{k}/{a}"] != where[f"r{k}/{b}"] for a, b in CROSS):
            return f"r{k}", files
    raise AssertionError("no root splits the pairs")


def build_shards(repo: Path, base: Path, n: int, model: str) -> list[Path]:
    outs = [base / f"shard{i}" for i in range(1, n + 1)]
    for i, out in enumerate(outs, start=1):
        build(repo, out, model=model, shard=ShardSpec(i, n))
    return outs


def test_merged_shards_are_the_full_build_byte_for_byte(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, files = split_tree(2)
    repo = make_repo(files)
    full = tmp_path / "full"
    build(repo, full)  # the default model: real vectors
    shards = build_shards(repo, tmp_path, 2, "default")
    edges = file_edges(full)
    for a, b in CROSS:
        assert (f"{root}/{a}", f"{root}/{b}") in edges  # resolved by the full build...
        assert not any(e[0] == f"{root}/{a}" and e[1] == f"{root}/{b}" for s in shards for e in file_edges(s))
    assert (f"{root}/Shop/Web/Cart.cs", f"{root}/Shop/Legacy/Price.cs") not in edges  # the using decides
    assert (f"{root}/web/page.ts", f"{root}/web/legacy.ts") not in edges  # the import decides
    r = cora("merge", *map(str, shards[::-1]), "--out", str(tmp_path / "merged"), "--timings")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("merged 2 shards of rev ") and "stages: read " in r.stdout
    same_bytes(tmp_path / "merged", full)  # ...and by the merge: the same edges, texts, BM25, vectors
    assert cora("verify", str(tmp_path / "merged")).returncode == 0


def test_a_merged_bundle_updates_like_any_other_and_so_do_the_shards(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, files = split_tree(2)
    repo = make_repo(files)
    shards = build_shards(repo, tmp_path, 2, "default")
    merged = tmp_path / "merged"
    merge(shards, merged)
    # The next commit edits a function called across shards and renames a file into the other shard.
    inv = repo / root / "lib/invoice.py"
    inv.write_text(inv.read_text().replace("line.amount", "line.amount * line.qty"))
    now = {p: (repo / p).read_text() for p in files}
    old = f"{root}/web/legacy.ts"
    was = shards_of(now, 2)[old]
    new = next(
        f"{root}/web/old_{j}.ts"
        for j in range(1000)
        if shards_of({**{p: t for p, t in now.items() if p != old}, f"{root}/web/old_{j}.ts": now[old]}, 2)[
            f"{root}/web/old_{j}.ts"
        ]
        != was
    )
    git(repo, "mv", old, new)
    git(repo, "commit", "-qam", "rename and edit")
    full = tmp_path / "full"
    build(repo, full)
    s = build(repo, merged)  # the merged bundle, updated
    assert s.rebuilt == "" and s.rechunked == 2 and s.removed == 1 and s.embedded >= 1
    assert_same(merged, full)
    # The shards updated in place, then merged again: the full build's bytes again.
    for i, out in enumerate(shards, start=1):
        u = build(repo, out, shard=ShardSpec(i, 2))
        assert u.rebuilt == "" and u.rechunked <= 2
    assert {new} <= set().union(*(open_bundle(s).manifest["files"]["path"] for s in shards))
    merge(shards, tmp_path / "again")
    same_bytes(tmp_path / "again", full)


def test_merge_refuses_shards_that_do_not_make_up_one_tree(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(tree("r"))
    s1, s2, s3 = (str(p) for p in build_shards(repo, tmp_path, 3, "none"))
    build(repo, tmp_path / "half", model="none", shard=ShardSpec(2, 2))
    other = tmp_path / "other"  # shards of the next commit
    (repo / "r/extra.py").write_text("def extra():\n    return 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "more")
    for i in (1, 2):
        build(repo, other / f"s{i}", model="none", shard=ShardSpec(i, 2))
    build(repo, other / "m2", model="default", shard=ShardSpec(2, 2))
    cfg = tmp_path / "cfg" / ".cora.toml"
    cfg.parent.mkdir()
    cfg.write_text("max_tokens = 300\n")
    build(repo, other / "c2", model="none", shard=ShardSpec(2, 2), config_file=cfg)
    build(repo, other / "full", model="none")
    out = str(tmp_path / "merged")
    cases = [
        ([s1, s2], "shard 3/3 missing (got 2 of 3)"),
        ([s1, s2, s2, s3], "shard 2/3 given twice"),
        ([s1, s2, str(tmp_path / "half")], "are shards of different splits: 1/3 vs 2/2"),
        ([str(other / "s1"), s2], "were cut from different trees: rev "),
        ([str(other / "s1"), str(other / "m2")], "were built with different models: none vs all-MiniLM"),
        ([str(other / "s1"), str(other / "c2")], "were built with different chunker configs"),
        ([str(other / "full"), str(other / "s2")], "is not a shard bundle"),
    ]
    for args, message in cases:
        r = cora("merge", *args, "--out", out)
        assert r.returncode == 5, (args, r.stdout, r.stderr)
        assert r.stderr.startswith("error: CORA-BND-011: ") and message in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1 and "(hint: " in r.stderr  # one line, never a traceback
        assert not Path(out).exists()
    assert cora("merge", "--out", out).returncode == 2  # no shard: a usage error
    assert cora("index", str(repo), "--shard", "3/2").returncode == 2


_names = st.sampled_from(["alpha", "beta", "gamma", "delta", "eps"])
_file = st.tuples(
    st.sampled_from(["a", "b/c", "d"]), st.text(alphabet="xyz_", min_size=1, max_size=4), _names, _names
)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_file, min_size=1, max_size=8, unique_by=lambda f: (f[0], f[1])), st.integers(1, 4))
def test_any_small_tree_merges_to_its_full_build(files: list[tuple[str, str, str, str]], n: int) -> None:
    """Random trees of functions calling each other, 1 to 4 shards (some may be empty)."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repo = base / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        for d, name, defines, calls in files:
            p = repo / d / f"{name}.py"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f"def {defines}_{name}(x):\n    return {calls}_{name}(x) + {calls}(x)\n\n\n"
                         f"def {defines}(y):\n    return y\n")  # fmt: skip
        git(repo, "add", "-A")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "t")
        build(repo, base / "full", model="none")
        merge(build_shards(repo, base, n, "none"), base / "merged")
        same_bytes(base / "merged", base / "full")


def test_a_submodule_weighs_nothing_and_merges_like_any_file(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A gitlink has no blob to size (its commit is another repository's): it weighs only its row."""
    repo = make_repo(tree("r"))
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},vendor/lib")
    git(repo, "commit", "-qm", "submodule")
    build(repo, tmp_path / "full", model="none")
    merge(build_shards(repo, tmp_path, 2, "none"), tmp_path / "merged")
    same_bytes(tmp_path / "merged", tmp_path / "full")
    assert "vendor/lib" in open_bundle(tmp_path / "merged").manifest["files"]["path"]
