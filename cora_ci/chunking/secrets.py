"""Secrets never reach a bundle: conventional secrets files are skipped, a secret's value in any
other file is redacted in place before the file is chunked.

A bundle is an artifact that leaves the machine (CI uploads it, forks build it), so this runs where
chunks are made (`chunk_file`): full builds, updates, `cora-ci chunk` and re-binding all agree.
Redacting the source lines (not the chunks) means nothing derived from them, chunk text, headers,
symbols, the reference graph, BM25 terms or vectors, can hold the secret, while the code around it
stays searchable. Detection is by file name (`SECRET_FILES`), by patterns whose shape alone makes a
match a credential (`PATTERNS`) and by the broader rules of `secret_rules`. A finding is reported
by kind, line and a slow-hash fingerprint, never by its text.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import NamedTuple

import pathspec

from cora_ci.chunking.model import Chunk, Diagnostic
from cora_ci.chunking.secret_checks import well_known
from cora_ci.chunking.secret_rules import GENERIC, candidates, find

# Gitignore-style globs of files that conventionally hold secrets (any directory).
SECRET_FILES = (
    ".env", ".env.*", ".envrc", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.jceks",
    "*.kdbx", "*.tfstate", "*.tfstate.backup", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
    ".npmrc", ".pypirc", ".netrc", "_netrc", ".pgpass", ".htpasswd", ".git-credentials",
    "credentials*.json", ".aws/credentials", ".docker/config.json",
    *(f"secrets.{ext}" for ext in ("json", "yml", "yaml", "toml", "ini", "env", "txt", "cfg", "conf",
                                   "properties", "xml")),
)  # fmt: skip
# Conventional templates and public halves, never secret themselves. (`secrets.py` and the like are
# not matched at all: code that handles secrets is source, Python's own `secrets` module among it.)
NOT_SECRET_FILES = (".env.example", ".env.sample", ".env.template", "id_*.pub")

_B64 = r"[A-Za-z0-9+/=]"


class Pattern(NamedTuple):
    """A kind of secret and its regex, specific enough that a match in code is a credential, not a
    name. Each regex starts with a literal (a word boundary is a lookbehind *after* it), which
    lets `re` skip ahead at memchr speed: a file is scanned at ~50 MB/s."""

    kind: str
    regex: re.Pattern[str]


def _p(kind: str, rx: str) -> Pattern:
    return Pattern(kind, re.compile(rx))


_W = "A-Za-z0-9"
PATTERNS: tuple[Pattern, ...] = (
    _p("private-key", r"-----BEGIN[A-Z ]{0,24} PRIVATE KEY(?: BLOCK)?-----"),
    _p("aws-access-key-id", rf"A[KS]IA(?<![{_W}]A[KS]IA)[A-Z0-9]{{16}}(?![{_W}])"),
    _p(
        "aws-secret-access-key",
        rf"ecret_?[Aa]ccess_?[Kk]ey[\"']?\s*[:=]\s*[\"']?(?P<value>[{_W}/+]{{40}})(?![{_W}/+])",
    ),
    _p(
        "aws-secret-access-key",
        rf"ECRET_?ACCESS_?KEY[\"']?\s*[:=]\s*[\"']?(?P<value>[{_W}/+]{{40}})(?![{_W}/+])",
    ),
    _p("github-token", rf"gh[pousr]_(?<![{_W}_]gh[pousr]_)[{_W}]{{36}}(?![{_W}])"),
    _p("github-token", rf"github_pat_(?<![{_W}_]github_pat_)[{_W}]{{22}}_[{_W}]{{59}}(?![{_W}])"),
    _p("gitlab-token", rf"glpat-(?<![{_W}_]glpat-)[{_W}_-]{{20,}}"),
    _p("slack-token", rf"xox[abprs]-(?<![{_W}_]xox[abprs]-)[0-9]{{6,}}-[{_W}-]{{8,}}"),
    _p("slack-webhook", rf"hooks\.slack\.com/services/T[A-Z0-9]{{6,}}/B[A-Z0-9]{{6,}}/[{_W}]{{20,}}"),
    _p("stripe-key", rf"k_live_(?<![{_W}_][sr]k_live_)(?<=[sr]k_live_)[{_W}]{{24,}}"),
    _p("google-api-key", rf"AIza(?<![{_W}_-]AIza)[{_W}_-]{{35}}(?![{_W}_-])"),
    # OpenAI keys (sk-..., sk-proj-...) carry base64 "OpenAI" amid their random characters.
    _p("openai-api-key", rf"T3BlbkFJ(?<=[{_W}_-]{{16}}T3BlbkFJ)[{_W}_-]{{16,}}"),
    _p("anthropic-api-key", rf"sk-ant-(?<![{_W}_-]sk-ant-)(?:api|admin)[0-9]{{2}}-[{_W}_-]{{80,}}"),
    _p("npm-token", rf"npm_(?<![{_W}_]npm_)[{_W}]{{36}}(?![{_W}])"),
    _p("pypi-token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
)
_END_KEY = re.compile(r"-----END[A-Z ]{0,24} PRIVATE KEY(?: BLOCK)?-----")
_KEY_BODY = re.compile(rf"^\s*+(?:{_B64}{{16,}}|[A-Za-z-]+: .*|)\s*$")  # base64, or a PEM header line
# (the leading space possessive: a key block's line of 40,000 spaces took 3.6 s, quadratic)
# Key material: a run of base64 as a key body has it (a line of a block, or after an escaped `\n`).
_KEY_MATERIAL = re.compile(rf"{_B64}{{32,}}")


class Finding(NamedTuple):
    """A secret's kind, the 1-based lines it spans (a key block spans many), its fingerprint (an
    allowlist entry, never the text) and the character span of the value to redact in the file's
    text (lines joined by newlines)."""

    kind: str
    first: int
    last: int
    fingerprint: str = ""
    span: tuple[int, int] = (0, 0)


ALLOW_MARK = "cora: allow-secret"  # on a line, the findings of that line are not secrets
REDACTED = "REDACTED"  # what a secret's value becomes: a word every grammar reads as a name or text
# A fingerprint is a slow, salted hash, so that a published bundle's diagnostics cannot be used to
# test guesses of a weak password (a truncated sha256 could be, by the billion a second).
_FP_SALT = b"cora-ci secret fingerprint v1"


@lru_cache(maxsize=4096)
def fingerprint(value: str) -> str:
    """12 hex digits that name a secret's value in diagnostics and `allow_secrets` (~6 ms each, by
    design: a fixture of many copies of one fake key pays it once)."""
    return hashlib.scrypt(value.encode(), salt=_FP_SALT, n=2**12, r=8, p=1, dklen=6).hex()


def _matches(text: str) -> Iterator[tuple[str, re.Match[str]]]:
    """(kind, match) of every secret in `text`, pattern by pattern, then the broader rules of
    `secret_rules`, whose matches must also pass their check."""
    for p in PATTERNS:
        for m in p.regex.finditer(text):
            if p.kind == "private-key" or not _stand_in(text[slice(*_value(m, text))]):
                yield p.kind, m
    for r in candidates(text):
        for m in find(r, text):
            if r.check is None or r.check(m):
                yield r.kind, m


_RUN = re.compile(r"(.)\1{7}")  # `ghp_xxxxxxxx...`: a token's shape filled in by hand


def _stand_in(value: str) -> bool:
    """A documentation example (AWS's `AKIAIOSFODNN7EXAMPLE`) or a token's shape filled with one
    character: what a README shows in place of a key, never a key."""
    return well_known(value) or bool(_RUN.search(value))


def contains_secret(text: str) -> str | None:
    """The kind of the first high-confidence secret in `text`, or None."""
    return next((kind for kind, _ in _matches(text)), None)


def secret_names(names: Sequence[str]) -> dict[str, str]:
    """`contains_secret` of many short texts (a repository's paths), those that hold one: every
    rule runs once over them all, joined by newlines (which no rule crosses), instead of once a
    name (~50 us a path, 1.6 s at 30,000 files for every hook run); each name a match touches is
    then confirmed alone, so the result is exactly the one-by-one answer."""
    text = "\n".join(names)
    starts = list(itertools.accumulate((len(n) + 1 for n in names), initial=0))
    touched: set[int] = set()
    for _, m in _matches(text):
        first = bisect.bisect_right(starts, m.start()) - 1
        touched.update(range(first, bisect.bisect_right(starts, max(m.start(), m.end() - 1))))
    return {names[i]: kind for i in sorted(touched) if (kind := contains_secret(names[i]))}


def _value(m: re.Match[str], text: str) -> tuple[int, int]:
    """The span of what is secret in a match: its `value` or `password` group (a rule that matches
    `password = "..."` keeps its key), else all of it with the token characters before it (a rule
    starting after the first letters of its prefix, `k_live_` of `sk_live_`, to start on a literal)."""
    for group in ("value", "password"):
        if group in m.re.groupindex and m.start(group) >= 0:
            return m.span(group)
    start = m.start()
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_-"):
        start -= 1
    return start, m.end()


def scan_lines(lines: list[str]) -> list[Finding]:
    """Every secret of a file's lines. A private key block spans its lines through its END line
    (or, without one, through the base64 that follows), and its value is everything between the
    markers. A marker with no base64 after it in its block holds no key
    (`b"-----BEGIN OPENSSH PRIVATE KEY-----"` in a key parser)."""
    text = "\n".join(lines)
    found = list(_matches(text))
    if not found:
        return []
    starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    out: list[Finding] = []
    for kind, m in found:
        first = bisect.bisect_right(starts, m.start())
        last = bisect.bisect_right(starts, m.end() - 1)
        span = _value(m, text)
        if kind == "private-key":
            last = _key_block_end(lines, last)
            block_end = starts[last - 1] + len(lines[last - 1])
            if not _KEY_MATERIAL.search(text, m.end(), block_end):
                continue  # a bare marker (a parser's constant, a doc): no key to leak
            end = _END_KEY.search(text, m.end(), block_end)
            span = (m.end(), end.start() if end else block_end)
        if ALLOW_MARK in lines[first - 1]:
            continue
        out.append(Finding(kind, first, last, fingerprint(text[span[0] : span[1]]), span))
    return _distinct(out)


_GENERIC_KINDS = frozenset(r.kind for r in GENERIC)


def _distinct(found: list[Finding]) -> list[Finding]:
    """One finding per secret: a provider's kind over a generic one on the same lines (`api_key =
    sk_live_...` is a Stripe key), and each kind once per span."""
    specific = {(f.first, f.last) for f in found if f.kind not in _GENERIC_KINDS}
    kept = [f for f in found if f.kind not in _GENERIC_KINDS or (f.first, f.last) not in specific]
    return sorted({(f.kind, f.first, f.last): f for f in kept}.values())


def redact(lines: list[str], findings: list[Finding]) -> list[str]:
    """The lines with each finding's value replaced by `REDACTED` (once per line it spans, its
    indentation kept), so the line count and every other character stay as they were."""
    text = "\n".join(lines)
    spans = sorted(f.span for f in findings)
    merged: list[list[int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    parts, at = [], 0
    for a, b in merged:
        parts += [text[at:a], "\n".join(_mask(piece) for piece in text[a:b].split("\n"))]
        at = b
    parts.append(text[at:])
    return "".join(parts).split("\n")


def _mask(piece: str) -> str:
    body = piece.strip()
    if not body:
        return piece
    lead = piece[: len(piece) - len(piece.lstrip())]
    trail = piece[len(piece.rstrip()) :]
    return f"{lead}{REDACTED}{trail}"


def _key_block_end(lines: list[str], begin: int) -> int:
    """The 1-based last line of a key block that begins on line `begin`."""
    if _END_KEY.search(lines[begin - 1]):
        return begin  # one line: an escaped key in JSON or a string
    last = begin
    for i in range(begin, len(lines)):
        if _END_KEY.search(lines[i]):
            return i + 1
        if not _KEY_BODY.match(lines[i]):
            break
        last = i + 1
    return last


class FileRule(NamedTuple):
    """Which paths are secrets files: the defaults and `secret_files`, minus `allow_secret_files`.
    A default without a slash names a file, matched by its own name: in gitignore terms `*.key`
    also takes everything in a directory so named (a Keynote document's `diagrams.key/`, whose
    images libuv's docs keep), and `.env` a virtualenv's whole tree. `secret_files` keeps
    gitignore's meaning (`private/` is a directory)."""

    named: pathspec.PathSpec  # type: ignore[type-arg,unused-ignore]
    secret: pathspec.PathSpec  # type: ignore[type-arg,unused-ignore]
    allowed: pathspec.PathSpec  # type: ignore[type-arg,unused-ignore]

    def matches(self, path: str) -> bool:
        found = self.named.match_file(path.rpartition("/")[2]) or self.secret.match_file(path)
        return bool(found) and not self.allowed.match_file(path)


def secrets_allowed(path: str, allow: tuple[str, ...]) -> bool:
    """The config's `path:GLOB` entries of `allow_secrets` name this file: its content is not screened."""
    globs = tuple(a.split(":", 1)[1] for a in allow if a.startswith("path:"))
    return bool(globs) and bool(_spec(globs).match_file(path))


@lru_cache(maxsize=8)
def file_rule(extra: tuple[str, ...] = (), allowed: tuple[str, ...] = ()) -> FileRule:
    named = [g for g in SECRET_FILES if "/" not in g]
    paths = [g for g in SECRET_FILES if "/" in g]
    return FileRule(_spec(named), _spec([*paths, *extra]), _spec([*NOT_SECRET_FILES, *allowed]))


def _spec(globs: Iterable[str]) -> pathspec.PathSpec:  # type: ignore[type-arg,unused-ignore]
    # A glob with a slash in the middle is anchored in gitignore terms; these match in any directory.
    return pathspec.GitIgnoreSpec.from_lines(
        g if g.startswith(("/", "**/")) or "/" not in g.rstrip("/") else f"**/{g}" for g in globs
    )


def screen_lines(lines: list[str], allow: tuple[str, ...] = ()) -> tuple[list[str], list[Diagnostic]]:
    """A file's lines with every secret redacted, and a `CORA-SEC-002` diagnostic per secret.
    `allow`: the config's `rule:KIND` and `fingerprint:HEX` entries."""
    findings = [f for f in scan_lines(lines) if f"rule:{f.kind}" not in allow
                and f"fingerprint:{f.fingerprint}" not in allow]  # fmt: skip
    if not findings:
        return lines, []
    diags = [Diagnostic("CORA-SEC-002", _redacted(f), f.first) for f in findings]
    return redact(lines, findings), diags


class Screened(NamedTuple):
    """What survives of a file's chunks, a `CORA-SEC-002` diagnostic per chunk dropped, and the
    verbatim line ranges of the dropped chunks (deliberately covered by no chunk)."""

    chunks: list[Chunk]
    diagnostics: list[Diagnostic]
    dropped: list[tuple[int, int]]


def screen_chunks(chunks: list[Chunk]) -> Screened:
    """Drop a chunk whose context names a secret that no line of the file holds whole (a name
    joined with its parents' in the hierarchy): its lines were redacted already, this is the net
    behind them. Children of a dropped chunk move up to its nearest kept ancestor."""
    gone: dict[int, int | None] = {}
    diags: list[Diagnostic] = []
    metas = [_meta(c) for c in chunks]
    found = secret_names(metas)  # the file's chunks in one pass, each hit confirmed alone
    for c, meta in zip(chunks, metas, strict=True):
        kind = found.get(meta)
        if kind is not None:
            gone[c.id] = c.parent
            diags.append(
                Diagnostic("CORA-SEC-002", f"{kind} in the chunk's context: chunk dropped", c.start_line)
            )
    if not gone:
        return Screened(chunks, [], [])
    kept = [c for c in chunks if c.id not in gone]
    for c in kept:
        while c.parent in gone:
            c.parent = gone[c.parent]
    dropped = [r for c in chunks if c.id in gone for r in c.verbatim_ranges()]
    return Screened(kept, diags, dropped)


def _meta(c: Chunk) -> str:
    return "\n".join([c.header, *c.hierarchy, *c.symbols, *c.anchors])


def _redacted(f: Finding) -> str:
    return f"{f.kind} on {_lines(f)} (fingerprint {f.fingerprint}): redacted"


def _lines(f: Finding) -> str:
    return f"line {f.first}" if f.first == f.last else f"lines {f.first}-{f.last}"
