"""What a report's text quotes: its error and warning messages (`messages`: an exception's, a
log level's, a compiler's, a command's own line, C++'s uncaught one, a validation error, one put in
quotes), the class raised (`raised`), diagnostic codes (`codes`) and the functions Python's own
messages blame (`blamed`). `emitted.py` finds the code that says them."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

MESSAGE = 0.4  # a chunk that emits a message the report quotes, or holds a code it names

MAX_CHARS = 100_000  # a report is read this far for clues (the query's words stop much earlier)


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


RUN = 5  # words of a message in a row, as the code that emits it writes them


_MESSAGES = 3  # quoted messages looked for


# A message quoted without its level: in double, single, typographic quotes or backticks on one
# line ("the form says “Enter a list of values.”"), not an apostrophe's span (`doesn't ... isn't`:
# a quote opens after no word character and closes before none), nor a path (a backslash, but in
# an escaped quote: `Left "Error in $: key \"email\" not found"`, as Haskell and JSON show a message).
_QUOTED = re.compile(
    r"""(?<![\w'"`])(?:"(?P<d>(?:[^"\n\\]|\\")+)"|'(?P<s>[^'\n\\]+)'|`(?P<b>[^`\n\\]+)`|“(?P<t>[^“”\n\\]+)”)(?![\w'"`])"""
)


def messages(text: str) -> list[str]:
    """The error and warning messages `text` quotes, the first `_MESSAGES` of `RUN` words or more:
    those a level introduces (`ValueError: ...`) first, then those only put in quotes. A quoted
    sentence that the code does not write finds nothing (`said` wants its words in a row). A
    level's message may be shorter, down to `HEAD` words (Java's `duplicate key: 1`): the code's
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
        if len(word_list(msg)) >= (HEAD if level else RUN) and not any(msg in o for o in out):
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
    classes = [name for name, msg in leveled + named if name and msg and len(word_list(msg)) >= HEAD]
    return frozenset(name.rsplit(".", 1)[-1] for name in classes)


HEAD = 2  # words a string literal's constant head needs to be a message's beginning


# A diagnostic's code: Django's system checks (`admin.E108`, `models.W042`), flake8's `E501`,
# pylint's `C0301`, TypeScript's `TS2322`, rustc's `E0502`, C#'s `CS0246`.
_CODE = re.compile(r"(?<![\w.-])(?:[a-z_]+\.)?(?P<code>[A-Z]{1,4}\d{3,5})(?![\w-])")


def codes(text: str) -> list[tuple[str, str]]:
    """The diagnostic codes `text` names, as written and bare (`("templates.E003", "E003")`), the
    first ten."""
    return list(dict.fromkeys((m[0], m["code"]) for m in _CODE.finditer(text[:MAX_CHARS])))[:10]


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


def word_list(text: str) -> list[str]:
    """A message's words as the code that writes it is compared: lower-case letters, no digits."""
    return re.findall(r"[a-z]+", text.lower())
