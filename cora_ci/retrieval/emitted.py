"""The code that says what a report quotes (`quoted.py` reads the report): the chunks that write an
error or warning message as the code does (`said`), that hold a diagnostic's code (`coded`), and
the definitions Python's own messages blame (`named_by_errors`): each the clue of a mention, a
call's error somewhat more (`evidence.py` joins them to a report's other clues)."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator

from cora_ci.chunking.model import OVERLOAD
from cora_ci.retrieval.catalog import Catalog
from cora_ci.retrieval.kinds import path_class, set_apart
from cora_ci.retrieval.quoted import HEAD, MESSAGE, RUN, blamed, codes, messages, word_list
from cora_ci.retrieval.related import neighbours_of

RARE = 50  # chunks whose text holds a word: more, and it is a word of the language, not a name
_CODES = 3  # codes looked for, of the first ten named


_SEARCHED = 10  # chunks a message's words find, whose texts are read


def said(cat: Catalog, text: str) -> dict[int, float]:
    """The chunks that emit a message `text` quotes: among the chunks its words find (BM25's
    best, and all that hold its rarest word when few do: starlette raises "Routed paths must
    start with '/'" in three places, and BM25's ten were tests that say "start" and "paths"),
    those whose text holds `RUN` of its words in a row (a message is written whole in the code,
    its values aside: `f"... by default '{x}'."` for "... by default 'django.db.models.AutoField'."),
    or a string literal the message begins with (`"duplicate key: " + key`, `"Dangling name: "`).
    Of those, the ones that write more of it in a row have the whole clue, the others half:
    pydantic's `@validator` and `@root_validator` warnings share "validators are deprecated ...",
    and the first was not told from the second."""
    at: dict[int, float] = {}
    lexical = cat.bundle.lexical
    for msg in messages(text):
        words = word_list(msg)
        runs = _runs(words)
        found = [cid for cid, _ in lexical.search(msg, _SEARCHED)]
        # and the code holding every word of one of its runs: BM25's ten for nlohmann/json's "type
        # must be string, but is number" were its documentation's, which says each word more often,
        # and its tests quote the message whole
        holders = lexical.holding_any([sorted(set(run)) for run in sorted(runs)], _HOLDERS)
        found += [cid for cid in holders if _code(cat, cid)]
        # its words as indexed (`EnumSet` is indexed as `enum` and `set`), the rarest first
        held = sorted((n, w) for w in set(words) if len(w) > 2 and (n := lexical.frequency(w)) > 0)
        for n, rarest in held[:_RAREST]:
            if n <= _HOLDERS:  # every chunk that holds it: a message's ranking prefers the tests quoting it
                found += lexical.holding(rarest, _HOLDERS)
        matched: dict[int, int] = {}
        for cid in dict.fromkeys(found):
            row = cat.table.row_of.get(cid)
            if row is None:
                continue
            code = cat.table.text(row)
            said_words = word_list(code)
            if not runs.isdisjoint(_runs(said_words)):  # as many as the literal that writes it holds
                matched[cid] = max(_longest(words, said_words), _written(words, code))
            elif head := _written(words, code):
                matched[cid] = head
        for cid in _framing(cat, matched):
            del matched[cid]
        coded = [n for cid, n in matched.items() if _code(cat, cid)]
        if not coded:
            continue  # the language's or a dependency's message ("division by zero"): tests quote it
        best = max(coded)  # of the code (its tests and documentation quote the message whole)
        for cid, n in matched.items():
            weight = MESSAGE if n >= best else MESSAGE / 2
            at[cid] = max(at.get(cid, 0.0), weight)
            for user in _users(cat, cid):
                at[user] = max(at.get(user, 0.0), weight)
    return at


def _code(cat: Catalog, cid: int) -> bool:
    """The chunk is code that may emit a message: not a test's, nor documentation, nor what a
    path sets apart (an example, a changelog). A message only these write is not this code's
    own: rich's tests check a traceback of Python's `ZeroDivisionError: division by zero`, and a
    report quoting it had them third and fourth, above the frames' other code."""
    m = cat.meta(cid)
    return m is not None and not set_apart(m.path, m.lang) and not cat.test_by_code(m)


def _framing(cat: Catalog, matched: dict[int, int]) -> list[int]:
    """The matched types that only show a matched member's declaration: a class's skeleton repeats
    its methods' signatures, and a report quoting one (gson's `fromJson(String json, TypeToken<T>
    typeOfT)`) was said by both; the member is what says it, the class is its frame."""
    anchors = {  # without overloads' parameter types, which hold dots of their own (`f(a.B)`)
        cid: OVERLOAD.sub("", m.anchor) for cid in matched if (m := cat.meta(cid)) is not None and m.anchor
    }
    members: dict[str, int] = {}  # owner anchor -> the most words a member of it matched
    for cid, a in anchors.items():
        owner = a.rpartition(".")[0] if "::" in a and "." in a.partition("::")[2] else None
        if owner is not None:
            members[owner] = max(members.get(owner, 0), matched[cid])
    return [cid for cid, a in anchors.items() if matched[cid] <= members.get(a, 0)]


_USERS = 5  # code that uses a message held in a constant, given its clue (more: a common constant)


def _users(cat: Catalog, cid: int) -> list[int]:
    """The code that uses the message a constant holds (pydantic's `DEPRECATION_MESSAGE`, warned
    with in `prepare_config`): what raises it, where the constant is only its text. None for a
    chunk that is not a constant, nor the tests that quote it."""
    m = cat.meta(cid)
    if m is None or m.kind != "field":
        return []
    users = [c for c in sorted(neighbours_of(cat, cid, "callers")) if (u := cat.meta(c)) is not None
             and u.kind in ("method", "type") and path_class(u.path) is None
             and not cat.built(u.path)]  # fmt: skip
    return users[:_USERS] if len(users) <= _USERS else []


def _longest(words: list[str], said: list[str]) -> int:
    """The most words of `words` in a row that `said` holds in a row, for one known to hold `RUN`."""
    longest = RUN
    for n in range(RUN + 1, len(words) + 1):
        grams = {tuple(said[i : i + n]) for i in range(len(said) - n + 1)}
        if not any(tuple(words[i : i + n]) in grams for i in range(len(words) - n + 1)):
            break
        longest = n
    return longest


_HOLDERS = 200  # chunks holding a message's rarest word that are read, when no more hold it
_RAREST = 3  # its rarest words whose chunks are read (a warning's class appends its own tail)
# A string literal: an escape (`\"`) or any character but its quote, a backslash or a line break, so
# each character is read one way (both ways, a JSON line of escapes with no closing quote took
# seconds for every backslash more: aeson's benchmark data hung a quoted query).
_LITERAL = re.compile(r"""(["'`])((?:\\.|(?!\1)[^\n\\])*)\1""")
# A literal's values: printf's (`%q`, `%5.2f`), Python's `%(name)s` and `{}`/`{name!r}`, Rust's
# `{:?}`, JavaScript's `${x}`, Ruby's `#{x}`.
# `%` flags and width each read once (a `0` either way took quadratic time on a run of them)
_PLACEHOLDER = re.compile(r"%[-#+ 0]*+\d*+(?:\.\d+)?[a-zA-Z]|%\(\w+\)[a-z]|[$#]?\{[^{}\n]*\}")
_VALUE_WORDS = 6  # words a value may print where a placeholder stands


# What joins two literals of one message with a value between them: `"key " ++ show key ++ " not
# found"` (Haskell), `"a" + x + "b"` (Java, JavaScript, Python), `..` (Lua), `.` (PHP), `<>` (Elixir).
_JOINED = re.compile(r"[ \t]*(?:\+\+|\+|\.\.|<>|\.)[ \t]*(?:[^\"'`\n;]*?[ \t]*(?:\+\+|\+|\.\.|<>|\.)[ \t]*)?")


_VALUE_CHARS = 80  # the code of a value between two joined literals, at most


def _templates(code: str) -> Iterator[str]:
    """The string literals of `code`, and each run of them joined on a line around values, as one
    literal with a placeholder where each value stands (aeson's `"key " ++ show key ++ " not
    found"` for `key "email" not found`)."""
    run: list[str] = []
    end = -1
    for m in _LITERAL.finditer(code):
        yield m[2]
        if run and m.start() - end <= _VALUE_CHARS and _JOINED.fullmatch(code, end, m.start()):
            run.append(m[2])
            yield "{}".join(run)
        else:
            run = [m[2]]
        end = m.end()


def _written(words: list[str], code: str) -> int:
    """The most constant words of a string literal of `code` that `words` says as the literal
    writes it, its values aside (Go's `"unknown command %q for %q"` for `unknown command
    "version" for "app"`, its `"requires at least %d arg(s)"` for `requires at least 2 arg(s)`;
    literals joined around values as one, `_templates`), or that it begins with, up to the
    literal's first value (`"duplicate key: " + key`): `HEAD` words or more and at least half of
    the message's; 0 when none is."""
    best = 0
    said = " " + " ".join(words) + " "
    for literal in _templates(code):
        parts = [" ".join(w) for p in _PLACEHOLDER.split(literal) if (w := word_list(p))]
        count = sum(p.count(" ") + 1 for p in parts)
        if count <= best or count < HEAD or 2 * count < len(words) or f" {parts[0]} " not in said:
            continue
        gap = rf" (?:[a-z]+ ){{0,{_VALUE_WORDS}}}"
        if len(parts) == 1 or re.search(" " + gap.join(parts) + " ", said):
            best = count
        elif said.startswith(f" {parts[0]} ") and 2 * (head := parts[0].count(" ") + 1) >= len(words):
            best = max(best, head)
    return best


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


_DEFINED_IN = 2  # files defining one: more, and the message does not say which
_DEFINED_NEAR = 64  # ... of which the frames' files are looked for (each file's links are read)


def named_by_errors(cat: Catalog, text: str, near: Collection[str] = ()) -> dict[int, float]:
    """The definitions `blamed` names: the method itself where the class defines it (`RST.__init__`),
    else the class or function; of a name at most `_DEFINED_IN` files define, or of those the
    files of the report's frames `near` (sympy's `_print_SingularityFunction`, one in each printer:
    the traceback runs through `latex.py`)."""
    at: dict[int, float] = {}
    for parts, weight in blamed(text):
        owner = parts[-2] if len(parts) > 1 else parts[0]
        files = cat.defining([owner], _DEFINED_NEAR if near else _DEFINED_IN + 1)
        if len(files) > _DEFINED_IN:
            files = {p: defs for p, defs in files.items() if p in near}
        if not 1 <= len(files) <= _DEFINED_IN:
            continue
        tail = parts[-2:]
        for path, defs in files.items():
            metas = [cat.row_meta(r) for r in cat.file_rows(path)]
            exact = [m.id for m in metas if any(n[-len(tail) :] == tail for n in m.names)]
            for cid in exact or defs[owner]:
                at[cid] = max(at.get(cid, 0.0), weight)
    return at


def _runs(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + RUN]) for i in range(len(words) - RUN + 1)}
