"""Reading a bundle's manifest lazily: its shards as they are first needed (`Shards`), the file
rows a build works on (`Rows`), and the chunk table readers use (`ChunkTable`).

`manifest.py` owns the format (what a row, a shard and the top manifest hold, and how they pack);
this module only reads what it wrote, so opening a large bundle reads the top manifest alone and
a query decompresses just the files whose chunks it shows.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from cora_ci.bundle import schema
from cora_ci.bundle.manifest import (
    CHUNK_COLUMNS,
    MANIFEST,
    SHARD_COLUMNS,
    TOP_COLUMNS,
    bucket_of,
    chunk_columns,
    table,
    undiags,
    unpack_meta,
    unpack_shard,
)
from cora_ci.chunking.model import Chunk
from cora_ci.errors import CoraError


def position(paths: list[str], path: str) -> int | None:
    """`path`'s index in a file table's path column (sorted), or None."""
    i = bisect.bisect_left(paths, path)
    return i if i < len(paths) and paths[i] == path else None


class Shards:
    """The shards of the bundle at `root`: each is read (`read(name)`, verified bytes) and unpacked
    when one of its files is first asked for, then kept. A shard that passed its checksum but is
    not what the top manifest says (written wrong) is CORA-BND-004, naming the file."""

    def __init__(self, root: Path, manifest: dict[str, Any], read: Callable[[str], bytes]) -> None:
        self.names: list[str | None] = manifest["shards"]
        self._root = root
        self._top: dict[str, list[Any]] = manifest["files"]
        self._read = read
        self._loaded: dict[int, dict[str, Any]] = {}
        # every text block read, by `blocks.key` of its bytes, once an update asks (`record`): it
        # writes a shard anew from the rows it read and compresses again only the blocks that
        # changed; a reader hashes nothing (blake2b was ~4% of a sentence query's instructions)
        self.seen: dict[bytes, bytes] | None = None

    def record(self) -> None:
        """Note the blocks read from now on in `seen` (shards loaded before are not noted: their
        blocks would be compressed again, to the same bytes)."""
        if self.seen is None:
            self.seen = {}

    @cached_property
    def index(self) -> dict[str, int]:
        """Each file's index in the top file table."""
        return {p: i for i, p in enumerate(self._top["path"])}

    def top(self, fi: int, column: str) -> Any:
        return self._top[column][fi]

    def top_column(self, column: str) -> list[Any]:
        """A whole column of the top file table."""
        col: list[Any] = self._top[column]
        return col

    @cached_property
    def _where(self) -> tuple[list[int], list[int], list[list[str]]]:
        """Each file's bucket and its index in that bucket's shard (both are sorted by path), and
        each bucket's paths."""
        members: list[list[str]] = [[] for _ in self.names]
        buckets, slots = [], []
        for p in self._top["path"]:
            b = bucket_of(p, len(self.names))
            buckets.append(b)
            slots.append(len(members[b]))
            members[b].append(p)
        return buckets, slots, members

    def bucket_files(self, b: int) -> list[int]:
        """Indexes in the top file table of the files of bucket `b`, in path order: the order of
        its shard's rows and of its BM25 segment's documents."""
        return self._bucket_files[b]

    @cached_property
    def _bucket_files(self) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in self.names]
        for fi, b in enumerate(self._where[0]):
            out[b].append(fi)
        return out

    def bucket(self, b: int) -> dict[str, Any]:
        """The file table of bucket `b` (shard columns)."""
        if b not in self._loaded:
            paths = self._where[2][b]
            name = self.names[b]
            if name is None:
                if paths:
                    raise CoraError("CORA-BND-004", f"{self._root / MANIFEST}: bucket {b}: no shard")
                self._loaded[b] = {k: [] for k in SHARD_COLUMNS}
            else:
                data = self._read(name)
                try:
                    self._loaded[b] = unpack_shard(data, b, len(self.names), paths, self.seen)
                except Exception as e:
                    raise CoraError("CORA-BND-004", f"{self._root / name}: {type(e).__name__}: {e}") from None
        return self._loaded[b]

    def damaged(self, fi: int, what: str) -> CoraError:
        """CORA-BND-004 naming the shard of the file at index `fi`: its content is not what it should be."""
        name = self.names[self._where[0][fi]] or MANIFEST
        return CoraError("CORA-BND-004", f"{self._root / name}: {what}")

    def get(self, fi: int, column: str) -> Any:
        """One shard column of the file at index `fi` of the top file table; a file's texts are
        cut from their block, CORA-BND-004 where it does not hold them."""
        shard = self.bucket(self._where[0][fi])
        try:
            return shard[column][self._where[1][fi]]
        except ValueError as e:
            raise self.damaged(fi, f"texts of {self._top['path'][fi]!r}: {e}") from None

    def row(self, fi: int, texts: bool = True) -> dict[str, Any]:
        """The whole row (FILE_COLUMNS) of the file at index `fi`; without its `texts` (read from
        its block) unless `texts`."""
        shard = self.bucket(self._where[0][fi])
        i = self._where[1][fi]
        row = {**{k: self._top[k][fi] for k in TOP_COLUMNS}, **{k: shard[k][i] for k in SHARD_COLUMNS[:-1]}}
        return {**row, "texts": self.get(fi, "texts")} if texts else row

    def table(self) -> dict[str, list[Any]]:
        """The whole file table (FILE_COLUMNS), as one manifest would hold it: reads every shard."""
        return table([self.row(fi) for fi in range(len(self._top["path"]))])


class Rows(Mapping[str, dict[str, Any]]):
    """File rows by path, as a build sees them: the files `paths` of an open bundle (`shards`),
    plus rows `put` by the build, which win. Top columns are read without loading a shard
    (`top`); a whole row (`rows[path]`) loads its file's shard, so an update reads only the
    shards of the files it looks at."""

    def __init__(self, shards: Shards | None = None, paths: Iterable[str] | None = None) -> None:
        self._shards = shards
        self._index = shards.index if shards is not None else {}
        self._paths = set(self._index if paths is None else paths)
        self._own: dict[str, dict[str, Any]] = {}
        self._tops: dict[str, dict[str, Any]] = {}  # top columns set without reading the row
        self._sorted: list[str] | None = None

    def put(self, row: dict[str, Any]) -> None:
        self._own[row["path"]] = row
        if row["path"] not in self._paths:
            self._paths.add(row["path"])
            self._sorted = None
        self._tops.pop(row["path"], None)

    def set_top(self, path: str, column: str, value: Any) -> None:
        """Change one top column of a file (its new edges) without reading its shard."""
        if path in self._own:
            self._own[path] = {**self._own[path], column: value}
        else:
            self._tops.setdefault(path, {})[column] = value

    def __getitem__(self, path: str) -> dict[str, Any]:
        if path in self._own:
            return self._own[path]
        if path not in self._paths or self._shards is None:
            raise KeyError(path)
        return {**self._shards.row(self._index[path]), **self._tops.get(path, {})}

    def __contains__(self, path: object) -> bool:
        return path in self._paths

    def __iter__(self) -> Iterator[str]:
        if self._sorted is None:
            self._sorted = sorted(self._paths)
        return iter(self._sorted)

    def __len__(self) -> int:
        return len(self._paths)

    def paths(self) -> AbstractSet[str]:
        """The paths, unsorted: set operations in C where iterating sorts them (~10 ms at 30k)."""
        return self._paths

    def top(self, path: str, column: str) -> Any:
        """One top column (TOP_COLUMNS) of a file, without reading its shard."""
        if path in self._own:
            return self._own[path][column]
        if path not in self._paths or self._shards is None:
            raise KeyError(path)
        top = self._tops.get(path)
        if top is not None and column in top:
            return top[column]
        return self._shards.top(self._index[path], column)

    def column(self, column: str) -> dict[str, Any]:
        """One top column of every file, by path: the previous table's values in bulk, then the
        cells `put` or `set_top` changed (not a lookup per file: ~0.1 s a column at 30k files)."""
        out: dict[str, Any] = {}
        if self._shards is not None:
            values = self._shards.top_column(column)
            whole = len(self._paths) == len(self._index) and not (self._paths - self._index.keys())
            out = dict(zip(self._index, values, strict=True)) if whole else {
                p: values[i] for p, i in self._index.items() if p in self._paths}  # fmt: skip
        for p, t in self._tops.items():
            if column in t and p in self._paths:
                out[p] = t[column]
        for p, row in self._own.items():
            out[p] = row[column]
        return out

    def top_table(self) -> dict[str, list[Any]]:
        """The top manifest's file table of these rows, sorted by path: the previous table's
        columns taken whole where a file is unchanged, then its changed cells set (a column copy
        per column, not a lookup per cell: ~0.5 s less at 30k files; copied as they are when the
        files are the previous ones, ~20 ms less)."""
        if self._shards is None:
            paths = sorted(self._paths)
            return {k: [self._own[p][k] for p in paths] for k in TOP_COLUMNS}
        if len(self._paths) == len(self._index) and self._paths == self._index.keys():
            paths = self._shards.top_column("path")  # the same files (an edit): the columns copied
            table = {k: list(self._shards.top_column(k)) for k in TOP_COLUMNS}
        else:
            paths = sorted(self._paths)
            at = [self._index.get(p, -1) for p in paths]
            table = {k: [col[i] if i >= 0 else None for i in at] for k, col in
                     ((k, self._shards.top_column(k)) for k in TOP_COLUMNS)}  # fmt: skip
        changed = set(self._own) | set(self._tops)
        if changed:
            where = {p: n for n, p in enumerate(paths)} if len(changed) > 64 else None
            for p in changed & self._paths:
                n = where[p] if where is not None else bisect.bisect_left(paths, p)
                for k in TOP_COLUMNS:
                    table[k][n] = self.top(p, k)
        return table


class ChunkTable:
    """Chunks of a loaded manifest, in file order then chunk order, rebuilt as `Chunk` records on
    demand: a file's blob is read (with its shard) and decompressed when one of its chunks is
    first asked for. Ids and order come from the top manifest alone."""

    def __init__(self, manifest: dict[str, Any], shards: Shards) -> None:
        self._f = manifest["files"]
        self._shards = shards
        counts = [len(b) // 8 for b in self._f["ids"]]
        self._starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64).tolist()
        flat = b"".join(self._f["ids"])
        self.id_array: npt.NDArray[np.uint64] = np.frombuffer(flat, dtype="<u8").astype(np.uint64)
        self.ids: list[int] = self.id_array.tolist()
        self._data = lru_cache(maxsize=256)(self._decode)
        self._chunks = lru_cache(maxsize=256)(self._build)
        self.meta_columns = lru_cache(maxsize=4096)(self._meta_columns)

    def __len__(self) -> int:
        return len(self.ids)

    @cached_property
    def row_of(self) -> dict[int, int]:
        """Each chunk id's row; made on first use (~0.15 s at 360k chunks, which an update never needs)."""
        return dict(zip(self.ids, range(len(self.ids)), strict=True))  # ~10% less than a comprehension

    def file_of(self, row: int) -> int:
        """Index in the file table of the file holding chunk `row`."""
        return bisect.bisect_right(self._starts, row) - 1

    def file_path(self, fi: int) -> str:
        path: str = self._f["path"][fi]
        return path

    def file_lang(self, fi: int) -> str:
        lang: str = self._f["lang"][fi]
        return lang

    def file_index(self, path: str) -> int | None:
        """Index in the file table of `path` (sorted by path), or None."""
        return position(self._f["path"], path)

    def file_rows(self, fi: int) -> range:
        """Rows of the chunks of the file at index `fi`: contiguous, in chunk order."""
        return range(self._starts[fi], self._starts[fi + 1])

    def _decode(self, fi: int) -> dict[str, Any]:
        blob = self._shards.get(fi, "data")  # reads the shard: its CORA-BND-003 as it is
        try:
            cols = chunk_columns(blob, self._shards.get(fi, "texts"))
            return schema.check_chunk_columns(cols, CHUNK_COLUMNS, self._file_ids(fi))
        except Exception as e:
            raise self._shards.damaged(fi, f"chunks of {self.file_path(fi)!r}: {e}") from None

    def _file_ids(self, fi: int) -> list[int]:
        return self.ids[self._starts[fi] : self._starts[fi + 1]]

    def _meta_columns(self, fi: int) -> dict[str, list[Any]]:
        """The light chunk columns of file `fi` (no text, header, hierarchy, elided, tokens)."""
        blob = self._shards.get(fi, "data")
        try:
            return unpack_meta(blob, self._file_ids(fi))
        except Exception as e:
            raise self._shards.damaged(fi, f"chunks of {self.file_path(fi)!r}: {e}") from None

    def text(self, row: int) -> str:
        fi = self.file_of(row)
        text: str = self._data(fi)["text"][row - self._starts[fi]]
        return text

    def chunk(self, row: int) -> Chunk:
        fi = self.file_of(row)
        chunk: Chunk = self._chunks(fi)[row - self._starts[fi]]
        return chunk

    def file_chunks(self, fi: int) -> list[Chunk]:
        """Every chunk of the file at index `fi` of the file table (built once, then cached)."""
        return list(self._chunks(fi))

    def _build(self, fi: int) -> tuple[Chunk, ...]:
        c, f = self._data(fi), self._f
        ids = self.ids[self._starts[fi] : self._starts[fi + 1]]
        children: dict[int, list[int]] = {}
        for cid, parent in zip(ids, c["parent"], strict=True):
            if parent is not None:
                children.setdefault(parent, []).append(cid)
        return tuple(
            Chunk(
                id=cid,
                path=f["path"][fi],
                lang=f["lang"][fi],
                kind=c["kind"][i],
                symbol=(c["symbols"][i] or [""])[0],
                symbols=c["symbols"][i],
                anchor=(c["anchors"][i] or [None])[0],
                anchors=c["anchors"][i],
                hierarchy=c["hierarchy"][i],
                parent=c["parent"][i],
                children=children.get(cid, []),
                start_line=c["start_line"][i],
                end_line=c["end_line"][i],
                tokens=c["tokens"][i],
                header=c["header"][i],
                text=c["text"][i],
                strategy=f["strategy"][fi],
                diagnostics=undiags(c["diagnostics"][i]),
                elided=[(a, b) for a, b in c["elided"][i]],
            )
            for i, cid in enumerate(ids)
        )

    def column(self, name: str) -> list[Any]:
        """One chunk column (see CHUNK_COLUMNS) over the whole table: decompresses every file."""
        return [v for fi in range(len(self._f["path"])) for v in self._data(fi)[name]]
