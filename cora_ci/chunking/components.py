"""Single-file components (Vue's `.vue`, Svelte's `.svelte`): their `<script>` code read as code.

The pack's grammars for these files see a script block as raw text, so the chunker found no
function in a component (a large one was chunked by lines, `checkout` and `formatPrice` no
symbols). Here the outline is taken from the file's script view: the same rows, the script blocks'
code where it stands and every other row blank, parsed as JavaScript or TypeScript (a block's
`lang="ts"`). The chunks' text stays the file's own lines, so the template and the styles are
chunked as the code around the symbols, and line numbers are the file's.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from cora_ci.chunking.outline import parser_for

Node = Any
_TS = re.compile(rb"""\blang\s*=\s*["']?(ts|typescript|tsx)\b""")


class ScriptView(NamedTuple):
    lang: str  # javascript | typescript
    src: bytes  # the view's text: what the outline and the reference graph parse
    lines: list[str]  # as many as the file's: a script block's code at its rows, others blank


def script_view(lang: str, src: bytes, lines: list[str]) -> ScriptView | None:
    """The script view of a component in `lang` (vue, svelte), or None when it has no script."""
    root = parser_for(lang).parse(src).root_node
    blocks = [c for c in root.named_children if c.type == "script_element"]
    spans = [(b, t) for b in blocks for t in b.named_children if t.type == "raw_text"]
    if not spans:
        return None
    view = [""] * len(lines)
    for _, text in spans:
        (r0, c0), (r1, c1) = text.start_point, text.end_point
        for r in range(r0, min(r1, len(lines) - 1) + 1):
            line = lines[r].encode("utf-8", "surrogatepass")
            start = c0 if r == r0 else 0
            end = c1 if r == r1 else len(line)
            view[r] = (b" " * start + line[start:end]).decode("utf-8", "replace")  # columns kept
    tags = b"".join(src[b.start_byte : t.start_byte] for b, t in spans)
    script = "typescript" if _TS.search(tags) else "javascript"
    return ScriptView(script, "\n".join(view).encode("utf-8", "surrogatepass"), view)
