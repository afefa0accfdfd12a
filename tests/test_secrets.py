"""Secrets never leave in a bundle: secrets files are skipped (CORA-SEC-001), a secret's value in
any other file is redacted in place (CORA-SEC-002), and no byte of a secret reaches any file of the
bundle, in full builds and updates alike.

Every fake secret is assembled at run time from pieces, so this file holds nothing a secret
scanner would flag.
"""

from __future__ import annotations

import json
import random
import re
import string
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git, run_chunk, uncovered
from hypothesis import given, settings
from hypothesis import strategies as st

from cora_ci.bundle import manifest as mf
from cora_ci.bundle import open_bundle
from cora_ci.bundle.schema import unpack_plain
from cora_ci.chunking.secrets import contains_secret, fingerprint, scan_lines, secret_names
from cora_ci.config import Config, from_mapping
from cora_ci.errors import CoraError

_UP = string.ascii_uppercase + string.digits
_ALNUM = string.ascii_letters + string.digits


def _rand(alphabet: str, n: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


def _pem(seed: int) -> str:
    body = "\n".join(_rand(_ALNUM + "+/", 64, seed + i) for i in range(12))
    kind = "RSA " + "PRIVATE"
    return f"-----BEGIN {kind} KEY-----\n{body}\n-----END {kind} KEY-----"


FAKES: dict[str, str] = {
    "aws-access-key-id": "AK" + "IA" + _rand(_UP, 16, 1),
    "aws-secret-access-key": "aws_secret" + "_access_key = " + _rand(_ALNUM + "/+", 40, 2),
    "github-token": "gh" + "p_" + _rand(_ALNUM, 36, 3),
    "gitlab-token": "gl" + "pat-" + _rand(_ALNUM, 20, 4),
    "slack-token": "xo" + "xb-" + _rand(string.digits, 12, 5) + "-" + _rand(_ALNUM, 24, 6),
    "stripe-key": "sk" + "_live_" + _rand(_ALNUM, 24, 7),
    "google-api-key": "AI" + "za" + _rand(_ALNUM + "_-", 35, 8),
    "openai-api-key": "sk-" + "proj-" + _rand(_ALNUM, 20, 9) + "T3Blbk" + "FJ" + _rand(_ALNUM, 20, 10),
    "npm-token": "np" + "m_" + _rand(_ALNUM, 36, 11),
    "pypi-token": "pypi-" + "AgEIcHlwaS5v" + "cmc" + _rand(_ALNUM, 60, 12),
    "private-key": _pem(13),
    "jwt": "ey" + "JhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiJhbGljZSJ9." + _rand(_ALNUM, 43, 20),
    "huggingface-token": "h" + "f_" + _rand(string.ascii_letters, 34, 24),
    "generic-credential": "db_pass" + "word = '" + _rand(_ALNUM, 20, 25) + "!'",
    "url-credentials": "postgres://app:" + _rand(_ALNUM, 16, 26) + "@db.internal/app",
}
# Look alike, but not secrets: hex digests, high-entropy strings under no secret-like name, short or
# embedded prefixes, placeholders and references, and the examples documentation copies.
NOT_SECRETS = [
    "ey"
    + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
    + _rand(_ALNUM, 43, 27),
    'password = "changeme"',
    'password = os.environ["DB_PASSWORD"]',
    "api_key = settings.STRIPE_API_KEY",
    "secret: ${APP_SECRET}",
    "postgres://user:password@localhost/db",
    "http://%HOSTIP:%HTTPPORT?email=name@example.com/%TESTNUMBER",  # a query's `@`, no password (curl)
    'ACTUAL="$(PWD=$TEST_DIR/inside-n_m-nested/node_modules/foo/bar nvm_find_project_dir)"',  # nvm's tests
    "Authorization: Basic " + "QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
    "sha = " + _rand("0123456789abcdef", 64, 21),
    "entropy = '" + _rand(_ALNUM + "/+", 48, 22) + "'",
    "AK" + "IA" + "SHORT",
    "XAK" + "IA" + _rand(_UP, 16, 23),
    "gh" + "p_" + "short",
    'if line.startswith("-----BEGIN"):  # parse a key',
    # a chunk header's sentence about a C# field: the full stop ends the sentence, not the value
    "Declaration: CancellationToken DefaultCancellationToken = CancellationToken.None.",
]


def _secret_bytes(fake: str) -> list[bytes]:
    """What must not appear: the secret as written and its lowercased body (BM25 lowercases terms)."""
    body = fake.split("= ")[-1].splitlines()[1] if fake.startswith("-----") else fake.split("= ")[-1]
    return [body.encode(), body.lower().encode(), body[-16:].lower().encode()]


@pytest.mark.parametrize("kind", sorted(FAKES))
def test_each_kind_is_found_on_its_line(kind: str) -> None:
    lines = ["x = 1", f"value = {FAKES[kind]!r}" if kind != "private-key" else FAKES[kind], "y = 2"]
    lines = "\n".join(lines).split("\n")
    found = scan_lines(lines)
    assert [f.kind for f in found] == [kind]
    assert found[0].first == 2 and found[0].last == len(lines) - 1


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_lookalikes_are_kept(text: str) -> None:
    assert contains_secret(text) is None


def test_a_key_marker_without_key_material_is_no_secret() -> None:
    """A key parser's constants (cryptography's ssh.py) name the markers and hold no key; the
    same markers around a body, or before an escaped body on one line, are a key."""
    kind = "OPENSSH " + "PRIVATE"
    parser = [f'_SK_START = b"-----BEGIN {kind} KEY-----"', f'_SK_END = b"-----END {kind} KEY-----"', ""]
    assert scan_lines(parser) == []
    body = _rand(_ALNUM + "+/", 64, 40)
    escaped = f'{{"key": "-----BEGIN {kind} KEY-----\\n{body}\\n-----END {kind} KEY-----\\n"}}'
    assert [f.kind for f in scan_lines(["{", escaped, "}"])] == ["private-key"]
    assert [f.kind for f in scan_lines([*parser[:1], body, *parser[1:]])] == ["private-key"]


def test_cora_ci_itself_holds_no_secret() -> None:
    """The patterns' own source and the docs must not look like secrets (nor be dropped)."""
    root = Path(__file__).parent.parent
    for path in [*root.glob("cora_ci/**/*.py"), root / "README.md", *root.glob("tests/*.py")]:
        assert scan_lines(path.read_text().splitlines()) == [], path


def test_a_key_block_split_over_chunks_is_redacted_whole() -> None:
    text = "\n".join([*(f"line {i}" for i in range(30)), _pem(40), *(f"tail {i}" for i in range(30))])
    r = run_chunk("notes.txt", text.encode(), lines_per_chunk=5, overlap_lines=0)
    assert r.strategy == "lines"
    body = [k for k in _pem(40).splitlines() if "-----" not in k]
    assert not any(k in c.text for c in r.chunks for k in body)
    assert not uncovered(r, text.encode()) and not r.dropped  # every line kept, the key's as REDACTED
    redacted = [n for c in r.chunks for n, line in enumerate(c.text.splitlines(), c.start_line)
                if line == "REDACTED"]  # fmt: skip
    assert sorted(set(redacted)) == list(range(32, 44))  # between the BEGIN and END lines
    (diag,) = [d for d in r.diagnostics if d.code == "CORA-SEC-002"]
    assert diag.line == 31 and "private-key on lines 31-44" in diag.message


def test_only_the_value_is_redacted() -> None:
    """The method that holds a token keeps its anchor and code: only the token's characters go."""
    token = FAKES["github-token"]
    body = "".join(f"        step_{i} = compute({i}, name, other_argument)\n" for i in range(12))
    src = (
        f"class Client:\n    def login(self):\n{body}        return step_1\n\n"
        f"    def token(self):\n{body}        return '{token}'\n\n"
        "def helper():\n    return 2\n"
    )
    line = src.splitlines().index(f"        return '{token}'") + 1
    r = run_chunk("c.py", src)
    anchors = {a for c in r.chunks for a in c.anchors}
    assert {"c.py::Client", "c.py::Client.login", "c.py::Client.token", "c.py::helper"} <= anchors
    (chunk,) = [c for c in r.chunks if "c.py::Client.token" in c.anchors]
    assert "        return 'REDACTED'" in chunk.text.splitlines() and "step_11 = compute" in chunk.text
    assert all(token not in c.text and token not in c.header for c in r.chunks)
    (diag,) = [d for d in r.diagnostics if d.code == "CORA-SEC-002"]
    assert diag.line == line and re.fullmatch(
        rf"github-token on line {line} \(fingerprint [0-9a-f]{{12}}\): redacted", diag.message
    )
    assert token not in repr(r.diagnostics)


def test_a_generic_credential_keeps_its_key() -> None:
    password = "Vq7" + "#pLm2" + "!xR9wT"
    r = run_chunk("settings.yaml", f"db:\n  host: db.internal\n  password: '{password}'\n")
    assert "password: 'REDACTED'" in r.chunks[0].text and password not in repr(r.chunks)
    assert fingerprint(password) in r.diagnostics[0].message  # the value's, not the line's


def test_a_heading_with_a_secret_keeps_its_section() -> None:
    token = FAKES["npm-token"]
    r = run_chunk("d.md", f"# Setup\n\nintro\n\n## Token {token}\n\nbody\n\n### Deeper\n\nmore\n")
    assert all(token not in c.text and all(token not in h for h in c.hierarchy) for c in r.chunks)
    assert any("## Token REDACTED" in c.text for c in r.chunks) and any("more" in c.text for c in r.chunks)


def test_a_path_holding_a_secret_drops_the_chunks_it_names() -> None:
    """The net behind redaction: a chunk whose context (here the path in its anchors; a build leaves
    such a file out before chunking, CORA-SEC-004) holds a secret goes, lines and all."""
    token = FAKES["github-token"]
    r = run_chunk(f"keys/{token}.py", "def f():\n    return 1\n")
    assert r.chunks == [] and r.dropped and all("chunk dropped" in d.message for d in r.diagnostics)


def test_secrets_off_keeps_everything() -> None:
    token = FAKES["stripe-key"]
    r = run_chunk("k.py", f"KEY = '{token}'\n", secrets="off")
    assert any(token in c.text for c in r.chunks)
    assert run_chunk(".env", "A=1\n", secrets="off").strategy is not None


@pytest.mark.parametrize(
    "path",
    [".env", "app/.env.local", ".env.production", "certs/server.pem", "tls.key", "store.p12", "a.pfx",
     "keystore.jks", "release.keystore", "vault.kdbx", "terraform.tfstate", "id_rsa", "home/.ssh/id_ed25519",
     ".npmrc", ".pypirc", ".netrc", "credentials.json", "gcp/credentials-prod.json", ".aws/credentials",
     "x/.aws/credentials", ".git-credentials", "config/secrets.yml", "secrets.json"],
)  # fmt: skip
def test_secrets_files_are_skipped(path: str) -> None:
    r = run_chunk(path, "API_TOKEN=not-a-pattern-but-still-private\n")
    assert r.strategy is None and r.chunks == []
    assert [d.code for d in r.diagnostics] == ["CORA-SEC-001"]
    assert "not-a-pattern" not in repr(r.diagnostics)


@pytest.mark.parametrize(
    "path", [".env.example", ".env.sample", ".env.template", "id_rsa.pub", "secrets.py", "src/key.py",
             "keys.txt", "credentials.md", "environment.py",
             "docs/src/static/diagrams.key/Metadata/Properties.plist",  # a Keynote document (libuv's)
             ".env/lib/python3.12/site-packages/six.py", "tls.pem/README.md"],  # directories so named
)  # fmt: skip
def test_lookalike_files_are_indexed(path: str) -> None:
    assert run_chunk(path, "A = 1\n").strategy is not None


def test_config_adds_and_allows_secrets_files() -> None:
    assert run_chunk("conf/prod.ini", "a=1\n", secret_files=["conf/prod.*"]).strategy is None
    assert run_chunk("test/fixtures/fake.pem", "a=1\n", allow_secret_files=["test/fixtures/"]).strategy
    assert run_chunk("x.pem", "a=1\n", allow_secret_files=["test/fixtures/"]).strategy is None
    # a directory of the config's own is one: its files are skipped (gitignore's meaning)
    assert run_chunk("private/notes.md", "a\n", secret_files=["private/"]).strategy is None
    assert run_chunk("deploy.key/a.txt", "a\n", secret_files=["*.key"]).strategy is None
    assert run_chunk("deploy.key/a.txt", "a\n").strategy is not None


def test_secret_settings_are_validated_and_hashed() -> None:
    base = Config().chunker_hash()
    assert from_mapping({"secrets": "off"}).chunker_hash() != base
    assert from_mapping({"secret_files": ["*.ini"]}).chunker_hash() != base
    assert from_mapping({"allow_secret_files": ["*.pem"]}).chunker_hash() != base
    for table in ({"secrets": "redact"}, {"secret_files": [3]}, {"allow_secret_files": [""]}):
        with pytest.raises(CoraError) as e:
            from_mapping(table)
        assert e.value.code == "CORA-CFG-002"


# ---- a real repository, the real CLI ---------------------------------------------------------------


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cora_ci", *args], cwd=cwd, capture_output=True, text=True)


def _assert_nowhere(out: Path, secrets: list[str], logs: str = "") -> None:
    """No form of any secret in any file of the bundle (raw bytes and the manifest's compressed
    chunk blobs) or in what the command printed."""
    needles = [n for s in secrets for n in _secret_bytes(s)]
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files
    for p in files:
        data = p.read_bytes()
        for n in needles:
            assert n not in data, (p, n)
    texts = _bundle_texts(out)
    for n in needles:
        assert n.decode() not in texts.lower() and n.decode() not in logs.lower()


def _bundle_texts(out: Path) -> str:
    files = open_bundle(out).shards.table()
    parts = [repr(files["diagnostics"]), repr(files["imports"])]
    parts.extend(repr(mf.unpack_blob(data)) for data in files["data"])
    parts.extend(repr(unpack_plain(texts)) for texts in files["texts"])
    return "\n".join(parts)


def _diags(out: Path) -> dict[str, list[list[object]]]:
    files = open_bundle(out).shards.table()
    return dict(zip(files["path"], files["diagnostics"], strict=True))


def _fn(name: str, result: str) -> str:
    """A function big enough to be a chunk of its own."""
    body = "".join(f"    step_{i} = compute({i}, name, other_argument)\n" for i in range(12))
    return f"def {name}():\n{body}    return {result}\n\n\n"


_PROSE = "".join(f"Plain words here about topic {i} and how the service runs.\n" for i in range(20))


def _query(repo: Path, words: str) -> set[str]:
    """The anchors a query finds."""
    out = _cli("query", words, "--format", "json", "--model", "none", "-k", "50", cwd=repo).stdout
    return {r["anchor"] for r in json.loads(out)["results"]}


def test_no_secret_reaches_a_bundle_full_and_incremental(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    gh, aws, pem = FAKES["github-token"], FAKES["aws-access-key-id"], FAKES["private-key"]
    repo = make_repo({
        "app.py": _fn("canary_visible", "'canaryword'") + _fn("connect", f"login('{gh}')"),
        ".env": f"GITHUB_TOKEN={gh}\n",
        "deploy/server.pem": pem + "\n",
        "docs/setup.md": f"# Setup\n\nUse the key id {aws} to log in.\n\n# Other\n\n" + _PROSE,
        "web.js": f"import cfg from 'https://example.com/c.js?t={gh}';\nexport const f = () => cfg;\n",
    })  # fmt: skip
    out = repo / ".cora" / "index"
    res = _cli("index", "--model", "none", cwd=repo)
    assert res.returncode == 0, res.stderr
    _assert_nowhere(out, [gh, aws, pem], res.stdout + res.stderr)
    assert "canaryword" in _bundle_texts(out) and "app.py::canary_visible" in _query(repo, "canaryword")
    diags = _diags(out)
    assert diags[".env"][0][0] == "CORA-SEC-001" and diags["deploy/server.pem"][0][0] == "CORA-SEC-001"
    assert any(code == "CORA-SEC-002" and n == 30 and msg.startswith("github-token on line 30 (fingerprint ")
               for code, msg, n in diags["app.py"])  # fmt: skip
    assert any(d[0] == "CORA-SEC-002" and d[2] == 3 for d in diags["docs/setup.md"])
    assert "Plain words here" in _bundle_texts(out)

    # A secret added by a later commit is redacted by the update, as a full build would.
    stripe = FAKES["stripe-key"]
    (repo / "pay.py").write_text(_fn("charge", f"pay('{stripe}')") + _fn("refund", "1"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "pay")
    res = _cli("index", "--model", "none", cwd=repo)
    assert res.returncode == 0 and "full rebuild" not in res.stdout + res.stderr
    _assert_nowhere(out, [gh, aws, pem, stripe], res.stdout + res.stderr)
    assert "pay.py::refund" in _query(repo, "refund") and "pay.py::charge" in _query(repo, "charge")
    assert "pay('REDACTED')" in _cli("show", "pay.py::charge", cwd=repo).stdout
    full = tmp_path / "full"
    assert _cli("index", "--model", "none", "--out", str(full), cwd=repo).returncode == 0
    assert (full / mf.MANIFEST).read_bytes() == (out / mf.MANIFEST).read_bytes()

    # Removing the secret brings the chunk back.
    (repo / "pay.py").write_text(_fn("charge", "pay(env('STRIPE'))") + _fn("refund", "1"))
    git(repo, "commit", "-qam", "no secret")
    assert _cli("index", "--model", "none", cwd=repo).returncode == 0
    assert "pay.py::charge" in _query(repo, "charge")
    assert not any(d[0] == "CORA-SEC-002" for d in _diags(out)["pay.py"])


def test_default_model_bundle_holds_no_secret(make_repo: Callable[[dict[str, str]], Path]) -> None:
    """With vectors too (the vector file holds no text, but check it as bytes like the rest)."""
    gl = FAKES["gitlab-token"]
    repo = make_repo({"ci.py": f"def trigger():\n    return post('{gl}')\n\n\ndef other():\n    return 3\n"})
    res = _cli("index", "-q", cwd=repo)
    assert res.returncode == 0, res.stderr
    _assert_nowhere(repo / ".cora" / "index", [gl], res.stdout + res.stderr)


def test_findings_can_be_allowed_by_rule_fingerprint_path_or_inline() -> None:
    token = "gh" + "p_" + _rand(_ALNUM, 36, 40)
    generic = "db_pass" + "word = '" + _rand(_ALNUM, 20, 41) + "!'"
    src = f'A = "{token}"\n{generic}\nB = "{token}"  # cora: allow-secret\n'
    found = run_chunk("app.py", src).diagnostics
    kinds = sorted(d.message.split(" ")[0] for d in found if d.code == "CORA-SEC-002")
    assert kinds == ["generic-credential", "github-token"]  # line 3's token is allowed inline
    fp = re.search(r"fingerprint ([0-9a-f]{12})", next(d.message for d in found if "github" in d.message))
    assert fp is not None
    by_rule = run_chunk("app.py", src, allow_secrets=["rule:generic-credential"]).diagnostics
    assert [d.message.split(" ")[0] for d in by_rule if d.code == "CORA-SEC-002"] == ["github-token"]
    by_fp = run_chunk("app.py", src, allow_secrets=[f"fingerprint:{fp.group(1)}"]).diagnostics
    assert [d.message.split(" ")[0] for d in by_fp if d.code == "CORA-SEC-002"] == ["generic-credential"]
    by_path = run_chunk("tests/app.py", src, allow_secrets=["path:tests/"]).diagnostics
    assert not [d for d in by_path if d.code == "CORA-SEC-002"]
    with pytest.raises(CoraError) as e:
        from_mapping({"allow_secrets": ["github-token"]})
    assert e.value.code == "CORA-CFG-002" and "rule:KIND" in e.value.message


@pytest.mark.parametrize("text", [
    "aws_access_key_id = " + "AKIA" + "IOSFODNN7" + "EXAMPLE",  # AWS's documented example
    "token = '" + "gh" + "p_" + "x" * 36 + "'",  # a token's shape filled in by hand
    "NPM_TOKEN=" + "np" + "m_" + "0" * 36,
])  # fmt: skip
def test_documented_examples_and_filled_in_shapes_are_not_secrets(text: str) -> None:
    assert scan_lines([text]) == []


_NAME_SECRETS = [
    "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "xox" + "b-" + "1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.from_regex(r"[a-z]{1,8}(/[A-Za-z0-9_.-]{1,12}){0,3}\.(py|ts|md)", fullmatch=True),
            st.builds(
                lambda d, s, e: f"{d}/{s}{e}",
                st.sampled_from(["keys", "a/b", "x"]),
                st.sampled_from(_NAME_SECRETS),
                st.sampled_from(["", ".txt", "\n.env"]),
            ),
            st.text(alphabet="abc=:_- \n'\"", max_size=30),  # separators, quotes, keys and newlines
        ),
        max_size=40,
    )
)
def test_secret_names_in_one_pass_agree_with_each_name_alone(names: list[str]) -> None:
    """A hook lists every path at every commit: `secret_names` scans them joined, once, and must
    say exactly what `contains_secret` says of each alone (newlines inside names too)."""
    one_by_one = {n: k for n in names if (k := contains_secret(n))}
    assert secret_names(names) == one_by_one
    planted = [n + s for n in _NAME_SECRETS for s in ("", "/x.py")]
    assert list(secret_names(planted)) == planted


def test_a_field_given_a_named_value_keeps_its_chunk() -> None:
    """C#'s `CancellationToken` fields: the value is a member's name, the chunk is code to index."""
    src = (
        "namespace Polly;\n\npublic abstract class PolicyBase\n{\n"
        "    /// <summary>\n    /// Defines a CancellationToken to use, when none is supplied.\n    /// </summary>\n"
        "    internal readonly CancellationToken DefaultCancellationToken = CancellationToken.None;\n}\n"
    )
    r = run_chunk("src/Polly/PolicyBase.cs", src.encode(), min_tokens=0)
    assert not [d for d in r.diagnostics if d.code.startswith("CORA-SEC")]
    assert any(c.symbols == ["DefaultCancellationToken"] for c in r.chunks)
