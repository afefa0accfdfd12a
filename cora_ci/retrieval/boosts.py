"""Boost directives at query time: those a bundle recorded, merged with the CLI's and the working tree's."""

from __future__ import annotations

from typing import Any

from cora_ci.boosts import Boost, parse_boost


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
