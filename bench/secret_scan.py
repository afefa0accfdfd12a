"""Secrets screening: recall on planted fake secrets, false positives on real code, scan speed.

    python bench/secret_scan.py [--json FILE]

Recall: a fake secret of every format the screen knows (bench/secret_fakes.py: built here at run
time from random characters, so no literal token sits in the repository), planted in each place a
repository puts them (a Python string, a YAML value, a JSON value, an INI/properties line, a shell
export, a Markdown code block), is indexed with `cora-ci`'s chunker. It counts as caught when a
`CORA-SEC-002` diagnostic names one of its lines and none of its random characters is left in any
chunk (text, header, hierarchy, symbols, anchors). Goal (issue 20): >= 150 formats, recall >= 0.98,
none of the planted secrets in any chunk.

False positives: every file of the bench corpora (bench/corpora.py: PyPI sdists and npm packages)
chunked with the screen on; each `CORA-SEC-002` diagnostic is a false positive (these packages hold
no live credentials). Goal: <= 1 per 5,000 chunks.

Speed: the scan alone (`scan_lines`) over the corpora's files, best of three, in CPU time (the
machine is shared: wall time would measure the neighbours). Goal: not below ~12 MB/s.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from collections.abc import Callable

import corpora
from benchlib import Figures, json_option
from secret_fakes import FORMATS, MULTILINE, PIECES, Fake

from cora_ci.chunking import chunk_file
from cora_ci.chunking.model import Chunk
from cora_ci.chunking.secrets import scan_lines
from cora_ci.config import Config

PLACES = {
    "python": lambda v: ("settings.py", f'VALUE = """{v}"""\n' if "\n" in v else f'VALUE = "{v}"\n'),
    "yaml": lambda v: ("deploy.yaml", "env:\n  value: |\n" + "".join(f"    {x}\n" for x in v.split("\n"))),
    "json": lambda v: ("config.json", '{"value": "' + v.replace("\n", "\\n") + '"}\n'),
    "ini": lambda v: ("app.properties", f"value={v}\n" if "\n" not in v else f"# key\n{v}\n"),
    "shell": lambda v: (
        "deploy.sh",
        f"export VALUE='{v}'\n" if "\n" not in v else f"cat > key <<EOF\n{v}\nEOF\n",
    ),
    "markdown": lambda v: ("README.md", f"# Setup\n\n```\n{v}\n```\n"),
}
_PREAMBLE = b"def helper():\n    return 1\n\n\n"


def _texts(c: Chunk) -> str:
    return "\n".join([c.text, c.header, *c.hierarchy, *c.symbols, *c.anchors])


def plant(fake: Fake, place: str, rng: random.Random) -> tuple[bool, bool]:
    """(reported, kept): a diagnostic names a line of the secret; a random piece of it is in a chunk."""
    PIECES.clear()
    value = fake.make(rng)
    pieces = [p for p in PIECES if len(p) >= 8]
    name, text = PLACES[place](value)
    data = (_PREAMBLE if name.endswith(".py") else b"") + text.encode()
    result = chunk_file(name, data, Config())
    lines = data.decode().split("\n")
    first = next(i for i, line in enumerate(lines, 1) if value.split("\n")[0] in line)
    last = first + (value.count("\n") if place != "json" else 0)
    reported = any(d.code == "CORA-SEC-002" and first <= d.line <= last for d in result.diagnostics)
    kept_text = "\n".join(_texts(c) for c in result.chunks)
    # a piece's head, middle and tail: a redaction that left part of it would leave one of these
    kept = any(p[i : i + 8] in kept_text for p in pieces for i in (0, len(p) // 2 - 4, len(p) - 8))
    return reported, kept


def recall(fig: Figures) -> None:
    rng = random.Random(20)
    missed: list[str] = []
    total = 0
    for name, fake in FORMATS.items():
        for place in PLACES:
            if place == "json" and name in MULTILINE:
                continue
            reported, kept = plant(fake, place, rng)
            total += 1
            if kept or not reported:
                missed.append(
                    f"{name} in {place}: "
                    + ", ".join(
                        w for w, bad in (("not reported", not reported), ("left in a chunk", kept)) if bad
                    )
                )
    caught = 1 - len(missed) / total
    print(f"recall: {total - len(missed)}/{total} planted secrets caught ({len(FORMATS)} formats in up to "
          f"{len(PLACES)} places) = {caught:.3f}")  # fmt: skip
    for m in missed:
        print(f"  missed: {m}")
    fig.add("secrets.formats", "secret formats planted", len(FORMATS), "", (">=", 150), "issue 20")
    fig.add("secrets.recall", f"planted secrets caught ({total})", caught, "", (">=", 0.98), "issue 20")
    kept = sum(m.endswith("left in a chunk") for m in missed)
    fig.add("secrets.kept", "planted secrets left in a chunk", kept, "", ("<=", 0), "issue 20")


def _corpus_files(limit: int) -> list[tuple[str, str, bytes]]:
    out = []
    for c in corpora.CORPORA:
        root = corpora.source_dir(c)
        for p in sorted(root.rglob("*")):
            if p.is_file() and p.stat().st_size <= limit:
                out.append((c.name, p.relative_to(root).as_posix(), p.read_bytes()))
    return out


def false_positives(fig: Figures) -> None:
    cfg = Config()
    files = _corpus_files(cfg.max_file_bytes)
    chunks = found = 0
    kinds: Counter[str] = Counter()
    for corpus, path, data in files:
        r = chunk_file(path, data, cfg)
        chunks += len(r.chunks)
        for d in r.diagnostics:
            if d.code == "CORA-SEC-002":
                found += 1
                kinds[d.message.split(" ")[0]] += 1
                print(f"  found: {corpus} {path}:{d.line} {d.message}")
    per = found / chunks * 5000 if chunks else 0.0
    print(f"false positives: {found} CORA-SEC-002 finding(s) on real code, {chunks:,} chunks = {per:.2f} "
          f"per 5,000 {dict(kinds)}")  # fmt: skip
    fig.add("secrets.fp_per_5000", f"findings on real code, per 5,000 chunks ({chunks:,} chunks)", per, "",
            ("<=", 1.0), "issue 20")  # fmt: skip

    texts = [data.decode("utf-8", "replace").splitlines() for _, _, data in files]
    size = sum(len(data) for _, _, data in files)
    best = min(_cpu(lambda: [scan_lines(lines) for lines in texts]) for _ in range(3))
    print(f"scan speed: {size / 1e6 / best:.1f} MB/s ({size / 1e6:.1f} MB of the corpora's files, CPU time)")
    fig.add("secrets.scan_mb_s", "secrets scan speed (CPU time)", size / 1e6 / best, "MB/s", (">=", 12.0),
            "issue 20")  # fmt: skip


def _cpu(f: Callable[[], object]) -> float:
    t = time.process_time()
    f()
    return time.process_time() - t


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    json_option(ap)
    args = ap.parse_args(argv)
    fig = Figures("secrets")
    recall(fig)
    false_positives(fig)
    fig.write(args.json)


if __name__ == "__main__":
    main()
