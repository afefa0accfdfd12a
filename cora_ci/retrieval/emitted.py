"""What the code says that a report quotes: an error or warning message (`messages`, `said`) and
a diagnostic's code (`codes`, `coded`), each found in the chunks that write it as the code does,
the clue of a mention (`evidence.py` joins them to a report's other clues).
"""

from __future__ import annotations

import re

from cora_ci.retrieval.catalog import Catalog

MAX_CHARS = 100_000  # a report is read this far for clues (the query's words stop much earlier)
MESSAGE = 0.4  # a chunk that emits a message the report quotes, or holds a code it names
RARE = 50  # chunks whose text holds a word: more, and it is a word of the language, not a name


# A quoted error or warning: an exception's (`ValueError: ...`, `Uncaught TypeError: ...`,
# `... java.lang.IllegalStateException: ...`), a log's or a compiler's level (`WARNING: ...`,
# `HINT: ...`), Go's `panic: ...`, Rust's panic (`panicked at 'msg', src/x.rs:3:5`, or since 1.73
# on the line after `panicked at src/x.rs:3:5:`), a system check's id (Django's `(models.W042) ...`).
_LEVEL = r"(?:[\w.$]*(?:Error|Exception|Warning|Failure)|WARNING|ERROR|HINT|FATAL|CRITICAL|panic)"
_MESSAGE = re.compile(
    rf"(?:^[ \t>|]*|[ \t]){_LEVEL}[ \t]*:[ \t]*(?P<msg>.+)$|\((?:\w+\.)?[A-Z]\d{{3}}\)\s*(?P<check>.+)$"
    r"|panicked at '(?P<rust>[^'\n]+)'|panicked at \S+:\d+:\d+:\n(?P<rust2>.+)$",
    re.M,
)
_RUN = 5  # words of a message in a row, as the code that emits it writes them
_MESSAGES = 3  # quoted messages looked for
_SEARCHED = 10  # chunks a message's words find, whose texts are read


def messages(text: str) -> list[str]:
    """The error and warning messages `text` quotes, the first `_MESSAGES` of `_RUN` words or more."""
    out: list[str] = []
    for m in _MESSAGE.finditer(text[:MAX_CHARS]):
        msg = (m["msg"] or m["check"] or m["rust"] or m["rust2"]).strip()
        if len(_words(msg)) >= _RUN and msg not in out:
            out.append(msg)
    return out[:_MESSAGES]


def said(cat: Catalog, text: str) -> dict[int, float]:
    """The chunks that emit a message `text` quotes: among the chunks its words find, those whose
    text holds `_RUN` of its words in a row (a message is written whole in the code, its values
    aside: `f"... by default '{x}'."` for "... by default 'django.db.models.AutoField'.")."""
    at: dict[int, float] = {}
    for msg in messages(text):
        runs = _runs(_words(msg))
        for cid, _ in cat.bundle.lexical.search(msg, _SEARCHED):
            row = cat.table.row_of.get(cid)
            if row is not None and not runs.isdisjoint(_runs(_words(cat.table.text(row)))):
                at[cid] = MESSAGE
    return at


# A diagnostic's code: Django's system checks (`admin.E108`, `models.W042`), flake8's `E501`,
# pylint's `C0301`, TypeScript's `TS2322`, rustc's `E0502`, C#'s `CS0246`.
_CODE = re.compile(r"(?<![\w.-])(?:[a-z_]+\.)?(?P<code>[A-Z]{1,4}\d{3,5})(?![\w-])")
_CODES = 3  # codes looked for, of the first ten named


def codes(text: str) -> list[tuple[str, str]]:
    """The diagnostic codes `text` names, as written and bare (`("templates.E003", "E003")`), the
    first ten."""
    return list(dict.fromkeys((m[0], m["code"]) for m in _CODE.finditer(text[:MAX_CHARS])))[:10]


def coded(cat: Catalog, text: str) -> dict[int, float]:
    """The chunks that emit a diagnostic code `text` names, as it is written (`templates.E003` is
    not `fields.E003`; a bare `E108` is any `x.E108`): a code few chunks hold (`RARE`) is where
    its check is, as a message is (a name many hold, `SHA256`, says nothing)."""
    at: dict[int, float] = {}
    lexical = cat.bundle.lexical
    named = [(written, code.lower()) for written, code in codes(text)]
    rare = [(written, term) for written, term in named if lexical.frequency(term) <= RARE]
    for written, term in rare[:_CODES]:
        spaced = "" if "." in written else r"(?:[a-z_]+\.)?"  # a bare code: in any check's namespace
        held = re.compile(rf"(?<![\w.-]){spaced}{re.escape(written)}(?![\w-])")
        for cid in lexical.holding(term, _SEARCHED):
            row = cat.table.row_of.get(cid)
            if row is not None and held.search(cat.table.text(row)):
                at[cid] = MESSAGE
    return at


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def _runs(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + _RUN]) for i in range(len(words) - _RUN + 1)}
