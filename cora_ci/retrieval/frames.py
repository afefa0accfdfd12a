"""What a bug report's text says about places in code: traceback frames, innermost first, in the
formats runtimes, debuggers and sanitizers print them, then paths and dotted names merely
mentioned. `evidence.py` matches them to a bundle.

Formats read: Python (`File "x.py", line 3, in f`, innermost last, faulthandler's innermost first;
pytest's `x.py:3: in f` and a warning's `x.py:3: UserWarning`; the panel of rich, which Typer and
Textual print, `│ x.py:3 in f │`), JavaScript/TypeScript (V8's `at f (x.ts:3:5)`; vitest's `❯ f
src/x.ts:3:5`), Java, Kotlin and Scala (`at a.b.C.f(C.java:3)`, `at a.b.C.f(Unknown Source)`), C#
(`at A.B.F() in /x/B.cs:line 3`, and without a file where a package ships no symbols: `at
A.B`1.F()`, an async method's `A.B.<F>d__3.MoveNext()`), Go (`a/b.F(...)` then its `/x/b.go:3 +0x1f`
line; closures `F.func1.2`, a `go` statement's `F.gowrap1`, `created by F in goroutine 1`), Rust
(`panicked at src/x.rs:3:5`, before 1.73 `panicked at 'msg', src/x.rs:3:5`; a backtrace's `3:
a::B::f` with or without its `at ./src/x.rs:3:5`), Ruby (`x.rb:3:in 'C#f'`), PHP (`... in
/x/C.php:3`, `#0 /x/C.php(3): C->f()`), C and C++ (AddressSanitizer's `#0 0x4f5a in f x.c:3:5`,
gdb's `#0 f (a=1) at x.c:3`), Elixir (`(app 0.1.0) lib/x.ex:3: A.B.f/2`, or `A.B.f(1, 2)` where a
FunctionClauseError gives the arguments), Dart (`#0 C.f
(package:p/x.dart:3:5)`), Lua (`x.lua:3: in function 'f'`), Swift (`file x.swift, line 3`), Zig
(`x.zig:3:5: 0x1f in f (main)`) and Unity's console (`Cart:Total () (at Assets/Cart.cs:3)`). A file
of the standard library or of another package matches nothing in the bundle and falls away there; a
frame without a file (or with one the repository no longer has) is found by its owner and name
(`paths.Paths.defined`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import NamedTuple

from cora_ci.retrieval.pasted import unpasted
from cora_ci.retrieval.quoted import MAX_CHARS

_EXT = (r"(?:py|pyi|pyx|js|jsx|mjs|cjs|ts|tsx|vue|svelte|java|kt|kts|scala|groovy|cs|go|rs|rb|php"
        r"|c|h|cc|cpp|cxx|hh|hpp|hxx|swift|m|mm|ex|exs|erl|dart|lua|zig)")  # fmt: skip
# A path up to its extension; a directory may be a placeholder a report put for what it hides
# (`[redacted]/trpc/packages/...`, `/home/<me>/venv/...`, `$HOME/...`): a frame all the same. At
# most 64 directories: a text's every placeholder could start a path read to the run's end.
_HIDDEN = r"<[\w.-]+>|\[[\w.-]+\]"
_STEM = rf"(?:[A-Za-z]:)?(?:{_HIDDEN}|\$?[\w.~@+-]*)(?:[/\\](?:{_HIDDEN}|[\w.@+-]+)){{0,64}}\."
_PATH = _STEM + _EXT
_NAME = r"[\w$:.#<>~]+?[?!]?"  # a qualified name as a runtime prints it; its own name is `_last`'s
_JVM_FILE = r"[\w$-]+\.(?:java|kt|kts|scala|groovy)"  # a JVM frame's file: `(Cart.java:12)`, `(-JavaIo.kt:3)`
_ARGS = r"\((?:[^()\n]|\([^()\n]*\))*+\)"  # a call's arguments, one level of parentheses inside
# where a JavaScript frame's file was served from, before its path in the repository: a file URL,
# webpack's `webpack-internal:///./src/x.tsx`, a dev server's `http://localhost:5173/src/x.tsx?t=1`
_SERVED = r"(?:file://|webpack(?:-internal)?:///(?:\./)?|https?://[\w.-]++(?::\d+)?/)?"


class _Formats(NamedTuple):
    python: tuple[re.Pattern[str], ...]
    pytest: re.Pattern[str]
    innermost_first: tuple[re.Pattern[str], ...]


@cache
def _formats() -> _Formats:
    """The frame formats, compiled when a text first could hold a frame (`_MAY_HOLD_FRAMES`): a query
    without digits, most of them, does not pay their ~10 ms of compiling in a fresh process."""
    c = re.compile
    python = (
        # (faulthandler's frames: `File "x.py", line 3 in f`, no comma; in a JSON string, `File \"x.py\"`)
        c(rf'File \\?"(?P<path>{_PATH})\\?", line (?P<line>\d+)(?:,? in (?P<name>[\w<>.]+))?'),
        # IPython's and Jupyter's: `File ~/x.py:3, in f(a)` (8.0 on), and before it `~/x.py in f(a)`
        # over the frame's lines, `--> 3` marking its own (the next frame's header ends the search)
        c(rf"^[ \t]*File (?P<path>{_STEM}pyx?):(?P<line>\d+), in (?P<name>[\w<>.]+)", re.M),
        # pdb's (`where`, innermost last; the current frame marked `> `): `> /x/y.py(3)f()`
        c(rf"^[ \t>]*(?P<path>{_STEM}pyx?)\((?P<line>\d+)\)(?P<name>[\w<>]+)\(\)", re.M),
        c(
            rf"^[ \t]*(?P<path>{_STEM}pyx?) in (?P<name>[\w<>.]+)\([^\n]*\)[ \t]*"
            r"(?:\n(?![^\n]*\.pyx? in )[^\n]*+){0,40}?\n-+> +(?P<line>\d+)",
            re.M,
        ),
    )
    # pytest's frames (`src/x.py:3: in f`, its long form's `tests/test_x.py:5: ` and innermost
    # `src/x.py:3: ValueError`, any exception's class: `ShopFailure`) and a warning's origin
    # (`x.py:3: DeprecationWarning: ...`): innermost last, as Python's
    pytest = c(rf"^[ \t]*(?P<path>{_STEM}pyx?):(?P<line>\d+):(?: in (?P<name>[\w<>]+)"
               r"| \w*(?:Error|Exception|Warning)\b| [A-Z]\w*[ \t]*$|[ \t]*$)", re.M)  # fmt: skip
    # the formats that print the innermost frame first; a `name` group is the function a line is in
    innermost_first = (
        c(rf"^[ \t]*\d+:[ \t]+(?:0x[0-9a-fA-F]+ - )?(?P<rust>)(?P<symbol>[\w<](?:[^\n]*\S)?)[ \t]*"
          rf"(?:\n[ \t]+at (?:\./)?(?P<path>{_PATH}):(?P<line>\d+)(?::\d+)?)?[ \t]*$",
          re.M),  # Rust's backtrace: `3: a::B::f`, the line `at ./src/b.rs:3:5` under it when built with it
        c(rf"^[ \t]*at (?:(?:async )?(?P<name>[\w$.#<>\[\] ]+?) \()?{_SERVED}(?P<path>{_PATH})"
          r"(?:\?[^:\s()]*+)?:(?P<line>\d+)(?::\d+)?\)?[ \t]*$", re.M),  # V8 (in a browser: a bundler's URL)
        c(rf"^[ \t]*\u276f (?:(?:new |async )?(?P<name>[\w$.#<>\[\]]+) )?(?P<path>{_PATH}):(?P<line>\d+)"
          r"(?::\d+)?[ \t]*$", re.M),  # vitest's failures: ` \u276f add src/math.ts:12:15`
        c(rf"^[ \t]*at (?P<qual>[\w$.]+)\.(?P<name>[\w$<>]+)\((?P<file>{_JVM_FILE}):(?P<line>\d+)\)",
          re.M),  # the JVM's (`-JavaIo.kt`)
        c(rf"^[ \t]*at (?P<dotnet>)(?P<qual>[\w.`<>$|]+)\.(?P<name>[\w<>`$|]+)(?:\[[^\]\n]*\])?"
          rf"\((?!{_JVM_FILE}:\d+\))[^()\n]*\)(?: in (?P<path>{_PATH}):line (?P<line>\d+))?[ \t]*$",
          re.M),  # .NET, with its file and line or without (no symbols shipped); the JVM's `(Unknown Source)`
        # Mono's (Unity's player log, Xamarin): `at A.B.F () [0x0001] in /x/B.cs:3`, or `in <9e3f..>:0`
        c(rf"^[ \t]*at (?P<dotnet>)(?P<qual>[\w.`<>$|]+)\.(?P<name>[\w<>`$|]+) \([^()\n]*\) \[0x[0-9a-f]+\]"
          rf" in (?:(?P<path>{_PATH}):(?P<line>\d+)|<[0-9a-f]+>:0)[ \t]*$", re.M),
        c(rf"^(?:created by )?(?P<qual>[\w./-]+?(?:\.\(\*?\w+(?:\[[^\]\n]*\])?\))?)\.(?P<name>\w+)"
          rf"(?:\[[^\]\n]*\])?(?:\.(?:func|gowrap)\d+(?:\.\d+)*)*(?:\(.*\)| in goroutine \d+)"
          rf"\n[ \t]+(?P<path>{_PATH}):(?P<line>\d+)", re.M),  # Go: `pkg.(*T).M`, `F.func1.2`, `created by`
        c(rf"(?:panicked at (?:'[^\n]*?', )?|^[ \t]*at )(?:\./)?(?P<path>{_PATH}):(?P<line>\d+)(?::\d+)?",
          re.M),  # Rust (before 1.73 the message came first: `panicked at 'boom', src/x.rs:3:5`)
        c(rf"^[ \t]*(?:from |# )?(?P<path>{_PATH}):(?P<line>\d+):in [`'](?:block (?:\(\d+ levels\) )?in )?"
          rf"(?P<name>{_NAME})'", re.M),  # Ruby (RSpec's failures: `# ./lib/x.rb:3:in 'f'`)
        c(rf"(?:^(?:PHP )?(?:Fatal error|Parse error|Warning|Notice|Deprecated):[^\n]*? in |thrown in )"
          rf"(?P<path>{_PATH})(?::| on line )(?P<line>\d+)", re.M),  # PHP's error line, from its start
        c(rf"^[ \t]*#\d+ (?P<path>{_PATH})\((?P<line>\d+)\): ", re.M),  # PHP's trace: the call's line
        c(rf"^[ \t]*#\d+[ \t]+(?:0x[0-9a-fA-F]+ in )?(?P<name>{_NAME})(?:{_ARGS})?(?: {_ARGS})?"
          rf" (?:at )?(?P<path>{_PATH}):(?P<line>\d+)", re.M),  # AddressSanitizer, gdb
        c(rf"^[ \t]*\([\w.-]+(?: [\w.+-]+)?\) (?P<path>{_PATH}):(?P<line>\d+): "
          r"(?P<name>[\w.]+[?!]?)(?:/\d+|\()", re.M),  # Elixir (the arguments for the arity, where known)
        c(rf"^#\d+[ \t]++(?P<name>[\w.<>][\w.<> ]*?) \((?:package:[\w-]+/|file://)?(?P<path>{_PATH})"
          r":(?P<line>\d+)(?::\d+)?\)", re.M),  # Dart
        c(rf"^[ \t]*(?P<path>{_PATH}):(?P<line>\d+): in (?:function|method|local|upvalue|field) "
          r"'(?P<name>[\w.:]+)'", re.M),  # Lua
        c(rf"file (?P<path>{_PATH}), line (?P<line>\d+)"),  # Swift's fatal errors
        c(rf"^(?P<path>{_PATH}):(?P<line>\d+):\d+: 0x[0-9a-f]+ in (?P<name>\w+)", re.M),  # Zig
        c(rf"^[ \t]*(?P<qual>[\w.`]+):(?P<name>[\w<>`]+) ?\([^()\n]*\) \(at (?P<path>{_PATH})"
          r":(?P<line>\d+)\)", re.M),  # Unity's console: `Cart:Total (int) (at Assets/Cart.cs:12)`
    )  # fmt: skip
    return _Formats(python, pytest, innermost_first)


# not inside a run a path's first characters may continue: each start would read the run to its end;
# its line as a compiler writes it: `x.py:3`, tsc's and MSBuild's `x.ts(3,5)`, Maven's `X.java:[3,5]`
_MENTION = re.compile(
    rf"(?<![\w/.\\@~+-])(?P<path>{_PATH})"
    r"(?::(?P<line>\d+)|\((?P<paren>\d+),\d+\)|:\[(?P<bracket>\d+),\d+\])?(?![\w/])"
)
# What a text holding a frame holds: a line number, or a .NET or JVM frame printed without one
# (`   at Shop.Program.Main()`): a query with neither, most of them, compiles no format.
_MAY_HOLD_FRAMES = re.compile(r"\d|^[ \t]+at [\w$<]", re.M)
_ALIAS = re.compile(r"\s*\[as [^\]]*\]$")
_DOTTED = re.compile(r"(?<![\w.])(?P<qual>[^\W\d]\w*(?:\.[^\W\d]\w*){2,})(?![\w.])")


class Clue(NamedTuple):
    path: str | None  # as written: absolute, relative, under some site-packages
    name: str | None  # the function or method a frame is in, or a dotted name's last part
    line: int | None
    frame: bool  # a traceback frame (not a mere mention)
    dotted: tuple[str, ...] = ()  # `pkg.module.Class.method` as parts, its module to be found
    code: str | None = None  # the line of code a Python frame prints under it


def clues(text: str) -> list[Clue]:
    """The report's clues, innermost frames first, then mentions in the order written (less what
    a frame already says: its path again, its file name, its qualified name)."""
    return list(_clues(text))


@lru_cache(maxsize=16)  # a query's: each bundle's evidence asks, and its answer's cut to a member
def _clues(text: str) -> tuple[Clue, ...]:
    text = unpasted(text[:MAX_CHARS])
    rich = _rich_frames(text) if _MAY_HOLD_FRAMES.search(text) else []
    frames = list(_frames(text, [clue for _, clue in rich]))
    said = {c.path for c in frames} | {_base(c.path) for c in frames} | {c.name for c in frames}
    words = _blanked(text, [span for span, _ in rich])  # a folded header's pieces are no paths
    return (*frames, *(c for c in _mentions(words) if (c.path or c.name) not in said))


_ANONYMOUS = re.compile(r"\$\d+$|\$lambda")  # the JVM's anonymous classes and lambdas
_GO_CLOSURE = re.compile(r"func\d+")
_GO_RECEIVER = re.compile(r"\.\(\*?(\w+)(?:\[[^\]\n]*\])?\)$")  # `pkg.(*T)`, `pkg.(T[...])`: a method's type


def _base(path: str | None) -> str | None:
    return re.split(r"[/\\]", path)[-1] if path else None


_CAUSED_BY = re.compile(r"^[ \t]*Caused by: ", re.M)
_PY_BLOCK = re.compile(r"\n(?=Traceback \(most recent call last\)|[^\n]*\(most recent call first\):)")
_FIRST_FIRST = re.compile(r"[^\n]*\(most recent call first\):")


def _frames(text: str, rich: list[Clue]) -> Iterator[Clue]:
    """The frames of `text`'s formats, innermost first; `rich` are its rich panels' (`_rich_frames`)."""
    if not _MAY_HOLD_FRAMES.search(text):
        return
    f = _formats()
    # Python prints the innermost frame last: each traceback's frames are read backwards; but
    # faulthandler's dump of a crash (`Fatal Python error: Segmentation fault`, then `Current thread
    # 0x7f3a (most recent call first):`) prints it first
    for block in _PY_BLOCK.split(text):
        py = sorted((m.start(), m) for pattern in f.python for m in pattern.finditer(block))
        read = [Clue(m["path"], _last(m["name"]), int(m["line"]), True, code=_code(block, m)) for _, m in py]
        yield from read if _FIRST_FIRST.match(block) else reversed(read)
    yield from reversed(rich)
    pytest = [Clue(m["path"], _last(m["name"]), int(m["line"]), True) for m in f.pytest.finditer(text)]
    yield from reversed(pytest)
    found: dict[int, Clue | None] = {}  # by where its line number (or name) sits: two formats' one frame
    for pattern in f.innermost_first:
        for m in pattern.finditer(text):
            groups = m.groupdict()
            at = (
                m.start("line")
                if groups.get("line") is not None
                else m.start("symbol" if groups.get("symbol") else "name")
            )
            if at not in found:  # V8's `at /x.js:3:5` is also Rust's form: counted once
                found[at] = _clue(m)
    # in the text's order (a .NET trace's frames with and without their files are of one trace),
    # but a JVM trace's causes first, the root one (the last `Caused by:`) first of all: where the
    # error began, under the wrappers that rethrew it
    causes = [m.start() for m in _CAUSED_BY.finditer(text)]
    order = sorted(found, key=lambda at: (-bisect.bisect(causes, at), at))
    yield from (c for at in order if (c := found[at]) is not None)


def _code(block: str, m: re.Match[str]) -> str | None:
    """The line of code a Python traceback prints under a frame's header (`File "x.py", line 3, in
    f`, then `    return g(x)`): what tells a frame's function from others of its name where the
    report's file is another version; None for another format, or no such line."""
    if not m.group().startswith("File"):
        return None
    end = block.find("\n", m.end())
    nxt = block.find("\n", end + 1) if end >= 0 else -1
    line = block[end + 1 : nxt if nxt >= 0 else len(block)] if end >= 0 else ""
    code = line.strip()
    if not line[:1].isspace() or len(code) < _CODE_CHARS or code.startswith(("File ", "^", "~")):
        return None
    return code


_CODE_CHARS = 8  # a shorter line (`main()`, `f(x)`) says too little to tell two functions apart


def _clue(m: re.Match[str]) -> Clue | None:
    """The frame an innermost-first format's match reads (None: a .NET name that names nothing)."""
    groups = m.groupdict()
    if groups.get("rust") is not None:  # a numbered frame: its symbol, and where it is when built with it
        parts = _rust_parts(m["symbol"])
        if m["line"] is not None:
            return Clue(m["path"], parts[-1] if parts else None, int(m["line"]), True)
        return Clue(None, parts[-1], None, True, parts) if len(parts) > 1 else None
    if groups.get("dotnet") is not None:  # .NET: the method a compiler's name is of
        parts = _unmangled((*m["qual"].split("."), m["name"]))
        if not parts or not parts[-1]:
            return None
        if m["line"] is None:  # no file (no symbols shipped; the JVM's `Unknown Source`): its symbol says
            return Clue(None, parts[-1], None, True, parts)
        return Clue(m["path"], parts[-1], int(m["line"]), True, parts)
    path = groups.get("path")
    dotted: tuple[str, ...] = ()
    if path is None:  # the JVM's: a package and a file name, and the class's symbol should the file be gone
        package = m["qual"].rsplit(".", 1)[0].replace(".", "/") if "." in m["qual"] else ""
        path = f"{package}/{m['file']}".lstrip("/")
        dotted = (*re.split(r"[.$]", m["qual"]), m["name"])
    name = _last(groups.get("name"))
    if _ANONYMOUS.search(groups.get("qual") or ""):  # `Factory$1.readIntoField`: an anonymous
        name, dotted = None, ()  # class's method names no symbol of the file; its line says which holds it
    if name is not None and _GO_CLOSURE.fullmatch(name):  # Go's `cmd.glob..func1`: a function literal
        name = None  # of a package variable (a cobra command's `RunE`): no symbol; its line says which
    if name is not None and (receiver := _GO_RECEIVER.search(groups.get("qual") or "")):
        dotted = (receiver[1], name)  # viper's `(*Viper).AllSettings`: the method, not the function beside it
    return Clue(path, name, int(m["line"]), True, dotted)


# rich's traceback panel (Typer's and Textual's crashes): a frame's header `│ x.py:3 in f   │`,
# over the panel's next lines where it is wider than the panel: a word longer than a line folded
# (`│ ...x.py:2 │` then `│ 9 in f   │`: the folded line full, one space before its border), else
# wrapped at a space; `|` where the box is ASCII.
_PANEL_LINE = re.compile(r"^[ \t]*[\u2502|] (?P<content>[^\n]*)[\u2502|][ \t]*$", re.M)
_RICH_FRAME = re.compile(rf"(?P<path>{_STEM}pyx?):(?P<line>\d+) in (?P<name>[\w<>]+)")
_BEGUN = re.compile(rf"{_STEM}pyx?:\d+(?: in)?")  # a header whose next word is on the next line
_FOLDS = 8  # panel lines more a header may fold over (a 120-character path in a 24-column panel: 6)


def _rich_frames(text: str) -> list[tuple[tuple[int, int], Clue]]:
    """Each frame header of a rich traceback panel, in the text's order (innermost last), with the
    span of the panel lines it is printed on."""
    if "\u2502" not in text and "|" not in text:
        return []
    lines = list(_PANEL_LINE.finditer(text))
    out: list[tuple[tuple[int, int], Clue]] = []
    i = 0
    while i < len(lines):
        j, header = i, lines[i]["content"].rstrip(" ")
        while j + 1 < len(lines) and j - i < _FOLDS and lines[j + 1].start() == lines[j].end() + 1:
            nxt = lines[j + 1]["content"]
            if (
                ".py" in header
                and _BEGUN.fullmatch(header)
                and (header.endswith(" in") or not nxt[:1].isdigit())
            ):
                sep = " "  # wrapped at a space: `orders.py:12 in` `<module>`, `orders.py:12` `in total`
            elif _full(lines[j]):
                sep = ""  # a word longer than the panel, folded: `orders.py:1` `2 in total`
            else:
                break
            j += 1
            header += sep + lines[j]["content"].rstrip(" ")
        m = _RICH_FRAME.fullmatch(header) if " in " in header else None
        if m is not None:
            clue = Clue(m["path"], _last(m["name"]), int(m["line"]), True)
            out.append(((lines[i].start(), lines[j].end()), clue))
            i = j + 1
        else:
            i += 1
    return out


def _full(line: re.Match[str]) -> bool:
    """A panel line its content fills: one space, the panel's own, before its border."""
    content: str = line["content"]
    return content.endswith(" ") and not content.endswith("  ")


# What a runtime prints around every traceback, whatever went wrong: its words are the runtime's, not
# the report's (rich's "Traceback (most recent call last)" matched its traceback module first), and
# so is the name of the thread that failed (Rust's `thread 'main' panicked at`, the JVM's `Exception
# in thread "main"`, Go's `goroutine 1 [running]:`): bat's panic answered with `fn main` first.
_BOILERPLATE = re.compile(
    r"Traceback \(most recent call (?:last|first)\):?|\(most recent call first\):"
    r"|During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:"
    r"|\bthread '[^'\n]{1,100}' panicked at|^[ \t]*stack backtrace:"
    r"|note: run with `RUST_BACKTRACE=[^`\n]{1,8}` environment variable to display a backtrace"
    r"|note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace\."
    r"|\bException in thread \"[^\"\n]{1,100}\"|^goroutine \d+ \[[^\]\n]{1,100}\]:",
    re.M,
)


def without_places(text: str) -> str:
    """`text` with its frames blanked, byte for byte (each format's frame: its path, line and
    function, Go's `github.com/spf13/viper.(*Viper).find(...)` with the path line under it): a
    frame is evidence (`evidence.py` weighs the innermost most), not words. As words, an outer
    frame's longer path and a package's module path outweighed it (hono's `helper/cookie/index.js`
    put `setCookie` over the `_serialize` it called, viper's module path its go.mod), and a
    traceback's words crowded out the prose (an httpx report's helper to fix 37th, 21st without
    them). The source line Python prints under a frame stays: it names what was called."""
    if not _MAY_HOLD_FRAMES.search(text):
        return text
    f = _formats()
    spans: list[tuple[int, int]] = []
    plain = unpasted(text)
    for pattern in (*f.python, f.pytest, *f.innermost_first):
        spans.extend(m.span() for m in pattern.finditer(plain))
    spans.extend(span for span, _ in _rich_frames(plain))
    spans.extend(m.span() for m in _BOILERPLATE.finditer(text))
    return _blanked(text, spans)


def _blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with the characters of each span spaces."""
    if not spans:
        return text
    out = list(text)
    for start, end in spans:
        out[start:end] = " " * (end - start)
    return "".join(out)


def _mentions(text: str) -> Iterator[Clue]:
    for m in _MENTION.finditer(text):
        if "://" not in text[max(0, m.start() - 8) : m.start()]:  # a URL's path is not the repository's
            line = m["line"] or m["paren"] or m["bracket"]
            yield Clue(m["path"], None, int(line) if line else None, False)
    for m in _DOTTED.finditer(text):
        parts = tuple(m["qual"].split("."))
        if not re.fullmatch(_EXT, parts[-1]):  # `a.b.py` is a path, read above
            yield Clue(None, parts[-1], None, False, parts)


_MANGLED = re.compile(r"<(\w+)>")  # a C# compiler's `<ExecuteAsync>d__10`, `<<Main>b__0_0>d`, `<Main>$`


def _unmangled(parts: tuple[str, ...]) -> tuple[str, ...]:
    """A .NET frame's qualified name as its source writes it: generic arities (`Outcome`1`) off,
    and from the first part a compiler made (an async method's state machine, a lambda's display
    class, `<Main>$`), the method it was made for (`ResiliencePipeline.<>c__10`1.<<ExecuteAsync>
    b__10_0>d.MoveNext` -> `ResiliencePipeline.ExecuteAsync`)."""
    plain = tuple(p.split("`")[0] for p in parts)
    for i, p in enumerate(plain):
        if p.startswith("<"):
            made = next((m[1] for q in plain[i:] if (m := _MANGLED.search(q))), None)
            return plain[:i] + ((made,) if made else ())
    return plain


_RUST_HASH = re.compile(r"::h[0-9a-f]{16}$")  # a legacy-mangled symbol's hash


def _rust_parts(symbol: str) -> tuple[str, ...]:
    """A Rust backtrace's symbol as paths name it: `grep_searcher::searcher::Core<M,S>::find`
    -> (..., "Core", "find"); a trait's method by the type implementing it
    (`<WordMatcher as Matcher>::find_at`); closures' `{{closure}}` and a hash left out. One pass
    over the symbol: a report's text is anyone's."""
    s = _without_generics(_RUST_HASH.sub("", symbol.strip()))
    close = s.find(">")
    if s.startswith("<") and s[close + 1 : close + 3] == "::":
        s = s[1:close].split(" as ", 1)[0] + s[close + 1 :]
    return tuple(p for p in s.split("::") if re.fullmatch(r"[A-Za-z_]\w*", p))


def _without_generics(s: str) -> str:
    """`s` without its type arguments (`Core<M, S>` -> `Core`), nested ones too; a `<` that
    follows no name opens no arguments (`<T as Trait>::f` keeps them)."""
    out: list[str] = []
    depth = 0
    for i, ch in enumerate(s):
        if ch == "<" and (depth or (i and (s[i - 1].isalnum() or s[i - 1] in "_]"))):
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


def _last(name: str | None) -> str | None:
    """`Foo.bar`, `Foo#bar`, `ns::Foo::bar`, `Object.<anonymous>`, `<module>`, `lambda$bar$2` -> the
    function's own name (`empty?` too), if it has one."""
    if not name:
        return None
    name = _ALIAS.sub("", name.strip())  # V8's `Layer.handle [as handle_request]`: the function's own
    if ".#" in name:  # a JavaScript class's private method, `Router.#build`: its name is `#build`
        last = "#" + name.rsplit(".#", 1)[1]
        return last if re.fullmatch(r"#(?:[^\W\d]|\$)[\w$]*", last) else None
    last = re.split(r"[.\s#:]", name)[-1]
    if (synthetic := _SYNTHETIC.fullmatch(last)) is not None:  # the JVM's lambda or local function
        return synthetic[1]
    return last if re.fullmatch(r"(?:[^\W\d]|\$)[\w$]*[?!]?", last) else None


# The JVM's names for a lambda in a method (`lambda$containsAnyIgnoreCase$2`) and a Scala local
# function (`fail$1`): the method's and the function's own names (commons-lang's frame matched none).
_SYNTHETIC = re.compile(r"(?:lambda\$)?([^\W\d]\w*)\$\d+")
