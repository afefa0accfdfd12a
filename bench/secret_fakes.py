"""Fake secrets of every format the screen knows, made at run time from random characters.

Each format's maker joins literal pieces (a provider's prefix, split in this source so that no
literal token sits in the repository: its own tests scan it) and random ones; the random pieces
of the fakes made are kept in `PIECES`, so a reader can tell what of one is secret (a key name or
a URL around a secret is not). `FORMATS` maps a format's name to the kind of rule expected to
report it and its maker. bench/secret_scan.py plants them; tests/test_secret_rules.py checks each.

Most formats are a line of bench/secret_formats.txt (its header says how to read one); the
rest, of several lines or with spaces, are `SPECIAL`.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALPHABETS = {
    "LOWER": LOWER,
    "DIGITS": DIGITS,
    "ALNUM": LOWER + UPPER + DIGITS,
    "LETTERS": LOWER + UPPER,
    "HEX": DIGITS + "abcdef",
    "UPDIG": UPPER + DIGITS,
    "LODIG": LOWER + DIGITS,
    "B64": LOWER + UPPER + DIGITS + "+/",
    "URLSAFE": LOWER + UPPER + DIGITS + "_-",
    "AH09": "abcdefgh" + DIGITS,  # Flutterwave's "hex"
    "BECH32": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
    "BASE32": LOWER + "234567",
    "AZURE": LOWER + UPPER + DIGITS + "_~.-",
}

Maker = Callable[[random.Random], str]
PIECES: list[str] = []  # the random pieces of the fakes made since the last clear


class Fake(NamedTuple):
    kind: str  # the rule kind expected to report it
    make: Maker


def rand(g: random.Random, alphabet: str, n: int) -> str:
    s = "".join(g.choice(alphabet) for _ in range(n))
    PIECES.append(s)
    return s


def _uuid(g: random.Random, hexdigits: str = "0123456789abcdef") -> str:
    return "-".join(rand(g, hexdigits, n) for n in (8, 4, 4, 4, 12))


def _piece(spec: str) -> Maker:
    name, _, n = spec.partition(":")
    if name in ALPHABETS and n.isdigit():
        return lambda g: rand(g, ALPHABETS[name], int(n))
    if spec in ("uuid", "UUID"):
        return lambda g: _uuid(g, "0123456789abcdef" if spec == "uuid" else "0123456789ABCDEF")
    return lambda g: spec


def tok(*specs: str) -> Maker:
    """A maker of the pieces `specs` name (a spec may hold several, apart by spaces)."""
    parts = [_piece(s) for spec in specs for s in spec.split()]
    return lambda g: "".join(p(g) for p in parts)


def keyed(name: str, value: Maker) -> Maker:
    """`name` (snake case, naming the provider) given a value, as code writes it: an upper-case
    variable, a lower-case YAML key or a camel-case property."""

    def make(g: random.Random) -> str:
        v, style = value(g), g.randrange(3)
        if style == 0:
            return f"{name.upper()}={v}"
        if style == 1:
            return f"{name}: {v}"
        first, *rest = name.split("_")
        return f"{first}{''.join(w.title() for w in rest)} = {v}"

    return make


def b64_of(*specs: str) -> Maker:
    """base64 of what the pieces make (`user:password`): the encoding is the secret."""
    raw = tok(*specs)

    def make(g: random.Random) -> str:
        s = base64.b64encode(raw(g).encode()).decode()
        PIECES.append(s)
        return s

    return make


_TABLE = Path(__file__).with_name("secret_formats.txt")


def _pem(label: str, lines: int, width: int = 64) -> Maker:
    kind = f"{label} PRIV".lstrip() + "ATE KEY"

    def make(g: random.Random) -> str:
        body = [rand(g, ALPHABETS["B64"], width) for _ in range(lines)]
        return "\n".join([f"-----BEGIN {kind}-----", *body, f"-----END {kind}-----"])

    return make


def _pgp(g: random.Random) -> str:
    kind = "PGP PRIV" + "ATE KEY BLOCK"
    body = [rand(g, ALPHABETS["B64"], 64) for _ in range(8)]
    checksum = "=" + "".join(g.choice(ALPHABETS["B64"]) for _ in range(4))
    return "\n".join([f"-----BEGIN {kind}-----", "", *body, checksum, f"-----END {kind}-----"])


def _kubernetes(g: random.Random) -> str:
    user, token = b64_of("ALNUM:24")(g), b64_of("ALNUM:40")(g)
    head = "apiVersion: v1\nkind: Sec" + "ret\nmetadata:\n  name: app-credentials\ntype: Opaque\ndata:\n"
    return f"{head}  password: {user}\n  api-token: {token}"


def _in(before: str, value: Maker, after: str) -> Maker:
    return lambda g: before + value(g) + after


SPECIAL: dict[str, Fake] = {
    "private-key-rsa": Fake("private-key", _pem("RSA", 8)),
    "private-key-pkcs8": Fake("private-key", _pem("", 8)),
    "private-key-openssh": Fake("private-key", _pem("OPENSSH", 6, 70)),
    "private-key-pgp": Fake("private-key", _pgp),
    "kubernetes-secret": Fake("kubernetes-secret", _kubernetes),
    "docker-config-auth": Fake(
        "docker-config-auth",
        _in('{"auths": {"ghcr.io": {"au' + 'th": "', b64_of("deploy: ALNUM:20 !"), '"}}}'),
    ),
    "npmrc-auth": Fake(
        "npm-auth-token", _in("//registry.npmjs.org/:_" + "auth=", b64_of("ci: ALNUM:20"), "")
    ),
    "gcp-service-account": Fake(
        "gcp-service-account-key",
        _in('{"type": "service_account", "private_key' + '_id": "', tok("HEX:40"), '", "project_id": "p"}'),
    ),
    "nuget-config-password": Fake(
        "nuget-config-password", _in('<add key="ClearText' + 'Password" value="', tok("ALNUM:18 !#"), '" />')
    ),
    "bearer": Fake("bearer-token", _in("Authorization: Bea" + "rer ", tok("ALNUM:40"), "")),
    "basic-auth": Fake("basic-auth-header", _in("Authorization: Bas" + "ic ", b64_of("svc: ALNUM:18 !"), "")),
}


def _formats() -> dict[str, Fake]:
    out: dict[str, Fake] = {}
    entries: list[list[str]] = []
    for line in _TABLE.read_text().splitlines():
        if line.startswith(" "):
            entries[-1] += line.split()
        elif line.strip() and not line.startswith("#"):
            entries.append(line.split())
    for name, kind, *specs in entries:
        if specs[0].startswith("key="):
            out[name] = Fake(kind, keyed(specs[0].removeprefix("key="), tok(*specs[1:])))
        else:
            out[name] = Fake(kind, tok(*specs))
    return out | SPECIAL


FORMATS = _formats()
# Formats of several lines a JSON string cannot hold as they are (a private key can: `\n`-escaped).
MULTILINE = {"kubernetes-secret"}
