"""Configuration: `[tool.cora-ci]` in pyproject.toml or a top-level `.cora.toml`.

Unknown keys and bad values are errors naming the key, so a typo never silently falls back to a
default. The chunking part of the config has a stable hash: a change to it must rebuild a bundle.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from cora_ci.errors import CoraError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

CHUNK_LEVELS = ("class", "method", "block")


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
    source: str = "defaults"  # where the config came from; not part of the hash

    def chunk_level(self, lang: str) -> str:
        lc = self.languages.get(lang)
        return lc.chunk_level if lc else "method"

    def chunker_hash(self) -> str:
        """Hash of everything that changes chunk output (not include/exclude, not the source)."""
        d = asdict(self)
        for k in ("include", "exclude", "source"):
            d.pop(k)
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


def _globs(key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _bad(key, "expected a list of glob strings")
    return tuple(value)


def from_mapping(data: dict[str, Any], source: str = "mapping") -> Config:
    """Validate a parsed `[tool.cora-ci]` table into a Config."""
    known = {f for f in Config.__dataclass_fields__ if f != "source"}
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise CoraError("CORA-CFG-001", f"unknown key '{key}' in {source}")
        if key in ("include", "exclude"):
            values[key] = _globs(key, value)
        elif key in _INT_BOUNDS:
            lo, hi = _INT_BOUNDS[key]
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise _bad(key, f"expected an integer from {lo} to {hi}, got {value!r}")
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


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            data: dict[str, Any] = tomllib.load(f)
            return data
    except OSError as e:
        raise CoraError("CORA-IO-002", f"cannot read {path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise CoraError("CORA-CFG-003", f"{path}: {e}") from None


def load_file(path: Path) -> Config:
    """Load an explicit config file: a pyproject.toml (its [tool.cora-ci]) or a .cora.toml."""
    if not path.is_file():
        raise CoraError("CORA-IO-001", f"config file not found: {path}")
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("cora-ci", {})
        return from_mapping(data, f"{path} [tool.cora-ci]")
    return from_mapping(data, str(path))


def discover(root: Path) -> Config:
    """The config of a repository root: `.cora.toml` wins over pyproject's `[tool.cora-ci]`."""
    cora = root / ".cora.toml"
    if cora.is_file():
        return load_file(cora)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        data = _read_toml(pyproject).get("tool", {}).get("cora-ci")
        if data is not None:
            return from_mapping(data, f"{pyproject} [tool.cora-ci]")
    return Config()
