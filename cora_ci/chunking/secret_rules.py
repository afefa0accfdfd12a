"""The rules `secrets` scans with beyond its first high-confidence ones: the providers' formats
(`secret_providers`: the kinds gitleaks' and detect-secrets' default rule sets know), credentials
in URLs and headers, JWTs, and generic credential assignments (a secret-like key given a
random-looking value), and `find`, which runs one rule over a text.

Speed, with some 250 formats: no rule scans a text on its own from every position. A token
rule names the literals its matches start with (`ghp_`, `xoxb-`): one search of the text for all
of them (a trie, at word starts) says where each rule's regex is tried. The keyed rules (a
provider's key given a value of its shape) and the generic assignment share one scan of the text
for assignments. The few others need a rare literal (a text without it is skipped after one
substring search) or run only near their words. What the rules share about a text (its token
starts, its assignments, its lower case) is worked out once, for the last text scanned.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from cora_ci.chunking import secret_checks as ck
from cora_ci.chunking.secret_providers import KEYED, PROVIDERS, Lazy, Rule

__all__ = ["GENERIC", "PROVIDERS", "RULES", "Rule", "candidates", "find"]

_W = "A-Za-z0-9"
# A generic assignment's key ends with one of these (lower case): `DB_PASSWORD = ...`, `apiKey: ...`.
_KEY_NAMES = (f"{w}{sep}key" for w in ("api", "access", "secret", "private") for sep in ("", "_"))
_SECRET_NAMES = ("password", "passwd", "pwd", "passphrase", "secret", "token", *_KEY_NAMES)

GENERIC: tuple[Rule, ...] = (
    Rule(
        "jwt",
        Lazy(rf"eyJ(?<![{_W}_-]eyJ)[{_W}_-]{{10,}}\.eyJ[{_W}_-]{{10,}}\.[{_W}_-]{{16,}}"),
        ck.jwt,
        starts=("eyJ",),
    ),
    Rule(
        "url-credentials",
        # a URL's user information ends at its first `/`, `?` or `#` (RFC 3986): curl's test
        # `http://%HOSTIP:%HTTPPORT?email=name@example.com` names no password
        Lazy(r"://(?P<user>[\w.%+-]{1,64}):(?P<password>[^\s:@/?#\"'`]{1,128})@[\w.-]+"),
        ck.url_password,
        need="://",
    ),
    # `earer`/`asic`: a literal start, the capital or not is checked behind it
    Rule(
        "bearer-token",
        Lazy(rf"earer(?<=[Bb]earer)\s+(?P<value>[{_W}._~+/-]{{20,}}=*)"),
        ck.credential,
        need="earer",
    ),
    Rule(
        "basic-auth-header",
        Lazy(rf"asic(?<=[Bb]asic)\s+(?P<value>[{_W}+/]{{16,}}={{0,2}})(?![{_W}+/=])"),
        ck.basic,
        need="asic",
    ),
    Rule(
        "generic-credential",
        Lazy(rf"[{_W}+/=_.~!@#$%^&*-]{{12,1000}}"),
        ck.credential,
        keys=_SECRET_NAMES,
        key_end=True,
    ),
)


RULES = (*PROVIDERS, *GENERIC)


def find(rule: Rule, text: str) -> list[re.Match[str]]:
    """The rule's matches in `text` (its check is the caller's to apply)."""
    if rule.starts:
        at = _memo(text).starts().get(id(rule))
        return [m for i in at if (m := rule.regex.match(text, i))] if at else []
    if rule.keys:
        return _memo(text).keyed().get(id(rule), [])
    if rule.need and rule.need not in text:
        return []
    if not rule.near:
        return list(rule.regex.finditer(text))
    memo = _memo(text)
    starts = sorted({i for w in rule.near for i in memo.occurrences(w)})
    out: dict[int, re.Match[str]] = {}
    done = -1
    for i in starts:
        if i < done:
            continue
        for m in rule.regex.finditer(text, max(0, i - rule.back), min(len(text), i + rule.span)):
            out.setdefault(m.start(), m)
            done = max(done, m.end())
    return [out[k] for k in sorted(out)]


def _trie(words: list[str]) -> str:
    """A regex matching any of `words`, the longest first, as a trie (`re` tries an alternation's
    branches one by one: a trie tries each character once)."""
    node: dict[str, Any] = {}
    for w in words:
        at = node
        for ch in w:
            at = at.setdefault(ch, {})
        at[""] = {}

    def emit(at: dict[str, Any]) -> str:
        alts = [re.escape(ch) + emit(sub) for ch, sub in sorted(at.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 and "" not in at else f"(?:{'|'.join(alts)})"
        return f"{body}?" if "" in at else body

    return emit(node)


def candidates(text: str) -> list[Rule]:
    """The rules, in RULES' order, that `find` may give a match in `text`: those whose literal
    starts a word of it, whose key is assigned a value of their shape in it, whose rare literal it
    holds, and those with no such test. What `find` works out about a text first, asked once for
    all rules instead of once a rule (~200 calls a chunk, most of them for nothing)."""
    memo = _memo(text)
    found = {_INDEX[r] for r in memo.starts()}
    found.update(_INDEX[r] for r in memo.keyed())
    found.update(i for i, need in _NEEDS if need in text)
    found.update(_OTHERS)
    return [RULES[i] for i in sorted(found)]


_INDEX = {id(r): i for i, r in enumerate(RULES)}
_NEEDS = [(i, r.need) for i, r in enumerate(RULES) if not r.starts and not r.keys and r.need]
_OTHERS = [i for i, r in enumerate(RULES) if not r.starts and not r.keys and not r.need]

# Every token rule's literals, in one search: where one starts a word, the rules starting with it
# (or with a shorter literal it begins with) are tried there.
_STARTING: dict[str, list[Rule]] = defaultdict(list)
for _rule in RULES:
    for _lit in _rule.starts:
        _STARTING[_lit].append(_rule)
_BY_START = {lit: list({id(r): None for p in _STARTING if lit.startswith(p) for r in _STARTING[p]})
             for lit in _STARTING}  # fmt: skip
_STARTS = re.compile(f"(?<![{_W}])(?=({_trie(sorted(_STARTING))}))")


# An assignment: a separator (`=`, `:`, `=>`, `,`, a tag's `>`), spaces, a quote, then 12 to 1000
# characters a value may hold (`=` only as padding at the end).
_VALUE = r"A-Za-z0-9_.+/%|~!@#$^&*-"
_ASSIGNED = re.compile(
    rf"[=:>,][ \t>]{{0,3}}(?P<q>[\"'`]?)(?P<value>[{_VALUE}]{{12,1000}}={{0,3}})(?![{_VALUE}=])"
)
# The key before a separator, read backwards: quotes and spaces, then the key's characters.
_KEY_REVERSED = re.compile(r"[\s'\"`\]=:]{0,5}([\w.-]{2,80})")
_DIGIT = re.compile(r"\d")
_SEPARATORS = str.maketrans("", "", "_.-")
_CONTAINED: dict[str, list[Rule]] = defaultdict(list)  # provider names: in the key
_ENDING: list[Rule] = []  # generic names: at the key's end
for _rule in (*KEYED, *GENERIC):
    if _rule.key_end:
        _ENDING.append(_rule)
    for _word in _rule.keys if not _rule.key_end else ():
        _CONTAINED[_word].append(_rule)
_WORDS = re.compile("|".join(sorted(map(re.escape, _CONTAINED), key=len, reverse=True)))


class _Memo:
    """What the rules share about one text: its lower case, where a word occurs, the keyed
    rules' matches."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._low: str | None = None
        self._keyed: dict[int, list[re.Match[str]]] | None = None
        self._starts: dict[int, list[int]] | None = None

    def starts(self) -> dict[int, list[int]]:
        if self._starts is None:
            self._starts = defaultdict(list)
            for m in _STARTS.finditer(self.text):
                for rule in _BY_START[m.group(1)]:
                    self._starts[rule].append(m.start())
        return self._starts

    def occurrences(self, word: str) -> list[int]:
        if self._low is None:
            self._low = self.text.lower()
        low, out = self._low, []
        i = low.find(word)
        while i >= 0:
            out.append(i)
            i = low.find(word, i + 1)
        return out

    def keyed(self) -> dict[int, list[re.Match[str]]]:
        if self._keyed is None:
            self._keyed = _keyed(self.text)
        return self._keyed


def _keyed(text: str) -> dict[int, list[re.Match[str]]]:
    """Each keyed rule's matches: assignments whose key names the provider (or ends with a generic
    name, not in a comparison) and whose value has the rule's shape (whether it is random is the
    rule's check)."""
    out: dict[int, list[re.Match[str]]] = defaultdict(list)
    for m in _ASSIGNED.finditer(text):
        s = m.start()
        line = text.rfind("\n", max(0, s - 90), s) + 1 or max(0, s - 90)
        found = _KEY_REVERSED.match(text[line:s][::-1])
        if found is None:
            continue
        key, value = found.group(1)[::-1].lower(), m.group("value")
        if text[s] in ":=" and text[s - 1] not in "=!<>" and text[s + 1 : s + 2] != "=":
            for rule in _ENDING:
                if key.endswith(rule.keys) and rule.regex.fullmatch(value):
                    out[id(rule)].append(m)
        if _DIGIT.search(value) or not (value.islower() or value.isupper()):  # random: digits or both cases
            for word in set(_WORDS.findall(key.translate(_SEPARATORS))):
                for rule in _CONTAINED[word]:
                    if rule.regex.fullmatch(value):
                        out[id(rule)].append(m)
    return out


_LAST: list[_Memo | None] = [None]  # the last text's memo: every rule of a scan asks about the same text


def _memo(text: str) -> _Memo:
    memo = _LAST[0]
    if memo is None or memo.text is not text:
        memo = _LAST[0] = _Memo(text)  # one assignment: another thread sees this memo or the last, whole
    return memo
