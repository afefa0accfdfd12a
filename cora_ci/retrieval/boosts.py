"""Boost directives: `path:FILE`, `symbol:NAME`, `dir:DIR`, from the CLI, `.cora-boosts` and the bundle.

A `.cora-boosts` file holds one directive per line; blank lines and lines starting with `#` are
ignored. Paths are repository-relative with `/`; a leading `./` and a trailing `/` are dropped so
that `dir:./src/core/` and `dir:src/core` mean the same thing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cora_ci.errors import CoraError
from cora_ci.retrieval.types import Boost, BoostKind

KINDS: dict[str, BoostKind] = {"path": "path", "symbol": "symbol", "dir": "dir"}
FILE_NAME = ".cora-boosts"


def parse_boost(text: str) -> Boost:
    """`kind:value` -> Boost; anything else is a CORA-CFG-002 error naming the directive."""
    kind, sep, value = text.strip().partition(":")
    kind, value = kind.strip().lower(), value.strip()
    if not sep or kind not in KINDS or not value:
        raise CoraError(
            "CORA-CFG-002",
            f"bad boost directive {text.strip()!r}: expected path:FILE, symbol:NAME or dir:DIR",
        )
    if kind in ("path", "dir"):
        value = value.replace("\\", "/")
        while value.startswith("./"):
            value = value[2:]
        value = value.rstrip("/")
        if not value or value.startswith("/") or ".." in value.split("/"):
            raise CoraError(
                "CORA-CFG-002", f"bad boost directive {text.strip()!r}: the path must be repository-relative"
            )
    return Boost(KINDS[kind], value)


def read_boosts(path: Path) -> list[Boost]:
    """Directives of a `.cora-boosts` file; a missing file means no boosts."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as e:
        raise CoraError("CORA-IO-002", f"{path}: {e.strerror or e}") from None
    out: list[Boost] = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            out.append(parse_boost(line))
        except CoraError as e:
            raise CoraError(e.code, f"{path}:{n}: {e.message}") from None
    return out


def bundle_boosts(manifest: dict[str, Any]) -> list[Boost]:
    """The directives recorded in a bundle at build time (`manifest["boosts"]`, absent = none)."""
    return [parse_boost(str(d)) for d in manifest.get("boosts", []) or []]


def merge(*groups: list[Boost] | tuple[Boost, ...]) -> tuple[Boost, ...]:
    """All directives, first occurrence kept: CLI, repository file and bundle may repeat each other."""
    seen: dict[Boost, None] = {}
    for g in groups:
        for b in g:
            seen.setdefault(b, None)
    return tuple(seen)
