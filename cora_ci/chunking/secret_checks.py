"""What a rule's match must also be to count as a secret (`secret_rules` applies these): random
enough, not a placeholder (`changeme`, `<password>`, `${DB_PASSWORD}`, `xxxx`), not an example that
documentation copies, not a variable or a call, so `password = os.environ["PASSWORD"]` and
`token = get_token()` stay code.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import math
import re
import unicodedata
import urllib.parse
from collections import Counter
from collections.abc import Callable

Check = Callable[[re.Match[str]], bool]

# Placeholders and references: values that stand for a secret instead of being one (a variable,
# and a path under one: nvm's tests set the shell's `PWD=$TEST_DIR/inside-n_m-nested/node_modules/
# foo/bar`; a template; a filler word).
PLACEHOLDER = re.compile(
    r"^(?:\$\{?\w+\}?|\$\{?[A-Za-z_]\w*\}?/\S*|\{\{.*\}\}|<[^>]*>|%\(?\w+\)?s?|\*+|x+|X+|\.{3,}|null|none|true|false|"
    r"(?:your|my|the|some|example|sample|dummy|fake|test|changeme|change_me|placeholder|redacted|secret|"
    r"password|passwd|token|xxx+|todo|tbd|default|admin|root|user|guest|demo)[\w.-]*)$",
    re.I,
)

# Examples every documentation and test suite copies: RFC 7617's Aladdin, jwt.io's token, AWS's and
# Stripe's documented keys. They are public; a value holding one is not a secret.
_WELL_KNOWN = (
    "QWxhZGRpbjpvcGVuIHNlc2FtZQ",
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIy",
    "EXAMPLE",
    "example",
    "4eC39HqLyjWDarjtT1zdp7dc",
)
# Runs a person types, not a generator: `123456`, `abcdef`, `xxxxxx`, `000000`.
_TYPED = re.compile(
    r"(?i)012345|123456|234567|345678|456789|abcdef|bcdefg|qwerty|([a-z0-9])\1{5}|(?:xx|XX|00){4}"
)
# A value of a provider's shape that stands for one (`your_api_key`, `<token>`, `${TOKEN}`): not a
# random value that happens to start with `my` or `the`.
_STANDS_FOR = re.compile(
    r"(?i)^(?:your|my|the|some|example|sample|dummy|fake|changeme|placeholder|redacted|insert|replace|enter)"
    r"[_.-]|^(?:\$\{?\w+\}?|\{\{.*\}\}|<[^>]*>|%\(?\w+\)?s?|\*+|x+|X+)$"
)
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[A-Za-z]")


def well_known(value: str) -> bool:
    return any(w in value for w in _WELL_KNOWN)


def entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def classes(s: str) -> int:
    """How many of lower case, upper case, digits and other characters `s` mixes."""
    return sum(bool(re.search(rx, s)) for rx in (r"[a-z]", r"[A-Z]", r"\d", r"[^A-Za-z0-9]"))


def random_text(s: str, min_entropy: float, typed: bool = True) -> bool:
    """Drawn by a generator, not typed: entropy, no typed run (unless `typed` is off: a format
    with runs of its own), no documentation example."""
    return entropy(s) >= min_entropy and not (typed and _TYPED.search(s)) and not well_known(s)


def token(min_entropy: float = 3.0, part: str | int = 0, typed: bool = True) -> Check:
    """A provider token's random part (the whole match, or a group) is random."""

    def check(m: re.Match[str]) -> bool:
        return random_text(m.group(part), min_entropy, typed)

    return check


def alnum_token(m: re.Match[str]) -> bool:
    """A token of one case and digits (`API-...`): random, with letters and digits."""
    s = m.group(0)
    return bool(_DIGIT.search(s)) and random_text(s, 3.3)


def mixed_case(m: re.Match[str]) -> bool:
    """Random and of mixed case and digits, as a base62 secret is (not a hex digest)."""
    s = m.group(0)
    return classes(s) >= 3 and random_text(s, 3.5)


def dropbox_long_lived(m: re.Match[str]) -> bool:
    """Dropbox's long-lived tokens hold a run of ten `A`s: the rest must be random."""
    return random_text(m.group("value").replace("A" * 10, ""), 3.3)


def azure_sas(m: re.Match[str]) -> bool:
    """A `sig=` in a URL or connection string that also has a signed version (`sv=`) and expiry,
    permissions or resource: a shared access signature."""
    text = m.string
    begin, end = text.rfind("\n", 0, m.start()) + 1, text.find("\n", m.end())
    line = text[begin : end if end >= 0 else len(text)]
    return (
        "sv=" in line and any(f in line for f in ("se=", "sp=", "sr=")) and random_text(m.group("value"), 3.5)
    )


def keyed_value(m: re.Match[str]) -> bool:
    """A value assigned to a provider's key (`HEROKU_API_KEY = ...`): random (digits among letters,
    or both cases and not words: a name is code), no placeholder. The entropy bar is low enough for
    a random hex string of its length to clear it 999 times in 1000."""
    value = m.group("value")
    if _STANDS_FOR.match(value) or not _LETTER.search(value):
        return False
    if not _DIGIT.search(value) and (value.islower() or value.isupper() or _name_like(value)):
        return False
    n = len(value)
    return random_text(value, 2.3 if n < 20 else 2.6 if n < 28 else 3.0)


def credential(m: re.Match[str]) -> bool:
    """A generic assignment's value is a credential: long and random enough, no placeholder, no
    elided example (`eyJ...`), and when unquoted not a name (`password: _PasswordType`, a type)."""
    value = m.group("value")
    if len(value) < 12 or PLACEHOLDER.match(value) or value.isdigit() or well_known(value):
        return False
    if "..." in value or "\u2026" in value:
        return False
    quoted = "q" in m.re.groupindex and bool(m.group("q"))
    # unquoted, a sentence's full stop is no part of the value: a chunk's header says "Declaration:
    # CancellationToken DefaultCancellationToken = CancellationToken.None." (C#, everywhere)
    name = value if quoted else value.rstrip(".")
    if not quoted and _name_like(name):
        return False
    if re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+|[a-z_]+|[A-Z_]+", name):  # a name: code, not a secret
        return False
    return classes(value) >= 3 and entropy(value) >= 3.5


def _name_like(value: str) -> bool:
    """Shaped like an identifier made of words (`_PasswordType`, `PKCS7PrivateKeyTypes`), not of
    random characters: a few parts, each a word with a vowel, an acronym or a number."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        return False
    parts = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", value)
    return 0 < len(parts) <= 6 and all(
        (p.isdigit() and len(p) <= 6)
        or (p.isupper() and len(p) <= 5)
        or len(p) <= 3
        or re.search(r"[aeiouy]", p.lower())
        for p in parts
    )


def jwt(m: re.Match[str]) -> bool:
    """Three base64url parts whose first decodes to a JSON header with `alg`."""
    if well_known(m.group(0)):
        return False
    head = m.group(0).split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(decoded, dict) and "alg" in decoded


def url_password(m: re.Match[str]) -> bool:
    return real_password(urllib.parse.unquote(m.group("password")))


def basic(m: re.Match[str]) -> bool:
    """`base64(user:password)` (a `Basic` header, a Docker config's `auth`) with a real password."""
    value = m.group("value")
    if well_known(value):
        return False
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError, binascii.Error):
        return False
    _, sep, password = decoded.partition(":")
    return bool(sep) and real_password(password)


def password_value(m: re.Match[str]) -> bool:
    return real_password(m.group("value"))


def real_password(password: str) -> bool:
    """Not a placeholder, not words (`a secret`), long and varied enough."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", password) if not unicodedata.combining(c))
    if any(c.isspace() for c in plain) or PLACEHOLDER.match(plain) or len(plain) < 6:
        return False
    long_random = len(plain) >= 12 and entropy(plain) >= 3.3  # letters only, but many of them
    return (classes(plain) >= 3 or long_random) and entropy(plain) >= 2.5


def kubernetes_data(m: re.Match[str]) -> bool:
    """A value under `data:` (base64) of a YAML document whose `kind` is `Secret`."""
    return m.start("indent") in _secret_data_lines(m.string) and random_text(m.group("value"), 3.0)


_KIND_SECRET = re.compile(r"(?m)^[ \t]*kind:[ \t]*[\"']?Secret[\"']?[ \t]*$")
_DATA = re.compile(r"(?m)^([ \t]*)(?:binaryD|d)ata:[ \t]*$")
_LAST_SECRETS: list[tuple[str, frozenset[int]]] = []  # the last text's answer: its values share it


def _secret_data_lines(text: str) -> frozenset[int]:
    """Where the lines under `data:` of the text's Kubernetes Secrets start: worked out once per
    text, in one pass (a manifest may hold thousands of values)."""
    last = _LAST_SECRETS[-1] if _LAST_SECRETS else None
    if last is not None and last[0] is text:
        return last[1]
    out: set[int] = set()
    bounds = [0, *(d.start() for d in re.finditer(r"(?m)^---", text)), len(text)]
    for begin, end in itertools.pairwise(bounds):
        if not _KIND_SECRET.search(text, begin, end):
            continue
        for data in _DATA.finditer(text, begin, end):
            indent, at = len(data.group(1)), data.end() + 1
            while at < end:  # the block: the lines indented deeper than `data:`
                nl = text.find("\n", at, end)
                line_end = end if nl < 0 else nl
                line = text[at:line_end]
                body = line.lstrip(" \t")
                if body and not body.startswith("#"):
                    if len(line) - len(body) <= indent:
                        break
                    out.add(at)
                at = line_end + 1
    _LAST_SECRETS[:] = [(text, frozenset(out))]
    return _LAST_SECRETS[-1][1]
