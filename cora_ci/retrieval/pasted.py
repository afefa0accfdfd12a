"""How a report's text was pasted, undone before its frames are read: Windows line ends, a log's
prefix of each line, a trace inside a JSON string. Each character stays where it was, so what a
format finds in the result is at the same place in the text (`frames.without_places` blanks it
there)."""

from __future__ import annotations

import re

# What a log puts before each line it relays: a timestamp (GitHub Actions' raw logs
# `2024-05-01T10:00:00.1234567Z `), a container's name (`docker compose logs`: `web-1  | `)
_LOG_PREFIX = re.compile(
    r"^(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d++)?(?:Z|[+-]\d\d:?\d\d)? |[a-z][\w.-]{0,62}+ ++\| )", re.M
)


# a trace inside a JSON string (a structured log's `"exc_info"`, `"stack"`): its escaped line ends
_ESCAPED_TRACE = re.compile(r'\\n {2,}(?:at |File \\")')


def unpasted(text: str) -> str:
    """`text` with Windows line ends read as Unix ones, a log's prefix of each line blanked, and a
    trace in a JSON string on its own lines (`\\n` a line end), each character where it was: an
    issue's body often comes with `\\r\\n`, as a CI job's or a container's log, or as a structured
    log's lines, and a frame format anchored at its line's start or end read none of it."""
    text = text.replace("\r\n", " \n")
    if _ESCAPED_TRACE.search(text):
        text = text.replace("\\n", " \n")
    return _LOG_PREFIX.sub(lambda m: " " * len(m.group()), text)
