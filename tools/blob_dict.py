"""Train the dictionary that compresses every file's `data` blob (`cora_ci/bundle/blobs.py`).

    python tools/blob_dict.py DIR... [--out cora_ci/bundle/blob.dict]

Each directory (a git checkout, or any directory of source) is indexed without a model into a
scratch bundle, and every file's blob as msgpack is a sample; zstd's trainer (deterministic: the
same samples give the same bytes) makes a 64 KB dictionary of them. Train on repositories the
size benchmarks do not measure, in several languages: the shipped one was made from
bench/corpora.py's eight packages (attrs, click, itsdangerous, jinja2, markupsafe, werkzeug, zod,
rxjs: `bench/.cache/corpora/src/*`) and BurntSushi/ripgrep 3fce3b5, spf13/viper 528f741,
square/okhttp 1682d9b and rails/thor d89dd72, chunked at chunker revision 76 (cora-ci 4386948);
a later chunker gives other samples, and the dictionary stays until a format changes it. Another
dictionary is another major bundle format: set `blobs.DICT_SHA256` to what this prints and bump
`manifest.FORMAT_VERSION`.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
from pathlib import Path

import msgpack
import zstandard

from cora_ci.build import build
from cora_ci.bundle import manifest as mf
from cora_ci.bundle import open_bundle

SIZE = 64 << 10  # 112 KB made axum's blobs 1.5% smaller than 64 KB; 32 KB 2% larger


def samples(source: Path) -> list[bytes]:
    """The msgpack of every indexed file's blob in a bundle of `source`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bundle"
        if not (source / ".git").exists():  # a plain directory: copied out of any repository around it
            source = Path(shutil.copytree(source, Path(tmp) / source.name, symlinks=True))
        build(source, out, model="none", full=True)
        b = open_bundle(out)
        rows = (b.shards.row(i) for i in range(len(b.shards.top_column("path"))))
        return [msgpack.packb(mf.unpack_blob(r["data"]), use_bin_type=True) for r in rows if r.get("data")]


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("sources", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=Path(__file__).parents[1] / "cora_ci/bundle/blob.dict")
    args = ap.parse_args()
    found: list[bytes] = []
    for source in sorted(args.sources, key=lambda p: p.name):
        mine = samples(source.resolve())
        print(f"{source.name}: {len(mine)} files, {sum(map(len, mine)) / 1e6:.2f} MB", file=sys.stderr)
        found += mine
    data = zstandard.train_dictionary(SIZE, found).as_bytes()
    args.out.write_bytes(data)
    print(f"{args.out}: {len(data)} bytes from {len(found)} blobs, sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main()
