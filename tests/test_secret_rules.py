"""Every secret format the screen knows is found, by the rule meant for it, and redacted whole;
what only looks like one (placeholders, documentation examples, identifiers, digests, UUIDs,
lock-file integrity strings) is not.

The fakes are bench/secret_fakes.py's, made at run time from random characters, and every
look-alike here is assembled from pieces: this file holds nothing a secret scanner would flag.
"""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cora_ci.chunking.secret_rules import GENERIC, PROVIDERS, RULES, candidates, find
from cora_ci.chunking.secrets import contains_secret, redact, scan_lines

# bench/ is not put on sys.path (its scripts import each other by bare name).
_SPEC = importlib.util.spec_from_file_location(
    "secret_fakes", Path(__file__).parent.parent / "bench/secret_fakes.py"
)
assert _SPEC is not None and _SPEC.loader is not None
fakes = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(fakes)
FORMATS, PIECES = fakes.FORMATS, fakes.PIECES


def _fake(name: str, seed: int = 0) -> tuple[str, list[str]]:
    PIECES.clear()
    value = FORMATS[name].make(random.Random(f"{name}/{seed}"))
    return value, [p for p in PIECES if len(p) >= 8]


def test_at_least_150_formats() -> None:
    assert len(FORMATS) >= 150


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_format_is_found_by_its_rule_and_redacted(name: str) -> None:
    for seed in range(8):  # a provider's key is written three ways: each is drawn in 8 tries, likely
        value, pieces = _fake(name, seed)
        lines = ["x = 1", *f"value = {value}".split("\n"), "y = 2"]
        found = scan_lines(lines)
        assert FORMATS[name].kind in {f.kind for f in found}, (value, found)
        assert all(f.first >= 2 and f.last <= len(lines) - 1 for f in found)
        clean = "\n".join(redact(lines, found))
        assert not [p for p in pieces if p[:8] in clean or p[-8:] in clean], clean
        assert lines[0] in clean and lines[-1] in clean


def test_every_rule_has_a_format() -> None:
    """No rule goes unmeasured: each kind is some format's expected kind."""
    kinds = {r.kind for r in (*PROVIDERS, *GENERIC)}
    assert kinds <= {f.kind for f in FORMATS.values()}


def _rand(alphabet: str, n: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


_HEX = "0123456789abcdef"
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_B64 = _ALNUM + "+/"
_UUID = "-".join(_rand(_HEX, n, n) for n in (8, 4, 4, 4, 12))

# Look alike, but not secrets.
NOT_SECRETS = [
    # placeholders and documentation examples in a token's shape
    "sk" + "_test_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "shp" + "at_" + "x" * 32,
    "NR" + "AK-" + "X" * 27,
    "xo" + "xb-" + "your-token-here",
    "HEROKU_API_KEY=" + "00000000-0000-0000-0000-000000000000",
    "DATADOG_API_KEY=" + "0123456789abcdef" * 2,
    "TWILIO_ACCOUNT_SID=A" + "C" + "x" * 32,
    "sentry_dsn: https://" + "<key>" + "@o0.ingest.sentry.io/0",
    "mailgun_api_key: ke" + "y-" + "<your key>",
    "twitter_consumer_key: ${TWITTER_CONSUMER_KEY}",
    "okta_token = os.environ['OKTA_TOKEN']",
    "datadog_api_key = settings.DATADOG_API_KEY",
    # identifiers, in a provider's key or not
    "twitterConsumerSecret = getTwitterConsumerSecret",
    "sentry_sdk_version: SentryIntegrationDefaults",
    "linkedinClientSecret = linkedinClientSecretFromVault",
    "api_key: ApiKeyAuthenticationHandler",
    "def twitch_token(self) -> TwitchTokenRefresher:",
    # digests: git SHAs, lock-file integrity strings, checksums, UUIDs
    "commit = " + _rand(_HEX, 40, 1),
    "sentry_release = " + _rand(_HEX, 40, 2),
    '"integrity": "sha512-' + _rand(_B64, 86, 3) + '=="',
    '"integrity": "sha256-' + _rand(_B64, 43, 4) + '="',
    "sha256 = " + _rand(_HEX, 64, 5),
    '  resolved "https://registry.yarnpkg.com/x/-/x-1.0.0.tgz#' + _rand(_HEX, 40, 6) + '"',
    "request_id = " + _UUID,
    "heroku_app_id = " + _UUID.replace("-", ""),
    "--hash=sha256:" + _rand(_HEX, 64, 7),
    # base64 of data, a Kubernetes manifest that is not a Secret
    "kind: ConfigMap\ndata:\n  config: " + _rand(_B64, 40, 8),
    "font = 'data:font/woff2;base64," + _rand(_B64, 200, 9) + "'",
    # prefixes inside words, prefixes alone
    "precision" + _rand(_ALNUM, 32, 10),
    "hf_hub_download(repo_id, filename)",
    "pat.match(text)",
    "sq" + "lite3_open_v2",
    "shp" + "at_ = None",
    "SKIP_" + _rand("0123456789ABCDEF", 32, 11),
    # a comparison with a literal, a docstring naming a kind
    'if password == "",',
    "The Slack token (xoxb-...) and the GitHub token (ghp_...) are read from the environment.",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_lookalikes_are_not_secrets(text: str) -> None:
    assert scan_lines(text.split("\n")) == [], text


def test_a_kubernetes_secret_needs_its_kind_and_data() -> None:
    value = _rand(_B64, 40, 12)
    secret = ["apiVersion: v1", "kind: Sec" + "ret", "data:", f"  token: {value}"]
    assert [f.kind for f in scan_lines(secret)] == ["kubernetes-secret"]
    assert scan_lines(["kind: Sec" + "ret", "metadata:", f"  name: {value}"]) == []
    other = ["kind: Sec" + "ret", "data:", "  a: b", "---", "kind: Deployment", "data:", f"  blob: {value}"]
    assert scan_lines(other) == []


def test_a_keyed_rule_needs_the_provider_in_the_key() -> None:
    value = _rand(_HEX, 32, 13)
    assert [f.kind for f in scan_lines([f"DATADOG_API_KEY={value}"])] == ["datadog-key"]
    assert scan_lines([f"CACHE_DIGEST={value}"]) == []
    assert scan_lines([f"datadog_api_key = compute({value!r})"]) == []  # a call's argument


def test_find_is_the_same_on_a_text_alone_and_among_others() -> None:
    """The rules share what they work out about a text (its lower case, its assignments): asking
    about another text in between changes nothing."""
    value, _ = _fake("datadog-api-key")
    text = f"x = 1\n{value}\n"
    rules = [r for r in PROVIDERS if r.kind == "datadog-key"]
    alone = [m.group(0) for r in rules for m in find(r, text)]
    assert alone and contains_secret("nothing here") is None
    assert [m.group(0) for r in rules for m in find(r, text)] == alone


def test_rules_start_on_a_literal() -> None:
    """Speed: every rule is dispatched from a literal (a token start, a required word, a provider's
    name in a key) or runs only near words: none scans a text from every position."""
    for r in (*PROVIDERS, *GENERIC):
        assert r.starts or r.need or r.keys or r.near, r.kind


def _missed(text: str) -> list[str]:
    """Rules `find` gives a match in `text` that `candidates` left out."""
    chosen = {id(r) for r in candidates(text)}
    return [r.kind for r in RULES if find(r, text) and id(r) not in chosen]


def test_candidates_keep_every_rule_that_matches_each_format() -> None:
    """The screen runs only `candidates(text)`: a rule left out must be one `find` finds nothing
    for. Every format's fakes, alone and together in one text, in the rules' own order."""
    values = [_fake(name, seed)[0] for name in sorted(FORMATS) for seed in range(3)]
    for value in values:
        for text in (value, f"value = {value}", f'config["token"] = "{value}"\n'):
            assert _missed(text) == [], text
            assert [RULES.index(r) for r in candidates(text)] == sorted(
                RULES.index(r) for r in candidates(text)
            )
    assert _missed("\n".join(f"k{i} = {v}" for i, v in enumerate(values))) == []


_FRAGMENTS = sorted(
    {lit for r in RULES for lit in r.starts}
    | {r.need for r in RULES if r.need}
    | {k for r in RULES for k in r.keys}
    | {w for r in RULES for w in r.near}
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(_FRAGMENTS),
            st.sampled_from([" = ", ": ", '="', "'", "\n", "_", "-", ".", "://", "@", " ", "Bearer "]),
            st.text(alphabet="abcdefXYZ0123456789+/_-", min_size=1, max_size=48),
        ),
        max_size=24,
    ).map("".join)
)
def test_candidates_keep_every_rule_that_matches_any_text(text: str) -> None:
    assert _missed(text) == []
