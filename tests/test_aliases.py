"""A type alias asked for answers with itself, then with the type it names (`retrieval/aliases.py`)."""

from __future__ import annotations

from cora_ci.build import build
from cora_ci.bundle import open_bundle
from cora_ci.retrieval import search

_HEADER = """\
#ifndef LOOP_H
#define LOOP_H

/* Handle types. */
typedef struct loop_s loop_t;
typedef struct timer_s timer_t;
typedef struct point point;

typedef void (*close_cb)(loop_t* loop);

int loop_init(loop_t* loop);
int loop_run(loop_t* loop, int mode);
int timer_start(timer_t* timer, close_cb cb);

struct point {
  int x;
  int y;
};

#endif
"""

_INTERNAL = """\
#include "loop.h"

struct loop_s {
  void* data;
  unsigned int active_handles;
  timer_t* timers;
};

struct timer_s {
  loop_t* loop;
  unsigned long timeout;
};
"""

_SOURCE = """\
#include "internal.h"

int loop_init(loop_t* loop) {
  loop->active_handles = 0;
  return 0;
}

int loop_run(loop_t* loop, int mode) {
  while (loop->active_handles > 0 && mode) {
    loop->active_handles--;
  }
  return 0;
}
"""

_DOC = "# Loops\n\n## loop_t\n\nThe loop_t type is the event loop: loop_t holds every handle.\n"


def test_a_typedef_asked_for_comes_first_and_the_struct_it_names_second(make_repo) -> None:  # type: ignore[no-untyped-def]
    """libuv's `uv_loop_t` is `typedef struct uv_loop_s uv_loop_t;` in its public header and its
    struct further down: asked for, the typedef was no symbol and its docs came first. Now the
    alias, then the struct it names (here in another file); one that names its own struct
    (`typedef struct point point;`) needs no second."""
    files = {".cora.toml": "min_tokens = 0\n", "include/loop.h": _HEADER, "src/internal.h": _INTERNAL}
    repo = make_repo({**files, "src/loop.c": _SOURCE, "docs/loop.md": _DOC})
    build(repo, model="none")
    b = open_bundle(repo / ".cora" / "index")
    t = b.chunks

    def first(query: str, k: int = 2) -> list[tuple[str, str | None]]:
        hits = search(b, query, k=k)
        return [(t.chunk(t.row_of[h.chunk_id]).path, t.chunk(t.row_of[h.chunk_id]).anchor) for h in hits]

    loop = first("loop_t")
    assert loop[0] == ("include/loop.h", "include/loop.h::loop_t"), loop
    assert loop[1] == ("src/internal.h", "src/internal.h::loop_s"), loop
    timer = first("timer_t")
    assert timer[1] == ("src/internal.h", "src/internal.h::timer_s"), timer
    assert first("close_cb", 1)[0][0] == "include/loop.h"
    hits = search(b, "point", k=3)
    assert sum(h.explain.get("definition") == 1.5 for h in hits) == 0  # no alias of another type
