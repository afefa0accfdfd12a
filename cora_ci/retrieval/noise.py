"""What of a pasted bug report is not about the code: interpreter banners and environment listings.

Reports paste a Python or IPython session with its start-up banner ("Type "help", "copyright",
"credits" or "license" for more information", "IPython 6.2.1 -- An enhanced Interactive Python")
and the versions of everything installed (`sklearn.show_versions()`, `pip freeze`, "Environment"
sections of issue templates). Their words match the project's own REPL and version-reporting
modules (`interactive/session.py`, `utils/_show_versions.py`) better than the code the report is
about, so the query is read without them. Traceback frames and code stay: evidence.py reads the
report whole.
"""

from __future__ import annotations

import re

_BANNER = re.compile(
    r"""^\s*(?:
        (?:Python|PyPy)\s\d+\.\d+[\w.+]*\s.*\((?:default|main|tags/|heads/)[^)]*\)  # Python 3.6 (default,
        (?:\s*\[.*\])?(?:\s+on\s\w+)?  # [GCC 11.4.0] on linux
      | Type\s["']help["'],.*for\smore\sinformation\.?
      | Type\s["']copyright["'],.*for\smore\sinformation\.?
      | IPython\s\d[\w.]*\s--\sAn\senhanced\sInteractive\sPython.*
      | (?:\?|%quickref|help|object\?|\?\?)\s+->\s.*  # IPython's help lines
      | \[(?:GCC|Clang|MSC)\s[^\]]*\]\s+on\s\w+
    )\s*$""",
    re.X,
)
# `numpy: 1.15.2`, `Django==3.0.5`, `python: 3.8.1 (default, ...)`, `machine: Linux-4.4.0-x86_64`:
# a name and a version (or a platform string), alone on a line; no run of spaces two ways to read
# (a line of 8,000 spaces took 0.7 s)
_VERSION_LINE = re.compile(
    r"^\s*(?:[-*]\s*)?[A-Za-z][\w .\-]{0,40}?(?:\s*(?::|==|>=|~=)\s*|\s+)v?\d+\.\d+(?:[.\w+\-]*)"
    r"(?:\s*\(.*\))?(?:\s*\[.*\])?\s*$"
    r"|^\s*(?:machine|executable|platform|os|lib_dirs|cblas_libs|macros|prefix|filepath|internal_api|"
    r"num_threads|threading_layer|architecture|user_api)\s*:.*$"
    r"|^\s*(?:system|blas|python\sdep(?:endencie)?s|built\swith\sopenmp|threadpoolctl\sinfo)\s*:\s*$",
    re.I,
)
# a heading's title is read to its end, then cut (`_title`): a lazy title before optional spaces and
# marks took cubic time on a line of spaces
_HEADING = re.compile(r"^\s*+(?:#{1,6}\s++|\*\*)(?P<title>[^#*]+)(?P<bold>\*\*:?\s*)?$")
_ENVIRONMENT = re.compile(
    r"^(?:versions?|environment|system(?:\sinfo(?:rmation)?)?|python\sdeps|blas|platform|"
    r"(?:output\sof\s)?(?:show_versions|pip\sfreeze|conda\slist).*|installed\sversions)$",
    re.I,
)


def without_noise(text: str) -> str:
    """`text` less banner lines, name-and-version lines and "Versions"/"Environment" sections
    (up to the next heading or blank line); a one-line query is returned as it is."""
    if "\n" not in text:
        return text
    out: list[str] = []
    skipping = False
    for line in text.splitlines():
        head = _HEADING.match(line)
        if head:
            skipping = bool(_ENVIRONMENT.match(_title(head)))
            if skipping:
                continue
        if skipping and not line.strip():
            skipping = False
        if skipping or _BANNER.match(line) or _VERSION_LINE.match(line):
            continue
        out.append(line)
    kept = "\n".join(out)
    return kept if kept.strip() else text


def _title(head: re.Match[str]) -> str:
    """A heading's title without the blanks and the one `:` that end it (not a `:` alone, nor one
    inside a bold title's `**`)."""
    title = head["title"].rstrip()
    if head["bold"] is None and len(title) > 1 and title.endswith(":"):
        title = title[:-1]
    return title.strip()
