"""The benchmark corpora: public code at pinned versions from PyPI and npm, checked by sha256.

Every bench script that needs real code takes it from here, so a figure names the exact bytes it
was measured on and anyone can fetch the same ones: `pip download` of an sdist, `npm pack` of a
tarball, into bench/.cache/corpora/ (gitignored; `CORA_BENCH_CACHE` moves bench/.cache). An
archive whose sha256 differs from its pin is deleted and the run stops: nothing is vendored, and
nothing unverified is measured.

`synthetic_repo` makes the scale repositories (1k, 10k files) out of these sources, deterministically.

    python bench/corpora.py     # download and verify every pin, print what each holds
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import keyword
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CACHE_ROOT = Path(os.environ.get("CORA_BENCH_CACHE", ROOT / ".cache"))
CACHE = CACHE_ROOT / "corpora"
GIT_DATE = "2026-01-01T00:00:00Z"  # fixed commit dates: the same corpus gives the same commits


@dataclass(frozen=True)
class Corpus:
    name: str
    registry: str  # pypi | npm
    version: str
    sha256: str  # of the sdist or the npm tarball
    subdir: str = ""  # the sources, relative to the archive's top directory ("" = all of it)
    language: str = "python"


CORPORA = (
    Corpus("attrs", "pypi", "26.1.0", "d03ceb89cb322a8fd706d4fb91940737b6642aa36998fe130a9bc96c985eff32"),
    Corpus("click", "pypi", "8.5.1", "9bbfada76703fd1d784b83eea012e3e8c6a001a876543ef104fa56aaaeb072b4"),
    Corpus("itsdangerous", "pypi", "2.2.0",
           "e0050c0b7da1eea53ffaf149c0cfbb5c6e2e2b69c4bef22c81fa6eb73e5f6173"),
    Corpus("jinja2", "pypi", "3.1.6", "0137fb05990d35f1275a587e9aee6d56da821fc83491a0fb838183be43f66d6d"),
    Corpus("werkzeug", "pypi", "3.1.9", "55ca7c70a75689be937aa27f8ff4b018f06ff4838fc73045560bf0f5a1291060"),
    Corpus("markupsafe", "pypi", "3.0.4", "2e9ad7dd851bf45fab9f75cbff4cb493fee9979e8d8c7c9c3ee119022518edd6"),
    Corpus("zod", "npm", "4.6.7", "84efd155bed93270286e793fc951be270b536cbd5b0eeb111f0fa3967201d698",
           "src", "typescript"),
    Corpus("rxjs", "npm", "7.8.2", "2312f8ffd9726ffd7bd53ea12c5f13663d09a3dc3326f448c70b88f5ef6fac82",
           "src", "typescript"),
)  # fmt: skip
BY_NAME = {c.name: c for c in CORPORA}


class CorpusError(SystemExit):
    """A corpus could not be fetched or failed its checksum: the run cannot measure honestly."""


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _download(c: Corpus, into: Path) -> Path:
    """The registry's own client fetches the archive into the empty directory `into`."""
    if c.registry == "pypi":
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
               f"{c.name}=={c.version}", "-d", str(into)]  # fmt: skip
    else:
        cmd = ["npm", "pack", "--silent", f"{c.name}@{c.version}", "--pack-destination", str(into)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    found = sorted(into.iterdir())
    if p.returncode != 0 or len(found) != 1:
        raise CorpusError(f"download of {c.name} {c.version} failed: {p.stderr.strip()[-500:]}")
    return found[0]


def archive(c: Corpus) -> Path:
    """The pinned archive, downloaded once and verified on every use (a cached file can rot too)."""
    dest = CACHE / "archives" / f"{c.name}-{c.version}{'.tgz' if c.registry == 'npm' else '.tar.gz'}"
    if not dest.exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
            _download(c, Path(tmp)).rename(dest)
    got = sha256_of(dest)
    if got != c.sha256:
        dest.unlink()
        raise CorpusError(f"{c.name} {c.version}: sha256 {got} is not the pinned {c.sha256}; deleted")
    return dest


def source_dir(c: Corpus) -> Path:
    """The corpus's sources, unpacked from its verified archive (whole sdist, or `subdir` of a tarball)."""
    tar = archive(c)
    top = CACHE / "src" / f"{c.name}-{c.version}"
    if not top.exists():
        tmp = top.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        with tarfile.open(tar) as tf:
            tf.extractall(tmp, filter="data")
        (only,) = tmp.iterdir()  # sdists and npm tarballs hold one top directory
        only.rename(top)
        tmp.rmdir()
    src = top / c.subdir
    if not src.is_dir():
        raise CorpusError(f"{c.name} {c.version}: no {c.subdir} in the archive")
    return src


def fetch(names: list[str] | None = None) -> dict[str, Path]:
    """Source directories by corpus name (all of them by default)."""
    return {c.name: source_dir(c) for c in CORPORA if names is None or c.name in names}


def cached_dirs() -> list[Path]:
    """Source directories already unpacked, without any download (for optional extra inputs)."""
    out = []
    for c in CORPORA:
        top = CACHE / "src" / f"{c.name}-{c.version}"
        src = top / c.subdir
        if src.is_dir():
            out.append(src)
    return out


def git_commit(repo: Path, message: str, init: bool = False) -> None:
    """Commit everything with a fixed author and date, so the same files give the same commit."""
    env = {**os.environ, "GIT_AUTHOR_DATE": GIT_DATE, "GIT_COMMITTER_DATE": GIT_DATE}
    who = ["-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    steps = [["init", "-q", "-b", "main"]] if init else []
    for cmd in [*steps, ["add", "-A", "-f"], [*who, "commit", "-qm", message]]:
        subprocess.run(["git", *cmd], cwd=repo, check=True, capture_output=True, env=env)


# ----------------------------------------------------------------------------- scale


CODE = {".py", ".ts"}
MIN_FILE, MAX_FILE = 200, 40_000  # bytes: skip stubs and generated tables
_DEFINES = re.compile(
    r"^[ \t]*(?:(?:export|default|declare|abstract|async)\s+)*"
    r"(?:def|class|function\*?|interface|enum|type|const|let|var)\s+([A-Za-z_$][\w$]*)",
    re.M,
)
_KEEP = frozenset(keyword.kwlist) | {
    "constructor",
    "default",
    "function",
    "interface",
    "extends",
    "this",
    "type",
    "const",
    "readonly",
    "keyof",
    "typeof",
    "infer",
    "declare",
    "namespace",
    "string",
    "number",
    "boolean",
    "unknown",
    "never",
    "object",
    "symbol",
    "super",
    "async",
    "await",
    "export",
    "import",
    "void",
}


def code_files() -> list[tuple[str, Path]]:
    """(relpath in the synthetic repo, source) of every code file of every corpus, in a fixed order."""
    out = []
    for name, src in fetch().items():
        for p in sorted(src.rglob("*")):
            if (p.suffix in CODE and not p.name.endswith(".d.ts") and p.is_file() and not p.is_symlink()
                    and MIN_FILE <= p.stat().st_size <= MAX_FILE):  # fmt: skip
                out.append((f"{name}/{p.relative_to(src).as_posix()}", p))
    return out


def variant(text: str, copy: int) -> str:
    """Copy `copy` of a file: the names it defines get a suffix (copy 0 is the original).

    Without this the copies' chunks would be identical texts, which a build embeds once: a 10k-file
    repository of plain copies would measure a tenth of the embedding work.
    """
    if copy == 0:
        return text
    names = {n for n in _DEFINES.findall(text) if len(n) >= 4 and n not in _KEEP and not n.startswith("__")}
    if not names:
        return text
    pattern = re.compile(r"(?<![\w$])(" + "|".join(map(re.escape, sorted(names))) + r")(?![\w$])")
    return pattern.sub(lambda m: f"{m.group(1)}_c{copy}", text)


def synthetic_files() -> Iterator[tuple[str, bytes]]:
    """(path, content) without end: every corpus code file, then copy 1 of each, copy 2, ..."""
    files = code_files()
    copy = 0
    while True:
        for rel, p in files:
            text = p.read_text(encoding="utf-8", errors="replace")
            yield f"c{copy:02d}/{rel}", variant(text, copy).encode("utf-8")
        copy += 1


def synthetic_repo(dest: Path, n_files: int) -> Path:
    """A one-commit git repository of `n_files` files from `synthetic_files` (the same bytes every time)."""
    repo = dest / f"synthetic-{n_files}"
    if (repo / ".git").exists():
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    for rel, data in itertools.islice(synthetic_files(), n_files):
        out = repo / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    git_commit(repo, f"synthetic {n_files}", init=True)
    return repo


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.parse_args()
    for c in CORPORA:
        src = source_dir(c)
        files = [p for p in src.rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
        print(f"{c.name:13} {c.version:8} {c.registry:4} sha256 ok  {len(files):5} files "
              f"{size / 1e6:6.2f} MB  {src}")  # fmt: skip
    print(f"code files for the synthetic repositories: {len(code_files())}")


if __name__ == "__main__":
    main()
