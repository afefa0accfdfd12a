"""Stable error and diagnostic codes.

Every failure the CLI can print and every diagnostic recorded on a file has a code
`CORA-<AREA>-<NNN>` registered here, so messages can change while codes stay stable and the
error table of docs/errors.md can be checked against this registry.
"""

from __future__ import annotations

from typing import NamedTuple


class Code(NamedTuple):
    code: str
    summary: str
    hint: str
    exit_status: int  # 0 for diagnostics that are recorded, not raised


EXIT_CONFIG = 3
EXIT_INPUT = 4
EXIT_BUNDLE = 5
EXIT_MODEL = 6
EXIT_INTERNAL = 70

CODES: dict[str, Code] = {
    c.code: c
    for c in (
        Code("CORA-CLI-001", "bad command line (an unknown option, a missing argument)", "see --help", 2),
        Code("CORA-CFG-001", "unknown configuration key", "check its spelling in docs/configuration.md", 3),
        Code("CORA-CFG-002", "invalid configuration value", "fix the value named in the message", 3),
        Code("CORA-CFG-003", "configuration file unreadable or not valid TOML", "fix the TOML syntax", 3),
        Code("CORA-IO-001", "path not found", "check the path", 4),
        Code("CORA-IO-002", "path could not be read", "check permissions", 4),
        Code("CORA-IO-003", "not a git repository or revision not found", "check REPO and --rev", 4),
        Code("CORA-IO-004", "nothing to index", "check the path, and include/exclude in the config", 4),
        Code("CORA-INT-001", "internal error", "rerun with CORA_DEBUG=1 and report the traceback", 70),
        Code(
            "CORA-MDL-001", "embedding model directory invalid", "it needs model.onnx and tokenizer.json", 6
        ),
        Code(
            "CORA-MDL-002", "embedding model checksum mismatch", "reinstall cora-ci or rebuild the model", 6
        ),
        Code(
            "CORA-MDL-003",
            "embedding model failed to run",
            "check that the ONNX model is a sentence encoder",
            6,
        ),
        Code("CORA-BND-001", "no bundle at this path", "run `cora-ci index` first", 5),
        Code("CORA-BND-002", "bundle format is newer than this cora-ci", "upgrade cora-ci", 5),
        Code("CORA-BND-003", "bundle file missing or altered", "rebuild the bundle or download it again", 5),
        Code("CORA-BND-004", "bundle content malformed", "rebuild the bundle or download it again", 5),
        Code(
            "CORA-BND-005",
            "bundle built with another embedding model",
            "pass the bundle's model or rebuild",
            5,
        ),
        Code("CORA-BND-006", "bundle could not be written", "check free space and permissions", 5),
        Code("CORA-BND-007", "another update of this bundle is running", "wait for it, then retry", 5),
        Code("CORA-BND-008", "unsafe member in a bundle archive", "download the archive again from CI", 5),
        Code("CORA-BND-009", "bundle archive unreadable", "download the archive again from CI", 5),
        Code("CORA-BND-012", "bundle is not the one expected (digest differs)", "download it again", 5),
        Code("CORA-QRY-001", "empty query", "give words or an identifier to search for", 2),
        Code(
            "CORA-QRY-002",
            "no symbol with this anchor in the bundle",
            "anchors look like path::Class.method",
            4,
        ),
        Code(
            "CORA-QRY-003",
            "symbol no longer in the working tree",
            "it was renamed or deleted since indexing; find it with `cora-ci query`",
            4,
        ),
        Code(
            "CORA-QRY-004",
            "no file with this path in the bundle",
            "paths are relative to the repository root, as `cora-ci query` prints them",
            4,
        ),
        Code(
            "CORA-MDL-004",
            "a transformer model needs the `minilm` extra (onnxruntime, tokenizers)",
            "install it with: pip install 'cora-ci[minilm]', or use the default model (static)",
            3,
        ),
        Code(
            "CORA-MCP-001",
            "the MCP server needs the `mcp` extra",
            "install it with: pip install 'cora-ci[mcp]'",
            3,
        ),
        Code(
            "CORA-MCP-002",
            "an MCP tool was called with invalid arguments",
            "call it as its input schema says (tools/list)",
            2,
        ),
        Code(
            "CORA-HOOK-001",
            "a git hook is in the way of install-hooks",
            "move the hook or its .cora-chained copy aside",
            4,
        ),
        Code("CORA-CI-001", "a variable GitHub Actions sets is missing", "run it inside GitHub Actions", 4),
        Code(
            "CORA-BND-010",
            "unpack target is in the way (a non-empty directory or a file)",
            "pick an empty or new directory for -o",
            5,
        ),
        Code(
            "CORA-BND-011",
            "shard bundles that do not make up one tree",
            "merge the bundles of shards 1..N of one `cora-ci index --shard I/N` run, each once",
            5,
        ),
        # Diagnostics recorded per file or chunk; chunking never fails on file content.
        Code(
            "CORA-CHK-001",
            "parse mostly failed; file chunked by lines",
            "the file may not be valid source",
            0,
        ),
        Code("CORA-CHK-002", "parse errors; structure may be partial", "the file may not be valid source", 0),
        Code("CORA-CHK-003", "binary file skipped", "", 0),
        Code(
            "CORA-CHK-004", "file larger than max_file_bytes skipped", "raise max_file_bytes to index it", 0
        ),
        Code("CORA-CHK-005", "minified file chunked by lines", "", 0),
        Code("CORA-CHK-006", "generated file", "exclude it in the config if it is noise", 0),
        Code("CORA-CHK-007", "undecodable bytes replaced", "save the file as UTF-8", 0),
        Code("CORA-CHK-008", "line longer than max_tokens sliced", "", 0),
        Code("CORA-CHK-009", "submodule skipped", "index the submodule's repository on its own", 0),
        Code("CORA-CHK-010", "Git LFS pointer skipped", "the content lives in LFS storage, not in git", 0),
        Code("CORA-CHK-011", "file gone from the working tree while indexing", "index again", 0),
        Code("CORA-CHK-012", "generated documentation page skipped", "generated_pages = true indexes it", 0),
        Code("CORA-CHK-013", "source map skipped", "the sources it maps are indexed themselves", 0),
        Code("CORA-CHK-014", "SVG drawing skipped", "its geometry answers no question", 0),
        Code(
            "CORA-CHK-015",
            "parse stopped past its time budget; file chunked by lines",
            "the file may be machine-made or hostile; exclude it in the config if it is noise",
            0,
        ),
        Code(
            "CORA-SEC-004",
            "file whose name holds a secret left out (its name is not printed)",
            "rename the file; the secret is in git's history",
            0,
        ),
        Code(
            "CORA-SEC-003",
            "secrets found (--fail-on-secret)",
            "remove them from the repository and rotate them",
            7,
        ),
        Code(
            "CORA-SEC-001",
            "conventional secrets file skipped",
            "allow_secret_files indexes it if it holds no secret",
            0,
        ),
        Code(
            "CORA-SEC-002",
            "secret redacted in place",
            "move the secret out of the repository and rotate it",
            0,
        ),
    )
}


# Diagnostics that mean content left the bundle (a file skipped, a secret redacted): listed first.
LEFT_OUT = frozenset({"CORA-SEC-001", "CORA-SEC-002", "CORA-SEC-004", "CORA-CHK-003", "CORA-CHK-004",
                      "CORA-CHK-009", "CORA-CHK-010", "CORA-CHK-011", "CORA-CHK-012",
                      "CORA-CHK-013", "CORA-CHK-014"})  # fmt: skip


class CoraError(Exception):
    """An expected failure: printed as one line with its code and hint, never a traceback."""

    def __init__(self, code: str, message: str, hint: str | None = None) -> None:
        if code not in CODES:
            raise ValueError(f"unregistered error code {code}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = CODES[code].hint if hint is None else hint

    @property
    def exit_status(self) -> int:
        return CODES[self.code].exit_status

    def one_line(self) -> str:
        """`error: CODE: message (hint: ...)`, on one line whatever the message quotes: control
        characters (a newline in a file name) and bytes that are not UTF-8 as backslash escapes."""
        hint = f" (hint: {self.hint})" if self.hint else ""
        return printable(f"error: {self.code}: {self.message}{hint}")


_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F)} | {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}


def printable(s: str) -> str:
    """`s` fit for one line of a terminal or a log: control characters and stray bytes escaped."""
    s = s.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return s.translate(_ESCAPES)
