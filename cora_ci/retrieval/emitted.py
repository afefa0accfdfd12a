"""What the code says that a report quotes: an error or warning message (`messages`, `said`) and
a diagnostic's code (`codes`, `coded`), each found in the chunks that write it as the code does,
and the definitions Python's own messages blame (`blamed`, `named_by_errors`): each the clue of a
mention, a call's error somewhat more (`evidence.py` joins them to a report's other clues).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from functools import lru_cache
from typing import NamedTuple

from cora_ci.chunking.model import OVERLOAD
from cora_ci.retrieval.catalog import Catalog
from cora_ci.retrieval.kinds import path_class, set_apart
from cora_ci.retrieval.related import neighbours_of

MAX_CHARS = 100_000  # a report is read this far for clues (the query's words stop much earlier)
MESSAGE = 0.4  # a chunk that emits a message the report quotes, or holds a code it names
RARE = 50  # chunks whose text holds a word: more, and it is a word of the language, not a name


# A quoted error or warning: an exception's (`ValueError: ...`, `Uncaught TypeError: ...`,
# `... java.lang.IllegalStateException: ...`), a log's or a compiler's level (`WARNING: ...`,
# `HINT: ...`), Go's `panic: ...`, Rust's panic (`panicked at 'msg', src/x.rs:3:5`, or since 1.73
# on the line after `panicked at src/x.rs:3:5:`), a system check's id (Django's `(models.W042) ...`);
# not a path (`Error::io_error`, a Rust or C++ name, was read as an error's message).
_LEVEL = r"(?:(?P<raised>[\w.$]*(?:Error|Exception|Warning|Failure))|WARNING|ERROR|HINT|FATAL|CRITICAL|panic)"
_MESSAGE = re.compile(
    rf"(?:^[ \t>|]*|[ \t]){_LEVEL}[ \t]*:(?!:)[ \t]*(?P<msg>.+)$|\((?:\w+\.)?[A-Z]\d{{3}}\)\s*(?P<check>.+)$"
    r"|panicked at '(?P<rust>[^'\n]+)'|panicked at \S+:\d+:\d+:\n(?P<rust2>.+)$",
    re.M,
)
# Messages under a name the code gives its own warnings or errors (pydantic's
# `PydanticDeprecatedSince20: ...`, also after a warning's `path:line: `), a name of two capitalised
# parts or more, and pydantic's validation errors (`  value is not a valid IPv4 address [type=...`):
# read as a quoted message is (five words or more). The category's shape is `_categorized`'s: as one
# pattern, a long CamelCase run took quadratic time.
# C++'s uncaught exception, as libstdc++ (`terminate called after throwing an instance of 'X'`, then
# `  what():  msg`) and libc++ (`... terminating due to uncaught exception of type X: msg`) print it
_THROWN = re.compile(
    r"throwing an instance of '(?P<cls>[\w:<>, ]+)'[ \t]*\r?\n[ \t]*what\(\):[ \t]*(?P<msg>.+)$"
    r"|uncaught exception of type (?P<cls2>[\w:<>]+): (?P<msg2>.+)$",
    re.M,
)
_INVALID = r"^[ \t]++(?P<invalid>[^\n\[]+?) \[type=\w+"  # possessive: a line of spaces took quadratic time
# a name's colon (not `A::B`'s), or a validation error
_CATEGORY = re.compile(r"(?:^[ \t>|]*|[ \t])(?P<category>[\w.]++)[ \t]*+:(?!:)|" + _INVALID, re.M)
_INVALID_AT = re.compile(_INVALID, re.M)
# A message printed alone on the line above its trace's first frame (.NET's `ex.Message` then
# `ex.StackTrace`, as Polly's users paste "The circuit is now open and is not allowing calls."):
# not a frame, a heading (`Stack trace:`, `Caused by: ...`: a colon) nor a `--- End of ... ---` rule.
_ABOVE = re.compile(r"^(?![ \t]*(?:at |-))(?P<msg>[^\n:]*[^\s:])[ \t]*\n[ \t]+at [\w$<]", re.M)
_CAMEL = re.compile(r"[A-Z][a-z\d]+(?:[A-Z][a-z\d]*)+")  # two capitalised parts or more, at a name's end
_CATEGORY_CHARS = 100  # of a category's end, read for its shape


class Categorized(NamedTuple):
    """A message a line gives under its category's name, or a validation error's text."""

    category: str | None
    msg: str | None  # the rest of the category's line
    invalid: str | None  # a pydantic validation error's text


def _categorized(head: str) -> list[Categorized]:
    """The categories of two capitalised parts or more that a line of `head` begins a message with
    (the first on its line: the message runs to its end, and a category inside it is its text),
    and pydantic's validation errors. A name that is no category (`ERROR: ValidationError: ...`)
    is looked past, not taken with the line: each candidate is read once, the message only of
    the one kept, so the time is linear in the text."""
    out: list[Categorized] = []
    pos = end = 0
    while (m := _CATEGORY.search(head, pos)) is not None:
        if m["invalid"] is not None:
            out.append(Categorized(None, None, m["invalid"]))
            pos = m.end()
            continue
        if m.end() > end:  # the line's end, found once a line
            end = head.find("\n", m.end())
            end = len(head) if end < 0 else end
        empty = m.end() >= end  # nothing after the colon: no message
        if empty or not _camel_end(m["category"]):
            if (v := _INVALID_AT.match(head, m.start())) is not None:  # the other reading of the place
                out.append(Categorized(None, None, v["invalid"]))
                pos = v.end()
            else:
                pos = m.end() if empty else m.end("category")  # past it, on its line (a colon is no start)
            continue
        rest = head[m.end() : end]
        msg = rest.lstrip(" \t") or rest[-1]  # the text after the colon and its spaces, or a space
        out.append(Categorized(m["category"], msg, None))
        pos = end
    return out


def _camel_end(name: str) -> bool:
    tail = name[-_CATEGORY_CHARS:]
    return any(m.end() == len(tail) for m in _CAMEL.finditer(tail))


# A command's own error line, prefixed by its name as Unix tools print one (`rg: error parsing flag
# ...`, `git: ...`, `fatal: ...` after it): read as a quoted message is (five words or more).
_PROGRAM = re.compile(
    r"^(?P<prog>[a-z][a-z0-9._-]{0,15}): (?:(?:error|fatal|warning): )?(?P<msg>[^\n]+)$", re.M
)  # a command's name: lower case (`accounts.User: (models.W042) ...` is Django's check)
_SUMMARY = re.compile(r"\d+ (?:\w+ )?errors? (?:for|in|occurred)\b")
_RUN = 5  # words of a message in a row, as the code that emits it writes them
_MESSAGES = 3  # quoted messages looked for
_SEARCHED = 10  # chunks a message's words find, whose texts are read


# A message quoted without its level: in double, single, typographic quotes or backticks on one
# line ("the form says “Enter a list of values.”"), not an apostrophe's span (`doesn't ... isn't`:
# a quote opens after no word character and closes before none), nor a path (a backslash, but in
# an escaped quote: `Left "Error in $: key \"email\" not found"`, as Haskell and JSON show a message).
_QUOTED = re.compile(
    r"""(?<![\w'"`])(?:"(?P<d>(?:[^"\n\\]|\\")+)"|'(?P<s>[^'\n\\]+)'|`(?P<b>[^`\n\\]+)`|“(?P<t>[^“”\n\\]+)”)(?![\w'"`])"""
)


def messages(text: str) -> list[str]:
    """The error and warning messages `text` quotes, the first `_MESSAGES` of `_RUN` words or more:
    those a level introduces (`ValueError: ...`) first, then those only put in quotes. A quoted
    sentence that the code does not write finds nothing (`said` wants its words in a row). A
    level's message may be shorter, down to `_HEAD` words (Java's `duplicate key: 1`): the code's
    string literal it begins with is then what finds it (`_written`)."""
    out: list[str] = []
    head = text[:MAX_CHARS]
    leveled = [(m["msg"] or m["check"] or m["rust"] or m["rust2"], True) for m in _MESSAGE.finditer(head)]
    leveled += [(m["msg"] or m["msg2"], True) for m in _THROWN.finditer(head)]
    quoted = [(m["d"] or m["s"] or m["b"] or m["t"], False) for m in _QUOTED.finditer(head)]
    quoted += [(c.msg or c.invalid or "", False) for c in _categorized(head)]
    quoted += [(m["msg"], False) for m in _PROGRAM.finditer(head)]
    quoted += [(m["msg"], False) for m in _ABOVE.finditer(head)]
    for msg, level in ((f.strip(), level) for f, level in leveled + quoted):
        if _SUMMARY.match(msg):  # "1 validation error for Model": a count, the messages follow
            continue
        if not level and " " not in msg:  # a frame's quoted path, a quoted name: one token, no sentence
            continue
        if len(_words(msg)) >= (_HEAD if level else _RUN) and not any(msg in o for o in out):
            out.append(msg)
    alone = head.strip()
    short = len(alone) <= _ALONE_CHARS and 3 <= len(alone.split()) <= 15  # first: the pattern's runs
    if not out and short and _ALONE.fullmatch(alone) and not _ASKING.match(alone):
        out.append(alone)  # a message pasted alone: `Invalid color code: z`
    return out[:_MESSAGES]


# A query that may be a message pasted alone, without its level or quotes (nvm's `Invalid color code:
# z` found its emitter fourth): one line of three to fifteen words apart (a name's parts are not:
# `_resolve_lazy_default`) with a value or a colon in it, not a question (a sentence describing code,
# "Return the default value.", took a clue from literals that say its words).
_ALONE = re.compile(r"[^\n?]*[A-Za-z][^\n?]*[:'\"\d][^\n?]*")
_ASKING = re.compile(r"(?:how|what|where|which|why|when|who|does|do|is|are|can|find|show|list)\b", re.I)
_ALONE_CHARS = 300


@lru_cache(maxsize=16)  # asked of every candidate of a query
def raised(text: str) -> frozenset[str]:
    """The classes of the exceptions and warnings `text` quotes a message of (`JsonSyntaxException`
    for `com.google.gson.JsonSyntaxException: duplicate key: 1`): what was raised, not where."""
    head = text[:MAX_CHARS]
    leveled = [(m["raised"], m["msg"]) for m in _MESSAGE.finditer(head)]
    thrown = [(m["cls"] or m["cls2"], m["msg"] or m["msg2"]) for m in _THROWN.finditer(head)]
    leveled += [(cls.replace("::", "."), msg) for cls, msg in thrown]  # `lib::detail::type_error`
    named = [(c.category, c.msg) for c in _categorized(head)]
    return frozenset(
        name.rsplit(".", 1)[-1] for name, msg in leveled + named if name and msg and len(_words(msg)) >= _HEAD
    )


def said(cat: Catalog, text: str) -> dict[int, float]:
    """The chunks that emit a message `text` quotes: among the chunks its words find (BM25's
    best, and all that hold its rarest word when few do: starlette raises "Routed paths must
    start with '/'" in three places, and BM25's ten were tests that say "start" and "paths"),
    those whose text holds `_RUN` of its words in a row (a message is written whole in the code,
    its values aside: `f"... by default '{x}'."` for "... by default 'django.db.models.AutoField'."),
    or a string literal the message begins with (`"duplicate key: " + key`, `"Dangling name: "`).
    Of those, the ones that write more of it in a row have the whole clue, the others half:
    pydantic's `@validator` and `@root_validator` warnings share "validators are deprecated ...",
    and the first was not told from the second."""
    at: dict[int, float] = {}
    lexical = cat.bundle.lexical
    for msg in messages(text):
        words = _words(msg)
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
            said_words = _words(code)
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
    """The most words of `words` in a row that `said` holds in a row, for one known to hold `_RUN`."""
    longest = _RUN
    for n in range(_RUN + 1, len(words) + 1):
        grams = {tuple(said[i : i + n]) for i in range(len(said) - n + 1)}
        if not any(tuple(words[i : i + n]) in grams for i in range(len(words) - n + 1)):
            break
        longest = n
    return longest


_HEAD = 2  # words a string literal's constant head needs to be a message's beginning
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
    literal's first value (`"duplicate key: " + key`): `_HEAD` words or more and at least half of
    the message's; 0 when none is."""
    best = 0
    said = " " + " ".join(words) + " "
    for literal in _templates(code):
        parts = [" ".join(w) for p in _PLACEHOLDER.split(literal) if (w := _words(p))]
        count = sum(p.count(" ") + 1 for p in parts)
        if count <= best or count < _HEAD or 2 * count < len(words) or f" {parts[0]} " not in said:
            continue
        gap = rf" (?:[a-z]+ ){{0,{_VALUE_WORDS}}}"
        if len(parts) == 1 or re.search(" " + gap.join(parts) + " ", said):
            best = count
        elif said.startswith(f" {parts[0]} ") and 2 * (head := parts[0].count(" ") + 1) >= len(words):
            best = max(best, head)
    return best


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


# Python's own messages about a call or an attribute name the function or class at fault:
# `RST.__init__() got an unexpected keyword argument 'header_rows'`, `f() missing 1 required
# positional argument`, `'Line3D' object has no attribute '_verts3d'`. The fix is most often
# there (a parameter or an attribute it lacks); builtins (`NoneType`) and names the code does not
# define find nothing.
_CALLED = re.compile(
    r"(?<![\w.])(?P<call>[^\W\d]\w*(?:\.[^\W\d]\w*)*)\(\) (?:got an unexpected keyword argument|"
    r"missing \d+ required|takes (?:from \d+ to )?\d+ positional|got multiple values for|takes no "
    r"(?:keyword )?arguments|got some positional-only)"
    r"|'(?P<owner>[^\W\d]\w*)' object has no attribute '(?P<attr>\w+)'"
)
CALLED = 0.7  # a function a call's error names: Python says which; the caller may be at fault too
_BLAMED = 3  # names looked for
_DEFINED_IN = 2  # files defining one: more, and the message does not say which
_DEFINED_NEAR = 64  # ... of which the frames' files are looked for (each file's links are read)


def blamed(text: str) -> list[tuple[tuple[str, ...], float]]:
    """The functions and classes Python's messages in `text` name, as qualified parts, with the
    weight of the clue: `CALLED` for a call's (`("RST", "__init__")`), a mention's for a missing
    attribute's owner (`("Line3D",)`: the code that reads it may be wrong as well); the first
    `_BLAMED`, a bare `__init__()` none."""
    out: dict[tuple[str, ...], float] = {}
    for m in _CALLED.finditer(text[:MAX_CHARS]):
        parts = tuple(m["call"].split(".")) if m["call"] else (m["owner"],)
        if not (len(parts) == 1 and parts[0].startswith("__")) and parts not in out:
            out[parts] = CALLED if m["call"] else MESSAGE
    return list(out.items())[:_BLAMED]


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


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def _runs(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + _RUN]) for i in range(len(words) - _RUN + 1)}
