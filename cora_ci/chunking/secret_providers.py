"""The providers' secret formats `secret_rules` scans for: the token formats of gitleaks' and
detect-secrets' default rule sets and a few more, each as a `Rule`.

Three shapes of rule, from the most to the least specific:
- `TOKENS`: a registered prefix (`ghp_`, `xoxb-`, `glpat-`) or structure. `starts` names the
  literals a match starts with, at a word's start: one search of a text finds every rule's (see
  `secret_rules`). The few whose literal is inside the token (`...-us12`, `...:AA...`) `need` it.
- `NEAR`: a format whose distinctive part is not where it starts (`...:APA91b...`, `..._mmk`, a
  Kubernetes Secret's `data:` values): run only around its words, or on a text holding a rare one.
- `KEYED`: random characters with no prefix (a 32-digit hex key, a UUID), so only a value of the
  provider's shape assigned to a key that names the provider (`HEROKU_API_KEY = ...`,
  `"twitterSecret": "..."`), as gitleaks requires; one scan of a text for assignments serves them all.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import NamedTuple

from cora_ci.chunking import secret_checks as ck
from cora_ci.chunking.secret_checks import Check

_W = "A-Za-z0-9"
_B64 = "A-Za-z0-9+/"
_UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"


class Lazy:
    """A regex compiled when first used: a scan tries only the rules whose literal, word or key it
    meets, and compiling all ~270 at import cost ~20 ms of every hook process (which screens
    file names only)."""

    __slots__ = ("_compiled", "_flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self._flags = pattern, flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self._flags)
        return self._compiled

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.compiled.match(text, pos)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self.compiled.fullmatch(text)

    def finditer(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text, pos, endpos)


class Rule(NamedTuple):
    kind: str
    regex: Lazy
    check: Check | None = None
    # words (lower case) one of which a match holds: `finditer` then runs only near them, from
    # `back` characters before one to `span` after it (the rule's regex cannot start on a literal)
    near: tuple[str, ...] = ()
    # literals one of which every match starts with, at a word's start: one search of the text for
    # every rule's literals finds where each rule's regex is tried
    starts: tuple[str, ...] = ()
    need: str = ""  # a literal every match holds: a text without it is not searched
    # a keyed rule: words one of which the key of an assignment holds (a provider's name, in lower
    # case without `_.-`: `datadog` in `DATADOG_API_KEY`, `linkedin` in `linked-in.secret`), or ends
    # with (`key_end`: `password`, `api_key`); `regex`: what the value must be
    keys: tuple[str, ...] = ()
    key_end: bool = False
    back: int = 16
    span: int = 260


def _end(chars: str = _W) -> str:
    return f"(?![{chars}])"


def _t(kind: str, starts: str | tuple[str, ...], rest: str, check: Check | None = None,
       left: str = _W + "_") -> Rule:  # fmt: skip
    """A token: one of the literals `starts`, not preceded by a `left` character, then `rest`."""
    lits = (starts,) if isinstance(starts, str) else starts
    alts = "|".join(map(re.escape, lits))
    return Rule(kind, Lazy(f"(?<![{left}])(?:{alts}){rest}"), check, starts=lits)


def _x(kind: str, need: str, rx: str, check: Check | None = None) -> Rule:
    """A rule run on a text that holds the literal `need` (every match does): its regex starts with
    a literal inside a word (not at a word's start, as `starts` are), or the literal is rare."""
    return Rule(kind, Lazy(rx), check, need=need)


def _n(kind: str, near: tuple[str, ...], rx: str, check: Check | None = None, back: int = 16,
       span: int = 260, flags: int = 0) -> Rule:  # fmt: skip
    return Rule(kind, Lazy(rx, flags), check, near, back=back, span=span)


def _k(kind: str, keys: tuple[str, ...], value: str, check: Check = ck.keyed_value) -> Rule:
    return Rule(kind, Lazy(value), check, keys=keys)


_RANDOM = ck.token(3.0)
_RANDOM_B64 = ck.token(4.0)
_E = _end()
_E_ = _end(_W + "_-")

TOKENS: tuple[Rule, ...] = (
    _t(
        "onepassword-secret-key",
        "A3-",
        rf"[A-Z0-9]{{6}}-(?:[A-Z0-9]{{11}}|[A-Z0-9]{{6}}-[A-Z0-9]{{5}})"
        rf"-[A-Z0-9]{{5}}-[A-Z0-9]{{5}}-[A-Z0-9]{{5}}{_E}",
        ck.token(3.5),
    ),
    _t("onepassword-service-token", "ops_eyJ", rf"[{_B64}]{{250,}}={{0,3}}", _RANDOM_B64),
    _t("adafruit-key", "aio_", rf"[{_W}]{{28}}{_E}", _RANDOM),
    _t("adobe-client-secret", "p8e-", rf"[{_W}]{{32}}{_E}", _RANDOM),
    _t("age-secret-key", "AGE-SECRET-KEY-1", r"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    _t("airtable-token", "pat", rf"[{_W}]{{14}}\.[a-f0-9]{{64}}{_E}"),
    _t("alibaba-access-key", "LTAI", rf"[{_W}]{{20}}{_E}", _RANDOM),
    _t(
        "anthropic-api-key",
        ("sk-ant-api", "sk-ant-admin"),
        rf"\d{{2}}-[{_W}_-]{{20,79}}{_E_}",
        left=_W + "_-",
    ),
    _t("artifactory-key", "AKCp", rf"[{_W}]{{69}}{_E}", _RANDOM),
    _t("artifactory-key", "cmVmd", rf"[{_W}]{{59}}{_E}", ck.token(4.0)),
    _t("atlassian-token", "ATATT3", rf"[{_W}_=-]{{150,}}"),
    _t("aws-bedrock-key", "ABSK", rf"[{_B64}]{{109,269}}={{0,2}}", _RANDOM_B64),
    _t("aws-bedrock-key", "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t", rf"[{_B64}=%&_-]{{20,}}"),
    _t("azure-storage-key", "AccountKey=", rf"(?P<value>[{_B64}]{{86}}==)"),
    _t("azure-storage-key", "SharedAccessKey=", rf"(?P<value>[{_B64}]{{43}}=)"),
    _t(
        "azure-sas-token",
        "sig=",
        rf"(?<=[?&;]sig=)(?P<value>(?:[{_B64}]|%2[BbFf]){{40,60}}(?:%3[Dd]|=)?)"
        rf"(?![{_B64}%=])",
        ck.azure_sas,
    ),
    _t("braintree-token", "access_token$", rf"(?:production|sandbox)\$[0-9a-z]{{16}}\$[0-9a-f]{{32}}{_E}"),
    _t("buildkite-token", "bkua_", rf"[a-f0-9]{{40}}{_E}"),
    _t("circleci-token", "CCIPAT_", rf"[{_W}]{{22}}_[a-f0-9]{{40}}{_E}"),
    _t("clickhouse-secret", "4b1d", rf"[{_W}]{{38}}{_E}", ck.mixed_case),
    _t("clojars-token", "CLOJARS_", rf"[a-z0-9]{{60}}{_E}"),
    _t("cloudflare-origin-ca-key", "v1.0-", rf"[a-f0-9]{{24}}-[a-f0-9]{{146}}{_E}"),
    _t("contentful-token", "CFPAT-", rf"[{_W}_-]{{43}}{_E_}", left=_W + "_-"),
    _t("crates-io-token", "cio", rf"[{_W}]{{32}}{_E}", ck.token(3.5)),
    _t("databricks-token", "dapi", rf"[a-f0-9]{{32}}(?:-\d)?{_E}", _RANDOM),
    _t("digitalocean-token", ("doo_v1_", "dop_v1_", "dor_v1_"), rf"[a-f0-9]{{64}}{_E}"),
    _t(
        "discord-webhook",
        ("discord.com/api/webhooks/", "discordapp.com/api/webhooks/"),
        rf"\d{{17,20}}/[{_W}_-]{{60,}}",
    ),
    _t("docker-hub-token", ("dckr_pat_", "dckr_oat_"), rf"[{_W}_-]{{27}}{_E_}", _RANDOM),
    _t(
        "docker-config-auth",
        "auth",
        rf"(?<=\"auth)\\?\"[ \t]*:[ \t]*\\?\"(?P<value>[{_B64}]{{12,}}={{0,2}})\\?\"",
        ck.basic,
    ),
    _t("doppler-token", "dp.", rf"(?:pt|ct|sa|scim|audit|st(?:\.[a-z0-9_-]{{2,35}})?)\.[{_W}]{{40,44}}{_E}"),
    _t("dropbox-token", "sl.", rf"(?:[a-z]\.)?[{_W}_-]{{130,}}", left=_W + "_."),
    _t("duffel-token", ("duffel_test_", "duffel_live_"), rf"[{_W}_=-]{{43}}"),
    _t("dynatrace-token", "dt0c01.", rf"[A-Z0-9]{{24}}\.[A-Z0-9]{{64}}{_E}"),
    _t("easypost-key", ("EZAK", "EZTK"), rf"[{_W}]{{54}}{_E}", _RANDOM),
    _t("facebook-page-token", ("EAAM", "EAAC"), rf"[{_W}]{{100,}}", _RANDOM),
    _t("figma-token", "figd_", rf"[{_W}_-]{{40}}{_E_}"),
    _t("flutterwave-key", ("FLWSECK_TEST-", "FLWPUBK_TEST-"), rf"[a-hA-H0-9]{{32}}-X{_E}"),
    _t("flutterwave-key", "FLWSECK", rf"(?:_TEST-?|-)[a-hA-H0-9]{{12}}(?:[a-hA-H0-9]{{20}}-X)?{_E}"),
    _t("flyio-token", "fo1_", rf"[{_W}_-]{{43}}{_E_}", _RANDOM),
    _t("flyio-token", ("fm1a_", "fm1r_", "fm2_"), rf"[{_B64}]{{100,}}={{0,3}}", _RANDOM_B64),
    _t("frameio-token", "fio-u-", rf"[{_W}_=-]{{64}}", left=_W + "_-"),
    _t(
        "gitlab-token",
        tuple(f"gl{t}-" for t in ("ptt", "rt", "dt", "ft", "oas", "cbt", "imt", "agent", "soat", "ffct")),
        rf"[{_W}_-]{{20,}}(?:\.[0-9a-z]{{9}}{_E})?",
    ),
    _t("gitlab-token", "glpat-", rf"[{_W}_-]{{27,300}}\.[0-9a-z]{{9}}{_E}"),  # routable: the suffix too
    _t("gitlab-token", "GR1348941", rf"[{_W}_-]{{20,}}"),
    _t("gitlab-session-cookie", "_gitlab_session=", rf"[0-9a-z]{{32}}{_E}", _RANDOM),
    _t("google-oauth-client-secret", "GOCSPX-", rf"[{_W}_-]{{28}}{_E_}", _RANDOM),
    _t("google-oauth-access-token", "ya29.", rf"[{_W}_-]{{50,}}", _RANDOM),
    _t("gcp-service-account-key", "private_key_id", r"\\?\"[ \t]*:[ \t]*\\?\"(?P<value>[a-f0-9]{40})\\?\""),
    _t("grafana-token", "glc_", rf"[{_B64}]{{32,400}}={{0,2}}", _RANDOM),
    _t("grafana-token", "glsa_", rf"[{_W}]{{32}}_[a-fA-F0-9]{{8}}{_E}"),
    _t("grafana-token", "eyJrIjoi", rf"[{_W}]{{70,400}}={{0,3}}", _RANDOM_B64),
    _t("harness-token", ("pat.", "sat."), rf"[{_W}_-]{{22}}\.[{_W}]{{24}}\.[{_W}]{{20}}{_E}"),
    _t("hashicorp-vault-token", ("hvs.", "hvb."), rf"[{_W}_-]{{90,}}", left=_W + "_."),
    _t("heroku-key", "HRKU-", rf"[{_W}_-]{{60}}"),
    _t("hubspot-token", ("pat-na1-", "pat-eu1-"), rf"[a-f0-9-]{{36}}{_E}", left=_W),
    _t("huggingface-token", "hf_", rf"[A-Za-z]{{34}}{_E}", _RANDOM),
    _t("huggingface-token", "api_org_", rf"[A-Za-z]{{34}}{_E}", _RANDOM),
    _t("infracost-token", "ico-", rf"[{_W}]{{32}}{_E}", ck.token(3.5)),
    _t("intra42-secret", ("s-s4t2ud-", "s-s4t2af-"), rf"[a-f0-9]{{64}}{_E}", left=_W + "_-"),
    _t("langsmith-key", ("lsv2_pt_", "lsv2_sk_"), rf"[a-f0-9]{{32}}_[a-f0-9]{{10}}{_E}"),
    _t("laravel-app-key", "APP_KEY", rf"[\"']?[ \t]*[=:][ \t]*[\"']?base64:(?P<value>[{_B64}]{{43}}=)"),
    _t("linear-key", "lin_api_", rf"[{_W}]{{40}}{_E}"),
    _t("mailgun-key", ("key-", "pubkey-"), rf"[a-f0-9]{{32}}{_E}", _RANDOM, left=_W + "_-"),
    _t("mapbox-token", "sk.eyJ", rf"[{_W}_-]{{50,}}\.[{_W}_-]{{20,}}", left=_W + "_."),
    _t("netlify-token", "nfp_", rf"[{_W}]{{36}}{_E}", _RANDOM),
    _t(
        "newrelic-key",
        ("NRAK-", "NRJS-", "NRII-"),
        rf"(?:(?<=AK-)[A-Z0-9]{{27}}|(?<=JS-)[a-f0-9]{{19}}"
        rf"|(?<=II-)[A-Za-z0-9-]{{32}}){_E}",
        _RANDOM,
    ),
    _t("notion-token", "secret_", rf"[{_W}]{{43}}{_E}", _RANDOM),
    _t("notion-token", "ntn_", rf"\d{{11}}[{_W}]{{35}}{_E}"),
    _t("npm-auth-token", "_authToken=", rf"(?!\$\{{)[{_W}_./+=-]{{20,}}"),
    _t("npm-auth-token", "_auth=", rf"(?P<value>[{_B64}]{{12,}}={{0,2}})", ck.basic),
    _t("nuget-api-key", "oy2", rf"[a-z0-9]{{43}}{_E}", _RANDOM),
    _t(
        "nuget-config-password",
        '<add key="',
        r'(?:ClearText)?Password"\s+value="(?P<value>[^"]{8,})"',
        ck.password_value,
    ),
    _t("octopus-deploy-key", "API-", rf"[A-Z0-9]{{26}}{_E}", ck.alnum_token),
    _t("openai-api-key", ("sk-proj-", "sk-svcacct-", "sk-admin-"), rf"[{_W}_-]{{40,}}", left=_W + "_-"),
    _t("openrouter-key", "sk-or-v1-", rf"[a-f0-9]{{64}}{_E}", left=_W + "_-"),
    _t("openshift-token", "sha256~", rf"[{_W}_-]{{43}}{_E_}", left=_W + "_-"),
    _t("perplexity-key", "pplx-", rf"[{_W}]{{48}}{_E}", _RANDOM),
    _t(
        "plaid-token", ("access-sandbox-", "access-development-", "access-production-"), _UUID, left=_W + "_-"
    ),
    _t("planetscale-token", ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"), rf"[{_W}_.=-]{{32,64}}"),
    _t("postman-key", "PMAK-", rf"[a-f0-9]{{24}}-[a-f0-9]{{34}}{_E}"),
    _t("prefect-key", "pnu_", rf"[{_W}]{{36}}{_E}"),
    _t("pulumi-token", "pul-", rf"[a-f0-9]{{40}}{_E}", left=_W + "_-"),
    _t("pypi-token", "pypi-AgENdGVzdC5weXBpLm9yZw", r"[A-Za-z0-9_-]{50,}"),
    _t("readme-key", "rdme_", rf"[a-z0-9]{{70}}{_E}"),
    _t("render-key", "rnd_", rf"[{_W}]{{32}}{_E}", _RANDOM),
    _t("replicate-token", "r8_", rf"[{_W}]{{37}}{_E}", _RANDOM),
    _t("groq-key", "gsk_", rf"[{_W}]{{52}}{_E}", _RANDOM),
    _t("xai-key", "xai-", rf"[{_W}]{{80}}{_E}", _RANDOM, left=_W + "_-"),
    _t("tavily-key", "tvly-", rf"(?:dev-|prod-)?[{_W}]{{32}}{_E}", _RANDOM, left=_W + "_-"),
    _t("rubygems-key", "rubygems_", rf"[a-f0-9]{{48}}{_E}"),
    _t("scalingo-token", "tk-us-", rf"[{_W}_-]{{48}}{_E_}", left=_W + "_-"),
    _t("sendgrid-key", "SG.", rf"[{_W}_-]{{22}}\.[{_W}_-]{{43}}{_E_}", left=_W + "_."),
    _t("sendinblue-key", ("xkeysib-", "xsmtpsib-"), rf"[a-f0-9]{{64}}-[{_W}]{{16}}", left=_W + "_-"),
    _t("sentry-token", "sntryu_", rf"[a-f0-9]{{64}}{_E}"),
    _t(
        "sentry-token",
        "sntrys_eyJpYXQiO",
        rf"[{_B64}]{{10,400}}={{0,2}}_[{_B64}]{{43}}(?![{_B64}])",
        _RANDOM_B64,
    ),
    _t("settlemint-token", ("sm_aat_", "sm_pat_", "sm_sat_"), rf"[{_W}]{{16}}{_E}", _RANDOM),
    _t("shippo-token", ("shippo_live_", "shippo_test_"), rf"[a-fA-F0-9]{{40}}{_E}"),
    _t("shopify-token", ("shpat_", "shpss_", "shpca_", "shppa_"), rf"[a-fA-F0-9]{{32}}{_E}"),
    _t(
        "sidekiq-secret",
        ("BUNDLE_ENTERPRISE__CONTRIBSYS__COM", "BUNDLE_GEMS__CONTRIBSYS__COM"),
        r"[\"']?[ \t]*[:=][ \t]*[\"']?(?P<value>[a-f0-9]{8}:[a-f0-9]{8})(?![a-f0-9])",
    ),
    _t("slack-token", ("xoxa-", "xoxr-"), rf"\d-[{_W}]{{8,48}}{_E}"),
    _t("slack-token", "xoxe-", rf"\d-[A-Z0-9]{{146}}{_E}"),
    _t("slack-app-token", "xapp-", r"\d-[A-Z0-9]+-\d+-[a-f0-9]{64}", left=_W + "_-"),
    _t("slack-config-token", ("xoxe.xoxb-", "xoxe.xoxp-"), r"\d-[A-Z0-9]{146,}", left=_W + "_-"),
    _t(
        "slack-webhook", ("hooks.slack.com/workflows/", "hooks.slack.com/triggers/"), r"[A-Za-z0-9+/]{43,120}"
    ),
    _t("sonarqube-token", ("squ_", "sqp_", "sqa_"), rf"[a-f0-9]{{40}}{_E}"),
    _t("sourcegraph-token", "sgp_", rf"(?:(?:[a-fA-F0-9]{{16}}|local)_)?[a-fA-F0-9]{{40}}{_E}"),
    _t("square-token", ("sq0atp-", "sq0csp-"), rf"[{_W}_-]{{22,60}}"),
    _t("square-token", "EAAA", rf"[{_W}+=_-]{{60}}(?![{_W}+=_-])", _RANDOM),
    _t("stripe-key", ("sk_test_", "rk_test_", "sk_prod_", "rk_prod_"), rf"[{_W}]{{24,}}", _RANDOM),
    _t("stripe-key", "whsec_", rf"[{_W}]{{32,}}", _RANDOM),
    _t("supabase-token", "sbp_", rf"[a-f0-9]{{40}}{_E}"),
    _t("tailscale-key", "tskey-", rf"[a-z]+-[{_W}]{{8,}}-[{_W}]{{20,}}{_E}", _RANDOM, left=_W + "_-"),
    _t("twilio-key", "SK", rf"[0-9a-f]{{32}}{_E}", _RANDOM),
    _t("twilio-key", "AC", rf"[0-9a-f]{{32}}{_E}", _RANDOM),
    _t(
        "twitter-bearer-token",
        "A" * 22,
        rf"(?P<value>[{_W}%]{{80,100}})(?![{_B64}%=])",
        ck.token(4.0, "value", typed=False),
        left=_B64,
    ),
    _t("typeform-token", "tfp_", rf"[{_W}_=.-]{{59}}"),
    _t("yandex-token", "y0_", rf"[{_W}_-]{{55}}{_E_}"),
    _t("yandex-token", "AQVN", rf"[{_W}_-]{{35,38}}{_E_}", _RANDOM),
    # literals inside a token: searched for one by one
    _x("azure-ad-client-secret", "Q~", rf"Q~(?<=[{_W}_~.]{{3}}\dQ~)[{_W}_~.-]{{31,34}}(?![{_W}_~.-])"),
    _x("hashicorp-tf-token", ".atlasv1.", rf"\.atlasv1\.[{_W}_=-]{{60,70}}"),
    _x("mailchimp-key", "-us", rf"-us(?<=[^{_W}][a-f0-9]{{32}}-us)\d{{1,2}}{_E}"),
    _x(
        "microsoft-teams-webhook",
        ".webhook.office.com/webhookb2/",
        rf"\.webhook\.office\.com/webhookb2/{_UUID}@{_UUID}/IncomingWebhook/[a-f0-9]{{32}}/{_UUID}"
        r"(?:/[A-Za-z0-9_-]+)?",
    ),
    _x("sentry-dsn", "@o", r"@o(?<=//[a-f0-9]{32}@o)\d+\.ingest\.(?:[a-z]+\.)?sentry\.io"),
    _x("telegram-bot-token", ":AA", rf":AA(?<=\d:AA)[{_W}_-]{{33}}{_E_}"),
)

NEAR: tuple[Rule, ...] = (
    _n(
        "authress-key",
        (".acc_", ".acc-"),
        rf"(?<![{_W}_])(?:sc|ext|scauth|authress)_[{_W}]{{5,30}}\.[{_W}]{{4,6}}"
        rf"\.acc[_-][a-z0-9-]{{10,32}}\.[a-z0-9+/_=-]{{30,120}}",
        back=48,
        flags=re.I,
    ),
    # rare words: the whole text is searched when it holds one
    _x("firebase-fcm-key", ":APA91b", rf"(?<![{_W}_-])AAAA[{_W}_-]{{7}}:APA91b[{_W}_-]{{134}}"),
    _x("maxmind-key", "_mmk", rf"(?<![{_W}_])[{_W}]{{6}}_[{_W}]{{29}}_mmk{_E}"),
    _x(
        "sidekiq-secret",
        "contribsys.com",
        r"(?<![a-f0-9])(?P<value>[a-f0-9]{8}:[a-f0-9]{8})@(?:gems|enterprise)\.contribsys\.com",
    ),
    _x(
        "kubernetes-secret",
        "Secret",
        rf"(?m)^(?P<indent>[ \t]+)[\w.-]+:[ \t]+(?P<q>[\"']?)(?P<value>[{_B64}]{{12,}}={{0,2}})(?P=q)[ \t]*$",
        ck.kubernetes_data,
    ),
)


def _sizes(shape: str, *lengths: int) -> str:
    return "|".join(f"{shape}{{{n}}}" for n in lengths)


_AN, _AN_ = f"[{_W}]", f"[{_W}_=-]"
KEYED: tuple[Rule, ...] = (
    _k("adafruit-key", ("adafruit",), f"[{_W}_-]{{32}}"),
    _k("airtable-key", ("airtable",), f"{_AN}{{17}}"),
    _k("algolia-key", ("algolia",), f"{_AN}{{32}}"),
    _k("alibaba-secret-key", ("alibaba", "aliyun"), f"{_AN}{{30}}"),
    _k("asana-secret", ("asana",), f"{_AN}{{32}}"),
    _k("atlassian-token", ("atlassian", "confluence", "jira"), f"{_AN}{{24}}"),
    _k("auth0-secret", ("auth0",), f"[{_W}_-]{{64}}"),
    _k(
        "azure-devops-token",
        ("azure_devops", "azuredevops", "azure-devops", "ado_pat", "azdo"),
        "[a-z2-7]{52}",
    ),
    _k("beamer-token", ("beamer",), f"b_{_AN_}{{44}}"),
    _k("bitbucket-secret", ("bitbucket",), f"{_AN_}{{64}}"),
    _k("bittrex-key", ("bittrex",), f"{_AN}{{32}}"),
    _k("cisco-meraki-key", ("meraki",), "[0-9a-f]{40}"),
    _k("cloudant-key", ("cloudant",), "[0-9a-f]{64}|[a-z]{24}"),
    _k("cloudflare-key", ("cloudflare", "cfapi"), f"[{_W}_-]{{40}}|[a-f0-9]{{37}}"),
    _k("codecov-token", ("codecov",), f"{_AN}{{32}}|{_UUID}"),
    _k("cohere-key", ("cohere", "coapikey"), f"{_AN}{{40}}"),
    _k("coinbase-token", ("coinbase",), f"[{_W}_-]{{64}}"),
    _k("confluent-secret", ("confluent",), f"{_AN}{{64}}"),
    _k("contentful-token", ("contentful",), f"{_AN_}{{43}}"),
    _k("datadog-key", ("datadog", "ddapikey", "ddappkey"), "[a-f0-9]{32}|[a-f0-9]{40}"),
    _k("discord-secret", ("discord",), rf"{_AN_}{{32}}|[MNO][\w-]{{23,25}}\.[\w-]{{6}}\.[\w-]{{27,38}}"),
    _k("droneci-token", ("droneci", "dronetoken"), f"{_AN}{{32}}"),
    _k("dropbox-token", ("dropbox",), f"{_AN}{{11}}AAAAAAAAAA{_AN_}{{43}}", ck.dropbox_long_lived),
    _k("etsy-token", ("etsy",), f"{_AN}{{24}}"),
    _k(
        "facebook-secret",
        ("facebook", "fb_app_secret"),
        r"[a-f0-9]{32}|\d{15,16}(?:\||%7[Cc])[\w-]{27,40}",
    ),
    _k("fastly-token", ("fastly",), f"{_AN_}{{32}}"),
    _k("finicity-secret", ("finicity",), f"[a-f0-9]{{32}}|{_AN}{{20}}"),
    _k("finnhub-token", ("finnhub",), f"{_AN}{{20}}"),
    _k("flickr-token", ("flickr",), f"{_AN}{{32}}"),
    _k("freshbooks-token", ("freshbooks",), f"{_AN}{{64}}"),
    _k("gitter-token", ("gitter",), f"[{_W}_-]{{40}}"),
    _k("gocardless-token", ("gocardless",), f"live_{_AN_}{{40}}"),
    _k("heroku-key", ("heroku",), _UUID),
    _k("hubspot-key", ("hubspot", "hapikey"), _UUID),
    _k("ibm-cloud-key", ("ibmcloud", "ibmapi", "ibmiam"), r"[\w-]{44}"),
    _k("intercom-token", ("intercom",), f"{_AN_}{{60}}"),
    _k("jfrog-key", ("jfrog", "artifactory", "bintray", "xray"), _sizes(_AN, 64, 73)),
    _k("kraken-key", ("kraken",), f"[{_W}/=_+-]{{80,90}}"),
    _k("kucoin-key", ("kucoin",), f"[a-f0-9]{{24}}|{_UUID}"),
    _k("launchdarkly-token", ("launchdarkly",), f"{_AN_}{{40}}"),
    _k("linear-secret", ("linear",), "[a-f0-9]{32}"),
    _k("linkedin-secret", ("linkedin",), f"{_AN}{{16}}"),
    _k("lob-key", ("lob",), "(?:live|test)_[a-f0-9]{35}"),
    _k("looker-secret", ("looker",), f"{_AN}{{24}}"),
    _k("mailgun-key", ("mailgun",), "[a-h0-9]{32}-[a-h0-9]{8}-[a-h0-9]{8}"),
    _k("mailjet-key", ("mailjet", "mjapikey"), "[a-f0-9]{32}"),
    _k("mattermost-token", ("mattermost",), f"{_AN}{{26}}"),
    _k("messagebird-key", ("messagebird",), f"{_AN}{{25}}"),
    _k("mistral-key", ("mistral",), f"{_AN}{{32}}"),
    _k("netlify-token", ("netlify",), f"{_AN_}{{40,46}}"),
    _k("nytimes-token", ("nytimes", "newyorktimes"), f"{_AN_}{{32}}"),
    _k("okta-token", ("okta",), f"00{_AN_}{{40}}"),
    _k("pinecone-key", ("pinecone",), _UUID),
    _k("plaid-secret", ("plaid",), f"{_AN}{{30}}"),
    _k("postmark-token", ("postmark",), _UUID),
    _k("rapidapi-key", ("rapidapi",), f"[{_W}_-]{{50}}"),
    _k("sendbird-token", ("sendbird",), "[a-f0-9]{40}"),
    _k("sentry-token", ("sentry",), "[a-f0-9]{64}"),
    _k("snyk-token", ("snyk",), _UUID),
    _k("softlayer-key", ("softlayer",), "[a-z0-9]{64}"),
    _k("squarespace-token", ("squarespace",), _UUID),
    _k("sumologic-key", ("sumo",), f"{_AN}{{64}}"),
    _k("travis-token", ("travis",), f"{_AN}{{22}}"),
    _k("twitch-token", ("twitch",), f"{_AN}{{30}}"),
    _k("twitter-secret", ("twitter",), _sizes(_AN, 25, 45, 50) + rf"|\d{{15,25}}-{_AN}{{20,40}}"),
    _k("vault-token", ("vault",), f"s\\.{_AN}{{24}}"),
    _k("vercel-token", ("vercel",), f"{_AN}{{24}}"),
    _k("yandex-key", ("yandex",), r"t1\.[\w-]+={0,2}\.[\w-]{86}={0,2}|YC[\w-]{38}"),
    _k("zendesk-secret", ("zendesk",), f"{_AN}{{40}}"),
)

PROVIDERS: tuple[Rule, ...] = (*TOKENS, *NEAR, *KEYED)
