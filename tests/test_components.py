"""Single-file components (Vue, Svelte): the functions of their `<script>` blocks are symbols, the
template and styles chunked around them, every line the file's own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import by_anchor, cora, first_result, run_chunk, uncovered

CART = """\
<template>
  <div class="cart">
    <h2>{{ title }}</h2>
    <li v-for="item in items" :key="item.id">{{ formatPrice(item.price) }}</li>
    <button @click="checkout">Checkout</button>
  </div>
</template>

<script setup lang="ts">
import { ref } from 'vue'
import { api } from '../api'

const items = ref<Item[]>([])

function formatPrice(value: number): string {
  // two decimals and the currency sign, as the shop shows prices everywhere
  return '$' + value.toFixed(2)
}

async function checkout(): Promise<void> {
  const order = await api.post('/orders', { items: items.value })
  emit('ordered', order)
}
</script>

<style scoped>
.cart { padding: 1em; }
</style>
"""

COUNTER = """\
<script>
  export let start = 0;
  let count = start;

  function increment() {
    count += 1;
  }

  function reset() {
    count = start;
  }
</script>

<button on:click={increment}>Clicked {count} times</button>
<button on:click={reset}>Reset</button>
"""


def test_a_vue_components_functions_are_symbols_at_their_lines() -> None:
    r = run_chunk("src/Cart.vue", CART, min_tokens=0)
    assert r.lang == "typescript"  # `lang="ts"`: its script's language
    chunks = by_anchor(r)
    fn = chunks["src/Cart.vue::checkout"]
    rows = CART.splitlines()
    assert (fn.kind, fn.start_line, fn.end_line) == ("method", 20, 23)
    assert fn.text.splitlines() == rows[19:23]  # the file's own lines
    assert chunks["src/Cart.vue::formatPrice"].start_line == 15
    assert uncovered(r, CART.encode()) == []  # the template and the styles are chunked too
    assert any("<h2>{{ title }}</h2>" in c.text for c in r.chunks)


def test_a_svelte_components_functions_and_components_without_script() -> None:
    r = run_chunk("Counter.svelte", COUNTER, min_tokens=0)
    assert r.lang == "javascript"
    chunks = by_anchor(r)
    assert (chunks["Counter.svelte::increment"].start_line, chunks["Counter.svelte::reset"].start_line) == (
        5,
        9,
    )
    assert uncovered(r, COUNTER.encode()) == []
    plain = "<template>\n  <p>Hello</p>\n</template>\n"
    r = run_chunk("Hello.vue", plain, min_tokens=0)
    assert r.lang == "vue" and [c.kind for c in r.chunks] == ["module"]  # no script: as before


def test_a_components_function_is_found_and_followed(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    repo = make_repo({"src/Cart.vue": CART, "src/api.ts": "export const api = { post: fetch }\n"})
    out = cora("index", "--model", "none", "-q", cwd=repo, **env)
    assert out.returncode == 0, out.stderr
    hit = first_result(repo, "checkout", env)  # with the template's code that names it, merged around it
    span = range(int(str(hit["start_line"])), int(str(hit["end_line"])) + 1)
    assert (hit["anchor"], hit["stale"]) == ("src/Cart.vue::checkout", None)
    assert 20 in span and "async function checkout(): Promise<void> {" in str(hit["text"])
    (repo / "src" / "Cart.vue").write_text(CART.replace("<template>\n", "<template>\n  <!-- the cart -->\n"))
    hit = first_result(repo, "checkout", env)
    span = range(int(str(hit["start_line"])), int(str(hit["end_line"])) + 1)
    assert hit["stale"] == "moved" and 21 in span and "api.post" in str(hit["text"])
