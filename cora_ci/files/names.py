"""File names that are not UTF-8, as valid Unicode that maps back to the same bytes.

Git and POSIX allow any bytes but `/` and NUL in a name. Python's `surrogateescape` keeps such a
name as lone surrogates, which no UTF-8 encoder accepts (msgpack, tantivy, JSON, a terminal), so
each undecodable byte 0xXY becomes the private-use character U+F7XY instead: the name stays valid
text everywhere downstream, and `fs_name` gives the exact bytes back for reading the file. (A real
UTF-8 name using U+F780..U+F7FF would read back as those bytes: a collision nobody has met.)
"""

from __future__ import annotations

_TO_PRIVATE = {0xDC80 + b: 0xF780 + b for b in range(128)}
_TO_SURROGATE = {v: k for k, v in _TO_PRIVATE.items()}


def from_bytes(raw: bytes) -> str:
    """A name as git or the OS gives it, as valid Unicode (non-UTF-8 bytes -> U+F780..U+F7FF)."""
    return raw.decode("utf-8", errors="surrogateescape").translate(_TO_PRIVATE)


def from_os(name: str) -> str:
    """A name from `os.walk` or `os.listdir` (surrogate-escaped) as valid Unicode."""
    return name.translate(_TO_PRIVATE)


def fs_name(name: str) -> str:
    """The OS name (surrogate-escaped, as `open` takes it) of a name from `from_bytes`."""
    return name.translate(_TO_SURROGATE)


def to_bytes(name: str) -> bytes:
    """The exact bytes of a name from `from_bytes`, as git takes it on stdin."""
    return fs_name(name).encode("utf-8", errors="surrogateescape")
