"""`cora-ci index`: the stages wired into a full build or an update. `pipeline` decides what a
run does, with the previous bundle's help (`previous`), and `update` does it; the chunk and link
stage (`chunks`), the vector stage (`vectors`), the bundle's writers (`writers`) and its header
(`header`) are apart. Only the light entry points are imported here: a hook's no-op imports no
chunker, tantivy or numpy."""

from cora_ci.build.common import Progress, Summary, shard_label
from cora_ci.build.pipeline import build

__all__ = ["Progress", "Summary", "build", "shard_label"]
