"""What a bug report's text says about places in code (`retrieval/frames.py`): each runtime's
traceback format read as frames, the innermost first, with its file, line and function (or its
symbol where it printed no file), blanked from the query's words; paths and dotted names merely
mentioned after them. Matching them to a bundle is `test_evidence.py`'s."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cora_ci.retrieval.frames import clues


@pytest.mark.parametrize(
    ("report", "first"),
    [
        ('Traceback (most recent call last):\n  File "/srv/app.py", line 3, in <module>\n    main()\n'
         '  File "/venv/lib/python3.12/site-packages/shop/orders.py", line 41, in total\n    x\nKeyError: 1',
         ("/venv/lib/python3.12/site-packages/shop/orders.py", "total", 41)),
        ("TypeError: x is undefined\n    at Cart.total (/home/u/shop/src/cart.ts:12:9)\n"
         "    at main (/home/u/shop/src/index.ts:3:1)\n    at node:internal/main:5:3",
         ("/home/u/shop/src/cart.ts", "total", 12)),
        ('Exception in thread "main" java.lang.NullPointerException\n'
         "\tat com.shop.Cart.total(Cart.java:12)\n\tat com.shop.Main.main(Main.java:5)",
         ("com/shop/Cart.java", "total", 12)),
        ("java.net.SocketTimeoutException: timeout\n\tat okio.SocketAsyncTimeout.newTimeoutException(-JavaIo.kt:30)",
         ("okio/-JavaIo.kt", "newTimeoutException", 30)),  # Kotlin's file of top-level functions
        ("java.lang.NullPointerException\n\tat com.shop.Factory$1.read(Factory.java:274)",
         ("com/shop/Factory.java", None, 274)),  # an anonymous class's method: by its line
        ("System.NullReferenceException: Object reference not set\n"
         "   at Shop.Cart.Total() in C:\\src\\Shop\\Cart.cs:line 12\n   at Shop.Program.Main() in C:\\src\\Shop\\Program.cs:line 5",
         ("C:\\src\\Shop\\Cart.cs", "Total", 12)),
        ("panic: runtime error\n\ngoroutine 1 [running]:\nshop/cart.Total(...)\n\t/home/u/shop/cart/cart.go:12 +0x1d\n"
         "main.main()\n\t/home/u/shop/main.go:5 +0x20",
         ("/home/u/shop/cart/cart.go", "Total", 12)),
        ("panic: boom\n\ngoroutine 7 [running]:\nshop/cart.(*Cart).Total(...)\n\t/home/u/shop/cart/cart.go:12 +0x1d\n",
         ("/home/u/shop/cart/cart.go", "Total", 12)),  # a method: its receiver in the frame
        ("panic: boom\n\ngoroutine 7 [running]:\nshop/cart.Total.func2(0x1)\n\t/home/u/shop/cart/cart.go:14 +0x1d\n",
         ("/home/u/shop/cart/cart.go", "Total", 14)),  # a closure: the function it is in
        ("panic: boom\n\ngoroutine 9 [running]:\nshop/cart.(*Cart).Watch.func1.1()\n\t/home/u/shop/cart/cart.go:16 +0x1d\n"
         "created by shop/cart.(*Cart).Watch in goroutine 1\n\t/home/u/shop/cart/cart.go:9 +0x10d",
         ("/home/u/shop/cart/cart.go", "Watch", 16)),  # a closure's closure (Go 1.22 names), then its creator
        ("panic: runtime error: index out of range\n\ngoroutine 1 [running]:\n"
         "github.com/u/shop/cmd.glob..func1(0x4822c60, 0x0)\n\t/home/u/shop/cmd/launch.go:113 +0x184c\n"
         "github.com/spf13/cobra.(*Command).execute(0x4822c60)\n\t/go/pkg/mod/github.com/spf13/cobra@v0.0.3/command.go:766\n",
         ("/home/u/shop/cmd/launch.go", None, 113)),  # a package variable's function literal (a cobra `RunE`)
        ("panic: boom\n\ngoroutine 9 [running]:\nshop/cart.Run.gowrap1()\n\t/home/u/shop/cart/run.go:21 +0x1d\n",
         ("/home/u/shop/cart/run.go", "Run", 21)),  # a `go f()` statement's wrapper
        ("TypeError: x\n    at Layer.handle [as handle_request] (/app/node_modules/router/lib/layer.js:95:5)",
         ("/app/node_modules/router/lib/layer.js", "handle", 95)),  # V8's alias: the function's own name
        ("TypeError: x\n    at RegExpRouter.#buildMatcher (/app/src/router.ts:121:35)\n    at main (/app/src/a.ts:3:1)",
         ("/app/src/router.ts", "#buildMatcher", 121)),  # a class's private method
        ("thread 'main' panicked at src/cart.rs:12:9:\nindex out of bounds", ("src/cart.rs", None, 12)),
        ("tests/test_cart.py:8: in test_total\n    cart.total()\nshop/cart.py:12: in total\n    x\nE   KeyError",
         ("shop/cart.py", "total", 12)),  # pytest's short traceback, innermost last
        ("shop/cart.py:12: DeprecationWarning: total() is deprecated\n  warnings.warn(...)",
         ("shop/cart.py", None, 12)),  # where a warning comes from
        ("    def test_total():\n>       assert total([]) == 0\n\ntests/test_cart.py:5: \n_ _ _ _ _ _ _ _\n\n"
         "    def total(items):\n        if not items:\n>           raise ShopFailure(\"empty\")\n"
         "E           shop.cart.ShopFailure: empty\n\nsrc/shop/cart.py:7: ShopFailure\n",
         ("src/shop/cart.py", None, 7)),  # pytest's long form: an exception of any name
        ("    def test_total():\n>       assert total([]) == 0\n\ntests/test_cart.py:5: \n_ _ _ _ _ _ _ _\n\n"
         "    def total(items):\n>       return sum(items)\n\nsrc/shop/cart.py:8: \n",
         ("src/shop/cart.py", None, 8)),  # ... and each frame's place (`--tb=long`, cut before its error)
        ("ImportError while importing test module '/srv/tests/test_cart.py'.\nTraceback:\n"
         "/usr/lib/python3.12/importlib/__init__.py:90: in import_module\n    return _bootstrap._gcd_import()\n"
         "tests/test_cart.py:3: in <module>\n    from shop.cart import total\nshop/cart.py:1: in <module>\n"
         "    from shop.prices import price\nE   ImportError: cannot import name 'price'",
         ("shop/cart.py", None, 1)),  # a collection error: modules' frames
        ("/app/lib/shop/cart.rb:12:in 'Shop::Cart#total!': undefined method '*' for nil (NoMethodError)\n"
         "\tfrom /app/bin/shop:5:in '<main>'",
         ("/app/lib/shop/cart.rb", "total!", 12)),  # Ruby 3.4's quotes, a method's `!`
        ("  1) Cart#total sums the prices\n     Failure/Error: expect(cart.total).to eq(3)\n     NoMethodError:\n"
         "       undefined method `price' for nil\n     # ./lib/shop/cart.rb:12:in `block in total'\n"
         "     # ./spec/cart_spec.rb:5:in `block (2 levels) in <top (required)>'\n",
         ("./lib/shop/cart.rb", "total", 12)),  # RSpec's failures
        ("(Pdb) where\n  /srv/app.py(3)<module>()\n-> cart.total()\n> /srv/shop/cart.py(12)total()\n-> return sum(x)\n",
         ("/srv/shop/cart.py", "total", 12)),  # pdb's stack, innermost last
        ("/app/lib/shop/cart.rb:12:in `block (2 levels) in total': boom (RuntimeError)\n"
         "\tfrom /app/lib/shop/cart.rb:9:in `each'",
         ("/app/lib/shop/cart.rb", "total", 12)),  # older Ruby's backtick
        ("PHP Fatal error:  Uncaught TypeError: boom in /var/www/src/Cart.php:12\nStack trace:\n"
         "#0 /var/www/src/Shop.php(40): Shop\\Cart->total()\n#1 {main}\n  thrown in /var/www/src/Cart.php on line 12",
         ("/var/www/src/Cart.php", None, 12)),
        ("==1==ERROR: AddressSanitizer: heap-buffer-overflow\n    #0 0x4f5a3b in shop::Cart::total(int) "
         "/src/shop/cart.cc:12:9\n    #1 0x4f5c10 in main /src/shop/main.cc:5:3",
         ("/src/shop/cart.cc", "total", 12)),
        ("Program received signal SIGSEGV.\n#0  cart_total (cart=0x0) at src/cart.c:12\n"
         "#1  0x000055555555513d in main () at src/main.c:5",
         ("src/cart.c", "cart_total", 12)),  # gdb
        ("** (ArithmeticError) bad argument in arithmetic expression\n"
         "    (shop 0.1.0) lib/shop/cart.ex:12: Shop.Cart.total/1\n    (elixir 1.16.0) lib/enum.ex:1: Enum.map/2",
         ("lib/shop/cart.ex", "total", 12)),
        ("** (FunctionClauseError) no function clause matching in Shop.Cart.total/1\n"
         "    (shop 0.1.0) lib/shop/cart.ex:12: Shop.Cart.total(%Shop.Cart{items: nil})\n"
         "    (shop 0.1.0) lib/shop/checkout.ex:5: Shop.Checkout.run/1",
         ("lib/shop/cart.ex", "total", 12)),  # the arguments in place of the arity (phoenix trial)
        ("Unhandled exception:\nNull check operator used on a null value\n"
         "#0      Cart.total (package:shop/src/cart.dart:12:5)\n#1      main (file:///home/u/shop/bin/main.dart:5:3)",
         ("src/cart.dart", "total", 12)),
        ("lua: lua/shop/cart.lua:12: attempt to index a nil value\nstack traceback:\n\t[C]: in ?\n"
         "\tlua/shop/cart.lua:12: in function 'shop.cart.total'\n\tmain.lua:5: in main chunk",
         ("lua/shop/cart.lua", "total", 12)),
        ("Fatal error: Index out of range: file Shop/Cart.swift, line 12", ("Shop/Cart.swift", None, 12)),
        ("java.lang.NullPointerException\n\tat com.shop.Cart.lambda$total$2(Cart.java:12)\n",
         ("com/shop/Cart.java", "total", 12)),  # a lambda in `total` (commons-lang)
        ("java.lang.IllegalArgumentException: x\n\tat os.BasePath$.fail$1(Path.scala:179)\n",
         ("os/Path.scala", "fail", 179)),  # a Scala local function (os-lib)
        ("thread 1 panic: index out of bounds\n/home/u/shop/src/cart.zig:12:9: 0x1034b9f in total (shop)\n",
         ("/home/u/shop/src/cart.zig", "total", 12)),
        ("System.InvalidOperationException: boom\n   at Shop.Outcome`1.GetResultOrRethrow()\n"
         "   at Shop.Pipeline.ExecuteAsync[TResult](Func`2 callback, CancellationToken token)\n"
         "   at Program.<Main>$(String[] args) in C:\\src\\App\\Program.cs:line 40",
         (None, "GetResultOrRethrow", None)),  # .NET without the package's symbols: no file, no line
        ("System.Exception: boom\n   at Shop.Pipeline.<>c__10`1.<<ExecuteAsync>b__10_0>d.MoveNext()\n",
         (None, "ExecuteAsync", None)),  # a lambda in an async method: the method the compiler made it of
        ("System.Exception: boom\n   at Shop.Cart.<TotalAsync>d__3.MoveNext() in C:\\src\\Shop\\Cart.cs:line 12\n",
         ("C:\\src\\Shop\\Cart.cs", "TotalAsync", 12)),  # an async method's state machine
        ("java.lang.NullPointerException\n\tat com.shop.Cart.total(Unknown Source)\n\tat com.shop.Main.main(Main.java:5)",
         (None, "total", None)),  # the JVM's frame without its file, before one with it
        ("org.springframework.web.util.NestedServletException: Request processing failed\n"
         "\tat org.springframework.web.servlet.FrameworkServlet.processRequest(FrameworkServlet.java:1014)\n"
         "\tat com.shop.web.CartController.total(CartController.java:31)\n"
         "Caused by: java.lang.IllegalStateException: wrapped\n\tat com.shop.Cart.total(Cart.java:20)\n\t... 40 more\n"
         "Caused by: java.lang.ArithmeticException: / by zero\n\tat com.shop.Prices.unit(Prices.java:12)\n"
         "\tat com.shop.Cart.total(Cart.java:18)\n\t... 40 more",
         ("com/shop/Prices.java", "unit", 12)),  # the JVM's root cause first: the last `Caused by:`
        ("KeyError                                  Traceback (most recent call last)\nCell In[3], line 1\n"
         "----> 1 cart.total()\n\nFile ~/venv/lib/python3.11/site-packages/shop/cart.py:12, in Cart.total(self)\n"
         "     10 def total(self):\n---> 12     return price(self.items)\n\n"
         "File ~/venv/lib/python3.11/site-packages/shop/prices.py:5, in price(items)\n"
         "----> 5     return sum(i['amount'] for i in items)\n\nKeyError: 'amount'",
         ("~/venv/lib/python3.11/site-packages/shop/prices.py", "price", 5)),  # IPython 8's, innermost last
        ("ValueError                                Traceback (most recent call last)\n"
         "<ipython-input-3-e2cc0e97941a> in <module>()\n----> 1 cart.total()\n\n"
         "~/src/shop/cart.py in total(self)\n     11         \"\"\"The total.\"\"\"\n"
         "---> 12         return price(self.items)\n     13 \n\n"
         "~/src/shop/prices.py in price(items)\n      4 def price(items):\n----> 5     return sum(items)\n",
         ("~/src/shop/prices.py", "price", 5)),  # IPython 7's: the arrow under the frame marks its line
        ("TypeError: x is undefined\r\n    at Cart.total (/home/u/shop/src/cart.ts:12:9)\r\n"
         "    at main (/home/u/shop/src/index.ts:3:1)\r\n",
         ("/home/u/shop/src/cart.ts", "total", 12)),  # an issue's Windows line ends
        ("NullReferenceException: Object reference not set to an instance of an object\n"
         "  at Shop.Cart.Total () [0x00011] in /src/Shop/Cart.cs:12 \n  at Shop.Program.Main () [0x00001] in /src/Shop/Program.cs:5 \n",
         ("/src/Shop/Cart.cs", "Total", 12)),  # Mono's (Unity's player log, Xamarin)
        ("System.InvalidOperationException: x\n  at Shop.Cart.Total () [0x00011] in <b7cbd9ee9adf41a39e692c106eb4985b>:0 \n",
         (None, "Total", None)),  # ... without symbols: by its owner and name
        ("System.Exception: boom\n   at Shop.Cart.Total()\n   at Shop.Program.Main()\n",
         (None, "Total", None)),  # no line number anywhere in the text
        ("TRPCError: x\n    at Object.getErrorFromUnknown ([redacted]/trpc/packages/server/src/errors.ts:23:15)\n",
         ("[redacted]/trpc/packages/server/src/errors.ts", "getErrorFromUnknown", 23)),  # a directory hidden
        ('Traceback (most recent call last):\n  File "/home/<me>/venv/lib/python3.11/site-packages/shop/cart.py",'
         " line 3, in total\nKeyError: 1",
         ("/home/<me>/venv/lib/python3.11/site-packages/shop/cart.py", "total", 3)),
        ("Uncaught TypeError: Cannot read properties of undefined (reading 'map')\n"
         "    at List (webpack-internal:///./src/components/List.tsx:12:20)\n"
         "    at renderWithHooks (webpack-internal:///./node_modules/react-dom/cjs/react-dom.development.js:16305:18)\n",
         ("src/components/List.tsx", "List", 12)),  # a browser's console, a webpack build
        ("TypeError: x is undefined\n    at List (http://localhost:5173/src/components/List.tsx?t=1700000000:12:20)\n",
         ("src/components/List.tsx", "List", 12)),  # ... a dev server's
        ("NullReferenceException: Object reference not set to an instance of an object\n"
         "Shop.Cart:Total (int) (at Assets/Scripts/Cart.cs:12)\nShop.Checkout:Update () (at Assets/Scripts/Checkout.cs:30)\n",
         ("Assets/Scripts/Cart.cs", "Total", 12)),  # Unity's console
        ("FAIL  test/cart.test.ts > cart > totals\nTypeError: Cannot read properties of undefined\n"
         " \u276f total src/cart.ts:12:15\n \u276f test/cart.test.ts:5:12\n      3| test('totals', () => {",
         ("src/cart.ts", "total", 12)),  # vitest's failures
        ("╭─── Traceback (most recent call last) ───╮\n│ /srv/app.py:3 in <module>               │\n"
         "│                                         │\n│ /srv/shop/cart.py:12 in total           │\n"
         "│                                         │\n│ ❱ 12 │   return sum(self.items)         │\n"
         "╰─────────────────────────────────────────╯\nTypeError: x",
         ("/srv/shop/cart.py", "total", 12)),  # rich's panel (Typer, Textual), innermost last
        ("2024-05-01T10:00:00.1234567Z TypeError: x is undefined\n"
         "2024-05-01T10:00:00.1234568Z     at Cart.total (/home/runner/work/shop/src/cart.ts:12:9)\n"
         "2024-05-01T10:00:00.1234569Z     at main (/home/runner/work/shop/src/index.ts:3:1)\n",
         ("/home/runner/work/shop/src/cart.ts", "total", 12)),  # a CI job's raw log: each line timestamped
        ("web-1  | TypeError: x is undefined\nweb-1  |     at Cart.total (/app/src/cart.ts:12:9)\n"
         "web-1  |     at main (/app/src/index.ts:3:1)\n",
         ("/app/src/cart.ts", "total", 12)),  # `docker compose logs`: each line after its container's name
        ('{"level": "error", "exc_info": "Traceback (most recent call last):\\n  File \\"/app/shop/views.py\\", '
         'line 8, in checkout\\n    cart.total()\\n  File \\"/app/shop/cart.py\\", line 12, in total\\n'
         '    return x\\nKeyError: 1"}',
         ("/app/shop/cart.py", "total", 12)),  # a structured log's JSON string
        ('{"msg": "failed", "stack": "TypeError: x\\n    at Cart.total (/app/src/cart.ts:12:9)\\n'
         '    at main (/app/src/index.ts:3:1)"}',
         ("/app/src/cart.ts", "total", 12)),  # ... and a JavaScript error's
        ("+-------- Traceback --------+\n| /srv/shop/cart.py:12 in total |\n+-----+\nTypeError: x",
         ("/srv/shop/cart.py", "total", 12)),  # its ASCII box
        ("Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f3a (most recent call first):\n"
         '  File "/venv/lib/python3.12/site-packages/shop/_native.py", line 40 in scan\n'
         '  File "/venv/lib/python3.12/site-packages/shop/cart.py", line 12 in total\n'
         '  File "/srv/app.py", line 3 in <module>\n\nExtension modules: numpy.core._multiarray_umath',
         ("/venv/lib/python3.12/site-packages/shop/_native.py", "scan", 40)),  # faulthandler: innermost first
    ],
)  # fmt: skip
def test_the_innermost_frame_comes_first_in_every_format(
    report: str, first: tuple[str, str | None, int]
) -> None:
    c = clues(report)[0]
    assert (c.path, c.name, c.line, c.frame) == (*first, True)


def test_a_go_methods_frame_names_its_receivers_type() -> None:
    """`pkg.(*T).M` is the method M of T (viper's `(*Viper).AllSettings`, beside a package function
    `AllSettings` that calls it): the type is the frame's owner, as a JVM frame's class is; a
    plain function's frame has none."""
    trace = (
        "panic: boom\n\ngoroutine 1 [running]:\nshop/cart.(*Cart).Watch.func1()\n\t/u/cart.go:16 +0x1d\n"
        "shop/cart.(Tree[...]).Walk(...)\n\t/u/tree.go:9 +0x10\nshop/cart.Total()\n\t/u/cart.go:3 +0x9\n"
    )
    assert [(c.name, c.dotted) for c in clues(trace)] == [
        ("Watch", ("Cart", "Watch")), ("Walk", ("Tree", "Walk")), ("Total", ())
    ]  # fmt: skip


def test_a_reports_frames_are_evidence_not_words() -> None:
    """An httpx trial: a report's traceback words (paths, functions) outweighed its prose, and the
    helper to fix ranked 37th (21st without them). A frame is blanked from the query's words,
    byte for byte; the prose, the message and the source line Python prints under a frame stay."""
    from cora_ci.retrieval.frames import without_places

    report = (
        "A partially read file sends the wrong length\n\nTraceback (most recent call last):\n"
        '  File "/home/u/.venv/lib/python3.12/site-packages/web/_client.py", line 14, in send_single\n'
        "    response = transport.handle_request(request)\n"
        "    at Layer.handle (/app/node_modules/router/lib/layer.js:95:5)\n"
        "github.com/spf13/viper.(*Viper).find(0x0)\n\t/home/u/go/pkg/mod/github.com/spf13/viper@v1.2/viper.go:12 +0x1d\n"
        "web.LocalProtocolError: Too little data\n"
    )
    out = without_places(report)
    assert len(out) == len(report)
    gone = (
        "_client.py",
        "send_single",
        "layer.js",
        "Layer.handle",
        "github.com",
        "(*Viper).find",
        "viper.go",
    )
    assert not [g for g in gone if g in out], out
    kept = ("partially read file", "transport.handle_request(request)", "Too little data")
    assert all(k in out for k in kept), out
    assert "most recent call" not in out  # the runtime's words around every traceback


def test_a_frame_two_formats_read_is_one_frame() -> None:
    """V8's `at /x.js:3:5` is also Rust's form: each frame once, in the report's order."""
    report = (
        "TypeError: x is not a function\n    at Layer.handle (/app/lib/router/layer.js:95:5)\n"
        "    at /app/lib/router/index.js:284:15\n    at next (/app/lib/router/index.js:280:10)\n"
    )
    assert [(c.path, c.name, c.line) for c in clues(report) if c.frame] == [
        ("/app/lib/router/layer.js", "handle", 95),
        ("/app/lib/router/index.js", None, 284),
        ("/app/lib/router/index.js", "next", 280),
    ]


def test_a_compilers_line_of_a_mentioned_path_is_read() -> None:
    """tsc's and MSBuild's `path(line,col)`, Maven's `path:[line,col]`: the path's line, as `path:line`."""
    found = clues(
        "src/cart.ts(12,5): error TS2345\n[ERROR] /src/main/java/shop/Cart.java:[30,9] cannot find symbol"
    )
    assert [(c.path, c.line, c.frame) for c in found] == [
        ("src/cart.ts", 12, False),
        ("/src/main/java/shop/Cart.java", 30, False),
    ]


def test_mentions_paths_and_dotted_names_follow_frames() -> None:
    found = clues("Calling shop.orders.Order.total fails, see src/shop/orders.py:41 (https://x.org/a/b.py).")
    assert [(c.path, c.name, c.line, c.dotted) for c in found] == [
        ("src/shop/orders.py", None, 41, ()),
        (None, "total", None, ("shop", "orders", "Order", "total")),
    ]


def test_a_rich_panels_folded_header_is_one_frame() -> None:
    """rich folds a frame's header over the panel's next line where it is wider than the panel (a
    folded line is full: one space before its border): one frame, its line number whole, and no
    piece of it read as a path; its lines blanked from the query's words."""
    from cora_ci.retrieval.frames import without_places

    report = (
        "╭──────── Traceback (most recent call last) ────────╮\n"
        "│ /home/me/.venv/lib/python3.12/site-packages/shop/c │\n"
        "│ art.py:12 in total                                 │\n"
        "│                                                    │\n"
        "│ ❱ 12 │   return sum(i.price for i in self.items)   │\n"
        "╰────────────────────────────────────────────────────╯\n"
        "TypeError: unsupported operand"
    )
    assert [(c.path, c.name, c.line, c.frame) for c in clues(report)] == [
        ("/home/me/.venv/lib/python3.12/site-packages/shop/cart.py", "total", 12, True)
    ]
    out = without_places(report)
    assert len(out) == len(report) and "art.py" not in out and "site-packages" not in out
    assert "return sum(i.price" in out and "unsupported operand" in out
    wrapped = (
        "│ /srv/shop/cart.py:12 in   │\n│ <module>                  │\n│                           │\n"
        "│ /srv/shop/cart.py:9       │\n│ in total                  │\n│                           │\n"
        "│ /srv/shop/cart.py:7 │\n│ in add              │\n"  # the path filling its line
    )
    assert [(c.path, c.name, c.line) for c in clues(wrapped)] == [
        ("/srv/shop/cart.py", "add", 7),
        ("/srv/shop/cart.py", "total", 9),
        ("/srv/shop/cart.py", None, 12),
    ]  # wrapped at a space where the next word does not fit


def test_a_python_frame_holds_the_line_of_code_printed_under_it() -> None:
    """What tells a frame's function from others of its name where the file is another version
    (`evidence._saying`); not a marker line, not the next frame, not a line too short to tell."""
    report = (
        'Traceback (most recent call last):\n  File "/srv/app.py", line 3, in <module>\n    main()\n'
        '  File "/venv/site-packages/shop/query.py", line 1507, in _fetch_all\n'
        "    self._result_cache = list(self._iterable_class(self))\n"
        "                         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        '  File "/venv/site-packages/shop/query.py", line 88, in __iter__\n'
        "KeyError: 'id'\n"
    )
    assert [(c.name, c.code) for c in clues(report) if c.frame] == [
        ("__iter__", None),  # the error's line is no code
        ("_fetch_all", "self._result_cache = list(self._iterable_class(self))"),
        (None, None),  # a module's code (`main()`: too short to tell)
    ]


@pytest.mark.parametrize(
    "boilerplate",
    [
        "thread 'main' panicked at",
        "stack backtrace:",
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
        'Exception in thread "main"',
        "goroutine 1 [running]:",
    ],
)
def test_the_runtimes_words_around_a_trace_are_no_query_words(boilerplate: str) -> None:
    """The thread that failed and a runtime's notes are the same in every report."""
    from cora_ci.retrieval.frames import without_places

    report = f"Printing a range fails\n{boilerplate} src/printer.rs:412:37:\nthe range is empty\n"
    out = without_places(report)
    assert len(out) == len(report) and not set(re.findall(r"[a-z_]{3,}", boilerplate, re.I)) & set(
        out.split()
    )
    assert "Printing a range fails" in out and "the range is empty" in out


def test_a_rust_panic_answers_its_frames_not_fn_main(tmp_path: Path) -> None:
    """bat, a trial: `thread 'main' panicked at` put the binary's `fn main` (BM25 on "main", a
    rare name) first, above `InteractivePrinter::print_line`, the innermost frame of the
    repository. The thread's name says nothing of where it failed."""
    from conftest import init_repo

    from cora_ci.build import build
    from cora_ci.bundle import open_bundle
    from cora_ci.retrieval import search

    steps = "".join(f"    fn step_{i}(&self, n: usize) -> usize {{ n + {i} }}\n" for i in range(12))
    repo = init_repo(tmp_path / "repo", {
        "src/bin/bat/main.rs": "fn main() {\n    let code = run();\n    std::process::exit(code);\n}\n\n"
                               "fn run() -> i32 {\n    bat::controller::Controller::new().run();\n    0\n}\n",
        "src/printer.rs": "pub struct InteractivePrinter { width: usize }\n\nimpl InteractivePrinter {\n"
                          "    pub fn print_line(&self, lines: &[String], n: usize) -> usize {\n"
                          "        let text = &lines[n];\n        text.len() + self.width\n    }\n" + steps + "}\n",
        "src/controller.rs": "pub struct Controller;\n\nimpl Controller {\n    pub fn new() -> Self { Controller }\n"
                             "    pub fn run(&self) {\n        crate::printer::InteractivePrinter { width: 1 }"
                             ".print_line(&[], 0);\n    }\n}\n",
    })  # fmt: skip
    build(repo, model="none")
    report = (
        "thread 'main' panicked at src/printer.rs:5:25:\ncalled `Option::unwrap()` on a `None` value\n"
        "stack backtrace:\n   0: rust_begin_unwind\n   1: core::option::unwrap_failed\n"
        "   2: bat::printer::InteractivePrinter::print_line\n   3: bat::controller::Controller::run\n"
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
    )
    bundle = open_bundle(repo / ".cora" / "index")
    found = [
        bundle.chunks.chunk(bundle.chunks.row_of[h.chunk_id]).anchor for h in search(bundle, report, k=3)
    ]
    assert found[0] == "src/printer.rs::InteractivePrinter.print_line", found
    assert "src/bin/bat/main.rs::main" not in found, found
