"""Records of files already checked by sha256, kept outside anything they describe.

A record is `[size, mtime_ns, inode, sha256]`: a file whose first three are unchanged since it
was hashed is not hashed again. Bundles (every open) and the default model (every hook run) use
it; a lost or unwritable record only costs a re-hash.

`checked`/`note_checked` remember which bundle versions (by their manifest's sha256, which pins
every other file's sha256) passed a deep check of their content: a query on a bundle seen before
does not walk its manifest, vector graph and BM25 metadata again (~0.2 s at 50k chunks). A bundle
written on this machine is noted as it is written (it is well formed by construction), so the
hook that updates it next pays no deep check either (~0.1 s at 10k files).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any


def record_file(name: str) -> Path:
    """Where the records named `name` live: `$XDG_CACHE_HOME/cora-ci/verified/<name>.json`."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "cora-ci" / "verified" / f"{name}.json"


def identity(path: Path) -> list[int]:
    """Size, mtime and inode: what must not have changed for a record to hold (OSError if absent)."""
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def load(where: Path) -> dict[str, Any]:
    try:
        records = json.loads(where.read_text())
    except (OSError, ValueError, RecursionError):
        return {}
    return records if isinstance(records, dict) else {}


def save(where: Path, records: dict[str, Any]) -> None:
    """Replace the records atomically; failing to save is not an error."""
    with contextlib.suppress(OSError):
        where.parent.mkdir(parents=True, exist_ok=True)
        tmp = where.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(records, sort_keys=True))
        os.replace(tmp, where)


_KEEP = 64  # bundle versions remembered per check
# The BM25 files' check is named after what it covers, so a cora-ci that checks more (the doc store
# and fast fields before tantivy opens them) does not trust a record an older one left.
BM25_CHECK = "bm25-store-fast"
CONTENT_CHECKS = ("manifest", BM25_CHECK, "vectors")  # the deep checks of `Bundle` and `read_manifest`


def checked(kind: str, bundle_id: str | None) -> bool:
    """Whether the bundle version `bundle_id` passed the deep check `kind` on this machine."""
    return bundle_id is not None and bundle_id in load(record_file("checked")).get(kind, [])


def note_checked(kind: str, bundle_id: str | None) -> None:
    """Remember that `bundle_id` passed `kind` (the most recent `_KEEP` per kind)."""
    _note(bundle_id, (kind,))


def note_written(bundle_id: str) -> None:
    """Remember a bundle version this machine just wrote as having passed every content check."""
    _note(bundle_id, CONTENT_CHECKS)


def _note(bundle_id: str | None, kinds: tuple[str, ...]) -> None:
    if bundle_id is None:
        return
    where = record_file("checked")
    records = load(where)
    for kind in kinds:
        seen = [b for b in records.get(kind, []) if isinstance(b, str) and b != bundle_id]
        records[kind] = [*seen[-(_KEEP - 1) :], bundle_id]
    save(where, records)
