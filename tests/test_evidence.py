"""A bug report finds the code to change: its traceback frames, paths and dotted names are read
(every format), matched to the bundle's files by their trailing components, and the innermost
frame inside the repository outranks changelogs, translation catalogues and the words around; a
message it quotes finds the code that emits it."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import init_repo

from cora_ci.build import build
from cora_ci.render.query import Where, run_query
from cora_ci.retrieval import emitted, evidence, quoted
from cora_ci.retrieval.evidence import FRAME_DECAY, MENTION
from cora_ci.retrieval.frames import Clue, clues
from cora_ci.retrieval.noise import without_noise
from cora_ci.retrieval.paths import Paths
from cora_ci.retrieval.quoted import MESSAGE, messages

pytestmark = pytest.mark.usefixtures("private_cache")


ORDERS = '''\
    """Orders of the shop."""


    class Order:
        """An order: lines of items."""

        def __init__(self, lines):
            self.lines = lines

        def total(self):
            """The order's total price."""
            return sum(line["price"] * line["qty"] for line in self.lines)

        def describe(self):
            return ", ".join(line["name"] for line in self.lines)


    def parse_order(text):
        """An order from its text form."""
        return Order([dict(zip(("name", "price", "qty"), row.split(";"))) for row in text.splitlines()])
    '''

REPORT = """Order total crashes with a KeyError when an order line has no quantity

When I compute the total price of an order whose line has no quantity, the total fails:

Traceback (most recent call last):
  File "/home/me/site/checkout.py", line 12, in <module>
    print(order.total())
  File "/home/me/.venv/lib/python3.12/site-packages/shop/orders.py", line 12, in total
    return sum(line["price"] * line["qty"] for line in self.lines)
  File "/home/me/.venv/lib/python3.12/site-packages/shop/orders.py", line 12, in <genexpr>
    return sum(line["price"] * line["qty"] for line in self.lines)
KeyError: 'qty'

The total price of an order should treat a missing quantity as one.
"""


RUBY_ORDERS = """\
    module Shop
      class Order
        def initialize(lines)
          @lines = lines
        end

        def total!
          @lines.sum { |line| line[:price] * line.fetch(:qty) }
        end

        def describe
          @lines.map { |line| line[:name] }.join(", ")
        end
      end
    end
    """

RUBY_REPORT = """Order total! raises KeyError when a line has no quantity

The total price of an order whose line has no quantity fails:

/home/me/.gem/ruby/3.4.0/gems/shop-1.2.0/lib/shop/order.rb:8:in 'Hash#fetch': key not found: :qty (KeyError)
\tfrom /home/me/.gem/ruby/3.4.0/gems/shop-1.2.0/lib/shop/order.rb:8:in 'block in Shop::Order#total!'
\tfrom /home/me/.gem/ruby/3.4.0/gems/shop-1.2.0/lib/shop/order.rb:8:in 'Array#sum'
\tfrom /home/me/.gem/ruby/3.4.0/gems/shop-1.2.0/lib/shop/order.rb:8:in 'Shop::Order#total!'
\tfrom checkout.rb:3:in '<main>'

The total price of an order should treat a missing quantity as one.
"""


# rich's traceback panel, as a Typer command prints its crash: the installed file's header folded
# where it is wider than the panel (`orders.py:1` and `2 in total`)
RICH_REPORT = """Order total crashes with a KeyError when an order line has no quantity

When I compute the total price of an order whose line has no quantity, the total fails:

╭───────────── Traceback (most recent call last) ──────────────╮
│ /home/me/shop-cli/checkout.py:12 in main                     │
│                                                              │
│    11 │   order = load_order(path)                           │
│ ❱  12 │   print(order.total())                               │
│                                                              │
│ /home/me/.venv/lib/python3.12/site-packages/shop/orders.py:1 │
│ 2 in total                                                   │
│                                                              │
│ ❱ 12 │   │   return sum(line["price"] * line["qty"] for line │
│                                                              │
│ /home/me/.venv/lib/python3.12/site-packages/shop/orders.py:1 │
│ 2 in <genexpr>                                               │
│                                                              │
│ ❱ 12 │   │   return sum(line["price"] * line["qty"] for line │
╰──────────────────────────────────────────────────────────────╯
KeyError: 'qty'

The total price of an order should treat a missing quantity as one.
"""


NOISE = "The total price of an order line with no quantity: total, order, price, quantity, KeyError.\n"
NOISE_FILES = {
    "CHANGES.rst": "Changes\n=======\n\n" + "".join(f"1.{i}\n---\n\n- {NOISE}\n" for i in range(30)),
    "shop/locale/fr/LC_MESSAGES/shop.po": "".join(
        f'msgid "{NOISE.strip()} {i}"\nmsgstr "Le prix total {i}"\n\n' for i in range(30)),
    ".github/ISSUE_TEMPLATE/bug_report.md": "## Bug\n\nThe total price of an order is wrong. KeyError.\n",
}  # fmt: skip


@pytest.mark.parametrize(
    ("code", "report", "anchor", "clean"),
    [
        ({"shop/orders.py": textwrap.dedent(ORDERS),
          "shop/cart.py": "def cart_total(items):\n    return sum(i.price * i.qty for i in items)\n"},
         REPORT, "shop/orders.py::Order.total", 2),
        # another runtime's format, a method's `!`; the other code file says less than the noise
        ({"lib/shop/order.rb": textwrap.dedent(RUBY_ORDERS),
          "lib/shop/cart.rb": "module Shop\n  def self.cart_total(items)\n    items.sum(&:price)\n  end\nend\n"},
         RUBY_REPORT, "lib/shop/order.rb::Shop.Order.total!", 1),
        # rich's panel (Typer's, Textual's crashes): read as the frames it prints (its source lines
        # cut at the panel's width, the other code file says less than the noise)
        ({"shop/orders.py": textwrap.dedent(ORDERS),
          "shop/cart.py": "def cart_total(items):\n    return sum(i.price * i.qty for i in items)\n"},
         RICH_REPORT, "shop/orders.py::Order.total", 1),
    ],
)  # fmt: skip
def test_a_traceback_report_finds_the_frame_over_changelog_and_translations(
    make_repo: Callable[[dict[str, str]], Path], code: dict[str, str], report: str, anchor: str, clean: int
) -> None:
    repo = make_repo({**code, **NOISE_FILES})
    build(repo, model="none")
    ans = run_query(report, Where.of(None, None, repo), k=5)
    first = ans.results[0]
    assert first.anchor == anchor, [r.anchor for r in ans.results]
    assert first.hit.explain["evidence"] == 1.0
    files = list(dict.fromkeys(r.view.path for r in ans.results))
    assert files[0] == anchor.split("::")[0]
    assert not {"CHANGES.rst", "shop/locale/fr/LC_MESSAGES/shop.po"} & set(files[:clean])


SESSION = '''\
    """The interactive session: a REPL with the shop's names imported."""

    BANNER = """Python 3.12.1 (main, Dec  8 2023, 05:40:51) [GCC 11.4.0] on linux
    Type "help", "copyright", "credits" or "license" for more information.
    IPython 8.20.0 -- An enhanced Interactive Python. Type '?' for help.
    """


    def show_versions():
        """Print the versions of python, numpy, scipy, pandas, setuptools, pip and the machine."""
        for name in ("python", "numpy", "scipy", "pandas", "setuptools", "pip", "machine"):
            print(name)


    def start_session(banner=BANNER):
        """Start an IPython session with the banner and the help and copyright notices."""
        import code
        code.interact(banner)
    '''

SESSION_REPORT = """Order describe drops names with a separator

```
Python 3.12.1 (main, Dec  8 2023, 05:40:51) [GCC 11.4.0] on linux
Type "help", "copyright", "credits" or "license" for more information.
IPython 8.20.0 -- An enhanced Interactive Python. Type '?' for help.

In [1]: Order([{"name": "a;b"}]).describe()
Out[1]: 'a'
```

The names of an order are joined wrongly when a name holds the separator.

### Versions

System:
    python: 3.12.1 (main, Dec  8 2023, 05:40:51) [GCC 11.4.0]
   machine: Linux-6.5.0-x86_64-with-glibc2.35
Python dependencies:
         pip: 23.3.1
  setuptools: 69.0.3
       numpy: 1.26.2
       scipy: 1.11.4
      pandas: 2.1.4
"""


def test_banners_and_version_listings_are_not_read_as_the_question() -> None:
    text = without_noise(SESSION_REPORT)
    assert "Order([{" in text and "joined wrongly" in text  # the code and the words stay
    for gone in ("copyright", "Interactive Python", "GCC", "numpy", "setuptools", "machine", "Versions"):
        assert gone not in text
    assert without_noise("python: 3.12.1") == "python: 3.12.1"  # one line: a query as typed
    assert without_noise("numpy: 1.26\nscipy: 1.11") == "numpy: 1.26\nscipy: 1.11"  # all noise: kept


def test_a_pasted_session_and_versions_do_not_rank_the_projects_repl_first(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    repo = make_repo({"shop/orders.py": textwrap.dedent(ORDERS), "shop/session.py": textwrap.dedent(SESSION)})
    build(repo, model="none")
    ans = run_query(SESSION_REPORT, Where.of(None, None, repo), k=3)
    assert ans.results[0].anchor == "shop/orders.py::Order.describe", [r.anchor for r in ans.results]


TEST_ORDERS = """\
    from shop.orders import Order


    def test_describe():
        order = Order([{"name": "a"}, {"name": "b"}])
        assert order.describe() == "a, b"


    def test_describe_semicolon():
        order = Order([{"name": "a;b"}, {"name": "c"}])
        assert order.describe() == "a;b, c"
    """


def test_a_report_that_mentions_tests_in_passing_still_asks_for_the_code(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A question naming tests asks for them; a report mentions them in passing ("my tests")."""
    repo = make_repo(
        {"shop/orders.py": textwrap.dedent(ORDERS), "tests/test_orders.py": textwrap.dedent(TEST_ORDERS)}
    )
    build(repo, model="none")
    report = (
        "Order describe drops names that hold the separator\n\n"
        "In my tests an order whose names hold the separator is described wrongly:\n\n"
        '    order = Order([{"name": "a;b"}, {"name": "c"}])\n    order.describe()\n\n'
        "The test expects the names of the order joined with a comma, and describe should join them. "
        "I wrote a test for it in my project's test suite and it fails every time the test runs."
    )
    where = Where.of(None, None, repo)
    assert run_query(report, where, k=3).results[0].view.path == "shop/orders.py"
    question = run_query("the tests of describe with a semicolon", where, k=3)
    assert question.results[0].view.path == "tests/test_orders.py"


def test_a_report_leans_on_its_words_more_than_a_question() -> None:
    """A report (over ASKING words) is read mostly by its words: its vector, an average of many
    passages, weighs 0.3 against a question's 0.5 (bench/RESULTS.md: localization with the model)."""
    from cora_ci.retrieval.fusion import Fusion, fuse
    from cora_ci.retrieval.query import ASKING, analyse

    question = analyse("why does the order total fail when a line has no quantity")
    report = analyse(REPORT)
    assert not question.report and report.report and len(REPORT.split()) > ASKING
    lexical, vector = [(1, 10.0), (2, 5.0)], [(2, 0.9), (1, 0.1)]
    asked = fuse(lexical, vector, Fusion(), False, question.report)
    told = fuse(lexical, vector, Fusion(), False, report.report)
    assert asked[1].score == pytest.approx(0.5) and asked[2].score == pytest.approx(0.5)
    assert told[1].score == pytest.approx(0.7) and told[2].score == pytest.approx(0.3)


@pytest.mark.parametrize(
    ("report", "quoted"),
    [
        ("ValueError: could not convert the given string to a float\n", ["could not convert the given string to a float"]),
        ("accounts.User: (models.W042) Auto-created primary key used when not defining a type.\n"
         "\tHINT: Configure the DEFAULT_AUTO_FIELD setting or the attribute.\n",
         ["Auto-created primary key used when not defining a type.",
          "Configure the DEFAULT_AUTO_FIELD setting or the attribute."]),
        ("> WARNING: the cache directory is not writable, using a temporary one\n",
         ["the cache directory is not writable, using a temporary one"]),
        ("panic: assignment to entry in nil map of the router\n", ["assignment to entry in nil map of the router"]),
        ("thread 'main' panicked at 'called unwrap on an empty cart of the shop', src/cart.rs:12:9\n",
         ["called unwrap on an empty cart of the shop"]),
        ("thread 'main' panicked at src/cart.rs:12:9:\nthe cart of the shop is empty now\nnote: run with\n",
         ["the cart of the shop is empty now"]),
        ('Exception in thread "main" java.lang.IllegalStateException: the cart of the shop is empty\n',
         ["the cart of the shop is empty"]),
        ("KeyError: 'qty'\n", []),  # too short to be written whole in the code
        ("com.google.gson.JsonSyntaxException: duplicate key: 1\n", ["duplicate key: 1"]),  # a level's: 2 words
        ("/app/m.py:44: PydanticDeprecatedSince20: Pydantic V1 style validators are deprecated now.\n",
         ["Pydantic V1 style validators are deprecated now."]),  # a project's own category
        ("ValidationError: 1 validation error for Model\nip\n  value is not a valid IPv4 or IPv6 address "
         "[type=ip_any_address, input_value='a', input_type=str]\n", ["value is not a valid IPv4 or IPv6 address"]),
        ("ValueError:\nthe next line of the report says something else\n", []),  # no message: not the next line
        ("Error: x\nError: a b c d e\nError: a b c d e\nE1: f g h i j\n", ["a b c d e"]),  # once each
        ("".join(f"TypeError: message number {n} of the many\n" for n in "abcde"),  # the first three
         [f"message number {n} of the many" for n in "abc"]),
        ('the page says "Enter a list of values, please." and `Select a valid choice now` or '
         "\u201cthat one is not one of them\u201d\n", ["Enter a list of values, please.", "Select a valid choice now",
                                                     "that one is not one of them"]),  # quoted, no level
        ("it doesn't work for the given string, isn't it? 'a b c d e' `f(x)` \"C:\\a b\\c d e f\"\n",
         ["a b c d e"]),  # not an apostrophe's span, not code too short, not a path
        ('ValueError: the cart of the shop is empty\nas it says, "the cart of the shop is empty"\n',
         ["the cart of the shop is empty"]),  # once
        ("Invalid color code: z", ["Invalid color code: z"]),  # pasted alone (nvm): a value, a colon
        ('key "email" not found', ['key "email" not found']),
        ("Part exceeded maximum size of 0KB.", ["Part exceeded maximum size of 0KB."]),
        ("Return the default value for this parameter.", []),  # a sentence about code: no value
        ("where is the color code: z printed?", []),  # a question
        ("_resolve_lazy_default", []),  # a name, its parts no words apart
        ("parse_color: z", []),  # two words
        ("Error::io_error", []),  # a Rust name, no level and its message (ripgrep's definitions)
        ("$ rg -S x\nrg: error parsing flag --max-filesize: invalid format for size '10k'\n",
         ["error parsing flag --max-filesize: invalid format for size '10k'"]),  # a command's own line
        ("fatal: not a git repository (or any of the parent directories)\n",
         ["not a git repository (or any of the parent directories)"]),
        ("Index: 4\nThe circuit is now open and is not allowing calls.\n   at Polly.Outcome`1.GetResultOrRethrow()\n",
         ["The circuit is now open and is not allowing calls."]),  # printed alone above its trace (Polly)
        ("Here is the stack trace of it:\n   at A.B.C()\n", []),  # a heading, not a message
        ("boom\n--- End of stack trace from previous location ---\n   at A.B.C()\n", []),
        ('  File "/home/me/.venv/lib/python3.11/site-packages/grid/layout.py", line 3, in widths\n'
         "ZeroDivisionError: division by zero\n", ["division by zero"]),  # a frame's quoted path: no message
        ("see `grid.layout.column_widths.share.ratio` for it\n", []),  # a quoted name, whatever its parts
        ("terminate called after throwing an instance of 'lib::detail::type_error'\n"
         "  what():  [lib.type_error.302] type must be string, but is number\n",
         ["[lib.type_error.302] type must be string, but is number"]),  # C++'s uncaught, libstdc++
        ("libc++abi: terminating due to uncaught exception of type lib::detail::type_error: "
         "type must be string, but is number\n", ["type must be string, but is number"]),  # libc++
    ],
)  # fmt: skip
def test_the_messages_a_report_quotes(report: str, quoted: list[str]) -> None:
    assert messages(report) == quoted


CHECKS = '''\
    """System checks of the shop's models."""


    def check_primary_keys(models, default):
        """Warn about models whose primary key is made for them."""
        for model in models:
            if model.auto_pk:
                yield Warning(
                    f"Auto-created primary key used when not defining a "
                    f"primary key type, by default {default!r}.",
                    id="models.W042",
                )


    def check_ordering(models):
        """Warn about models ordered by a field they do not have: key type and primary order."""
        for model in models:
            if model.ordering and model.ordering not in model.fields:
                yield Warning("ordering refers to a field the model does not have", id="models.E015")
    '''

MESSAGE_REPORT = """Warning raised on a model that inherits its primary key

After upgrading, every model that inherits from another one gets this at startup:

accounts.User: (models.W042) Auto-created primary key used when not defining a primary key type, by default 'shop.AutoField'.

The key is inherited, so the warning should not be raised.
"""


def test_a_report_that_quotes_a_warning_finds_the_code_that_emits_it(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """No traceback: the warning's words, in a row as the code writes them (its value aside), are
    the clue; the model's docstring says more of the report's words, in no order."""
    repo = make_repo({
        "shop/checks.py": textwrap.dedent(CHECKS),
        "shop/models.py": "class Model:\n    \"\"\"A model: its primary key type, inherited or made. A warning is"
                          " raised at startup when the key is inherited.\"\"\"\n\n"
                          "    auto_pk = True\n    ordering = None\n    fields = ()\n",
    })  # fmt: skip
    build(repo, model="none")
    ans = run_query(MESSAGE_REPORT, Where.of(None, None, repo), k=3)
    assert ans.results[0].anchor == "shop/checks.py::check_primary_keys", [r.anchor for r in ans.results]
    assert ans.results[0].hit.explain["evidence"] == MESSAGE
    unquoted = MESSAGE_REPORT.replace("(models.W042) ", "")  # a line of the report, no longer a message
    other = run_query(unquoted, Where.of(None, None, repo), k=3)
    assert all(r.hit.explain["evidence"] is None for r in other.results)
    assert other.results[0].anchor == "shop/models.py::Model"  # its words alone lead elsewhere


def test_a_report_that_quotes_a_message_without_its_level_finds_the_code_that_emits_it(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A message put in quotes in a sentence ("the shop says “ordering refers to a field ...”") is
    the same clue as one a level introduces: its words in a row are in the code that writes it."""
    repo = make_repo({
        "shop/checks.py": textwrap.dedent(CHECKS),
        "shop/models.py": "class Model:\n    \"\"\"A model: ordered by a field it has; the primary key type is"
                          " inherited or made.\"\"\"\n\n    auto_pk = True\n    ordering = None\n    fields = ()\n",
    })  # fmt: skip
    build(repo, model="none")
    report = ("Wrong check when a model is ordered by an inherited field\n\nA model ordered by a field of its "
              'parent gets "ordering refers to a field the model does not have" at startup, but the field '
              "is there, inherited from the primary model.\n")  # fmt: skip
    ans = run_query(report, Where.of(None, None, repo), k=3)
    assert ans.results[0].anchor == "shop/checks.py::check_ordering", [r.anchor for r in ans.results]
    assert ans.results[0].hit.explain["evidence"] == MESSAGE


NAMED_REPORT = """sqlreport wraps its output in BEGIN/COMMIT even if the database does not support transactional DDL

The statements printed should only be wrapped in a transaction when the database can roll back
schema changes. Today the output always starts with BEGIN and ends with COMMIT, which breaks
scripts that feed it to a database without transactional DDL support, such as MySQL.
"""


def _named_repo(make_repo: Callable[[dict[str, str]], Path]) -> Path:
    repo = make_repo({
        "shop/commands/sqlreport.py": "class Command:\n    def handle(self, name):\n"
                                      "        statements = collect(name)\n        return emit(statements)\n",
        "shop/db/schema.py": textwrap.dedent('''\
            class Editor:
                """Runs schema changes; atomic when the database supports transactional DDL."""

                def execute(self, sql):
                    """Wrap the output statements in BEGIN and COMMIT for the database."""
                    return ["BEGIN", sql, "COMMIT"]
            '''),
        "shop/commands/sqlreport_test.py": "def test_sqlreport():\n    assert Command().handle('x')\n",
        "docs/sqlreport.md": "# sqlreport\n\nPrints the statements of a report.\n",
        **{f"shop/{d}/util.py": f"def helper_{d}():\n    return {d!r}\n" for d in ("a", "b", "c")},
    })  # fmt: skip
    build(repo, model="none")
    return repo


def test_a_report_whose_title_names_a_module_by_its_stem_points_at_it(
    make_repo: Callable[[dict[str, str]], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sqlreport` is the command's file (Django's "sqlmigrate wraps its output ..."): a mention of
    it lifts it, though its code says none of the report's words; its test and its page are not
    code and are not named (and a report's page ranks below the code anyway)."""
    repo = _named_repo(make_repo)
    ans = run_query(NAMED_REPORT, Where.of(None, None, repo), k=4)
    got = [r.anchor for r in ans.results]
    assert got.index("shop/commands/sqlreport.py::Command") < got.index("docs/sqlreport.md::sqlreport"), got
    told = {r.anchor: r.hit.explain["evidence"] for r in ans.results}
    assert told["shop/commands/sqlreport.py::Command"] == pytest.approx(
        MENTION
    )  # its chunk holding the title's words
    assert told["docs/sqlreport.md::sqlreport"] is None and told["shop/db/schema.py::Editor.execute"] is None
    # a word many chunks hold is the language's, not a name: nothing lifts the command then
    monkeypatch.setattr(evidence, "RARE", 1)
    common = {r.anchor: r.hit for r in run_query(NAMED_REPORT, Where.of(None, None, repo), k=10).results}
    lifted = {r.anchor: r.hit for r in ans.results}
    command = "shop/commands/sqlreport.py::Command"
    assert common[command].explain["evidence"] is None and common[command].score < lifted[command].score


_INSPECT_REPORT = """inspectdb should generate related_name on same relation links

After generating models we get clashes between reverse accessors of fields that point to the same
model. Maybe the generated fields could all be given an attribute name so that accessors differ.
"""


def test_a_file_a_report_s_title_names_is_a_candidate_at_its_chunk_holding_the_title_s_words(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """Django's "inspectdb should generate related_name ...": the command's file was named, but
    none of its chunks was among BM25's candidates (the report's words are the model checks'),
    so its mention lifted nothing. The chunk holding most of the title's words stands for it."""
    from cora_ci.bundle import open_bundle
    from cora_ci.retrieval.catalog import catalog

    repo = make_repo({
        ".cora.toml": "min_tokens = 0\n",
        "shop/commands/inspectdb.py": textwrap.dedent('''\
            class Command:
                def handle(self, **options):
                    for line in self.handle_inspection(options):
                        self.stdout.write(line)

                def relations(self, table):
                    extra = {}
                    if table in self.seen:
                        extra["related_name"] = "%s_set" % table
                    return extra
            '''),
        "shop/models/checks.py": "def check_accessors(field):\n    \"\"\"Reverse accessors of fields"
                                 " to the same model must not clash.\"\"\"\n    return []\n",
    })  # fmt: skip
    build(repo, model="none")
    b = open_bundle(repo / ".cora" / "index")
    cat = catalog(b)
    told = evidence.pointed(cat, _INSPECT_REPORT, _INSPECT_REPORT.splitlines()[0])
    at = {cat.meta(cid).symbols[0]: w for cid, w in told.at.items()}  # type: ignore[union-attr]
    assert at == {"relations": pytest.approx(MENTION)}


def test_the_innermost_frame_is_not_ranked_below_an_outer_one(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """Trials in Scala, Dart and TypeScript: an outer frame's code calls the inner function by
    name and says more of the report's words, and ranked above the innermost frame's, the
    strongest single clue (here the title names the outer one, the function the user called).
    Chunks named by clues keep their clues' order; others may come between."""
    repo = make_repo({
        ".cora.toml": "min_tokens = 0\n",
        "shop/cart.py": "def cart_total(cart):\n    \"\"\"The cart's total: each item's price.\"\"\"\n"
                        "    return sum(item_price(item) for item in cart.items)\n\n\n"
                        "def item_price(item):\n    return item['amount'] * item['qty']\n\n\n"
                        "def unpriced(cart):\n    \"\"\"The items of a cart without a price, which crash it.\"\"\"\n"
                        "    return [item for item in cart.items if 'amount' not in item]\n",
        "shop/orders.py": "def checkout(cart):\n    return cart_total(cart)\n",
    })  # fmt: skip
    build(repo, model="none")
    report = textwrap.dedent("""\
        cart_total() crashes for a cart of items without a price

        Traceback (most recent call last):
          File "/app/shop/orders.py", line 2, in checkout
            return cart_total(cart)
          File "/app/shop/cart.py", line 3, in cart_total
            return sum(item_price(item) for item in cart.items)
          File "/app/shop/cart.py", line 7, in item_price
            return item['amount'] * item['qty']
        KeyError: 'amount'
        """)
    ans = run_query(report, Where.of(None, None, repo), k=4)
    told = [(r.anchor, r.hit.explain["evidence"]) for r in ans.results]
    assert [t for t in told if t[1] != 0.3] == [
        ("shop/cart.py::item_price", 1.0),
        ("shop/cart.py::cart_total", FRAME_DECAY),
        ("shop/orders.py::checkout", FRAME_DECAY**2),
    ]
    assert told.index(("shop/cart.py::unpriced", 0.3)) > 1  # below the frames of its file; another
    # file's frame and it are not compared (a file's clue and a frame's are of no one scale)
    # a chunk of a frame's file, its file's clue (0.3) only, that says the report's words better
    report = "Items of a cart without a price crash it\n\n" + (
        'Traceback (most recent call last):\n  File "/app/shop/cart.py", line 7, in item_price\nKeyError: x\n'
    )
    told = [
        (r.anchor, r.hit.explain["evidence"])
        for r in run_query(report, Where.of(None, None, repo), k=2).results
    ]
    assert told == [("shop/cart.py::item_price", 1.0), ("shop/cart.py::unpriced", 0.3)], told


def test_a_frame_is_not_put_below_another_files_chunks_its_file_clue_lifts(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """sympy's `is_upper() raises IndexError for tall matrices`: the function the title names is an
    outer frame (a weak frame clue), the innermost frames are in another file, whose other chunks
    have the file's clue (0.3): comparing the two weights put every such chunk above the named
    function. A frame's chunk only outranks its own file's file-clue chunks and weaker frames."""
    index = "".join(
        f"def helper_{n}(i, j):\n    return [a2idx(k, j) for k in range(i)]\n\n\n" for n in range(6)
    )
    repo = make_repo({
        ".cora.toml": "min_tokens = 0\n",
        "shop/matrix.py": "def is_upper(m):\n    return all(m[i, j] == 0 for i in range(1, m.rows) for j in range(i))\n\n\n"
                          "def getitem(m, i, j):\n    return extract(m, i, j)\n",
        "shop/index.py": index + "def extract(m, i, j):\n    return [a2idx(k, m.cols) for k in j]\n\n\n"
                         "def a2idx(j, n):\n    if j >= n:\n        raise IndexError('Index out of range')\n    return j\n",
    })  # fmt: skip
    build(repo, model="none")
    report = textwrap.dedent("""\
        is_upper() raises IndexError for tall matrices

        Traceback (most recent call last):
          File "shop/matrix.py", line 2, in is_upper
          File "shop/matrix.py", line 6, in getitem
          File "shop/index.py", line 26, in extract
          File "shop/index.py", line 31, in a2idx
        IndexError: Index out of range
        """)
    got = [r.anchor for r in run_query(report, Where.of(None, None, repo), k=10).results]
    assert got.index("shop/matrix.py::is_upper") < min(
        got.index(f"shop/index.py::helper_{n}") for n in range(6)
    ), got


def test_frames_of_a_compiled_package_point_at_its_typescript_sources(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A hono trial: users paste the frames of what a package ships
    (`node_modules/hono/dist/cjs/utils/cookie.js`), and no `.js` frame matched the `.ts` source,
    so the frames were no evidence. Their lines are the compiled file's: the frame's function is
    found by its name, and a frame without one points at its file."""
    serialize = "export const _serialize = (name: string, value: string): string => {\n" + (
        "  if (!/^[\\w!#$%&'*.^`|~+-]+$/.test(name)) {\n    throw new Error('Invalid cookie name')\n  }\n"
        "  return `${name}=${value}`\n}\n"
    )
    repo = make_repo({
        ".cora.toml": "min_tokens = 0\n",
        "src/utils/cookie.ts": "export const parse = (cookie: string) => cookie.split(';')\n\n" + serialize,
        "src/helper/cookie/index.ts": "import { _serialize } from '../../utils/cookie'\n\n"
                                      "export const setCookie = (c: Context, name: string, value: string) => {\n"
                                      "  c.header('Set-Cookie', _serialize(name, value))\n}\n",
        "src/middleware/cors/index.ts": "export const cors = (options: Options) => {\n  return async (c, next) => {\n"
                                        "    c.header('Access-Control-Allow-Methods', options.allowMethods.join(','))\n"
                                        "    await next()\n  }\n}\n",
    })  # fmt: skip
    build(repo, model="none")
    where = Where.of(None, None, repo)
    report = ("Error: cookies do not work\n"
              "    at _serialize (/app/node_modules/hono/dist/cjs/utils/cookie.js:88:11)\n"
              "    at setCookie (/app/node_modules/hono/dist/cjs/helper/cookie/index.js:41:20)\n"
              "    at /app/src/index.js:12:5\n")  # fmt: skip
    ans = run_query(report, where, k=3)
    assert [(r.anchor, r.hit.explain["evidence"]) for r in ans.results[:2]] == [
        ("src/utils/cookie.ts::_serialize", 1.0),
        ("src/helper/cookie/index.ts::setCookie", FRAME_DECAY),
    ]
    report = ("TypeError: Cannot read properties of undefined (reading 'join')\n"
              "    at file:///app/node_modules/hono/dist/middleware/cors/index.js:41:75\n")  # fmt: skip
    ans = run_query(report, where, k=3)
    assert ans.results[0].anchor == "src/middleware/cors/index.ts::cors", [r.anchor for r in ans.results]
    # a type error in what it ships: tsc's `path(line,col)` in a declaration file is its source's
    report = ("Type error with the cookie helper after upgrading\n\n"
              "node_modules/hono/dist/types/helper/cookie/index.d.ts(3,5): error TS2344: Type 'Context' "
              "does not satisfy the constraint 'Env'.\n")  # fmt: skip
    ans = run_query(report, where, k=3)
    assert ans.results[0].view.path == "src/helper/cookie/index.ts", [r.anchor for r in ans.results]
    assert ans.results[0].hit.explain["evidence"], ans.results[0].hit.explain


def test_a_compiled_packages_frame_is_its_one_source_of_that_name_wherever_it_built_to(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A zod trial: zod 3 shipped `lib/ZodError.js`, built from `src/v3/ZodError.ts`; no
    directory in common, and the name alone was not trusted (the flask trial's rule for a report's
    own files), so the frames were no evidence. A file under `node_modules` is a package's build."""
    repo = make_repo({
        ".cora.toml": "min_tokens = 0\n",
        "packages/zod/src/v3/ZodError.ts": "export class ZodError extends Error {\n"
                                           "  constructor(public issues: Issue[]) {\n    super()\n  }\n}\n",
        "packages/zod/src/v3/types.ts": "export function handleArgs(args: unknown[]) {\n  return args\n}\n",
        "packages/zod/src/v4/types.ts": "export type Issue = { code: string }\n",
    })  # fmt: skip
    build(repo, model="none")
    report = (
        "Error: [ invalid arguments ]\n"
        "    at new ZodError (/Users/me/app/node_modules/zod/lib/ZodError.js:75:28)\n"
        "    at handleArgs (/Users/me/app/node_modules/zod/lib/types.js:1786:23)\n"
    )
    told = [
        (r.anchor, r.hit.explain["evidence"])
        for r in run_query(report, Where.of(None, None, repo), k=3).results
    ]
    assert told[0] == ("packages/zod/src/v3/ZodError.ts::ZodError", 1.0), told
    # `types.ts` is two files: the frame does not say which
    assert all(e in (None, 1.0, 0.3) for _, e in told), told
    mine = "    at new ZodError (/Users/me/app/lib/ZodError.js:75:28)\n"  # the user's own build: not the package's
    assert all(r.hit.explain["evidence"] is None for r in run_query(
        "Error: boom\n" + mine, Where.of(None, None, repo), k=3).results)  # fmt: skip


def test_what_a_title_names(make_repo: Callable[[dict[str, str]], Path]) -> None:
    from cora_ci.bundle import open_bundle
    from cora_ci.retrieval.catalog import catalog

    repo = _named_repo(make_repo)
    cat = catalog(open_bundle(repo / ".cora" / "index"))
    paths = Paths(cat)
    assert evidence.named(cat, "sqlreport breaks", paths) == {"shop/commands/sqlreport.py": MENTION}
    assert evidence.named(cat, "A crash in sqlreport.", paths) == {"shop/commands/sqlreport.py": MENTION}
    assert evidence.named(cat, "sqlreport and the schema", paths) == {
        "shop/commands/sqlreport.py": MENTION, "shop/db/schema.py": MENTION,
    }  # fmt: skip
    assert evidence.named(cat, "util breaks", paths) == {}  # three files of that name: which?
    # a dotted name or a call is read elsewhere; a name no code file has, or a common word, no file
    for title in ("shop.sqlreport fails", "sqlreport() fails", "Editor fails", "with the", "sqlreport_test"):
        assert evidence.named(cat, title, paths) == {}, title


@pytest.mark.parametrize(
    ("report", "named"),
    [
        ("Error E108 does not cover some cases", [("E108", "E108")]),
        ("?: (templates.E003) 'x' is used for multiple template tag modules", [("templates.E003", "E003")]),
        ("TS2322 on a union, rustc's E0502, CS0246 and pylint's C0301", [("TS2322", "TS2322"), ("E0502", "E0502"),
                                                                           ("CS0246", "CS0246"), ("C0301", "C0301")]),
        # not a code: a version, an encoding's name, an error's id in a path, a word, a hyphenated id
        ("UTF-8 in PEP 8, see x.E108y, a/E108b, E10, CORA-BND-004", []),
    ],
)  # fmt: skip
def test_the_diagnostic_codes_a_report_names(report: str, named: list[tuple[str, str]]) -> None:
    assert quoted.codes(report) == named


ADMIN_CHECKS = """\
    def check_list_display_item(obj, item, label):
        if not hasattr(obj.model, item):
            return [Error(f"The value of '{label}' refers to '{item}'.", obj=obj, id="admin.E108")]
        return []
    """

CODE_REPORT = """Error E108 does not cover some cases

I have two models, Question and Choice, and if I write list_display = ["choice"] in QuestionAdmin,
I get no errors. But when I visit the admin page of questions the list of questions crashes: the
field lookup of the choice fails and the page cannot be shown. The check should have said so at
startup, it only catches a field the model does not have.
"""


def test_a_report_that_names_a_check_code_finds_the_check(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """`E108` is written where the check is (`id="admin.E108"`); the page code says more of the
    report's words. A code written in another namespace (`fields.E108`) is another check."""
    repo = make_repo({
        "admin/checks.py": textwrap.dedent(ADMIN_CHECKS),
        "admin/views.py": "def question_list(request, model):\n"
                          '    """The admin page of the list of questions: the field lookup of each choice."""\n'
                          "    return [lookup_field(choice, model) for choice in model.fields]\n",
        "admin/urls.py": "def urls(site):\n    return [site.path(name) for name in site.names]\n",
    })  # fmt: skip
    build(repo, model="none")
    ans = run_query(CODE_REPORT, Where.of(None, None, repo), k=2)
    assert ans.results[0].anchor == "admin/checks.py::check_list_display_item", [
        r.anchor for r in ans.results
    ]
    assert ans.results[0].hit.explain["evidence"] == MESSAGE
    plain = run_query(CODE_REPORT.replace("E108", "issue"), Where.of(None, None, repo), k=2).results
    assert plain[0].anchor == "admin/views.py::question_list", [r.anchor for r in plain]
    other = run_query(CODE_REPORT.replace("E108", "fields.E108"), Where.of(None, None, repo), k=3).results
    assert all(r.hit.explain["evidence"] is None for r in plain + other)


@pytest.mark.parametrize(
    ("report", "named"),
    [
        ("TypeError: RST.__init__() got an unexpected keyword argument 'header_rows'",
         [(("RST", "__init__"), quoted.CALLED)]),
        ("TypeError: parse() missing 1 required positional argument: 'text'", [(("parse",), quoted.CALLED)]),
        ("TypeError: Reader.read() takes 2 positional arguments but 3 were given",
         [(("Reader", "read"), quoted.CALLED)]),
        ("AttributeError: 'Line3D' object has no attribute '_verts3d'", [(("Line3D",), MESSAGE)]),
        # a bare dunder names no function; a call's parentheses in code are not a message
        ("TypeError: __init__() got an unexpected keyword argument 'x'\nx = f() + g()", []),
    ],
)  # fmt: skip
def test_what_pythons_messages_blame(report: str, named: list[tuple[tuple[str, ...], float]]) -> None:
    assert quoted.blamed(report) == named


FORMATS = {
    "tables/fixed.py": '''\
        class FixedWidth:
            """Tables of fixed-width columns, with header rows of names and units."""

            def __init__(self, delimiter=" ", header_rows=None):
                self.delimiter = delimiter
                self.header_rows = header_rows or ["name"]

            def write(self, lines):
                return [self.delimiter.join(line) for line in lines]
        ''',
    "tables/rst.py": """\
        from tables.fixed import FixedWidth


        class RST(FixedWidth):
            def __init__(self):
                super().__init__(delimiter=" ")

            def write(self, lines):
                rule = "=" * 10
                return [rule, *super().write(lines), rule]
        """,
    "tables/ui.py": '''\
        def get_writer(writer_class, **kwargs):
            """The table writer of a format, made with the keyword arguments given for it: header
            rows, delimiter, output."""
            return writer_class(**kwargs)


        def write(table, fmt, **kwargs):
            """Write a table in a format, with keyword arguments such as header rows."""
            return get_writer(fmt, **kwargs).write(table)
        ''',
}

BLAME_REPORT = """Please support header rows in RestructuredText output

Writing a table with header rows works for the fixed-width format but not for RestructuredText:

>>> write(tbl, "rst", header_rows=["name", "unit"])
Traceback (most recent call last):
  File "/usr/lib/python3/dist-packages/tables/ui.py", line 9, in write
    return get_writer(fmt, **kwargs).write(table)
  File "/usr/lib/python3/dist-packages/tables/ui.py", line 4, in get_writer
    return writer_class(**kwargs)
TypeError: RST.__init__() got an unexpected keyword argument 'header_rows'

Header rows in the output would make the tables of our documentation much easier to keep.
"""


def test_a_report_whose_error_names_a_method_finds_it(make_repo: Callable[[dict[str, str]], Path]) -> None:
    """Python's message names the method that lacks the argument (`RST.__init__`), where the fix
    goes: it joins the frames (the functions that called it, the innermost first) at the top,
    above the fixed-width class that the report's words match."""
    repo = make_repo({p: textwrap.dedent(t) for p, t in FORMATS.items()})
    build(repo, model="none")
    ans = run_query(BLAME_REPORT, Where.of(None, None, repo), k=3)
    told = [(r.anchor, r.hit.explain["evidence"]) for r in ans.results]
    # the call never ran: the function it names is innermost, its caller's frame one further out
    assert told[:2] == [
        ("tables/rst.py::RST.__init__", quoted.CALLED),
        ("tables/ui.py::get_writer", FRAME_DECAY),
    ]
    plain = run_query(BLAME_REPORT.replace("RST.__init__()", "the writer"), Where.of(None, None, repo), k=3)
    assert "tables/rst.py::RST.__init__" not in [r.anchor for r in plain.results[:3]], [
        r.anchor for r in plain.results
    ]


def test_a_message_written_in_several_places_finds_them_all(
    make_repo: Callable[[dict[str, str]], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A starlette trial: "Routed paths must start with '/'" is asserted by three routes; BM25's
    best for its words were tests saying "start" and "paths", so one was found. Every chunk that
    holds the message's rarest word is read when few do (here BM25 is given room for one)."""
    import cora_ci.retrieval.emitted as emitted

    routes = "".join(
        f"class {name}:\n    def __init__(self, path):\n"
        f"        assert path.startswith('/'), \"Routed paths must start with '/'\"\n        self.path = path\n\n\n"
        for name in ("Route", "Mount", "WebSocketRoute")
    )
    repo = make_repo({".cora.toml": "min_tokens = 0\n", "shop/routing.py": routes,
                      "tests/test_paths.py": "def test_paths_start():\n    assert start_paths('/') == paths\n"})  # fmt: skip
    build(repo, model="none")
    monkeypatch.setattr(emitted, "_SEARCHED", 1)
    ans = run_query("AssertionError: Routed paths must start with '/'", Where.of(None, None, repo), k=3)
    got = {r.anchor: r.hit.explain["evidence"] for r in ans.results}
    assert got == dict.fromkeys([f"shop/routing.py::{n}.__init__" for n in ("Route", "Mount", "WebSocketRoute")],
                                MESSAGE), got  # fmt: skip


def test_a_message_its_tests_and_documentation_quote_whole_finds_the_code_that_writes_it(
    make_repo: Callable[[dict[str, str]], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An nlohmann/json trial: C++'s uncaught `type_error` ("type must be string, but is number")
    was no clue (libstdc++'s `what():` line was not read as a message), then BM25's best for its
    words were the documentation's, which says each of them more often, and the tests', which
    quote it whole: the code holding every word of one of its runs is read too, and the one that
    writes the longest run of it has the whole clue whatever its tests and documentation quote.
    (In json's 9,000 chunks its words' holders were too many to read: here BM25 is given room for
    one and the holders of its rarest words are not read.)"""
    import cora_ci.retrieval.emitted as emitted

    throw = '    JSON_THROW(type_error::create(302, concat("type must be string, but is ", j.type_name()), &j));\n'
    docs = "# Exceptions\n\n" + "".join(
        f"### json.exception.type_error.{n}\n\nDuring implicit or explicit value conversion, the JSON type must"
        f" be compatible to the target type. For instance, a JSON string can only be converted into string"
        f" types, but not into numbers or boolean types.\n\n```\n[json.exception.type_error.{n}] type must be"
        f" object, but is null\n[json.exception.type_error.{n}] type must be string, but is object\n```\n\n"
        for n in range(301, 313)
    )
    tests = "".join(
        f'TEST_CASE("conversion {n}")\n{{\n    CHECK_THROWS_WITH(j.get<std::string>(), '
        f'"[json.exception.type_error.302] type must be string, but is number");\n}}\n\n'
        for n in range(12)
    )
    repo = make_repo({
        ".cora.toml": "min_tokens = 0\n",
        "include/lib/from_json.hpp": "namespace lib {\ntemplate<typename BasicJsonType>\n"
                                     "void from_json(const BasicJsonType& j, std::string& s)\n{\n"
                                     "  if (!j.is_string())\n  {\n" + throw + "  }\n  s = *j.get_ptr();\n}\n}\n",
        "docs/exceptions.md": docs,
        "tests/src/unit-conversions.cpp": tests,
    })  # fmt: skip
    build(repo, model="none")
    monkeypatch.setattr(emitted, "_SEARCHED", 1)
    monkeypatch.setattr(emitted, "_RAREST", 0)
    report = ("Crash reading a number\n\nterminate called after throwing an instance of "
              "'lib::json_abi_v3_11_2::detail::type_error'\n"
              "  what():  [json.exception.type_error.302] type must be string, but is number\n")  # fmt: skip
    ans = run_query(report, Where.of(None, None, repo), k=3)
    assert ans.results[0].anchor == "include/lib/from_json.hpp::lib.from_json", [
        r.anchor for r in ans.results
    ]
    assert ans.results[0].hit.explain["evidence"] == MESSAGE


def test_a_short_message_finds_the_literal_it_begins_with(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """gson's trial: `JsonSyntaxException: duplicate key: 1` is thrown by `"duplicate key: " + key`;
    a message shorter than a run is the code's string literal it begins with, up to the
    literal's first placeholder (`{`, `%s`), of two words or more and half the message."""
    repo = make_repo({
        ".cora.toml": "min_tokens = 0\n",
        "shop/maps.py": "def read(pairs):\n    out = {}\n    for key, value in pairs:\n        if key in out:\n"
                        "            raise KeyError('duplicate key: ' + str(key))\n        out[key] = value\n    return out\n",
        "shop/names.py": "def close(stack):\n    if stack.name:\n        raise ValueError(f'Dangling name: {stack.name}')\n",
        "shop/other.py": "def keys(d):\n    # a duplicate key is dropped; names are kept\n    return list(d)\n",
    })  # fmt: skip
    build(repo, model="none")
    where = Where.of(None, None, repo)
    for report, emitter in [("JsonSyntaxException: duplicate key: 1", "shop/maps.py::read"),
                            ("java.lang.IllegalStateException: Dangling name: id", "shop/names.py::close")]:  # fmt: skip
        told = {r.anchor: r.hit.explain["evidence"] for r in run_query(report, where, k=3).results}
        assert told.get(emitter) == MESSAGE and told.get("shop/other.py::keys") is None, (report, told)


def test_a_message_is_found_by_the_literal_that_writes_it_with_its_values(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A cobra trial: `Error: unknown command "version" for "app"` is printed by
    `fmt.Errorf("unknown command %q for %q", ...)`, whose words in a row are never the message's
    (the values stand between them); the word `version` ranked a `Version` field first and the
    emitter was not in the top 30. A literal's constant words said in its order, its values
    aside, find it (`%q`, `%d`, `{}`, `${x}`), and literals joined around a value (an aeson trial:
    `"key " ++ show key ++ " not found"`)."""
    repo = make_repo({
        ".cora.toml": "min_tokens = 0\n",
        "args.go": "package cobra\n\nfunc NoArgs(cmd *Command, args []string) error {\n\tif len(args) > 0 {\n"
                   "\t\treturn fmt.Errorf(\"unknown command %q for %q\", args[0], cmd.CommandPath())\n\t}\n"
                   "\treturn nil\n}\n\nfunc MinimumNArgs(n int) PositionalArgs {\n"
                   "\treturn func(cmd *Command, args []string) error {\n\t\tif len(args) < n {\n"
                   "\t\t\treturn fmt.Errorf(\"requires at least %d arg(s), only received %d\", n, len(args))\n"
                   "\t\t}\n\t\treturn nil\n\t}\n}\n",
        "command.go": "package cobra\n\n// Command is a command; Version is printed by the version command for the app.\n"
                      "type Command struct {\n\tUse string\n\tVersion string\n}\n",
        "web/app.ts": "export function route(name: string) {\n  throw new Error(`no route named ${name} in this app`)\n}\n",
        "src/Field.hs": "module Field where\n\nexplicitParseField :: Object -> Key -> Parser a\n"
                        "explicitParseField obj key = case lookup key obj of\n"
                        "    Nothing -> fail $ \"key \" ++ show key ++ \" not found\"\n    Just v -> parse v\n",
    })  # fmt: skip
    build(repo, model="none")
    where = Where.of(None, None, repo)
    for report, emitter in [('Error: unknown command "version" for "app"', "args.go::NoArgs"),
                            ("Error: requires at least 2 arg(s), only received 1", "args.go::MinimumNArgs"),
                            ("Error: no route named home page in this app", "web/app.ts::route"),
                            ('Left "Error in $: key \\"email\\" not found"', "src/Field.hs::explicitParseField")]:  # fmt: skip
        told = {r.anchor: r.hit.explain["evidence"] for r in run_query(report, where, k=3).results}
        assert told.get(emitter) == MESSAGE and not told.get("command.go::Command"), (report, told)
    assert emitted._written(["for", "app", "unknown", "command", "x"], 'f("unknown command %q for %q")') == 0


def test_of_two_emitters_the_one_that_writes_more_of_the_message_has_the_whole_clue(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """pydantic's `@validator` and `@root_validator` warnings share "validators are deprecated. You
    should migrate ...": both had the same clue, and the report quoting the first was answered
    with the second."""
    tail = "validators are deprecated. You should migrate to the new style validators."
    repo = make_repo({
        ".cora.toml": "min_tokens = 0\n",
        "shop/checks.py": f"def validator():\n    warn('Old style `@validator` {tail}')\n\n\n"
                          f"def root_validator():\n    warn('Old style `@root_validator` {tail}')\n",
    })  # fmt: skip
    build(repo, model="none")
    report = f"UserWarning: Old style `@validator` {tail}\n"
    told = {
        r.anchor: r.hit.explain["evidence"]
        for r in run_query(report, Where.of(None, None, repo), k=2).results
    }
    assert told == {"shop/checks.py::validator": MESSAGE, "shop/checks.py::root_validator": MESSAGE / 2}, told


def test_the_class_a_message_is_raised_as_comes_after_the_code_that_raises_it(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """gson's `JsonSyntaxException: duplicate key: 1` answered the exception's class, its
    constructors and its file's header before the adapter that throws it; pydantic's
    `PydanticUserError: A non-annotated attribute was detected ...` its error class first. The
    class says what went wrong; it is lowered as tests are (`raised`)."""
    repo = make_repo({
        ".cora.toml": "min_tokens = 0\n",
        "shop/ShopSyntaxException.java": "package shop;\n\n/** Thrown when a shop's document is malformed. */\n"
            "public final class ShopSyntaxException extends RuntimeException {\n"
            "  public ShopSyntaxException(String msg) {\n    super(msg);\n  }\n}\n",
        "shop/MapAdapter.java": "package shop;\n\npublic final class MapAdapter {\n"
            "  public Object read(Reader in) {\n    Object key = in.next();\n    if (seen(key)) {\n"
            "      throw new ShopSyntaxException(\"duplicate key: \" + key);\n    }\n    return key;\n  }\n}\n",
    })  # fmt: skip
    build(repo, model="none")
    ans = run_query("shop.ShopSyntaxException: duplicate key: 1", Where.of(None, None, repo), k=3)
    got = [r.anchor for r in ans.results]
    assert got[0] == "shop/MapAdapter.java::MapAdapter.read", got
    lowered = {r.anchor: r.hit.explain["demoted"] for r in ans.results}
    assert lowered.get("shop/ShopSyntaxException.java::ShopSyntaxException") in (None, "raised"), lowered


def test_a_message_held_in_a_constant_points_at_the_code_that_uses_it(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """pydantic's `DEPRECATION_MESSAGE` is warned with in `prepare_config`: the constant is only
    the message's text, the function that warns with it is where a report points."""
    repo = make_repo({
        ".cora.toml": "min_tokens = 0\n",
        "shop/config.py": "import warnings\n\nDEPRECATION_MESSAGE = 'Support for class-based config is deprecated, "
                          "use ConfigDict instead.'\n\n\ndef prepare_config(config):\n    if isinstance(config, type):\n"
                          "        warnings.warn(DEPRECATION_MESSAGE, DeprecationWarning)\n    return config\n",
    })  # fmt: skip
    build(repo, model="none")
    report = "DeprecationWarning: Support for class-based config is deprecated, use ConfigDict instead.\n"
    told = {
        r.anchor: r.hit.explain["evidence"]
        for r in run_query(report, Where.of(None, None, repo), k=3).results
    }
    assert told.get("shop/config.py::prepare_config") == MESSAGE, told


def test_a_reports_private_helper_is_not_lowered_for_being_private(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """An httpx trial: a report about parsing a `Link` header whose URL holds a `;` found the public
    `Response.links` before the private `_parse_header_links` that splits it, lowered as private
    (a question's answer is an API; a bug report's fix is often a helper)."""
    models = (
        "def _parse_header_links(value):\n    links = []\n    for val in value.split(','):\n"
        "        url, _, params = val.partition(';')\n        links.append({'url': url.strip('<> '), 'params': params})\n"
        "    return links\n\n\nclass Response:\n    @property\n    def links(self):\n"
        '        """The header links."""\n'
        "        header = self.headers.get('link')\n        return {link['url']: link for link in _parse_header_links(header)}\n"
    )
    repo = make_repo({".cora.toml": "min_tokens = 0\n", "web/models.py": models})
    build(repo, model="none")
    report = (
        "Link header parsing breaks when the URL holds a semicolon\n\n"
        "We call a paginated API whose Link header carries URLs with a ';' inside the path, like "
        '<https://api.example.com/items;v=2?page=2>; rel="next". The links come back cut at the '
        "semicolon, so the next page URL is wrong and our pagination loop stops early. Splitting the "
        "header value on the first semicolon looks like the cause; the URL part should end at the closing "
        "angle bracket instead. This happens with every header value we tried that has such a URL."
    )
    ans = run_query(report, Where.of(None, None, repo), k=3).results
    got = [r.anchor for r in ans]
    assert got.index("web/models.py::_parse_header_links") < got.index("web/models.py::Response.links"), got


def test_a_reports_own_file_of_a_name_the_repository_has_once_is_not_its_frame(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A flask trial: the report's own `/home/me/proj/app/tasks.py` was taken for the
    repository's one `tasks.py`, an example's (`task_app/tasks.py`: the same name, no directory
    in common), and its innermost frame put that example first. A root file of the name, or a
    bare name, still matches."""
    from cora_ci.bundle import open_bundle
    from cora_ci.retrieval.catalog import catalog

    repo = make_repo({
        "examples/celery/src/task_app/tasks.py": "def add(a, b):\n    return a + b\n",
        "src/shop/globals.py": "NO_APP = 'Working outside of application context.'\n",
        "setup.py": "from setuptools import setup\n\nsetup()\n",
    })  # fmt: skip
    build(repo, model="none")
    paths = Paths(catalog(open_bundle(repo / ".cora" / "index")))
    assert paths.match("/home/me/proj/app/tasks.py") == []
    assert paths.match("/srv/checkout/examples/celery/src/task_app/tasks.py") == [
        "examples/celery/src/task_app/tasks.py"
    ]
    assert paths.match("tasks.py") == ["examples/celery/src/task_app/tasks.py"]  # bare: the one file
    assert paths.match("/home/me/proj/setup.py") == ["setup.py"]  # the repository's root file
    # ... but not a file of one of its directories that it no longer has (express 4's router)
    assert paths.match("/srv/node_modules/shop/src/old/setup.py") == []
    report = (
        "RuntimeError: Working outside of application context.\n\nTraceback (most recent call last):\n"
        '  File "/home/me/proj/app/tasks.py", line 2, in work\n    current_app.logger.info("done")\n'
        "RuntimeError: Working outside of application context.\n"
    )
    ans = run_query(report, Where.of(None, None, repo), k=2)
    assert ans.results[0].anchor != "examples/celery/src/task_app/tasks.py::add"
    assert all(r.hit.explain["evidence"] is None for r in ans.results if r.view.path.endswith("tasks.py"))


MAPPER = """\
package com.acme.json;

import java.io.Reader;
import java.io.StringReader;

/** Reads JSON text into objects. */
public final class Mapper {
  private final boolean lenient;

  public Mapper(boolean lenient) {
    this.lenient = lenient;
  }

  /** Reads a value from a string. */
  public <T> T fromJson(String json, Class<T> type) throws SyntaxException {
    return fromJson(new StringReader(json), type);
  }

  /** Reads a value from a reader. */
  public <T> T fromJson(Reader json, Class<T> type) throws SyntaxException {
    return fromJson(new TokenReader(json), type);
  }

  /** Reads a value from a token stream. */
  public <T> T fromJson(TokenReader reader, Class<T> type) throws SyntaxException {
    boolean old = reader.isLenient();
    reader.setLenient(lenient);
    try {
      reader.peek();
      Adapter<T> adapter = Adapters.of(type);
      T value = adapter.read(reader);
      reader.close();
      return value;
    } catch (java.io.EOFException e) {
      throw new SyntaxException(e);
    } finally {
      reader.setLenient(old);
    }
  }

  /** Writes a value as JSON text. */
  public String toJson(Object value) {
    StringBuilder out = new StringBuilder();
    Adapters.of(value.getClass()).write(out, value);
    return out.toString();
  }
}
"""
TOKENS = """\
package com.acme.json;

import java.io.Reader;

/** Reads the tokens of JSON text one at a time. */
public final class TokenReader {
  private final Reader in;
  private boolean lenient;
  private int peeked;

  public TokenReader(Reader in) {
    this.in = in;
  }

  public boolean isLenient() {
    return lenient;
  }

  public void setLenient(boolean lenient) {
    this.lenient = lenient;
  }

  public int peek() {
    return peeked;
  }

  /** Consumes the next token, the opening brace of an object. */
  public void beginObject() {
    if (peek() != 1) {
      throw new IllegalStateException("Expected BEGIN_OBJECT but was " + peek());
    }
    peeked = 0;
  }

  public void close() {
    peeked = -1;
  }
}
"""
JAVA_FILES = {
    ".cora.toml": "min_tokens = 0\n",
    "src/main/java/com/acme/json/Mapper.java": MAPPER,
    "src/main/java/com/acme/json/TokenReader.java": TOKENS,
    "src/main/java/com/acme/json/SyntaxException.java": (
        "package com.acme.json;\n\n/** Thrown when JSON text is not well formed. */\n"
        "public final class SyntaxException extends RuntimeException {\n"
        "  public SyntaxException(Throwable cause) {\n    super(cause);\n  }\n}\n"
    ),
}
# A report against another version of the library: its frames' lines are past the files' ends.
JAVA_TRACE = """\
java.lang.IllegalStateException: Expected BEGIN_OBJECT but was 2
\tat com.acme.json.TokenReader.beginObject(TokenReader.java:412)
\tat com.acme.json.Mapper.fromJson(Mapper.java:1238)
\tat com.acme.json.Mapper.fromJson(Mapper.java:1137)
\tat com.acme.json.Mapper.fromJson(Mapper.java:1047)
"""


def test_an_overloaded_frame_on_lines_of_another_version_is_the_implementation(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A gson trial (a report against 2.10.1, the repository newer): `Gson.fromJson`'s frames
    were on lines no `fromJson` holds now, and the clue went to the first overload in the file,
    a one-line delegate, where the trace's frames run through all of them into the one that
    does the work."""
    repo = make_repo(JAVA_FILES)
    build(repo, model="none")
    report = "fromJson throws IllegalStateException instead of SyntaxException\n\n" + JAVA_TRACE
    ans = run_query(report, Where.of(None, None, repo), k=3)
    told = [(r.anchor.split("::")[1], r.hit.explain["evidence"]) for r in ans.results]
    assert told[:2] == [
        ("TokenReader.beginObject", 1.0),
        ("Mapper.fromJson(TokenReader, Class<T>)", FRAME_DECAY),
    ]


def test_a_quoted_signature_is_said_by_the_member_not_by_its_classs_skeleton(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A gson trial: a report quoting `fromJson(String json, TypeToken<T> typeOfT)` had the
    skeleton of the 1,200-line `Gson` class (which repeats its members' declarations) as one of
    the code that says it, ranked above the methods, which merged into it: the answer was lines
    199-1288 of the class."""
    from cora_ci.bundle import open_bundle
    from cora_ci.retrieval.catalog import catalog

    repo = make_repo(JAVA_FILES)
    build(repo, model="none")
    cat = catalog(open_bundle(repo / ".cora" / "index"))
    report = "Calling `fromJson(String json, Class<T> type)` with text that is not an object fails\n"
    said = {cat.meta(cid).anchor: w for cid, w in emitted.said(cat, report).items()}
    mapper = "src/main/java/com/acme/json/Mapper.java::Mapper"
    assert said.get(mapper + ".fromJson(String, Class<T>)") == MESSAGE
    assert mapper not in said
    ans = run_query(report + "\n" + JAVA_TRACE, Where.of(None, None, repo), k=4)
    assert mapper not in [r.anchor for r in ans.results]
    assert all(r.view.end - r.view.start < 20 for r in ans.results)  # each a method's own lines


def test_the_graph_does_not_lift_a_weaker_clue_over_a_stronger_one(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """The clues' order is the answer's (`in_clue_order`), also after the graph's lift: gson's
    class skeleton, a weaker clue that the frames' code refers to, went above the innermost
    frame's method once the graph had added its share. Here a graph weight far above the
    default makes any such lift visible."""
    import dataclasses

    from cora_ci.bundle import open_bundle
    from cora_ci.retrieval import PARAMS, search
    from cora_ci.retrieval.catalog import catalog
    from cora_ci.retrieval.query import analyse

    repo = make_repo(JAVA_FILES)
    build(repo, model="none")
    bundle = open_bundle(repo / ".cora" / "index")
    report = (
        (
            "fromJson throws IllegalStateException instead of SyntaxException\n\n"
            "Calling fromJson with text that is not an object:\n\n"
        )
        + JAVA_TRACE
        + (
            "\tat com.acme.json.TokenReader.peek(TokenReader.java:300)\n"
            "\tat com.acme.json.TokenReader.isLenient(TokenReader.java:300)\n"
        )
    )
    told = evidence.pointed(catalog(bundle), report, analyse(report).title)
    hits = search(bundle, report, k=8, params=dataclasses.replace(PARAMS, graph=3.0))
    weights = [told.at[h.chunk_id] for h in hits if h.chunk_id in told.at]
    assert len(weights) >= 3
    assert weights == sorted(weights, reverse=True)


OUTCOME = """\
namespace Shop;

public readonly partial struct Outcome<TResult>
{
    internal Outcome(Exception exception) => Exception = exception;

    public Exception? Exception { get; }

    public TResult? Result { get; }

    /// <summary>The result, or the exception rethrown with its stack trace.</summary>
    internal TResult GetResultOrRethrow()
    {
        if (Exception is not null)
        {
            ExceptionDispatchInfo.Capture(Exception).Throw();
        }
        return Result!;
    }
}
"""
PIPELINE = """\
namespace Shop;

public partial class Pipeline
{
    public async ValueTask<TResult> ExecuteAsync<TResult>(Func<CancellationToken, ValueTask<TResult>> callback, CancellationToken token)
    {
        var outcome = await ExecuteCore(callback, token).ConfigureAwait(false);
        return outcome.GetResultOrRethrow();
    }

    public TResult Execute<TResult>(Func<CancellationToken, TResult> callback, CancellationToken token)
    {
        var outcome = ExecuteCore(callback, token);
        return outcome.GetResultOrRethrow();
    }
}
"""


def test_a_dotnet_trace_without_files_points_at_its_methods(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A Polly trial: a package shipped without its symbols prints frames with no file nor line
    (`at Polly.Outcome`1.GetResultOrRethrow()`), which were read as no frame at all (a dotted name
    whose module is no file): the innermost is found by its owner and name."""
    repo = make_repo({
        ".cora.toml": "min_tokens = 0\n",
        "src/Shop/Outcome.TResult.cs": OUTCOME,
        "src/Shop/Pipeline.Async.cs": PIPELINE,
        "src/Shop/Retry.cs": "namespace Shop;\n\npublic class Retry\n{\n    public int Attempts { get; set; }\n}\n",
        "samples/Demo/Program.cs": "namespace Samples;\n\npublic static class Program\n{\n"
                                   "    public static void Main()\n    {\n    }\n}\n",
    })  # fmt: skip
    build(repo, model="none")
    report = (
        "Rethrown exception grows its stack trace on every call\n\nIndex: 4\n"
        "System.InvalidOperationException: boom\n   at Shop.Outcome`1.GetResultOrRethrow()\n"
        "   at Shop.Pipeline.ExecuteAsync[TResult](Func`2 callback, CancellationToken token)\n"
        "   at Program.<Main>$(String[] args) in C:\\src\\App\\Program.cs:line 40\n"
    )
    told = {r.anchor.split("::")[1]: r.hit.explain["evidence"] for r in run_query(
        report, Where.of(None, None, repo), k=4).results}  # fmt: skip
    assert next(iter(told.items())) == ("Shop.Outcome.GetResultOrRethrow", 1.0), told
    assert told["Shop.Pipeline.ExecuteAsync"] == FRAME_DECAY, told
    # the user's own `MyApp.Program.Main` is not the sample's `Samples.Program.Main`
    mine = run_query(
        "Crash at start on 2 machines\n\nSystem.Exception: boom\n   at MyApp.Program.Main()\n",
        Where.of(None, None, repo),
        k=3,
    )
    assert all(r.hit.explain["evidence"] is None for r in mine.results), [r.anchor for r in mine.results]


WORKSPACE = {
    ".cora.toml": "min_tokens = 0\n",
    "crates/matcher/src/lib.rs": (
        "pub struct Match {\n    start: usize,\n    end: usize,\n}\n\nimpl Match {\n"
        "    pub fn with_end(&self, end: usize) -> Match {\n        assert!(self.start <= end);\n"
        "        Match { end, ..*self }\n    }\n}\n"
    ),
    "crates/regex/src/lib.rs": "pub mod word;\n\npub fn version() -> u32 {\n    1\n}\n",
    "crates/regex/src/word.rs": (
        "use matcher::Match;\n\npub struct WordMatcher {\n    names: Vec<String>,\n}\n\nimpl WordMatcher {\n"
        "    pub fn fast_find(&self, m: Match, at: usize) -> Match {\n        m.with_end(at)\n    }\n}\n"
    ),
    "crates/searcher/src/lib.rs": "pub fn search(haystack: &[u8]) -> usize {\n    haystack.len()\n}\n",
}
RUST_REPORT = """Panic on mundane-looking input

thread 'main' panicked at 'assertion failed: start <= end', /home/u/.cargo/registry/src/index-1ecc/grep-matcher-0.1.5/src/lib.rs:131:9
stack backtrace:
   0: rust_begin_unwind
   1: core::panicking::panic_fmt
   2: grep_matcher::Match::with_end
   3: grep_regex::word::WordMatcher::fast_find::h0123456789abcdef
   4: <grep_regex::word::WordMatcher as grep_matcher::Matcher>::find_at
"""


def test_a_rust_backtrace_without_files_points_at_its_functions(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A ripgrep trial: a release build's backtrace names its functions without files, and the
    panic's own path is one of a workspace's `src/lib.rs` (a crate from the registry): the
    frames were not read, and the path took the innermost frame's place, shared among every
    crate. The functions are found by their owners and names, in the trace's order."""
    assert clues(RUST_REPORT)[:3] == [
        Clue("/home/u/.cargo/registry/src/index-1ecc/grep-matcher-0.1.5/src/lib.rs", None, 131, True),
        Clue(None, "panic_fmt", None, True, ("core", "panicking", "panic_fmt")),
        Clue(None, "with_end", None, True, ("grep_matcher", "Match", "with_end")),
    ]
    assert clues(RUST_REPORT)[4].dotted == ("grep_regex", "word", "WordMatcher", "find_at")  # by its type
    repo = make_repo(WORKSPACE)
    build(repo, model="none")
    told = [(r.anchor.split("::")[1], r.hit.explain["evidence"]) for r in run_query(
        RUST_REPORT, Where.of(None, None, repo), k=2).results]  # fmt: skip
    assert told == [("Match.with_end", 1.0), ("WordMatcher.fast_find", FRAME_DECAY)], told
    # the panic's path is the registry's copy of a crate: its package names the crate's directory
    from cora_ci.bundle import open_bundle
    from cora_ci.retrieval.catalog import catalog

    paths = Paths(catalog(open_bundle(repo / ".cora" / "index")))
    registry = "/home/u/.cargo/registry/src/index-1ecc/grep-matcher-0.1.5/src/lib.rs"
    assert paths.match(registry) == ["crates/matcher/src/lib.rs"]
    assert len(paths.match("/home/u/proj/src/lib.rs")) == 3  # no package named: any of them


def test_a_jvm_frame_of_a_file_gone_to_kotlin_is_found_by_its_class_and_method(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """An okio trial: reports from its Java days name `Buffer.java`, now `Buffer.kt`; the frame
    matched no file, and so pointed nowhere. Its class and method still say where it runs."""
    repo = make_repo({
        ".cora.toml": "min_tokens = 0\n",
        "okio/src/main/kotlin/okio/Buffer.kt": "package okio\n\nclass Buffer {\n  var size = 0L\n\n"
            "  fun readByte(): Byte {\n    require(size != 0L)\n    size -= 1\n    return 0\n  }\n\n"
            "  fun readShort(): Short {\n    return (readByte().toInt() shl 8).toShort()\n  }\n}\n",
        "okio/src/main/kotlin/okio/Sink.kt": "package okio\n\ninterface Sink {\n  fun write(source: Buffer)\n}\n",
    })  # fmt: skip
    build(repo, model="none")
    report = (
        "java.lang.ArrayIndexOutOfBoundsException: length=2048; index=2048\n"
        "        at okio.Buffer.readByte(Buffer.java:237)\n        at okio.Buffer.readShort(Buffer.java:269)\n"
    )
    told = [(r.anchor.split("::")[1], r.hit.explain["evidence"]) for r in run_query(
        report, Where.of(None, None, repo), k=2).results]  # fmt: skip
    assert told == [("Buffer.readByte", 1.0), ("Buffer.readShort", FRAME_DECAY)], told


PRINTERS = {
    ".cora.toml": "min_tokens = 0\n",
    "shop/printing/printer.py": (
        "class Printer:\n    def _print(self, expr, **kwargs):\n"
        "        method = getattr(self, '_print_' + type(expr).__name__)\n        return method(expr, **kwargs)\n"
    ),
    **{
        f"shop/printing/{name}.py": (
            f"from shop.printing.printer import Printer\n\n\nclass {name.title()}Printer(Printer):\n"
            f"    def doprint(self, expr):\n        return self._print(expr)\n\n"
            f"    def _print_Beam(self, expr):\n        return '{name} beam of ' + str(expr.length)\n"
        )
        for name in ("latex", "pretty", "mathml")
    },
}


def test_a_refused_call_names_the_function_of_the_file_its_traceback_runs_through(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A sympy report (`_print_SingularityFunction() got an unexpected keyword argument 'exp'`):
    each printer defines the function, so the message alone does not say which, and the innermost
    frame, the generic `Printer._print` that called it, came first. The traceback runs through
    `latex.py`: that printer's is the one, and being a call that never ran, it is innermost."""
    repo = make_repo(PRINTERS)
    build(repo, model="none")
    report = (
        "Beam does not print\n\nTraceback (most recent call last):\n"
        '  File "/usr/lib/python3/dist-packages/shop/printing/latex.py", line 6, in doprint\n'
        "    return self._print(expr)\n"
        '  File "/usr/lib/python3/dist-packages/shop/printing/printer.py", line 4, in _print\n'
        "    return method(expr, **kwargs)\n"
        "TypeError: _print_Beam() got an unexpected keyword argument 'exp'\n"
    )
    told = {
        r.anchor: r.hit.explain["evidence"]
        for r in run_query(report, Where.of(None, None, repo), k=4).results
    }
    assert next(iter(told.items())) == ("shop/printing/latex.py::LatexPrinter._print_Beam", quoted.CALLED), (
        told
    )
    assert told["shop/printing/printer.py::Printer._print"] == FRAME_DECAY, told


def test_a_frame_on_another_versions_lines_is_its_own_classs_method(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """gson's `ReflectiveTypeAdapterFactory$Adapter.read` is one of several `read` methods of its
    file: a frame whose line (another version's) holds none of them took the first in the file.
    The frame's class says which."""
    java = (
        "package com.acme;\n\npublic final class Factory {\n"
        "  static final class First {\n    Object read(String in) {\n      return in.trim();\n    }\n  }\n\n"
        "  static final class Second {\n    Object read(String in) {\n      return in.isEmpty() ? null : in;\n    }\n  }\n}\n"
    )
    repo = make_repo({".cora.toml": "min_tokens = 0\n", "src/main/java/com/acme/Factory.java": java})
    build(repo, model="none")
    report = "java.lang.NullPointerException\n\tat com.acme.Factory$Second.read(Factory.java:9000)\n"
    told = [(r.anchor.split("::")[1], r.hit.explain["evidence"]) for r in run_query(
        report, Where.of(None, None, repo), k=1).results]  # fmt: skip
    assert told == [("Factory.Second.read", 1.0)], told


def test_a_python_frame_on_another_versions_lines_is_the_function_its_code_line_is_in(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """Several functions of a file share a frame's name and none holds its line (the report's
    file is another version): the one holding the line of code the trace prints under the frame
    (django 4.0.5's `_fetch_all` trace is `QuerySet._fetch_all`, not 4.0's `RawQuerySet._fetch_all`
    nearer its line), else the one nearest its line (requests' `sessions.py, line 703, in send`
    is `Session.send`, not the mixin's stub `send` on line 132, the file's first)."""
    body = "".join(f"    def helper_{i}(self):\n        return {i}\n\n" for i in range(40))
    py = (
        "class RedirectMixin:\n    def send(self, request, **kwargs): ...\n\n\n"
        "class QuerySet:\n    def _fetch_all(self):\n        if self._result_cache is None:\n"
        "            self._result_cache = list(self._iterable_class(self))\n\n"
        + body
        + "\nclass RawQuerySet:\n    def _fetch_all(self):\n        if self._result_cache is None:\n"
        "            self._result_cache = list(self.iterator())\n\n\n"
        "class Session(RedirectMixin):\n    def send(self, request, **kwargs):\n"
        "        adapter = self.get_adapter(url=request.url)\n        return adapter.send(request, **kwargs)\n"
    )
    repo = make_repo({".cora.toml": "min_tokens = 0\n", "shop/query.py": py})
    build(repo, model="none")
    lines = py.splitlines()
    raw = next(n for n, t in enumerate(lines, 1) if t == "class RawQuerySet:")
    sent = next(n for n, t in enumerate(lines, 1) if t == "class Session(RedirectMixin):")
    where = Where.of(None, None, repo)
    for frame, code, place in [
        ("_fetch_all", "    self._result_cache = list(self._iterable_class(self))\n", "shop/query.py::QuerySet._fetch_all"),
        ("send", "", "shop/query.py::Session.send"),  # no code line: the nearest
    ]:  # fmt: skip
        at = raw + 6 if frame == "_fetch_all" else sent - 4  # in no definition of the name
        report = (f'Traceback (most recent call last):\n  File "/venv/site-packages/shop/query.py", line {at},'
                  f" in {frame}\n{code}KeyError: 'id'\n")  # fmt: skip
        told = {r.anchor: r.hit.explain["evidence"] for r in run_query(report, where, k=3).results}
        assert told.get(place) == 1.0, (frame, told)


def test_the_graph_does_not_lift_a_weaker_clue_over_a_stronger_one_across_bundles(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    """`in_clue_order` after the graph's lift, as for one bundle, when a query spans several (a
    project and its dependencies' bundles)."""
    import dataclasses

    from cora_ci.bundle import open_bundle
    from cora_ci.retrieval import PARAMS
    from cora_ci.retrieval.catalog import catalog
    from cora_ci.retrieval.many import Part, search_many
    from cora_ci.retrieval.query import analyse

    repo = make_repo(JAVA_FILES)
    build(repo, model="none")
    other = init_repo(
        tmp_path / "other", {".cora.toml": "min_tokens = 0\n", "src/app.py": "def main():\n    return 1\n"}
    )
    build(other, model="none")
    bundle = open_bundle(repo / ".cora" / "index")
    report = (
        "fromJson throws IllegalStateException instead of SyntaxException\n\n"
        "Calling fromJson with text that is not an object:\n\n" + JAVA_TRACE
        + "\tat com.acme.json.TokenReader.peek(TokenReader.java:300)\n"
        "\tat com.acme.json.TokenReader.isLenient(TokenReader.java:300)\n"
    )  # fmt: skip
    told = evidence.pointed(catalog(bundle), report, analyse(report).title)
    parts = [Part(bundle), Part(open_bundle(other / ".cora" / "index"))]
    hits = search_many(parts, report, k=8, params=dataclasses.replace(PARAMS, graph=3.0))
    weights = [told.at[h.chunk_id] for h in hits if h.origin == 0 and h.chunk_id in told.at]
    assert len(weights) >= 3
    assert weights == sorted(weights, reverse=True)


def _kotlin_buffer(kind: str) -> str:
    """A Kotlin Multiplatform `Buffer`: its `expect` declaration, or an `actual` one of one-line
    members the chunker merges into one chunk (as okio's)."""
    if kind == "expect":
        return "package okio\n\nexpect class Buffer {\n  fun readByte(): Byte\n  fun readShort(): Short\n}\n"
    members = "\n".join(
        f"  @Throws(EOFException::class)\n  actual fun {name}(): {t} = common{name[0].upper()}{name[1:]}()\n"
        for name, t in (("size", "Long"), ("readByte", "Byte"), ("readShort", "Short"), ("readInt", "Int"),
                        ("readLong", "Long"), ("readShortLe", "Short"), ("readIntLe", "Int"), ("readLongLe", "Long"))
    )  # fmt: skip
    return f"package okio\n\n// The {kind} buffer.\nactual class Buffer {{\n{members}}}\n"


OKIO_REPORT = """ArrayIndexOutOfBoundsException reading a byte after a timeout

java.lang.ArrayIndexOutOfBoundsException: length=8192; index=8192
\tat okio.Buffer.readByte(Buffer.java:237)
\tat com.example.Client.read(Client.java:40)
"""


def test_a_jvm_frame_is_the_jvm_source_sets_code_and_a_merged_members_own_lines(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """okio's trial: `okio.Buffer.readByte(Buffer.java:237)` (okio before Kotlin) against three
    `Buffer.kt` (Kotlin Multiplatform's `commonMain`, `jvmMain`, `nonJvmMain`) was no evidence at
    all; a JVM frame's code is the JVM source set's. And the answer is `readByte`'s own line, not
    the chunk of one-line members merged around it, named after its first."""
    repo = make_repo({
        "okio/src/commonMain/kotlin/okio/Buffer.kt": _kotlin_buffer("expect"),
        "okio/src/jvmMain/kotlin/okio/Buffer.kt": _kotlin_buffer("JVM"),
        "okio/src/nonJvmMain/kotlin/okio/Buffer.kt": _kotlin_buffer("native"),
    })  # fmt: skip
    build(repo, model="none")
    ans = run_query(OKIO_REPORT, Where.of(None, None, repo), k=3)
    first = ans.results[0]
    assert first.hit.explain["evidence"] == 1.0, [(r.view.path, r.anchor) for r in ans.results]
    assert first.anchor == "okio/src/jvmMain/kotlin/okio/Buffer.kt::Buffer.readByte"
    assert (first.view.start, first.view.end) == (8, 9)  # its annotation and its line


LAYOUT = {
    "grid/layout.py": """\
        def column_widths(columns, width):
            ratios = [c.ratio or 0 for c in columns if c.flexible]
            share = width / sum(ratios)
            return [round(r * share) for r in ratios]


        def render(table, width):
            widths = column_widths(table.columns, width)
            return [cell.ljust(w) for cell, w in zip(table.cells, widths)]
        """,
    "grid/console.py": """\
        from grid.layout import render


        def show(table, width=80):
            lines = render(table, width)
            print("\\n".join(lines))
        """,
    "tests/test_tracebacks.py": """\
        def test_a_traceback_is_printed_with_its_message(capsys):
            try:
                1 / 0
            except ZeroDivisionError:
                print_traceback()
            out = capsys.readouterr().out
            assert "ZeroDivisionError" in out and "division by zero" in out
        """,
    "docs/tracebacks.md": "# Tracebacks\n\nAn error prints its trace and message, as in\n"
    "`ZeroDivisionError: division by zero`, below the frames.\n",
}
LAYOUT_REPORT = """\
A grid whose columns are all flexible crashes in a narrow console

Traceback (most recent call last):
  File "/home/me/app.py", line 3, in <module>
    show(table, width=5)
  File "/home/me/.venv/lib/python3.11/site-packages/grid/console.py", line 5, in show
    lines = render(table, width)
  File "/home/me/.venv/lib/python3.11/site-packages/grid/layout.py", line 8, in render
    widths = column_widths(table.columns, width)
  File "/home/me/.venv/lib/python3.11/site-packages/grid/layout.py", line 3, in column_widths
    share = width / sum(ratios)
ZeroDivisionError: division by zero
"""


def test_a_message_that_only_tests_and_docs_write_is_no_clue(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A rich trial: Python's own `ZeroDivisionError: division by zero` ended a traceback, and the
    tests and docs that quote it took a message's clue, third and fourth above the frames' other
    code. Code that writes a message emits it; a message only tests and prose write is the
    language's or a dependency's, and no clue."""
    repo = make_repo({p: textwrap.dedent(t) for p, t in LAYOUT.items()})
    build(repo, model="none")
    got = run_query(LAYOUT_REPORT, Where.of(None, None, repo), k=4).results
    assert [r.anchor for r in got[:3]] == [
        "grid/layout.py::column_widths", "grid/layout.py::render", "grid/console.py::show"
    ], [r.anchor for r in got]  # fmt: skip
    assert all(r.hit.explain["evidence"] != MESSAGE for r in got)


SETTINGS = {
    "go.mod": "module github.com/u/conf\n\ngo 1.22\n",
    "conf.go": """\
        package conf

        var v = New()

        type Conf struct {
            values map[string]any
            env    map[string]string
        }

        func New() *Conf { return &Conf{values: map[string]any{}} }

        // AllSettings merges every source into one map.
        func AllSettings() map[string]any { return v.AllSettings() }

        func (c *Conf) AllSettings() map[string]any {
            out := map[string]any{}
            for key, value := range c.values {
                out[key] = value
            }
            for key := range c.env {
                deepSet(out, key, c.env[key])
            }
            return out
        }
        """,
    "util.go": """\
        package conf

        func deepSet(m map[string]any, key string, value any) {
            var inner map[string]any
            inner[key] = value
            m[key] = inner
        }
        """,
}
SETTINGS_PANIC = """\
panic: assignment to entry in nil map

goroutine 1 [running]:
github.com/u/conf.deepSet(0x0, {0x4b1, 0x3})
	/home/me/go/pkg/mod/github.com/u/conf@v1.2.0/util.go:7 +0x1c5
github.com/u/conf.(*Conf).AllSettings(0xc0000c6000)
	/home/me/go/pkg/mod/github.com/u/conf@v1.2.0/conf.go:41 +0x2b5
main.main()
	/home/me/app/main.go:22 +0x125
"""


def test_a_go_methods_frame_finds_the_method_not_the_function_of_its_name(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A viper trial: `(*Viper).AllSettings` in a panic of another version (its line holds nothing
    of this one's) found the package function `AllSettings` that calls the method, two lines
    of a forwarding call; the frame's receiver names the method's type."""
    repo = make_repo({p: textwrap.dedent(t) for p, t in SETTINGS.items()})
    build(repo, model="none")
    got = run_query(SETTINGS_PANIC, Where.of(None, None, repo), k=3).results
    assert [r.anchor for r in got[:2]] == ["util.go::deepSet", "conf.go::Conf.AllSettings"], [
        r.anchor for r in got
    ]
