"""Anchors re-bound to the working tree (the fuzzy-linking HLD): results follow their symbol.

`bind` serves an indexed chunk from the current file: unchanged, `moved` (found by its anchor,
with current lines and text) or `missing` (the indexed text, marked, never the lines now there).
`locate` finds one symbol by anchor in a file's current text, within ~10 ms for 2,000 lines.
"""

from cora_ci.rebind.bind import Bound, Stale, WorkTree, bind
from cora_ci.rebind.locator import Located, locate
from cora_ci.rebind.view import View

__all__ = ["Bound", "Located", "Stale", "View", "WorkTree", "bind", "locate"]
