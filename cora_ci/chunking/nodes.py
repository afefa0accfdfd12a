"""What every reader of a tree-sitter tree asks of a node: its text, and its first child or
descendant of a type (the chunker's walk, the languages' own ways in `dialects.py`, the reference
graph)."""

from __future__ import annotations

from typing import Any

Node = Any  # tree_sitter.Node


def text_of(src: bytes, node: Node) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def child(node: Node, node_type: str) -> Node | None:
    """The first named child of `node_type`, for grammars that give it no field name."""
    return next((c for c in node.named_children if c.type == node_type), None)


def first_below(node: Node, node_type: str) -> Node | None:
    """The first node of `node_type` at or below `node`, in document order."""
    stack = [node]
    while stack:
        c = stack.pop()
        if c.type == node_type:
            return c
        stack.extend(reversed(c.named_children))
    return None
