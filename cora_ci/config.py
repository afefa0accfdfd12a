"""Configuration: `[tool.cora-ci]` in pyproject.toml or a top-level `.cora.toml`.

Unknown keys and bad values are errors naming the key, so a typo never silently falls back to a
default. The chunking part of the config has a stable hash: a change to it must rebuild a bundle.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from cora_ci.errors import CoraError

CHUNK_LEVELS = ("class", "method", "block")
SECRET_MODES = ("drop", "off")


@dataclass(frozen=True)
class LanguageConfig:
    chunk_level: str = "method"


@dataclass(frozen=True)
class Config:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_tokens: int = 800
    min_tokens: int = 48
    overlap_lines: int = 6
    lines_per_chunk: int = 60
    max_file_bytes: int = 2_000_000
    languages: dict[str, LanguageConfig] = field(default_factory=dict)
    secrets: str = "drop"  # "drop": skip secrets files, redact secrets in place; "off"
    secret_files: tuple[str, ...] = ()  # globs of more secrets files
    allow_secret_files: tuple[str, ...] = ()  # globs of files indexed although they look like secrets
    allow_secrets: tuple[str, ...] = ()  # `rule:KIND`, `fingerprint:HEX`, `path:GLOB`: findings not secrets
    lock_files: bool = False  # index dependency lock files (uv.lock, package-lock.json, ...); off: noise
    generated_pages: bool = False  # index HTML a documentation generator wrote (javadoc, jazzy, Sphinx, ...)
    # "default", "static", "minilm" (bundled), "none" (lexical only) or a model directory; unset:
    # the model of the bundle being updated (a bundled one, or none), else "default"
    model: str | None = None
    bundles: tuple[str, ...] = ()  # bundles of dependencies (paths, archives) that queries also search
    source: str = "defaults"  # where the config came from; not part of the hash

    def chunk_level(self, lang: str) -> str:
        lc = self.languages.get(lang)
        return lc.chunk_level if lc else "method"

    def chunker_hash(self) -> str:
        """Hash of everything that changes chunk output: the chunker's revision and this config
        (not include/exclude, the model, the source or the dependency bundles)."""
        from cora_ci.chunking import REVISION

        d = asdict(self)
        for k in ("include", "exclude", "source", "model", "bundles"):
            d.pop(k)
        d["revision"] = REVISION
        blob = json.dumps(d, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()


_INT_BOUNDS = {
    "max_tokens": (16, 100_000),
    "min_tokens": (0, 100_000),
    "overlap_lines": (0, 10_000),
    "lines_per_chunk": (1, 100_000),
    "max_file_bytes": (1, 1 << 40),
}


def _bad(key: str, why: str) -> CoraError:
    return CoraError("CORA-CFG-002", f"{key}: {why}")


MAX_GLOBS = 10_000  # a config's globs of one key, and characters of one glob: checked before any
MAX_GLOB_CHARS = 4_096  # matching, since a glob is a regular expression run on every path


def _globs(key: str, value: Any) -> tuple[str, ...]:
    """Gitignore-style globs, each compiled now: a bad one is an error naming it, before any work
    (pathspec is imported only when there is one: a query reads a bundle's config, mostly none)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _bad(key, "expected a list of glob strings")
    if len(value) > MAX_GLOBS:
        raise _bad(key, f"{len(value)} globs, more than {MAX_GLOBS}")
    if not value:
        return ()
    import pathspec

    for glob in value:
        if len(glob) > MAX_GLOB_CHARS:
            raise _bad(key, f"a glob of {len(glob)} characters, more than {MAX_GLOB_CHARS}: {glob[:40]!r}...")
        try:
            pathspec.GitIgnoreSpec.from_lines([glob])
        except Exception as e:  # pathspec's pattern errors have no common base class
            raise _bad(key, f"invalid glob {glob!r}: {e}") from None
    return tuple(value)


def _allow_entries(key: str, value: Any) -> tuple[str, ...]:
    entries = _globs(key, value)
    for e in entries:
        kind, sep, what = e.partition(":")
        if not sep or kind not in ("rule", "fingerprint", "path") or not what:
            raise _bad(key, f"{e!r}: expected rule:KIND, fingerprint:HEX or path:GLOB")
    return entries


def from_mapping(data: dict[str, Any], source: str = "mapping") -> Config:
    """Validate a parsed `[tool.cora-ci]` table into a Config."""
    known = {f for f in Config.__dataclass_fields__ if f != "source"}
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise CoraError("CORA-CFG-001", f"unknown key '{key}' in {source}")
        if key in ("include", "exclude", "secret_files", "allow_secret_files"):
            values[key] = _globs(key, value)
        elif key in _INT_BOUNDS:
            lo, hi = _INT_BOUNDS[key]
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise _bad(key, f"expected an integer from {lo} to {hi}, got {value!r}")
            values[key] = value
        elif key == "allow_secrets":
            values[key] = _allow_entries(key, value)
        elif key == "bundles":
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise _bad(key, "expected a list of bundle paths (directories or archives)")
            values[key] = tuple(value)
        elif key in ("lock_files", "generated_pages"):
            if not isinstance(value, bool):
                raise _bad(key, f"expected true or false, got {value!r}")
            values[key] = value
        elif key == "model":
            if not isinstance(value, str) or not value:
                raise _bad(
                    key, f'expected "default", "static", "minilm", "none" or a model directory, got {value!r}'
                )
            values[key] = value
        elif key == "secrets":
            if value not in SECRET_MODES:
                raise _bad(key, f'expected "drop" or "off", got {value!r}')
            values[key] = value
        elif key == "languages":
            values[key] = _languages(value, source)
    cfg = replace(Config(), source=source, **values)
    if cfg.min_tokens >= cfg.max_tokens:
        raise _bad("min_tokens", f"must be below max_tokens ({cfg.max_tokens}), got {cfg.min_tokens}")
    return cfg


def _languages(value: Any, source: str) -> dict[str, LanguageConfig]:
    if not isinstance(value, dict):
        raise _bad("languages", "expected a table of language tables")
    out: dict[str, LanguageConfig] = {}
    for lang, table in sorted(value.items()):
        if not isinstance(table, dict):
            raise _bad(f"languages.{lang}", "expected a table")
        for k, v in table.items():
            if k != "chunk_level":
                raise CoraError("CORA-CFG-001", f"unknown key 'languages.{lang}.{k}' in {source}")
            if v not in CHUNK_LEVELS:
                raise _bad(
                    f"languages.{lang}.chunk_level", f"expected one of {', '.join(CHUNK_LEVELS)}, got {v!r}"
                )
        out[lang] = LanguageConfig(**table)
    return out


def _parse_toml(data: bytes, where: str) -> dict[str, Any]:
    import tomllib  # here: a query reads a bundle's config as a mapping, never TOML (~3 ms)

    try:
        parsed: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
        return parsed
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise CoraError("CORA-CFG-003", f"{where}: {e}") from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise CoraError("CORA-CFG-003", f"{where}: values nested too deeply") from None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise CoraError("CORA-IO-002", f"cannot read {path}: {e.strerror}") from None
    return _parse_toml(data, str(path))


def _from_pyproject(data: dict[str, Any], where: str) -> Config:
    return from_mapping(data.get("tool", {}).get("cora-ci", {}), f"{where} [tool.cora-ci]")


def load_file(path: Path) -> Config:
    """Load an explicit config file: a pyproject.toml (its [tool.cora-ci]) or a .cora.toml."""
    if not path.is_file():
        raise CoraError("CORA-IO-001", f"config file not found: {path}")
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        return _from_pyproject(data, str(path))
    return from_mapping(data, str(path))


def discover_in(read: Callable[[str], bytes | None], where: str) -> Config:
    """The config of a source whose top-level files `read` returns (None when absent): `.cora.toml`
    wins over pyproject's `[tool.cora-ci]`. A bundle built from a commit uses that commit's config."""
    cora = read(".cora.toml")
    if cora is not None:
        return from_mapping(_parse_toml(cora, f"{where}/.cora.toml"), f"{where}/.cora.toml")
    pyproject = read("pyproject.toml")
    if pyproject is not None:
        data = _parse_toml(pyproject, f"{where}/pyproject.toml")
        if "cora-ci" in data.get("tool", {}):
            return _from_pyproject(data, f"{where}/pyproject.toml")
    return Config()


def discover(root: Path) -> Config:
    """The config of a directory on disk (see `discover_in`)."""
    return discover_in(partial(_read_top, root), str(root))


def dependency_bundles(root: Path) -> tuple[str, ...]:
    """The `bundles` a directory's config lists, the rest of the config left unread: a query must
    not fail on a key a newer or older cora-ci knows (the build reads and checks them all)."""
    for name in (".cora.toml", "pyproject.toml"):
        data = _read_top(root, name)
        if data is None:
            continue
        table = _parse_toml(data, f"{root}/{name}")
        if name == "pyproject.toml":
            table = table.get("tool", {}).get("cora-ci", {})
            if not table:
                continue
        value = table.get("bundles") if isinstance(table, dict) else None
        return from_mapping({"bundles": value}, f"{root}/{name}").bundles if value is not None else ()
    return ()


def _read_top(root: Path, name: str) -> bytes | None:
    path = root / name
    if not path.is_file():
        return None
    try:
        return path.read_bytes()
    except OSError as e:
        raise CoraError("CORA-IO-002", f"cannot read {path}: {e.strerror}") from None
