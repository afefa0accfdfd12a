"""Boost directives: `path:FILE`, `symbol:NAME`, `dir:DIR`, given with `--boost` or in `.cora-boosts`.

A repository's `.cora-boosts` holds one directive per line; blank lines and lines starting with `#`
are ignored. The indexer checks and records them in the bundle (a bad line fails the build, naming
it), the query reads the CLI, the working tree's file and the bundle's record with this one parser.
Paths are repository-relative with `/`; a leading `./` and a trailing `/` are dropped so that
`dir:./src/core/` and `dir:src/core` mean the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cora_ci.errors import CoraError

BoostKind = Literal["path", "symbol", "dir"]
KINDS: dict[str, BoostKind] = {"path": "path", "symbol": "symbol", "dir": "dir"}
FILE_NAME = ".cora-boosts"


@dataclass(frozen=True)
class Boost:
    """`--boost path:README.md` (include in full), `symbol:FooClass` (include its definition in
    full), `dir:src/core` (rank higher)."""

    kind: BoostKind
    value: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.value}"


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


def parse_boosts(text: str, origin: str) -> list[Boost]:
    """Directives of a `.cora-boosts` text; `origin` names it in errors (`origin:line: ...`)."""
    out: list[Boost] = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            out.append(parse_boost(line))
        except CoraError as e:
            raise CoraError(e.code, f"{origin}:{n}: {e.message}") from None
    return out


def read_boosts(path: Path) -> list[Boost]:
    """Directives of a `.cora-boosts` file; a missing file means no boosts."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as e:
        raise CoraError("CORA-IO-002", f"{path}: {e.strerror or e}") from None
    return parse_boosts(text, str(path))
