"""The rules `secrets` scans with beyond its first high-confidence ones: provider token formats (the
kinds gitleaks' and detect-secrets' default rule sets know), credentials in URLs and headers,
JWTs, and generic credential assignments (a secret-like key given a random-looking value).

Each regex starts with a literal (a word boundary is a lookbehind after it), so `re` skips ahead at
memchr speed. The generic rules also pass a check on what they matched: enough entropy, not a
placeholder (`changeme`, `<password>`, `${DB_PASSWORD}`, `xxxx`), not a variable or a call, so
`password = os.environ["PASSWORD"]` and `token = get_token()` stay code.
"""

from __future__ import annotations

import base64
import json
import math
import re
import unicodedata
import urllib.parse
from collections import Counter
from collections.abc import Callable
from typing import NamedTuple

_W = "A-Za-z0-9"


class Rule(NamedTuple):
    kind: str
    regex: re.Pattern[str]
    check: Callable[[re.Match[str]], bool] | None = None
    # words one of which a match holds: `finditer` then runs only near them (the rule's own regex
    # starts with an alternation `re` cannot skip ahead on)
    near: tuple[str, ...] = ()


def _r(kind: str, rx: str, check: Callable[[re.Match[str]], bool] | None = None, flags: int = 0,
       near: tuple[str, ...] = ()) -> Rule:  # fmt: skip
    return Rule(kind, re.compile(rx, flags), check, near)


_SPAN = 260  # what a generic assignment can span: a key, a separator and a value of 200


def find(rule: Rule, text: str) -> list[re.Match[str]]:
    """The rule's matches in `text`; with `near`, searched only around those words (lower case)."""
    if not rule.near:
        return list(rule.regex.finditer(text))
    low = text.lower()
    starts = sorted({i for w in rule.near for i in _occurrences(low, w)})
    out: dict[int, re.Match[str]] = {}
    done = -1
    for i in starts:
        if i < done:
            continue
        for m in rule.regex.finditer(text, max(0, i - 16), min(len(text), i + _SPAN)):
            out.setdefault(m.start(), m)
            done = max(done, m.end())
    return [out[k] for k in sorted(out)]


def _occurrences(text: str, word: str) -> list[int]:
    out, i = [], text.find(word)
    while i >= 0:
        out.append(i)
        i = text.find(word, i + 1)
    return out


def _end(chars: str = _W) -> str:
    return f"(?![{chars}])"


PROVIDERS: tuple[Rule, ...] = (
    _r("adafruit-key", rf"aio_(?<![{_W}_]aio_)[{_W}]{{28}}{_end()}"),
    _r("alibaba-access-key", rf"LTAI(?<![{_W}]LTAI)[{_W}]{{20}}{_end()}"),
    _r("atlassian-token", rf"ATATT3(?<![{_W}]ATATT3)[{_W}_=-]{{150,}}"),
    _r("azure-storage-key", rf"AccountKey=[{_W}+/]{{86}}=="),
    _r("clojars-token", rf"CLOJARS_[a-z0-9]{{60}}{_end()}"),
    _r("databricks-token", rf"dapi(?<![{_W}_]dapi)[a-f0-9]{{32}}(?:-\d)?{_end()}"),
    _r("digitalocean-token", rf"do[opr]_v1_(?<![{_W}_]do[opr]_v1_)[a-f0-9]{{64}}{_end()}"),
    _r("discord-webhook", rf"discord(?:app)?\.com/api/webhooks/\d{{17,20}}/[{_W}_-]{{60,}}"),
    _r("doppler-token", rf"dp\.pt\.(?<![{_W}_]dp\.pt\.)[{_W}]{{43}}{_end()}"),
    _r("dropbox-token", rf"sl\.(?<![{_W}_.]sl\.)[{_W}_-]{{130,}}"),
    _r("dynatrace-token", rf"dt0c01\.[A-Z0-9]{{24}}\.[A-Z0-9]{{64}}{_end()}"),
    _r("easypost-key", rf"EZ[AT]K(?<![{_W}]EZ[AT]K)[{_W}]{{54}}{_end()}"),
    _r("figma-token", rf"figd_(?<![{_W}_]figd_)[{_W}_-]{{40}}{_end('A-Za-z0-9_-')}"),
    _r("flutterwave-key", r"FLW(?:SECK|PUBK)_TEST-[a-h0-9]{32}-X"),
    _r("flutterwave-key", rf"FLWSECK-(?<![{_W}]FLWSECK-)[a-h0-9]{{32}}-X"),
    _r("gitlab-token", rf"gl(?<![{_W}_]gl)(?:ptt|rt|dt|ft|oas|cbt)-[{_W}_-]{{20,}}"),
    _r("gitlab-token", rf"GR1348941[{_W}_-]{{20,}}"),
    _r("grafana-token", rf"glc_(?<![{_W}_]glc_)[{_W}+/]{{32,400}}={{0,2}}"),
    _r("grafana-token", rf"glsa_(?<![{_W}_]glsa_)[{_W}]{{32}}_[a-fA-F0-9]{{8}}{_end()}"),
    _r("hashicorp-vault-token", rf"hv[sb]\.(?<![{_W}_.]hv[sb]\.)[{_W}_-]{{90,}}"),
    _r("hashicorp-tf-token", rf"\.atlasv1\.[{_W}_=-]{{60,70}}"),
    _r("heroku-key", rf"HRKU-(?<![{_W}]HRKU-)[{_W}_-]{{60}}"),
    _r("hubspot-token", rf"pat-(?:na|eu)1-(?<![{_W}]pat-(?:na|eu)1-)[a-f0-9-]{{36}}{_end()}"),
    _r("huggingface-token", rf"hf_(?<![{_W}_]hf_)[A-Za-z]{{34}}{_end()}"),
    _r("linear-key", rf"lin_api_(?<![{_W}_]lin_api_)[{_W}]{{40}}{_end()}"),
    _r("mailchimp-key", rf"-us(?<=[^{_W}][a-f0-9]{{32}}-us)\d{{1,2}}{_end()}"),
    _r("mailgun-key", rf"key-(?<![{_W}_-]key-)[a-f0-9]{{32}}{_end()}"),
    _r("mapbox-token", rf"sk\.eyJ(?<![{_W}_.]sk\.eyJ)[{_W}_-]{{50,}}\.[{_W}_-]{{20,}}"),
    _r("newrelic-key", rf"NRA[KJ]-(?<![{_W}]NRA[KJ]-)[A-Z0-9]{{27}}{_end()}"),
    _r(
        "planetscale-token",
        rf"pscale_(?<![{_W}_]pscale_)(?:tkn|pw|oauth)_[{_W}_.=-]{{32,64}}",
    ),
    _r("postman-key", rf"PMAK-(?<![{_W}]PMAK-)[a-f0-9]{{24}}-[a-f0-9]{{34}}{_end()}"),
    _r("prefect-key", rf"pnu_(?<![{_W}_]pnu_)[{_W}]{{36}}{_end()}"),
    _r("pulumi-token", rf"pul-(?<![{_W}_-]pul-)[a-f0-9]{{40}}{_end()}"),
    _r("rubygems-key", rf"rubygems_(?<![{_W}_]rubygems_)[a-f0-9]{{48}}{_end()}"),
    _r("sendgrid-key", rf"SG\.(?<![{_W}_.]SG\.)[{_W}_-]{{22}}\.[{_W}_-]{{43}}{_end('A-Za-z0-9_-')}"),
    _r("sendinblue-key", rf"xkeysib-(?<![{_W}_-]xkeysib-)[a-f0-9]{{64}}-[{_W}]{{16}}"),
    _r("shopify-token", rf"shp(?:at|ss|ca|pa)_(?<![{_W}_]shp(?:at|ss|ca|pa)_)[a-fA-F0-9]{{32}}{_end()}"),
    _r("square-token", rf"sq0(?:atp|csp)-(?<![{_W}_-]sq0(?:atp|csp)-)[{_W}_-]{{22,60}}"),
    _r("square-token", rf"EAAA(?<![{_W}]EAAA)[{_W}+=_-]{{60}}{_end('A-Za-z0-9+=_-')}"),
    _r("stripe-key", rf"k_test_(?<![{_W}_][sr]k_test_)(?<=[sr]k_test_)[{_W}]{{24,}}"),
    _r("stripe-key", rf"whsec_(?<![{_W}_]whsec_)[{_W}]{{32,}}"),
    _r(
        "telegram-bot-token",
        rf":AA(?<=\d:AA)[A-Za-z0-9_-]{{33}}{_end('A-Za-z0-9_-')}",
    ),
    _r("twilio-key", rf"SK(?<![{_W}]SK)[0-9a-f]{{32}}{_end()}"),
    _r("twilio-key", rf"AC(?<![{_W}]AC)[0-9a-f]{{32}}{_end()}", lambda m: _entropy(m.group(0)) > 3.3),
    _r("typeform-token", rf"tfp_(?<![{_W}_]tfp_)[{_W}_=.-]{{59}}"),
    _r("openai-api-key", rf"sk-(?<![{_W}_-]sk-)(?:proj|svcacct|admin)-[{_W}_-]{{40,}}"),
    _r("anthropic-api-key", rf"sk-ant-(?:api|admin)\d{{2}}-[{_W}_-]{{20,79}}(?![{_W}_-])"),
    _r("age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    _r("slack-app-token", rf"xapp-(?<![{_W}_-]xapp-)\d-[A-Z0-9]+-\d+-[a-f0-9]{{64}}"),
    _r("slack-config-token", rf"xoxe\.xox[bp]-(?<![{_W}_-]xoxe\.xox[bp]-)\d-[A-Z0-9]{{146,}}"),
    _r("azure-ad-client-secret", rf"Q~(?<=[{_W}_~.]{{3}}\dQ~)[{_W}_~.-]{{31,34}}(?![{_W}_~.-])"),
    _r("notion-token", rf"secret_(?<![{_W}_]secret_)[{_W}]{{43}}{_end()}"),
    _r("airtable-token", rf"pat(?<![{_W}_]pat)[{_W}]{{14}}\.[a-f0-9]{{64}}{_end()}"),
    _r("contentful-token", rf"CFPAT-(?<![{_W}_-]CFPAT-)[{_W}_-]{{43}}{_end('A-Za-z0-9_-')}"),
    _r("duffel-token", rf"duffel_(?<![{_W}_]duffel_)(?:test|live)_[{_W}_=-]{{43}}"),
    _r("frameio-token", rf"fio-u-(?<![{_W}_-]fio-u-)[{_W}_=-]{{64}}"),
    _r(
        "plaid-token",
        rf"access-(?<![{_W}_-]access-)(?:sandbox|development|production)-[0-9a-f]{{8}}-[0-9a-f]{{4}}"
        rf"-[0-9a-f]{{4}}-[0-9a-f]{{4}}-[0-9a-f]{{12}}",
    ),
    _r("readme-key", rf"rdme_(?<![{_W}_]rdme_)[a-z0-9]{{70}}{_end()}"),
    _r("openshift-token", rf"sha256~(?<![{_W}_-]sha256~)[{_W}_-]{{43}}{_end('A-Za-z0-9_-')}"),
    _r("sentry-dsn", r"@o(?<=//[a-f0-9]{32}@o)\d+\.ingest\.(?:[a-z]+\.)?sentry\.io"),
    _r("npm-auth-token", rf"_authToken=(?!\$\{{)[{_W}_./+=-]{{20,}}"),
    _r("yandex-token", rf"y0_(?<![{_W}_]y0_)[{_W}_-]{{55}}{_end('A-Za-z0-9_-')}"),
)

# Placeholders and references: values that stand for a secret instead of being one.
_PLACEHOLDER = re.compile(
    r"^(?:\$\{?\w+\}?|\{\{.*\}\}|<[^>]*>|%\(?\w+\)?s?|\*+|x+|X+|\.{3,}|null|none|true|false|"
    r"(?:your|my|the|some|example|sample|dummy|fake|test|changeme|change_me|placeholder|redacted|secret|"
    r"password|passwd|token|xxx+|todo|tbd|default|admin|root|user|guest|demo)[\w.-]*)$",
    re.I,
)
_KEYWORD = (r"(?:password|passwd|pwd|passphrase|secret|client_secret|api_?key|apikey|access_?key|"
            r"auth_?token|access_?token|refresh_?token|secret_?key|private_?key|token)")  # fmt: skip


# Examples every documentation and test suite copies: RFC 7617's Aladdin, jwt.io's token, AWS's
# documented keys. They are public; a value holding one is not a secret.
_WELL_KNOWN = (
    "QWxhZGRpbjpvcGVuIHNlc2FtZQ",
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIy",
    "EXAMPLE",
    "example",
)


def _well_known(value: str) -> bool:
    return any(w in value for w in _WELL_KNOWN)


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def _credential(m: re.Match[str]) -> bool:
    """A generic assignment's value is a credential: long and random enough, no placeholder, no
    elided example (`eyJ...`), and when unquoted not a name (`password: _PasswordType`, a type)."""
    value = m.group("value")
    if len(value) < 12 or _PLACEHOLDER.match(value) or value.isdigit() or _well_known(value):
        return False
    if "..." in value or "\u2026" in value:
        return False
    quoted = "q" in m.re.groupindex and bool(m.group("q"))
    if not quoted and _name_like(value):
        return False
    if re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+|[a-z_]+|[A-Z_]+", value):  # a name: code, not a secret
        return False
    return _classes(value) >= 3 and _entropy(value) >= 3.5


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


def _jwt(m: re.Match[str]) -> bool:
    """Three base64url parts whose first decodes to a JSON header with `alg`."""
    if _well_known(m.group(0)):
        return False
    head = m.group(0).split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(decoded, dict) and "alg" in decoded


def _url_password(m: re.Match[str]) -> bool:
    return _real_password(urllib.parse.unquote(m.group("password")))


def _basic(m: re.Match[str]) -> bool:
    """`Basic base64(user:password)` with a real password."""
    value = m.group("value")
    if _well_known(value):
        return False
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return False
    _, sep, password = decoded.partition(":")
    return bool(sep) and _real_password(password)


def _real_password(password: str) -> bool:
    """Not a placeholder, not words (`a secret`), long and varied enough."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", password) if not unicodedata.combining(c))
    if any(c.isspace() for c in plain) or _PLACEHOLDER.match(plain) or len(plain) < 6:
        return False
    long_random = len(plain) >= 12 and _entropy(plain) >= 3.3  # letters only, but many of them
    return (_classes(plain) >= 3 or long_random) and _entropy(plain) >= 2.5


def _classes(s: str) -> int:
    """How many of lower case, upper case, digits and other characters `s` mixes."""
    return sum(bool(re.search(rx, s)) for rx in (r"[a-z]", r"[A-Z]", r"\d", r"[^A-Za-z0-9]"))


GENERIC: tuple[Rule, ...] = (
    _r("jwt", rf"eyJ(?<![{_W}_-]eyJ)[{_W}_-]{{10,}}\.eyJ[{_W}_-]{{10,}}\.[{_W}_-]{{16,}}", _jwt),
    _r(
        "url-credentials",
        r"://(?P<user>[\w.%+-]{1,64}):(?P<password>[^\s:@/\"'`]{1,128})@[\w.-]+",
        _url_password,
    ),
    _r("bearer-token", rf"[Bb]earer\s+(?P<value>[{_W}._~+/-]{{20,}}=*)", _credential),
    _r("basic-auth-header", rf"[Bb]asic\s+(?P<value>[{_W}+/]{{16,}}={{0,2}})(?![{_W}+/=])", _basic),
    _r(
        "generic-credential",
        rf"{_KEYWORD}[\"']?\s*(?:[:=]|:=|=>)\s*(?P<q>[\"'`]?)(?P<value>[{_W}+/=_.~!@#$%^&*-]{{12,200}})[\"'`]?",
        _credential,
        re.I,
        (
            "pass",
            "pwd",
            "secret",
            "apikey",
            "api_key",
            "accesskey",
            "access_key",
            "privatekey",
            "private_key",
            "token",
        ),
    ),
)
