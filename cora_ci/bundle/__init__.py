"""Stage 5: the bundle, a directory that holds everything a query needs and nothing else.

    manifest.msgpack   format, versions, source, model, config, boosts, files (path, blob id, chunk
                       ids, ...), the shard list, bm25 buckets, checksums of every other file
    manifest.sha256    the manifest's own checksum, in `sha256sum -c` form
    shards/            the rest of the files' rows (chunks, texts, graph links), one msgpack file
                       per bucket of files
    vectors.codes      each chunk vector's 2-bit code as bit planes, a row a chunk in the
                       manifest's order; absent: lexical only
    bm25/              tantivy index over identifier-aware terms, one segment per bucket of files

`open_bundle` is the only way in for readers: it verifies, checks the format and the model, and
never writes into the bundle directory. Shards are read when first needed.
"""

from __future__ import annotations

import os
import weakref
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cora_ci import verified
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.store import (
    pin,
    read_artifact,
    read_manifest_and_id,
    resolve,
    verified_records,
    verify_artifacts,
)
from cora_ci.errors import CoraError

if TYPE_CHECKING:  # imported where first used: a hook's no-op opens a bundle and reads neither index
    from cora_ci.bundle.lexical_reader import LexicalIndex
    from cora_ci.bundle.tables import ChunkTable, Shards
    from cora_ci.bundle.vectors import VectorIndex


class Bundle:
    """A verified, read-only bundle; indexes open lazily on first use, from the very directory
    that was verified (`base`, see `store.pin`), so an update swapping in a new bundle meanwhile
    gives this reader the old bundle's files or a clean CORA-BND-003, never a mix."""

    def __init__(
        self,
        root: Path,
        manifest: dict[str, Any],
        records: dict[str, list[Any]] | None = None,
        base: Path | None = None,
    ) -> None:
        self.root = root
        self.base = base or root  # where the files are read; `root` names them
        self.manifest = manifest
        self._records = records or {}  # files verified at open: [size, mtime_ns, inode, sha256]
        self.id: str | None = None  # the manifest's sha256, when opened with `open_bundle`
        self._segment_cache: dict[int, list[int]] = {}

    @property
    def records(self) -> dict[str, list[Any]]:
        """The records of the files verified at open: [size, mtime_ns, inode, sha256] by name."""
        return self._records

    @property
    def _verified_id(self) -> str | None:
        """The bundle id when every file was verified against the manifest at open (then a deep
        check passed by this id holds for these very files), else None."""
        return self.id if self._records else None

    def replaced(self) -> bool:
        """Whether the path this bundle was opened at now holds another one (an update swapped it)."""
        try:
            return self.base != self.root and not os.path.samestat(os.stat(self.root), os.stat(self.base))
        except OSError:
            return True

    def _current(self) -> None:
        """Refuse to read the indexes of an older major format: they are only ever rebuilt."""
        version = mf.parse_version(self.manifest["format_version"])
        if version[0] < mf.FORMAT_VERSION[0]:
            old, have = self.manifest["format_version"], ".".join(map(str, mf.FORMAT_VERSION))
            raise CoraError("CORA-BND-004", f"{self.root}: bundle format {old} is older than this cora-ci's "
                            f"{have}", "run `cora-ci index` to rebuild it")  # fmt: skip

    @cached_property
    def shards(self) -> Shards:
        """The rows of the files beyond the top manifest, read one shard at a time when needed."""
        from cora_ci.bundle.tables import Shards

        self._current()
        return Shards(self.root, self.manifest, self._read_shard)

    def _read_shard(self, name: str) -> bytes:
        want = self.manifest["artifacts"].get(name)
        if want is None:
            raise CoraError("CORA-BND-004", f"{self.root / mf.MANIFEST}: shard {name} is not listed")
        return read_artifact(self.root, name, want, self._records.get(name, []), self.base)

    @cached_property
    def chunks(self) -> ChunkTable:
        """The chunk table: ids and order from the top manifest, chunks from the shards when asked for."""
        from cora_ci.bundle.tables import ChunkTable

        try:
            return ChunkTable(self.manifest, self.shards)
        except Exception as e:  # a manifest that passed its checksum but was written wrong
            raise CoraError(
                "CORA-BND-004", f"{self.root / mf.MANIFEST}: chunk table unreadable: {e}"
            ) from None

    @property
    def model(self) -> dict[str, Any] | None:
        model: dict[str, Any] | None = self.manifest["model"]
        return model

    @cached_property
    def lexical(self) -> LexicalIndex:
        """The BM25 index: only the files the manifest lists, after its meta.json matched the
        manifest's segments (CORA-BND-004 naming the file otherwise)."""
        from cora_ci.bundle.lexical_reader import LexicalIndex

        self._current()
        names = [rel.split("/", 1)[1] for rel in self.manifest["artifacts"] if rel.startswith(mf.BM25 + "/")]
        known = verified.checked(verified.BM25_CHECK, self._verified_id)
        segments = None if known else self.manifest["lexical"]["segments"]
        index = LexicalIndex(self.base / mf.BM25, self._segment_ids, names, segments, self.root / mf.BM25,
                             keep=self)  # fmt: skip
        if not known:
            verified.note_checked(verified.BM25_CHECK, self._verified_id)
        return index

    def _segment_ids(self, segment: int) -> list[int]:
        """The chunk ids of BM25 segment `segment` in document order: the chunks of the files of its
        bucket (the `segment`-th non-empty one), files in path order, as `write_lexical` adds them
        (the buckets are the shards', `schema` checks that the counts agree)."""
        if segment not in self._segment_cache:
            segments = [(b, s[1]) for b, s in enumerate(self.manifest["lexical"]["segments"]) if s]
            if segment >= len(segments):
                raise CoraError(
                    "CORA-BND-004", f"{self.root / mf.BM25}: more segments than the manifest lists"
                )
            bucket, docs = segments[segment]
            ids = self.chunks.id_array
            rows = [r for fi in self.shards.bucket_files(bucket) for r in self.chunks.file_rows(fi)]
            got = ids[rows].tolist() if rows else []
            if len(got) != docs:
                raise CoraError("CORA-BND-004", f"{self.root / mf.MANIFEST}: bucket {bucket} lists {docs} "
                                f"documents for {len(got)} chunks")  # fmt: skip
            self._segment_cache[segment] = got
        return self._segment_cache[segment]

    @cached_property
    def vectors(self) -> VectorIndex | None:
        """The vectors, after their file's layout matched the manifest (CORA-BND-004 otherwise): a
        row a chunk, in the chunk table's order. The check is remembered, so that an update of a
        bundle this machine knows need not open it (nor import numpy) to trust it."""
        self._current()
        model = self.model
        if model is None:
            return None
        from cora_ci.bundle.vectors import VectorIndex

        index = VectorIndex(self.base, self.chunks.id_array, model["dim"], self.root)
        verified.note_checked("vectors", self._verified_id)
        return index

    @cached_property
    def graph_csr(self) -> Any:
        """The reference graph as numpy CSR arrays over all chunks: `graph.msgpack`, written with
        the bundle (~1 ms to read; the files' edges are not stored apart since 6.0)."""
        from cora_ci.graph.csr import unpack_csr

        self._current()
        want = self.manifest["artifacts"].get(mf.GRAPH)
        if want is None:
            raise CoraError("CORA-BND-004", f"{self.root / mf.MANIFEST}: {mf.GRAPH} is not listed")
        data = read_artifact(self.root, mf.GRAPH, want, self._records.get(mf.GRAPH, []), self.base)
        table = vars(self).get("chunks")  # its ids when a reader has it; no chunk table made for them
        rows = table.id_array if table is not None else mf.ids_of(b"".join(self.manifest["files"]["ids"]))
        try:
            return unpack_csr(data, rows)
        except Exception as e:
            raise CoraError("CORA-BND-004", f"{self.root / mf.GRAPH}: {type(e).__name__}: {e}") from None

    @cached_property
    def graph(self) -> Any:
        """The reference graph (`cora_ci.graph.Graph`, lists) over all chunks."""
        from cora_ci.graph.build import Graph

        c = self.graph_csr
        return Graph(c.ids.tolist(), c.indptr.tolist(), c.indices.tolist(), c.weights.tolist())


def open_bundle(path: Path, *, verify: bool = True, model_sha256: str | None = None) -> Bundle:
    """Open the bundle at `path`. `model_sha256`, when given, must be the model the bundle was built with.
    An update swapping a new bundle in while this one is verified (its files then vanish) makes
    the open start again on the new one, a few times at most."""
    for attempt in range(_OPEN_ATTEMPTS):
        root = resolve(path)
        base, fd = pin(root)
        try:
            bundle = _open_pinned(root, base, verify, model_sha256)
        except CoraError as e:
            swapped = fd is not None and not _still_at(root, fd)
            if fd is not None:
                os.close(fd)
            if e.code in ("CORA-BND-003", "CORA-BND-004") and swapped and attempt + 1 < _OPEN_ATTEMPTS:
                continue
            raise
        except BaseException:
            if fd is not None:
                os.close(fd)
            raise
        if fd is not None:
            weakref.finalize(bundle, os.close, fd)
        return bundle
    raise AssertionError("unreachable")


_OPEN_ATTEMPTS = 3


def _still_at(root: Path, fd: int) -> bool:
    """Whether the directory open as `fd` is still the one at `root`."""
    try:
        return os.path.samestat(os.stat(root), os.fstat(fd))
    except OSError:
        return False


def _open_pinned(root: Path, base: Path, verify: bool, model_sha256: str | None) -> Bundle:
    cache = verified_records(root) if verify else {}
    manifest, manifest_id, record = read_manifest_and_id(root, base, cache.get(mf.MANIFEST))
    records = None
    if verify:
        records = verify_artifacts(root, manifest, base=base, cache=cache, manifest_record=record)
    if model_sha256 is not None:
        have = (manifest["model"] or {}).get("model_sha256")
        if have != model_sha256:
            name = (manifest["model"] or {}).get("name", "none")
            raise CoraError("CORA-BND-005", f"{root} was built with model {name} ({str(have)[:12]}...)")
    bundle = Bundle(root, manifest, records, base)
    bundle.id = manifest_id
    return bundle
