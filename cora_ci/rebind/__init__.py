"""Anchors re-bound to the working tree (the fuzzy-linking HLD): results follow their symbol.

`bind` serves an indexed chunk from the current file: unchanged, `moved` (found by its anchor,
with current lines and text) or `missing` (the indexed text, marked, never the lines now there).
`locator.locate` finds one symbol by anchor in a file's current text, within ~10 ms for 2,000
lines; it parses, so it is imported where a file changed since it was indexed, not with this
package (a query over an unchanged tree parses nothing).
"""

from cora_ci.rebind.bind import Bound, Stale, WorkTree, bind
from cora_ci.rebind.view import View

__all__ = ["Bound", "Stale", "View", "WorkTree", "bind"]
