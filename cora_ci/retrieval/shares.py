"""What a chunk's neighbours in the code lend it: its file's other good chunks (`file_share`), a
type its members' (`member_share`). Step 2 of `search`, after each chunk's own features."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cora_ci.retrieval.params import Params

if TYPE_CHECKING:
    from cora_ci.retrieval.scoring import Cand


def member_share(cands: dict[int, Cand], params: Params) -> None:
    """Each type (class, struct, interface) gains `params.members` times the best scores of its
    members among the candidates, the n-th weighted `file_decay`**n, up to `file_count`: what
    describes a class ("Mixes stdout and stderr streams.") matches the words of its members'
    code more than its own skeleton, and several of them found say the class is asked for, as a
    file's several good chunks say the file is (`file_share`). One member found lifts its class
    by a share of its score, so a question about that member still answers with the member. A
    member the sentence names (`definition`: "how does Scale.apply scale a str") lends nothing,
    nor does a field: it declares what a type holds, and TypeScript interfaces and structs, lifted
    by declarations of a sentence's words, rose above the code that uses them (semble 0.823 with
    fields, 0.828 without). Not for a report, which asks where to change code: a member."""
    by_parent: dict[int, list[float]] = {}
    for c in cands.values():
        if c.meta.parent is not None and not c.explain["definition"] and c.meta.kind != "field":
            by_parent.setdefault(c.meta.parent, []).append(c.score)
    weights = [params.members * params.file_decay**i for i in range(params.file_count)]
    for c in cands.values():
        scores = by_parent.get(c.meta.id) if c.meta.kind == "type" else None
        if scores:
            extra = sum(w * s for w, s in zip(weights, sorted(scores, reverse=True), strict=False))
            if extra:
                c.explain["members"] = round(extra, 6)
                c.score += extra


def file_share(cands: dict[int, Cand], params: Params, skip: set[int]) -> None:
    """Each candidate but those in `skip` gains `params.file` times its file's other best scores,
    the n-th of them weighted `file_decay`**n, up to `file_count`: a file with several good chunks
    rises, the more the more it has, without a long file of weak matches outweighing one strong
    chunk."""
    by_file: dict[str, list[float]] = {}
    for c in cands.values():
        by_file.setdefault(c.meta.path, []).append(c.score)
    for scores in by_file.values():
        scores.sort(reverse=True)
    weights = [params.file * params.file_decay**i for i in range(params.file_count)]
    for key, c in cands.items():
        if key in skip:
            continue
        others = by_file[c.meta.path][: params.file_count + 1]
        if c.score in others:
            others = others.copy()
            others.remove(c.score)
        extra = sum(w * s for w, s in zip(weights, others, strict=False))
        if extra:
            c.explain["file"] = round(extra, 6)
            c.score += extra
