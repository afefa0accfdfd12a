"""Secrets screening: recall on planted fake secrets, false positives on real code.

    python bench/secrets.py [--json FILE]

Recall: fake secrets of every format the screen knows (built here at run time from random
characters, so this file holds no literal token), each planted in several places a repository
puts them (a Python string, a YAML value, a JSON value, an INI/properties line, a shell export, a
Markdown code block), are indexed with `cora-ci`'s chunker; a planted secret counts as caught when
its line is reported and no chunk that survives holds it. Goal (issue 20): recall >= 0.98, and
none of the planted secrets in any chunk kept.

False positives: every file of the bench corpora (bench/corpora.py: PyPI sdists and npm packages)
chunked with the screen on; each chunk dropped is a false positive (these packages hold no live
credentials). Goal: <= 1 per 5,000 chunks.
"""

from __future__ import annotations

import argparse
import random
import re
import string
import time
from collections import Counter
from collections.abc import Callable

import corpora
from benchlib import Figures, json_option

from cora_ci.chunking import chunk_file
from cora_ci.config import Config

LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM, HEX = LOWER + UPPER + DIGITS, DIGITS + "abcdef"


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


# kind -> a maker of one fake value (prefixes split so no literal token sits in this file)
Maker = Callable[[random.Random], str]
FORMATS: dict[str, Maker] = {
    "aws-access-key-id": lambda g: "AK" + "IA" + _r(g, UPPER + DIGITS, 16),
    "github-token": lambda g: "gh" + "p_" + _r(g, ALNUM, 36),
    "github-fine-grained": lambda g: "github" + "_pat_" + _r(g, ALNUM, 22) + "_" + _r(g, ALNUM, 59),
    "gitlab-token": lambda g: "gl" + "pat-" + _r(g, ALNUM, 20),
    "gitlab-runner": lambda g: "gl" + "rt-" + _r(g, ALNUM, 20),
    "slack-token": lambda g: "xo" + "xb-" + _r(g, DIGITS, 12) + "-" + _r(g, ALNUM, 24),
    "stripe-live": lambda g: "sk" + "_live_" + _r(g, ALNUM, 24),
    "stripe-test": lambda g: "sk" + "_test_" + _r(g, ALNUM, 24),
    "stripe-webhook": lambda g: "wh" + "sec_" + _r(g, ALNUM, 32),
    "google-api-key": lambda g: "AI" + "za" + _r(g, ALNUM + "_-", 35),
    "openai-project": lambda g: "sk-" + "proj-" + _r(g, ALNUM, 48),
    "anthropic": lambda g: "sk-" + "ant-" + "api03-" + _r(g, ALNUM, 93),
    "npm-token": lambda g: "np" + "m_" + _r(g, ALNUM, 36),
    "pypi-token": lambda g: "pypi-" + "AgEIcHlwaS5v" + "cmc" + _r(g, ALNUM, 60),
    "adafruit": lambda g: "ai" + "o_" + _r(g, ALNUM, 28),
    "alibaba": lambda g: "LT" + "AI" + _r(g, ALNUM, 20),
    "databricks": lambda g: "da" + "pi" + _r(g, HEX, 32),
    "digitalocean": lambda g: "do" + "p_v1_" + _r(g, HEX, 64),
    "doppler": lambda g: "dp" + ".pt." + _r(g, ALNUM, 43),
    "dynatrace": lambda g: "dt0" + "c01." + _r(g, UPPER + DIGITS, 24) + "." + _r(g, UPPER + DIGITS, 64),
    "figma": lambda g: "fi" + "gd_" + _r(g, ALNUM, 40),
    "grafana-sa": lambda g: "gl" + "sa_" + _r(g, ALNUM, 32) + "_" + _r(g, HEX, 8),
    "vault": lambda g: "hv" + "s." + _r(g, ALNUM, 95),
    "hubspot": lambda g: (
        "pa"
        + "t-na1-"
        + _r(g, HEX, 8)
        + "-"
        + _r(g, HEX, 4)
        + "-"
        + _r(g, HEX, 4)
        + "-"
        + _r(g, HEX, 4)
        + "-"
        + _r(g, HEX, 12)
    ),
    "huggingface": lambda g: "h" + "f_" + _r(g, LOWER + UPPER, 34),
    "linear": lambda g: "li" + "n_api_" + _r(g, ALNUM, 40),
    "mailchimp": lambda g: _r(g, HEX, 32) + "-" + "us" + str(g.randint(1, 20)),
    "mailgun": lambda g: "ke" + "y-" + _r(g, HEX, 32),
    "newrelic": lambda g: "NR" + "AK-" + _r(g, UPPER + DIGITS, 27),
    "postman": lambda g: "PM" + "AK-" + _r(g, HEX, 24) + "-" + _r(g, HEX, 34),
    "prefect": lambda g: "pn" + "u_" + _r(g, ALNUM, 36),
    "pulumi": lambda g: "pu" + "l-" + _r(g, HEX, 40),
    "rubygems": lambda g: "ruby" + "gems_" + _r(g, HEX, 48),
    "sendgrid": lambda g: "S" + "G." + _r(g, ALNUM, 22) + "." + _r(g, ALNUM, 43),
    "sendinblue": lambda g: "xkey" + "sib-" + _r(g, HEX, 64) + "-" + _r(g, ALNUM, 16),
    "shopify": lambda g: "shp" + "at_" + _r(g, HEX, 32),
    "square": lambda g: "sq0" + "atp-" + _r(g, ALNUM, 22),
    "telegram": lambda g: _r(g, DIGITS, 9) + ":A" + "A" + _r(g, ALNUM, 33),
    "twilio": lambda g: "S" + "K" + _r(g, HEX, 32),
    "typeform": lambda g: "tf" + "p_" + _r(g, ALNUM, 59),
    "private-key": lambda g: (
        "-----BEGIN "
        + "RSA PRIV"
        + "ATE KEY-----\n"
        + "\n".join(_r(g, ALNUM + "+/", 64) for _ in range(8))
        + "\n-----END "
        + "RSA PRIV"
        + "ATE KEY-----"
    ),
    "jwt": lambda g: (
        "ey" + "JhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiJ" + _r(g, ALNUM, 16) + "In0." + _r(g, ALNUM, 43)
    ),
    "url-credentials": lambda g: "postgres://svc:" + _r(g, ALNUM, 18) + "@db.internal:5432/app",
    "bearer": lambda g: "Authorization: Bearer " + _r(g, ALNUM, 40),
    "slack-app": lambda g: (
        "xa" + "pp-1-" + _r(g, UPPER + DIGITS, 11) + "-" + _r(g, DIGITS, 13) + "-" + _r(g, HEX, 64)
    ),
    "azure-ad": lambda g: _r(g, ALNUM, 3) + "8" + "Q~" + _r(g, ALNUM + "_~.-", 34),
    "notion": lambda g: "sec" + "ret_" + _r(g, ALNUM, 43),
    "airtable": lambda g: "pa" + "t" + _r(g, ALNUM, 14) + "." + _r(g, HEX, 64),
    "contentful": lambda g: "CF" + "PAT-" + _r(g, ALNUM, 43),
    "duffel": lambda g: "duf" + "fel_live_" + _r(g, ALNUM, 43),
    "plaid": lambda g: (
        "acc"
        + "ess-production-"
        + _r(g, HEX, 8)
        + "-"
        + _r(g, HEX, 4)
        + "-"
        + _r(g, HEX, 4)
        + "-"
        + _r(g, HEX, 4)
        + "-"
        + _r(g, HEX, 12)
    ),
    "readme": lambda g: "rd" + "me_" + _r(g, LOWER + DIGITS, 70),
    "openshift": lambda g: "sha" + "256~" + _r(g, ALNUM, 43),
    "sentry-dsn": lambda g: "https://" + _r(g, HEX, 32) + "@o" + _r(g, DIGITS, 6) + ".ingest.sentry.io/42",
    "npm-authtoken": lambda g: "//registry.npmjs.org/:_auth" + "Token=" + _r(g, ALNUM, 36),
    "yandex": lambda g: "y" + "0_" + _r(g, ALNUM, 55),
    "generic-password": lambda g: "db_pass" + "word=" + _r(g, ALNUM, 20) + "!",
    "generic-api-key": lambda g: "api" + "_key: " + _r(g, ALNUM, 32),
    "generic-client-secret": lambda g: "client" + "_secret = " + _r(g, ALNUM + "-_", 40),
}
PLACES: dict[str, Callable[[str], tuple[str, str]]] = {
    "python": lambda v: ("settings.py", f'VALUE = """{v}"""\n' if "\n" in v else f'VALUE = "{v}"\n'),
    "yaml": lambda v: ("deploy.yaml", "env:\n  value: |\n" + "".join(f"    {x}\n" for x in v.split("\n"))),
    "json": lambda v: ("config.json", '{"value": "' + v.replace("\n", "\\n") + '"}\n'),
    "ini": lambda v: (
        "app.properties",
        f"value={v.replace(chr(10), ' ')}\n" if "\n" not in v else f"# key\n{v}\n",
    ),
    "shell": lambda v: (
        "deploy.sh",
        f"export VALUE='{v}'\n" if "\n" not in v else f"cat > key <<EOF\n{v}\nEOF\n",
    ),
    "markdown": lambda v: ("README.md", f"# Setup\n\n```\n{v}\n```\n"),
}


def recall(fig: Figures) -> None:
    rng = random.Random(20)
    cfg = Config()
    missed: list[str] = []
    total = 0
    for kind, make in FORMATS.items():
        for place, put in PLACES.items():
            value = make(rng)
            name, text = put(value)
            result = chunk_file(name, ("def helper():\n    return 1\n\n\n" if name.endswith(".py") else "")
                                .encode() + text.encode(), cfg)  # fmt: skip
            secret = max(re.findall(r"[A-Za-z0-9+/_-]{12,}", value), key=len)  # its random part
            kept = any(secret[-12:] in c.text for c in result.chunks)
            reported = any(d.code == "CORA-SEC-002" for d in result.diagnostics)
            total += 1
            if kept or not reported:
                missed.append(f"{kind} in {place}")
    caught = 1 - len(missed) / total
    print(f"recall: {total - len(missed)}/{total} planted secrets caught ({len(FORMATS)} formats x "
          f"{len(PLACES)} places) = {caught:.3f}")  # fmt: skip
    for m in missed:
        print(f"  missed: {m}")
    fig.add("secrets.recall", f"planted secrets caught ({total})", caught, "", (">=", 0.98), "issue 20")
    fig.add("secrets.kept", "planted secrets left in a chunk", len(missed), "", ("<=", 0), "issue 20")


def false_positives(fig: Figures) -> None:
    cfg = Config()
    chunks = dropped = 0
    kinds: Counter[str] = Counter()
    t = time.perf_counter()
    for c in corpora.CORPORA:
        root = corpora.source_dir(c)
        for p in sorted(root.rglob("*")):
            if not p.is_file() or p.stat().st_size > cfg.max_file_bytes:
                continue
            r = chunk_file(p.relative_to(root).as_posix(), p.read_bytes(), cfg)
            chunks += len(r.chunks)
            for d in r.diagnostics:
                if d.code == "CORA-SEC-002":
                    dropped += 1
                    kinds[d.message.split(" ")[0]] += 1
                    print(f"  dropped: {c.name} {p.relative_to(root)}:{d.line} {d.message}")
    per = dropped / chunks * 5000 if chunks else 0.0
    took = time.perf_counter() - t
    print(f"false positives: {dropped} chunk(s) dropped of {chunks:,} kept on real code = {per:.2f} "
          f"per 5,000 ({took:.0f} s) {dict(kinds)}")  # fmt: skip
    fig.add("secrets.fp_per_5000", f"chunks dropped on real code, per 5,000 ({chunks:,} chunks)", per, "",
            ("<=", 1.0), "issue 20")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    json_option(ap)
    args = ap.parse_args(argv)
    fig = Figures("secrets")
    recall(fig)
    false_positives(fig)
    fig.write(args.json)


if __name__ == "__main__":
    main()
