"""Bundles of real git repositories: contents, sources, determinism, atomicity, integrity, refusals."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import msgpack
import numpy as np
import pytest
from conftest import dedent_files, git

from cora_ci import verified
from cora_ci.build import build
from cora_ci.bundle import manifest as mf
from cora_ci.bundle import open_bundle
from cora_ci.bundle.report import check
from cora_ci.bundle.store import write_bundle
from cora_ci.bundle.terms import terms
from cora_ci.errors import CoraError
from cora_ci.verified import CONTENT_CHECKS

FILES = {
    "src/auth.py": '''\
        """Authentication helpers."""
        from src.util import parse_header_links


        class Auth:
            """Checks credentials."""

            def login(self, user: str, password: str) -> bool:
                """Log a user in. Returns True on success."""
                links = parse_header_links(user)
                return bool(links) and password == "secret"
        ''',
    "src/util.py": '''\
        import re


        def parse_header_links(value: str) -> list[str]:
            """Split a Link header into its URLs."""
            return re.findall(r"<([^>]+)>", value)
        ''',
    "web/app.ts": """\
        import { fetchUser } from "./api";

        export class UserView {
          render(id: number): string {
            return fetchUser(id).name;
          }
        }
        """,
    "web/api.ts": """\
        export function fetchUser(id: number) {
          return { id, name: "n" + id };
        }
        """,
    "Service.cs": """\
        namespace Example.Managers
        {
            public class AgentManager
            {
                /// <summary>Adds a context test.</summary>
                public int AddTest(string name) { return name.Length; }
            }
        }
        """,
    "docs/guide.md": "# Guide\n\nIntro text.\n\n## Install\n\nRun `pip install cora-ci`.\n",
    "deploy.yaml": "name: deploy\non:\n  push: {}\njobs:\n  build:\n    runs-on: ubuntu-latest\n",
    "logo.png": "\x89PNG\r\n\x1a\n\x00\x00binary",
}


pytestmark = pytest.mark.usefixtures("private_cache")


@pytest.fixture
def repo(make_repo: Callable[[dict[str, str]], Path]) -> Path:
    return make_repo(dedent_files(FILES))


def _tree_state(root: Path) -> dict[str, tuple[int, int, str]]:
    return {
        p.relative_to(root).as_posix(): (
            p.stat().st_size,
            p.stat().st_mtime_ns,
            hashlib.sha256(p.read_bytes()).hexdigest(),
        )
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_bundle_holds_every_part_and_every_manifest_field(repo: Path) -> None:
    out = repo / ".cora" / "index"
    s = build(repo, model="none")
    assert s.out == out and (repo / ".cora" / ".gitignore").read_text() == "*\n"
    assert s.skipped == 1 and s.files == len(FILES) - 1 and s.chunks > 10
    b = open_bundle(out)
    m = b.manifest
    commit = git(repo, "rev-parse", "HEAD").strip()
    assert m["format"] == "cora-bundle" and m["format_version"] == "12.0" and m["tool_version"]
    assert m["built_at"] == int(git(repo, "show", "-s", "--format=%ct", "HEAD"))
    assert m["source"] == {
        "root": "repo", "kind": "rev", "commit": commit,
        "tree": git(repo, "rev-parse", "HEAD^{tree}").strip(), "dirty": False,
    }  # fmt: skip
    assert m["model"] is None and m["boosts"] == []
    segments = [s for s in m["lexical"]["segments"] if s]
    assert (
        len(m["lexical"]["segments"]) == m["lexical"]["buckets"] and sum(n for _, n in segments) == s.chunks
    )
    assert len(m["chunker"]["hash"]) == 64 and m["chunker"]["config"]["max_tokens"] == 800
    assert tuple(m["files"]) == mf.TOP_COLUMNS
    files = b.shards.table()
    assert tuple(files) == mf.FILE_COLUMNS and files["path"] == m["files"]["path"] == sorted(FILES)
    assert sum(len(ids) for ids in files["ids"]) == 8 * s.chunks and "keys" not in files
    blobs = dict(line.split(" ", 3)[2:4][::-1] for line in [
        ln.replace("\t", " ") for ln in git(repo, "ls-tree", "-r", "HEAD").splitlines()])  # fmt: skip
    assert dict(zip(files["path"], files["blob"], strict=True)) == blobs
    langs = dict(zip(files["path"], files["lang"], strict=True))
    assert langs["src/auth.py"] == "python" and langs["web/app.ts"] == "typescript"
    assert (
        langs["Service.cs"] == "csharp"
        and langs["docs/guide.md"] == "markdown"
        and langs["deploy.yaml"] == "yaml"
    )
    strategies = dict(zip(files["path"], files["strategy"], strict=True))
    assert strategies["logo.png"] is None
    assert files["diagnostics"][files["path"].index("logo.png")][0][0] == "CORA-CHK-003"
    assert "src.util" in files["imports"][files["path"].index("src/auth.py")]
    assert set(m["artifacts"]) == {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} - {
        mf.MANIFEST, mf.MANIFEST_SUM}  # fmt: skip
    assert all(
        k.startswith(("bm25/", "shards/")) or k == mf.GRAPH for k in m["artifacts"]
    )  # no vectors.codes here
    assert m["stats"]["chunks"] == len(b.chunks) == s.chunks
    assert m["stats"]["source_bytes"] == sum(
        len(v.encode()) for k, v in dedent_files(FILES).items() if k != "logo.png"
    )


def test_boost_directives_are_checked_and_recorded_from_the_indexed_tree(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    files = {**FILES, ".cora-boosts": "# always show\npath: ./README.md\n\ndir:src/\nsymbol:Auth\n"}
    repo = make_repo(dedent_files(files))
    build(repo, model="none")
    assert open_bundle(repo / ".cora" / "index").manifest["boosts"] == [
        "path:README.md",
        "dir:src",
        "symbol:Auth",
    ]
    (repo / ".cora-boosts").write_text("dir:src\nrank:high\n")
    git(repo, "commit", "-qam", "bad boost")
    with pytest.raises(CoraError) as e:
        build(repo, model="none")
    assert e.value.code == "CORA-CFG-002" and e.value.message.startswith(
        ".cora-boosts:2: bad boost directive"
    )


def test_chunks_round_trip_exactly_as_the_chunker_made_them(repo: Path) -> None:
    from cora_ci.chunking import chunk_file
    from cora_ci.config import Config

    build(repo, model="none")
    b = open_bundle(repo / ".cora" / "index")
    stored = {b.chunks.ids[r]: b.chunks.chunk(r).to_dict() for r in range(len(b.chunks))}
    for path, text in dedent_files(FILES).items():
        for c in chunk_file(path, text.encode(), Config()).chunks:
            assert stored.pop(c.id) == c.to_dict()
    assert stored == {}


def test_reference_graph_links_a_call_to_its_definition_in_the_imported_file(repo: Path) -> None:
    build(repo, model="none")
    b = open_bundle(repo / ".cora" / "index")
    anchors = {b.chunks.chunk(r).anchor: b.chunks.ids[r] for r in range(len(b.chunks))}
    g = b.graph
    src = g.ids.index(anchors["src/auth.py::Auth.login"])
    targets = {g.ids[j] for j in g.indices[g.indptr[src] : g.indptr[src + 1]]}
    assert anchors["src/util.py::parse_header_links"] in targets
    src = g.ids.index(anchors["web/app.ts::UserView"])
    assert anchors["web/api.ts::fetchUser"] in {
        g.ids[j] for j in g.indices[g.indptr[src] : g.indptr[src + 1]]
    }


def test_the_stored_graph_is_the_one_the_files_links_make_and_damage_is_named(repo: Path) -> None:
    """The graph is the only record of the resolved edges (6.0): it is what the full build's
    linker makes of every file's stored links."""
    from cora_ci.build.chunks import link_files
    from cora_ci.bundle.tables import Rows
    from cora_ci.graph.csr import csr_from_edges, unpack_edges

    build(repo, model="none")
    out = repo / ".cora" / "index"
    b = open_bundle(out)
    paths = b.manifest["files"]["path"]
    rows = Rows(b.shards, paths)
    edges = link_files(Rows(), Rows(), rows, list(paths))
    parts = [unpack_edges(mf.ids_of(rows.top(p, "ids")), edges[p]) for p in paths]
    stored = b.graph_csr
    derived = csr_from_edges(b.chunks.id_array, *(np.concatenate([e[k] for e in parts]) for k in range(3)))
    assert len(stored.indices) > 0
    for a, d in zip(stored, derived, strict=True):
        assert np.array_equal(a, d)
    data = msgpack.unpackb((out / mf.GRAPH).read_bytes())
    width, raw = data["indices"]
    data["indices"] = [4, (np.frombuffer(raw, f"<u{width}").astype(np.int64) + 1000).astype("<u4").tobytes()]
    (out / mf.GRAPH).write_bytes(msgpack.packb(data))
    with pytest.raises(CoraError) as e:
        open_bundle(out)  # the checksum catches it first
    assert e.value.code == "CORA-BND-003" and mf.GRAPH in e.value.message
    m = b.manifest
    m["artifacts"][mf.GRAPH] = {"sha256": hashlib.sha256((out / mf.GRAPH).read_bytes()).hexdigest(),
                                "size": (out / mf.GRAPH).stat().st_size}  # fmt: skip
    _rewrite_manifest(out, artifacts=m["artifacts"])  # re-signed: now the contents must be checked
    with pytest.raises(CoraError) as e:
        open_bundle(out).graph_csr  # noqa: B018
    assert e.value.code == "CORA-BND-004" and "inconsistent graph" in e.value.message


def test_bm25_is_identifier_aware(repo: Path) -> None:
    assert terms("parseHeaderLinks parse_header_links") == [
        "parseheaderlinks", "parse", "header", "links", "parse_header_links", "parse", "header", "links"]  # fmt: skip
    build(repo, model="none")
    b = open_bundle(repo / ".cora" / "index")
    hits = b.lexical.search("header links", 3)
    top = b.chunks.chunk(b.chunks.row_of[hits[0][0]])
    assert top.anchor == "src/util.py::parse_header_links"
    hits = b.lexical.search("add test", 1)  # C#'s AddTest, by its parts
    assert "AddTest(" in b.chunks.chunk(b.chunks.row_of[hits[0][0]]).text


@pytest.mark.parametrize(("model", "dim"), [("default", 256), ("minilm", 384)])
def test_a_bundled_model_bundle_has_searchable_vectors(repo: Path, model: str, dim: int) -> None:
    from cora_ci.embedding import load_embedder

    s = build(repo, model=model)
    b = open_bundle(repo / ".cora" / "index")
    emb = load_embedder(model)
    assert emb is not None and b.model == __import__("dataclasses").asdict(emb.info)
    assert s.embedded <= s.chunks and b.vectors is not None and b.vectors.size == s.chunks
    assert b.vectors.ndim == dim and mf.CODES in b.manifest["artifacts"]
    hits = b.vectors.search(emb.embed_query("split a Link header into URLs"), 3)
    assert b.chunks.chunk(b.chunks.row_of[hits[0][0]]).anchor == "src/util.py::parse_header_links"
    with pytest.raises(CoraError) as e:
        open_bundle(repo / ".cora" / "index", model_sha256="0" * 64)
    assert e.value.code == "CORA-BND-005"


def test_same_commit_gives_byte_identical_bundle(repo: Path, tmp_path: Path) -> None:
    build(repo, tmp_path / "a", model="default")
    build(repo, tmp_path / "b", model="default")
    a, b = _tree_state(tmp_path / "a"), _tree_state(tmp_path / "b")
    assert {k: v[::2] for k, v in a.items()} == {k: v[::2] for k, v in b.items()}


def test_source_date_epoch_sets_the_build_time(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1234567890")
    build(repo, model="none")
    assert open_bundle(repo / ".cora" / "index").manifest["built_at"] == 1234567890


def _texts(out: Path) -> str:
    b = open_bundle(out)
    return "\n".join(b.chunks.text(r) for r in range(len(b.chunks)))


def test_rev_staged_and_worktree_each_see_their_own_content(repo: Path, tmp_path: Path) -> None:
    util = repo / "src" / "util.py"
    util.write_text(util.read_text() + "\n\ndef staged_helper():\n    return 1\n")
    git(repo, "add", "src/util.py")
    util.write_text(util.read_text() + "\n\ndef worktree_only():\n    return 2\n")
    (repo / "new.py").write_text("def untracked_fn():\n    pass\n")
    build(repo, tmp_path / "rev", model="none", rev="HEAD")
    build(repo, tmp_path / "staged", model="none", kind="staged")
    build(repo, tmp_path / "wt", model="none", kind="worktree")
    rev, staged, wt = _texts(tmp_path / "rev"), _texts(tmp_path / "staged"), _texts(tmp_path / "wt")
    assert "staged_helper" not in rev and "worktree_only" not in rev
    assert "staged_helper" in staged and "worktree_only" not in staged and "untracked_fn" not in staged
    assert "worktree_only" in wt and "untracked_fn" in wt
    src = {k: open_bundle(tmp_path / k).manifest["source"] for k in ("rev", "staged", "wt")}
    assert (
        src["rev"]["dirty"] is False and src["staged"]["tree"] == "staged" and src["staged"]["dirty"] is True
    )
    assert src["wt"]["tree"] == "worktree" and src["wt"]["dirty"] is True
    wt_files = open_bundle(tmp_path / "wt").manifest["files"]
    blob = wt_files["blob"][wt_files["path"].index("src/util.py")]
    assert (
        blob
        == subprocess.run(["git", "hash-object", str(util)], capture_output=True, text=True).stdout.strip()
    )


def test_older_rev_and_config_from_that_commit(repo: Path, tmp_path: Path) -> None:
    first = git(repo, "rev-parse", "HEAD").strip()
    (repo / ".cora.toml").write_text('exclude = ["docs/**"]\n')
    (repo / "src" / "later.py").write_text("def later():\n    pass\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "second")
    build(repo, tmp_path / "old", model="none", rev=first)
    build(repo, tmp_path / "new", model="none")
    old = open_bundle(tmp_path / "old").manifest["files"]["path"]
    new = open_bundle(tmp_path / "new").manifest["files"]["path"]
    assert "src/later.py" not in old and "docs/guide.md" in old
    assert "src/later.py" in new and "docs/guide.md" not in new


def test_plain_directory_without_git(tmp_path: Path) -> None:
    src = tmp_path / "plain"
    for name, text in dedent_files(FILES).items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    (src / ".gitignore").write_text("docs/\n")
    s = build(src, model="none")
    m = open_bundle(src / ".cora" / "index").manifest
    assert m["source"] == {"root": "plain", "kind": "dir", "commit": None, "tree": None, "dirty": False}
    assert "docs/guide.md" not in m["files"]["path"] and "src/auth.py" in m["files"]["path"]
    assert m["built_at"] is None and s.files == len(FILES) - 2 + 1  # the .gitignore is a text file too
    util = m["files"]["blob"][m["files"]["path"].index("src/util.py")]
    assert (
        util
        == hashlib.sha1(
            b"blob %d\0" % len((src / "src/util.py").read_bytes()) + (src / "src/util.py").read_bytes()
        ).hexdigest()
    )
    build(src, model="none")  # the bundle inside the directory is not indexed into itself
    assert not any(
        p.startswith(".cora") for p in open_bundle(src / ".cora" / "index").manifest["files"]["path"]
    )


def test_opening_and_searching_writes_nothing_in_the_bundle(repo: Path) -> None:
    build(repo, model="default")
    out = repo / ".cora" / "index"
    before = _tree_state(out)
    time.sleep(0.01)
    b = open_bundle(out)
    b.lexical.search("login", 5)
    assert b.vectors is not None
    b.vectors.search(b.vectors.get([b.chunks.ids[0]])[0], 3)
    b.chunks.text(0)
    assert _tree_state(out) == before
    assert sorted(os.listdir(out.parent)) == [".gitignore", ".index.lock", "index"]


def _corrupt(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("target", ["vectors.codes", "bm25/meta.json", "manifest.msgpack"])
def test_altered_files_are_detected(repo: Path, target: str) -> None:
    build(repo, model="default")
    out = repo / ".cora" / "index"
    _corrupt(out / target)
    with pytest.raises(CoraError) as e:
        open_bundle(out)
    assert e.value.code == "CORA-BND-003"
    if target == "manifest.msgpack":
        with pytest.raises(CoraError):
            check(out)
    else:
        assert check(out) == [f"{target}: checksum mismatch"]


def test_missing_and_extra_files_are_detected(repo: Path) -> None:
    build(repo, model="none")
    out = repo / ".cora" / "index"
    seg = next(p for p in (out / "bm25").iterdir() if p.suffix == ".idx")
    seg.rename(out / "stray.idx")
    with pytest.raises(CoraError) as e:
        open_bundle(out)
    assert e.value.code == "CORA-BND-003"
    problems = check(out)
    assert any("missing" in p for p in problems) and any("stray.idx: not listed" in p for p in problems)


def test_verification_is_cached_outside_the_bundle_but_notices_changes(repo: Path, tmp_path: Path) -> None:
    build(repo, model="none")
    out = repo / ".cora" / "index"
    b = open_bundle(out)
    cached = {p.name for p in (tmp_path / "cache" / "cora-ci" / "verified").iterdir()}
    assert len(cached) == 2 and "checked.json" in cached  # this bundle's file records; versions checked
    checked = json.loads((tmp_path / "cache" / "cora-ci" / "verified" / "checked.json").read_text())
    assert checked["manifest"] == [b.id]
    seg = next(p for p in (out / "bm25").iterdir() if p.suffix == ".term")
    _corrupt(seg)  # same size, new mtime: the cache entry no longer matches
    with pytest.raises(CoraError) as e:
        open_bundle(out)
    assert e.value.code == "CORA-BND-003"


def test_a_bundle_written_here_is_noted_as_checked_and_passes_the_checks_it_skips(
    repo: Path, tmp_path: Path
) -> None:
    build(repo, model="default")
    out = repo / ".cora" / "index"
    where = tmp_path / "cache" / "cora-ci" / "verified" / "checked.json"
    bundle_id = hashlib.sha256((out / mf.MANIFEST).read_bytes()).hexdigest()
    assert json.loads(where.read_text()) == {key: [bundle_id] for key in CONTENT_CHECKS}
    where.unlink()  # as on another machine: every deep check runs, and passes
    b = open_bundle(out)
    assert b.lexical.num_docs == len(b.chunks) and b.vectors is not None
    assert json.loads(where.read_text()) == {key: [b.id] for key in CONTENT_CHECKS}
    # `verify` trusts no record: a re-signed bad manifest noted as checked is still found out
    _rewrite_manifest(out, stats="not a table")
    bad_id = hashlib.sha256((out / mf.MANIFEST).read_bytes()).hexdigest()
    verified.note_written(bad_id)
    assert check(out) == [f"{mf.MANIFEST}: stats: expected a map"]


def _rewrite_manifest(out: Path, **changes: object) -> None:
    m = msgpack.unpackb((out / mf.MANIFEST).read_bytes(), raw=False, strict_map_key=False)
    m.update(changes)
    body = msgpack.packb(m, use_bin_type=True)
    (out / mf.MANIFEST).write_bytes(body)
    (out / mf.MANIFEST_SUM).write_text(f"{hashlib.sha256(body).hexdigest()}  {mf.MANIFEST}\n")


def test_a_chunk_id_held_by_two_files_is_refused(repo: Path) -> None:
    build(repo, model="none")
    out = repo / ".cora" / "index"
    m = msgpack.unpackb((out / mf.MANIFEST).read_bytes(), raw=False, strict_map_key=False)
    ids = list(m["files"]["ids"])
    a, b = [i for i, x in enumerate(ids) if x][:2]  # the first two files with chunks
    ids[b] = ids[a][:8] + ids[b][8:]
    _rewrite_manifest(out, files={**m["files"], "ids": ids})
    with pytest.raises(CoraError) as e:
        len(open_bundle(out).chunks)
    assert e.value.code == "CORA-BND-004" and "chunk ids are not unique" in e.value.message


def test_newer_major_format_is_refused_newer_minor_is_read(repo: Path) -> None:
    build(repo, model="none")
    out = repo / ".cora" / "index"
    _rewrite_manifest(out, format_version="12.7")
    assert len(open_bundle(out).chunks) > 0
    _rewrite_manifest(out, format_version="13.0")
    with pytest.raises(CoraError) as e:
        open_bundle(out)
    assert e.value.code == "CORA-BND-002" and "13.0" in e.value.message
    _rewrite_manifest(out, format="something-else")
    with pytest.raises(CoraError) as e:
        open_bundle(out)
    assert e.value.code == "CORA-BND-004"


def test_an_older_major_format_is_rebuilt_once_and_refused_by_readers(repo: Path) -> None:
    build(repo, model="none")
    out = repo / ".cora" / "index"
    _rewrite_manifest(out, format_version="5.1")  # format 5: 4-bit codes, the graph in wide arrays
    with pytest.raises(CoraError) as e:
        len(open_bundle(out).chunks)
    assert e.value.code == "CORA-BND-004" and "older" in e.value.message and "rebuild" in e.value.hint
    assert build(repo, model="none").rebuilt == "bundle format 5.1 -> 12.0"
    assert build(repo, model="none").rebuilt == ""


def test_a_failed_build_leaves_the_previous_bundle(repo: Path) -> None:
    build(repo, model="none")
    out = repo / ".cora" / "index"
    before = _tree_state(out)

    def boom(tmp: Path) -> dict[str, object]:
        (tmp / "partial").write_text("x")
        raise OSError(28, "No space left on device")

    with pytest.raises(CoraError) as e:
        write_bundle(out, boom)
    assert e.value.code == "CORA-BND-006"
    assert _tree_state(out) == before and sorted(os.listdir(out.parent)) == [
        ".gitignore",
        ".index.lock",
        "index",
    ]


def test_a_killed_build_leaves_the_previous_bundle(repo: Path) -> None:
    """SIGKILL a real `cora-ci index` while it writes; the old bundle must still open and verify."""
    build(repo, model="none")
    out = repo / ".cora" / "index"
    before = _tree_state(out)
    for i in range(300):  # enough files that the build takes a while
        (repo / "gen" / f"m{i}.py").parent.mkdir(exist_ok=True)
        (repo / "gen" / f"m{i}.py").write_text(
            "".join(f"def f{i}_{j}(x):\n    return x + {j}\n\n" for j in range(40))
        )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "many")
    proc = subprocess.Popen([sys.executable, "-m", "cora_ci", "index", str(repo), "--model", "none", "-q"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(
        p.name.startswith(".index.tmp-") for p in out.parent.iterdir()
    ):
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert _tree_state(out) == before
    assert check(out) == []
    assert open_bundle(out).manifest["stats"]["files"] == len(FILES) - 1


def test_bad_input_errors(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(CoraError) as e:
        build(tmp_path / "nope")
    assert e.value.code == "CORA-IO-001"
    with pytest.raises(CoraError) as e:
        build(repo, rev="no-such-branch", model="none")
    assert e.value.code == "CORA-IO-003"
    victim = tmp_path / "precious"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine")
    with pytest.raises(CoraError) as e:
        build(repo, victim, model="none")
    assert e.value.code == "CORA-BND-006" and (victim / "keep.txt").read_text() == "mine"
    with pytest.raises(CoraError) as e:
        open_bundle(tmp_path / "absent")
    assert e.value.code == "CORA-BND-001"


def test_interrupted_swap_falls_back_to_the_old_copy(repo: Path) -> None:
    build(repo, model="none")
    out = repo / ".cora" / "index"
    out.rename(out.with_name("index.old"))  # what two-rename swapping leaves if killed in between
    assert len(open_bundle(out).chunks) > 0


@pytest.mark.skipif(sys.platform != "linux", reason="renameat2 is Linux's")
def test_an_update_swaps_its_bundle_in_atomically_on_linux(tmp_path: Path) -> None:
    from cora_ci.bundle.store import _exchange

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "new").write_text("new")
    (b / "old").write_text("old")
    assert _exchange(a, b)  # one system call: a reader finds one bundle or the other, never none
    assert [p.name for p in b.iterdir()] == ["new"] and [p.name for p in a.iterdir()] == ["old"]


def test_reading_bm25_leaves_no_shadow_directory(repo: Path) -> None:
    import tempfile

    from cora_ci.bundle.lexical import SHADOW_DIR

    build(repo, model="none")
    where = Path(SHADOW_DIR or tempfile.gettempdir())
    before = set(where.glob("cora-bm25-*"))
    lex = open_bundle(repo / ".cora" / "index").lexical
    assert set(where.glob("cora-bm25-*")) == before  # the links go once the searcher holds the files
    assert lex.search("parse_header_links", 3) and lex.search("fetchUser", 3)


def test_the_scratch_of_a_killed_process_is_removed_by_the_next_update(tmp_path: Path) -> None:
    """A build's BM25 scratch index and a reader's links sit in tmpfs under their process's id: a
    killed one's (SIGKILL, the kernel's OOM killer) would hold memory until the machine restarts.
    The next update removes those whose process is gone, and old ones named without it."""
    import subprocess
    import sys
    import time

    from cora_ci.bundle.leftovers import remove_dead_scratch

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    names = {
        f".bm25-{dead}-ab12cd_e": False, f"cora-bm25-{dead}-x9y8z7w6": False,  # its process is gone
        f".bm25-{os.getpid()}-ab12cd_e": True, f"cora-bm25-{os.getpid()}-q1": True,  # a live one's
        ".bm25-oldstyle": False, "cora-bm25-fresh": True,  # named without a process: by age
        ".bm25-notes.txt": True, "other-dir": True,  # a file, and not ours
    }  # fmt: skip
    for name in names:
        (tmp_path / name).write_text("x") if name.endswith(".txt") else (tmp_path / name).mkdir()
    day_ago = time.time() - 2 * 24 * 3600
    os.utime(tmp_path / ".bm25-oldstyle", (day_ago, day_ago))
    remove_dead_scratch(tmp_path)
    assert {n: (tmp_path / n).exists() for n in names} == names


def test_parallel_chunking_gives_the_serial_bundle(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cora_ci.build import chunks

    monkeypatch.setattr(chunks, "_PARALLEL_MIN", 10**9)
    serial = build(repo, tmp_path / "serial", model="none")
    monkeypatch.setattr(chunks, "_PARALLEL_MIN", 2)
    monkeypatch.setattr(chunks, "_workers", lambda files: 2)  # even where the machine has one core
    parallel = build(repo, tmp_path / "parallel", model="none")
    assert parallel.chunks == serial.chunks and "refs" in parallel.stages
    a, b = _tree_state(tmp_path / "serial"), _tree_state(tmp_path / "parallel")
    assert {k: v[::2] for k, v in a.items()} == {k: v[::2] for k, v in b.items()}


def test_an_unread_file_crosses_to_a_worker() -> None:
    import pickle

    from cora_ci.files.text import Unread

    u = pickle.loads(pickle.dumps(Unread("CORA-CHK-004", "too big", 5_000_000)))
    assert isinstance(u, Unread) and (u.code, u.reason, len(u), bytes(u)) == (
        "CORA-CHK-004",
        "too big",
        5_000_000,
        b"",
    )


def test_an_older_minor_format_is_updated_by_a_full_build(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A minor version may change what a full build writes (5.1 changed a blob's column order):
    an update of an older minor's bundle rebuilds it, so the bundle is the bytes a full build
    writes, and the newer minor's readers still read the older one."""
    build(repo, model="none")
    out = repo / ".cora" / "index"
    monkeypatch.setattr(mf, "FORMAT_VERSION", (mf.FORMAT_VERSION[0], mf.FORMAT_VERSION[1] + 1))
    assert len(open_bundle(out).chunks) > 0
    assert build(repo, model="none").rebuilt == "bundle format 12.0 -> 12.1"
    assert build(repo, model="none").rebuilt == ""


def test_a_manifest_verified_on_this_machine_is_not_hashed_again(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manifest has a verified record like every other file (size, mtime, inode and sha256):
    the writer leaves one, a reader without one hashes the manifest once and leaves one, and a
    manifest replaced by other bytes is hashed again and refused."""
    build(repo, model="none")
    out = repo / ".cora" / "index"
    size = (out / mf.MANIFEST).stat().st_size
    hashed: list[int] = []
    real = hashlib.sha256

    def counting(data: bytes = b"") -> object:
        hashed.append(len(data))
        return real(data)

    monkeypatch.setattr(hashlib, "sha256", counting)
    open_bundle(out)
    assert size not in hashed  # recorded by the writer
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "other-cache"))  # a machine without records
    open_bundle(out)
    assert hashed.count(size) == 1
    open_bundle(out)
    assert hashed.count(size) == 1
    body = (out / mf.MANIFEST).read_bytes()
    (out / "altered").write_bytes(body[:-1] + bytes([body[-1] ^ 1]))  # same size, a new file
    os.replace(out / "altered", out / mf.MANIFEST)
    with pytest.raises(CoraError) as e:
        open_bundle(out)
    assert e.value.code == "CORA-BND-003" and "checksum mismatch" in e.value.message
