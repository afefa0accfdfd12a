"""`cora-ci index`: the stages wired into a full build or an update (`pipeline`), with the chunk and
link stage (`chunks`), the vector stage (`vectors`) and the bundle's writers (`writers`) apart."""

from cora_ci.build.chunks import link_files
from cora_ci.build.common import Progress
from cora_ci.build.pipeline import Summary, build, shard_label
from cora_ci.build.writers import (
    HEADER,
    assemble_manifest,
    write_graph,
    write_lexical,
    write_shards,
)

__all__ = [
    "HEADER",
    "Progress",
    "Summary",
    "assemble_manifest",
    "build",
    "link_files",
    "shard_label",
    "write_graph",
    "write_lexical",
    "write_shards",
]
