"""Structural chunking per language: kinds, ranges, hierarchy, anchors and method headers."""

from __future__ import annotations

import textwrap
from typing import Any

from conftest import by_anchor, run_chunk, uncovered

CSHARP = """
    // Copyright (c) Example. Licensed under MIT.
    using System;
    using System.Threading.Tasks;

    namespace Example.Managers
    {
        /// <summary>Manages agent context tests. Second sentence.</summary>
        [Serializable]
        public class AgentContextTestManager : ManagerBase
        {
            private readonly IRepo _repo;
            public string Name { get; set; }
            public event EventHandler Changed;

            public AgentContextTestManager(IRepo repo) { _repo = repo; }

            /// <summary>Adds a test. It validates first.</summary>
            [Obsolete]
            public async Task<InvokeResult> AddAgentContextTestAsync(AgentContextTest ctx, EntityHeader org, EntityHeader user)
            {
                ValidationCheck(ctx, Actions.Create);
                await _repo.AddAsync(ctx);
                return InvokeResult.Success;
            }

            public void Save(int id) { _repo.Save(id); Changed?.Invoke(this, EventArgs.Empty); }
            public void Save(string key) { _repo.Save(key); Changed?.Invoke(this, EventArgs.Empty); }
            public static Money operator +(Money a, Money b) => new Money(a.Value + b.Value, a.Currency);
        }
    }
"""


def test_csharp_kinds_hierarchy_header_and_ranges() -> None:
    r = run_chunk("src/Managers/AgentContextTestManager.cs", CSHARP, min_tokens=4)
    assert r.lang == "csharp" and r.strategy == "structural"
    chunks = by_anchor(r)
    prefix = "src/Managers/AgentContextTestManager.cs::Example.Managers.AgentContextTestManager"
    m = chunks[f"{prefix}.AddAgentContextTestAsync"]
    assert m.kind == "method"
    assert m.header == (
        "Method AddAgentContextTestAsync of class AgentContextTestManager. Signature: Task<InvokeResult> "
        "AddAgentContextTestAsync(AgentContextTest ctx, EntityHeader org, EntityHeader user). Adds a test."
    )
    assert m.hierarchy == ["namespace:Example.Managers", "class:AgentContextTestManager",
                           "method:AddAgentContextTestAsync"]  # fmt: skip
    # the range expands over the /// doc comment and the attribute; the header is not in the text
    assert m.text.startswith("        /// <summary>Adds a test.")
    assert "[Obsolete]" in m.text and "Signature:" not in m.text
    assert (m.start_line, m.end_line) == (17, 24)
    kinds = {c.kind for c in r.chunks}
    assert {"file", "type", "method", "property", "field", "event"} <= kinds
    assert chunks[f"{prefix}.Name"].kind == "property"
    assert chunks[f"{prefix}.Changed"].kind == "event"
    assert chunks[f"{prefix}._repo"].kind == "field"
    # overloads are told apart by parameter types
    assert {f"{prefix}.Save(int)", f"{prefix}.Save(string)"} <= set(chunks)
    assert chunks[f"{prefix}.operator +"].kind == "method"


def test_csharp_file_chunk_and_type_skeleton() -> None:
    r = run_chunk("M.cs", CSHARP, min_tokens=4)
    file_chunk = r.chunks[0]
    assert file_chunk.kind == "file" and file_chunk.symbol == "M.cs"
    assert "// Copyright (c) Example." in file_chunk.text
    assert "using System.Threading.Tasks;" in file_chunk.text
    assert "namespace Example.Managers" in file_chunk.text
    cls = next(c for c in r.chunks if c.kind == "type")
    assert cls.header.startswith("Class AgentContextTestManager in namespace Example.Managers. Manages agent")
    # the skeleton has member signatures, not bodies: each body line is in exactly one chunk
    assert "public async Task<InvokeResult> AddAgentContextTestAsync(" in cls.text
    assert "ValidationCheck" not in cls.text and ". . ." in cls.text
    body_line = next(i + 1 for i, t in enumerate(textwrap.dedent(CSHARP).lstrip("\n").split("\n"))
                     if "ValidationCheck" in t)  # fmt: skip
    holders = [c for c in r.chunks if body_line in c.covered_lines()]
    assert [c.kind for c in holders] == ["method"]
    # parent/children link the tree
    members = [c for c in r.chunks if c.parent == cls.id]
    assert members and sorted(cls.children) == sorted(c.id for c in members)
    assert cls.parent == file_chunk.id


def test_csharp_file_scoped_namespace() -> None:
    r = run_chunk("U.cs", """
        using System;
        namespace MyApp;

        public class UserService
        {
            public async Task<User> GetUserAsync(int id)
            {
                var user = await _db.Users.FindAsync(id);
                return user ?? throw new NotFoundException(id);
            }
        }
    """, min_tokens=4)  # fmt: skip
    m = by_anchor(r)["U.cs::MyApp.UserService.GetUserAsync"]
    assert m.hierarchy == ["namespace:MyApp", "class:UserService", "method:GetUserAsync"]
    assert "namespace MyApp;" in r.chunks[0].text


PYTHON = '''
    """Authentication helpers."""
    import os

    RETRIES = 3


    class Auth:
        """Authenticates users against the store."""

        timeout: int = 30

        @property
        def name(self) -> str:
            return "auth"

        @staticmethod
        def login(user: str, password: str) -> bool:
            """Check a user's password. Returns True when it matches."""
            digest = hash(password)
            return digest == lookup(user)


    def top_level(a, b=1):
        return a + b


    handler = lambda event: event.name

    if __name__ == "__main__":
        top_level(1)
'''


def test_python_symbols_decorators_docstrings() -> None:
    r = run_chunk("src/auth.py", PYTHON, min_tokens=4)
    chunks = by_anchor(r)
    login = chunks["src/auth.py::Auth.login"]
    assert login.text.lstrip().startswith("@staticmethod")  # expanded over the decorator
    assert login.header == (
        "Method login of class Auth. Signature: def login(user: str, password: str) -> bool. "
        "Check a user's password."
    )
    assert chunks["src/auth.py::Auth.name"].kind == "property"
    assert chunks["src/auth.py::Auth.timeout"].kind == "field"
    assert chunks["src/auth.py::top_level"].header.startswith(
        "Function top_level. Signature: def top_level(a, b=1)."
    )
    assert chunks["src/auth.py::handler"].kind == "method"  # a lambda bound to a name
    module = [c for c in r.chunks if c.kind == "module"]
    assert any("__main__" in c.text for c in module) and not any("RETRIES" in c.text for c in module)
    retries = chunks["src/auth.py::RETRIES"]  # a module's variable is a symbol, a constant by its name
    assert (retries.kind, retries.start_line, retries.text) == ("field", 4, "RETRIES = 3")
    assert retries.header == "Constant RETRIES. Declaration: RETRIES = 3."
    assert "src/auth.py::digest" not in chunks  # a function's variable is its code
    file_chunk = r.chunks[0]
    assert file_chunk.text.split("\n") == ['"""Authentication helpers."""', "import os"]
    auth = chunks["src/auth.py::Auth"]
    assert (
        "digest = hash(password)" not in auth.text
        and "def login(user: str, password: str) -> bool:" in auth.text
    )


TYPESCRIPT = """
    import { Injectable } from "@angular/core";

    /** Formats prices for display. */
    export const formatPrice = (value: number, currency = "EUR"): string => {
      return new Intl.NumberFormat("de-DE", { style: "currency", currency }).format(value);
    };

    export function parseHeaderLinks(header: string): Record<string, string> {
      const links: Record<string, string> = {};
      for (const part of header.split(",")) {
        const m = part.match(/<([^>]+)>;\\s*rel="([^"]+)"/);
        if (m) links[m[2]] = m[1];
      }
      return links;
    }

    @Injectable()
    export class PriceService<T> implements Service {
      private cache = new Map<string, number>();
      constructor(private readonly http: HttpClient) {}
      get size(): number { return this.cache.size; }
      async load(id: string): Promise<number> {
        const res = await this.http.get(`/prices/${id}`);
        this.cache.set(id, res.value);
        return res.value;
      }
      onClick = (e: Event): void => { console.log(e.type, this.cache.size, "clicked"); };
    }

    export interface Service { load(id: string): Promise<number>; }
    export type Price = { value: number; currency: string };
    export enum Currency { EUR, USD }
    export const api = {
      fetchAll() { return fetch("/all").then((r) => r.json()); },
      remove: (id: string) => fetch(`/x/${id}`, { method: "DELETE" }),
    };
"""


def test_typescript_functions_classes_and_object_methods() -> None:
    r = run_chunk("src/price.ts", TYPESCRIPT, min_tokens=4)
    chunks = by_anchor(r)
    fp = chunks["src/price.ts::formatPrice"]
    assert fp.kind == "method" and fp.text.startswith("/** Formats prices")
    assert fp.header.endswith("Formats prices for display.")
    assert chunks["src/price.ts::parseHeaderLinks"].header.startswith(
        "Function parseHeaderLinks. Signature: function parseHeaderLinks(header: string): Record<string, string>."
    )
    svc = chunks["src/price.ts::PriceService"]
    assert svc.kind == "type" and svc.text.startswith("@Injectable()")
    assert chunks["src/price.ts::PriceService.size"].kind == "property"  # a getter
    assert chunks["src/price.ts::PriceService.constructor"].kind == "method"
    assert chunks["src/price.ts::PriceService.onClick"].kind == "method"  # arrow function field
    assert chunks["src/price.ts::PriceService.cache"].kind == "field"
    assert chunks["src/price.ts::Service"].kind == "type"
    assert chunks["src/price.ts::api.fetchAll"].hierarchy == ["object:api", "method:fetchAll"]
    assert chunks["src/price.ts::api.remove"].kind == "method"


def test_tsx_and_jsx_components() -> None:
    src = """
        import React from "react";

        export const Button = ({ label, onClick }: Props) => {
          return <button className="btn" onClick={onClick}>{label}</button>;
        };

        export default function App() {
          return <div><Button label="Go" onClick={() => alert("go")} /></div>;
        }
    """
    for path, lang in (("ui/App.tsx", "tsx"), ("ui/App.jsx", "javascript")):
        text = src.replace(": Props", "") if lang == "javascript" else src
        r = run_chunk(path, text, min_tokens=4)
        assert r.lang == lang and r.strategy == "structural"
        chunks = by_anchor(r)
        assert chunks[f"{path}::Button"].kind == "method"
        assert chunks[f"{path}::App"].kind == "method"


def test_javascript_commonjs_and_classes() -> None:
    r = run_chunk("lib/util.js", """
        const path = require("path");

        function resolveAll(paths) {
          return paths.map((p) => path.resolve(p));
        }

        class Cache extends Map {
          remember(key, compute) {
            if (!this.has(key)) this.set(key, compute());
            return this.get(key);
          }
        }

        module.exports = { resolveAll, Cache };
    """, min_tokens=4)  # fmt: skip
    chunks = by_anchor(r)
    assert chunks["lib/util.js::resolveAll"].kind == "method"
    assert chunks["lib/util.js::Cache.remember"].hierarchy == ["class:Cache", "method:remember"]
    assert any("module.exports" in c.text for c in r.chunks if c.kind == "module")


def test_javascript_functions_bound_by_assignment() -> None:
    """CommonJS defines most of an API by assignment (Express's `res.json = function json(obj)`):
    each is a function of its owner, a prototype's members its type's, exports the module's own;
    a constructor's `this.x = function` is its code."""
    r = run_chunk("lib/response.js", """
        /** Copyright the authors. MIT Licensed. */

        var res = Object.create(http.ServerResponse.prototype);

        /**
         * Send JSON response.
         */

        res.json = function json(obj) {
          var body = JSON.stringify(obj);
          return this.send(body);
        };

        function Layer(path, fn) {
          this.handle = function () { return fn(); };
        }

        Layer.prototype.handle_request = function handle(req, res, next) {
          return this.handle(req, res, next);
        };

        exports.parse = (text) => text.split(";");

        class Router {
          /** Route a request. */

          route(req) { return req; }
        }

        module.exports = function createApplication() {
          return { res: res };
        };

        Object.defineProperty(Layer.prototype, "path", {
          get: function () { return this.route.path; },
          set(value) { this.route.path = value; },
        });
    """, min_tokens=4)  # fmt: skip
    chunks = by_anchor(r)
    json = chunks["lib/response.js::res.json"]
    assert (json.kind, json.hierarchy, json.symbols[:1]) == ("method", ["method:json"], ["json"])
    # its doc block a blank line above it, as Express writes them, is its own; a file's licence is not
    assert json.text.startswith("/**\n * Send JSON response.\n */\n\nres.json = function json(obj) {")
    assert "Send JSON response." in json.header
    assert not any("Copyright" in c.text for c in r.chunks if c.kind == "method")
    assert "Signature: res.json = function json(obj)." in json.header
    assert chunks["lib/response.js::Layer.handle_request"].symbols[:1] == ["handle_request"]
    assert chunks["lib/response.js::parse"].kind == "method"
    assert "Route a request." in chunks["lib/response.js::Router.route"].header  # a class's first member too
    assert chunks["lib/response.js::createApplication"].kind == "method"
    assert not [a for a in chunks if a.endswith("Layer.handle")]  # `this.handle`: the constructor's code
    # an accessor `Object.defineProperty` defines: its property's, not a file-level `get`
    accessors = {a: c.kind for a, c in chunks.items() if "Layer.path" in a}
    assert accessors == {
        "lib/response.js::Layer.path()": "property",
        "lib/response.js::Layer.path(value)": "property",
    }
    assert not [a for a in chunks if a.endswith(("::get", "::set"))]


def test_java_annotations_constructors_overloads() -> None:
    r = run_chunk("src/main/java/com/ex/Repo.java", """
        package com.ex;

        import java.util.List;

        /** A repository of users. */
        @Repository
        public class Repo extends Base {
            private final Db db;

            public Repo(Db db) { this.db = db; }

            /** Finds users by name. */
            @Override
            public List<User> find(String name) { return db.query("name", name); }

            public List<User> find(int age, boolean active) { return db.query("age", age); }

            public List<User> find(@Nullable final String... names) { return db.query("names", names); }
        }
    """, min_tokens=4)  # fmt: skip
    chunks = by_anchor(r)
    p = "src/main/java/com/ex/Repo.java::Repo"
    assert chunks[p].text.startswith("/** A repository of users. */\n@Repository")
    assert chunks[f"{p}.find(String)"].text.lstrip().startswith("/** Finds users by name. */")
    assert chunks[f"{p}.find(String)"].header.startswith(
        "Method find of class Repo. Signature: List<User> find(String name)."
    )
    assert f"{p}.find(int, boolean)" in chunks
    assert f"{p}.find(String...)" in chunks  # varargs by type, not `@Nullable final String... names`
    assert chunks[f"{p}.Repo"].kind == "method"
    assert "package com.ex;" in r.chunks[0].text and "import java.util.List;" in r.chunks[0].text


def test_java_enum_constants_and_annotation_elements_are_members() -> None:
    """`JavaVersion.JAVA_17` was findable only as its whole enum (commons-lang's spans 150 lines),
    and a constant's own methods were the enum's `oppositeState()#2`: a constant is a field with
    its body, an annotation type's element a method."""
    r = run_chunk("src/E.java", """
        package x;

        public enum State {
            /** Closed: calls pass. */
            CLOSED {
                @Override
                public State oppositeState() { return OPEN; }
            },
            OPEN(2);

            public abstract State oppositeState();
        }

        @interface Timed {
            long timeout() default 0L;
        }
    """, min_tokens=0)  # fmt: skip
    got = {
        a.split("::")[1]: (c.kind, c.start_line, c.end_line) for c in r.chunks for a in c.anchors if "::" in a
    }
    assert got["State.CLOSED"] == ("field", 4, 8) and got["State.OPEN"] == ("field", 9, 9)
    assert got["State.oppositeState"] == ("method", 11, 11) and "State.oppositeState()#2" not in got
    assert got["Timed.timeout"] == ("method", 15, 15)
    assert by_anchor(r)["src/E.java::State.CLOSED"].hierarchy[-1] == "constant:CLOSED"


def test_a_grammar_of_lines_reads_the_files_last_line() -> None:
    """A go.mod, a Makefile, a Dockerfile: their grammars end each line with its line break, and
    the file's last was not parsed with it (CORA-CHK-002 "1 parse error" on every go.mod)."""
    files = {
        "go.mod": "module example.com/app\n\ngo 1.22\n\nrequire (\n\tgithub.com/a/b v1.0.0\n)\n",
        "Makefile": "all: build\n\nbuild:\n\tgo build ./...\n",
        "Dockerfile": 'FROM golang:1.22\nRUN go build ./...\nCMD ["app"]\n',
    }
    for path, text in files.items():
        r = run_chunk(path, text.encode())
        assert r.strategy == "structural" and not [d for c in r.chunks for d in c.diagnostics], path


def test_typescript_without_semicolons_reads_call_signatures() -> None:
    """Prettier's `semi: false` and an interface of call signatures, one a line beginning `<`:
    hono's `types.ts` was one parse error (CORA-CHK-001, chunked by lines), its `Handler` not
    found. JSX lines begin with `<` too: a TSX component is read as before."""
    r = run_chunk("src/types.ts", """
        export interface Get {
          <Key extends keyof ContextVariableMap>(key: Key): ContextVariableMap[Key]
          <Key extends keyof E['Variables']>(key: Key): E['Variables'][Key]
        }

        export type Handler = (c: Context) => Response
    """, min_tokens=0)  # fmt: skip
    assert r.strategy == "structural" and not [d for c in r.chunks for d in c.diagnostics]
    assert {"src/types.ts::Get", "src/types.ts::Handler"} <= set(by_anchor(r))
    tsx = run_chunk("src/app.tsx", """
        export function App() {
          return (
            <div>
              <p>hi</p>
            </div>
          )
        }
    """)  # fmt: skip
    assert "src/app.tsx::App" in by_anchor(tsx) and not [d for c in tsx.chunks for d in c.diagnostics]


def test_a_python_blocks_first_member_has_the_comments_above_it() -> None:
    """tree-sitter-python puts the comments that open a block before the block: httpx's
    `ClientState.UNOPENED` lost the comment above it, which `OPENED` and `CLOSED` kept."""
    r = run_chunk("en.py", """
        class ClientState(enum.Enum):
            # UNOPENED: instantiated, not used yet.
            UNOPENED = 1
            # OPENED: a request sent.
            OPENED = 2
    """, min_tokens=0)  # fmt: skip
    got = {a.split("::")[1]: (c.start_line, c.end_line) for c in r.chunks for a in c.anchors if "::" in a}
    assert got["ClientState.UNOPENED"] == (2, 3) and got["ClientState.OPENED"] == (4, 5)


def test_go_methods_are_anchored_under_their_receiver() -> None:
    r = run_chunk("srv/server.go", """
        // Package srv serves HTTP.
        package srv

        import "net/http"

        // Server holds the listener.
        type Server struct {
            Addr string
        }

        // Start starts listening on the given port.
        func (s *Server) Start(port int) error {
            return http.ListenAndServe(s.Addr, nil)
        }
    """, min_tokens=4)  # fmt: skip
    chunks = by_anchor(r)
    start = chunks["srv/server.go::Server.Start"]
    assert start.header.startswith(
        "Method Start of type Server. Signature: func (s *Server) Start(port int) error."
    )
    assert start.text.startswith("// Start starts")
    assert chunks["srv/server.go::Server"].kind == "type"


GO_DATA = """
    package conf

    // ErrNotFound is returned when no file is found.
    var ErrNotFound = errors.New("not found")

    // Supported file types.
    var (
        // SupportedExts are the extensions read.
        SupportedExts = []string{"json", "toml"}
        other         int
    )

    const keyDelimiter = "."

    // Kinds of source.
    const (
        File Kind = iota
        Env
    )

    // Viper holds the configuration.
    type Viper struct {
        // keyDelim is the delimiter of nested keys.
        keyDelim string
        Name, Alias string
        io.Reader
    }

    func (v *Viper) Get(key string) any {
        var found any
        const depth = 3
        return found
    }
"""


def test_go_variables_constants_and_struct_fields_are_symbols() -> None:
    """A file's `var` and `const` declarations, alone or in a block, and a struct's fields are
    symbols (an identifier query finds `ErrNotFound`, an outline lists them); a function's are its
    code. Of a block's names the first takes in `var (` and the docs above it, the last `)`, so no
    row of it is left to the file's anonymous code."""
    r = run_chunk("conf/conf.go", GO_DATA, min_tokens=0)
    got = {
        a.split("::")[1]: (c.kind, c.start_line, c.end_line) for c in r.chunks for a in c.anchors if "::" in a
    }
    assert got["ErrNotFound"] == ("field", 3, 4)
    assert got["SupportedExts"] == ("field", 6, 9) and got["other"] == ("field", 10, 11)
    assert got["keyDelimiter"] == ("field", 13, 13)
    assert got["File"] == ("field", 15, 17) and got["Env"] == ("field", 18, 19)
    assert got["Viper.keyDelim"] == ("field", 23, 24) and got["Viper.Name"][0] == "field"
    assert got["Viper"][0] == "type" and got["Viper.Get"][0] == "method"
    assert not any(name in got for name in ("found", "depth", "Alias", "Reader"))
    assert not [c for c in r.chunks if c.kind == "module"]
    by = by_anchor(r)
    assert by["conf/conf.go::ErrNotFound"].header == (
        'Variable ErrNotFound. Declaration: ErrNotFound = errors.New("not found"). '
        "ErrNotFound is returned when no file is found."
    )
    assert by["conf/conf.go::File"].hierarchy == ["constant:File"]
    assert uncovered(r, textwrap.dedent(GO_DATA).lstrip("\n").encode()) == []


def test_a_files_variables_and_constants_are_symbols_in_other_languages() -> None:
    """JavaScript's and TypeScript's top-level `const`/`let`, Rust's `const` and `static`,
    Python's module assignments; not a module held in a variable (`require`), another name for
    something defined elsewhere (`Reader = CReader`) or a function's locals."""
    js = run_chunk("lib/limits.ts", """
        const fs = require("fs");
        const { join } = require("path");
        export const MAX_RETRIES = 5;
        let counter = 0;
        export const Reader = CReader;
        export const Button = forwardRef((props: Props, ref: Ref) => null);

        export function bump(): number {
            const step = 1;
            return (counter += step);
        }

        describe("bump", () => {
            it("adds one", () => {
                const before = counter;
                expect(bump()).toBe(before + 1);
            });
        });
    """, min_tokens=0)  # fmt: skip
    got = {c.anchor: (c.kind, c.hierarchy) for c in js.chunks if c.anchor and "::" in c.anchor}
    assert got["lib/limits.ts::MAX_RETRIES"] == ("field", ["constant:MAX_RETRIES"])
    assert by_anchor(js)["lib/limits.ts::counter"].hierarchy == ["variable:counter"]
    assert got["lib/limits.ts::Button"] == ("method", ["function:Button"])  # a wrapped function is code
    # not a callback's locals either (hono's tests gave 4,026 of them)
    assert not {"fs", "join", "Reader", "step", "before"} & {
        a.split("::")[1] for c in js.chunks for a in c.anchors
    }
    rust = run_chunk("src/lib.rs", """
        /// The default timeout.
        pub const TIMEOUT: u32 = 30;
        static NAMES: [&str; 2] = ["a", "b"];

        pub fn f() -> u32 {
            const LOCAL: u32 = 1;
            TIMEOUT + LOCAL
        }
    """, min_tokens=0)  # fmt: skip
    rs = by_anchor(rust)
    assert rs["src/lib.rs::TIMEOUT"].text.startswith("/// The default timeout.")
    assert rs["src/lib.rs::NAMES"].hierarchy == ["static:NAMES"] and "src/lib.rs::LOCAL" not in rs
    py = run_chunk("pkg/io.py", """
        import os
        from ._c import CReader

        __all__ = ["Reader"]
        logger = make_logger(__name__)
        Reader = CReader
        _ = os.sep

        if typing.TYPE_CHECKING:
            Event = dict[str, str]
    """, min_tokens=0)  # fmt: skip
    assert [a for c in py.chunks for a in c.anchors if "::" in a] == ["pkg/io.py::logger"]


def test_rust_impls_traits_docs_and_attributes() -> None:
    r = run_chunk("src/point.rs", """
        use std::fmt;

        /// A point in the plane.
        #[derive(Debug, Clone)]
        pub struct Point {
            x: i32,
            y: i32,
        }

        impl fmt::Display for Point {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "({}, {})", self.x, self.y)
            }
        }
    """, min_tokens=4)  # fmt: skip
    chunks = by_anchor(r)
    point = chunks["src/point.rs::Point"]
    assert point.text.startswith("/// A point in the plane.\n#[derive(Debug, Clone)]")
    fmt_ = chunks["src/point.rs::<Point as Display>.fmt"]
    assert fmt_.hierarchy == ["impl:<Point as Display>", "method:fmt"]


def test_generic_structural_for_other_grammars() -> None:
    r = run_chunk("lib/greeter.rb", """
        class Greeter
          def initialize(name)
            @name = name
          end

          def greet
            "Hello, #{@name}!"
          end
        end
    """, min_tokens=2)  # fmt: skip
    assert r.lang == "ruby" and r.strategy == "structural"
    assert {"lib/greeter.rb::Greeter", "lib/greeter.rb::Greeter.greet"} <= set(by_anchor(r))


def test_ruby_class_methods_and_constants_are_symbols() -> None:
    """`def self.env_for` is a method of its class as `def env_for` is (a rack trial: all 19 class
    methods of its `lib/` were code of their class's outline, `show` could not find them), and a
    constant (`STATUS_CODES = {...}`) is its module's, as a Python module's constant is."""
    r = run_chunk("lib/shop/cart.rb", """
        module Shop
          class Cart
            STATUS_CODES = {
              100 => 'Continue',
              200 => 'OK',
            }
            Alias = Shop

            def self.env_for(uri, opts = {})
              env = {}
              env[:uri] = uri
              env
            end

            def total
              @items.sum
            end
          end
        end
    """, min_tokens=2)  # fmt: skip
    chunks = by_anchor(r)
    env_for = chunks["lib/shop/cart.rb::Shop.Cart.env_for"]
    assert env_for.kind == "method" and env_for.text.lstrip().startswith("def self.env_for(uri, opts = {})")
    codes = chunks["lib/shop/cart.rb::Shop.Cart.STATUS_CODES"]
    assert codes.kind == "field" and codes.hierarchy[-1] == "constant:STATUS_CODES"
    assert "lib/shop/cart.rb::Shop.Cart.Alias" not in chunks  # another name for a module


def test_a_module_that_only_wraps_classes_is_their_namespace() -> None:
    """jekyll, a trial: `module Jekyll` around a file's one small class made one chunk anchored
    `Jekyll`, the name of hundreds of its files, and the class's doc comment (the grammar puts a
    body's leading comments before it) was the module's. The class is the chunk, with its doc;
    the module's lines are the file's, as a namespace's are; a module with code of its own stays
    a type, and so does a class."""
    page_rb = """
        # frozen_string_literal: true

        module Jekyll
          # A Jekyll::Page subclass to handle processing files without reading it to
          # determine the page-data and page-content based on Front Matter delimiters.
          class PageWithoutAFile < Page
            def read_yaml(*)
              @data ||= {}
            end
          end
        end
    """
    r = run_chunk("lib/jekyll/page_without_a_file.rb", page_rb)
    chunks = by_anchor(r)
    assert "lib/jekyll/page_without_a_file.rb::Jekyll" not in chunks
    page = chunks["lib/jekyll/page_without_a_file.rb::Jekyll.PageWithoutAFile"]
    assert page.kind == "type" and page.text.lstrip().startswith("# A Jekyll::Page subclass")
    assert uncovered(r, textwrap.dedent(page_rb).lstrip("\n").encode()) == []
    helpers = by_anchor(run_chunk("lib/shop/helpers.rb", """
        module Helpers
          VERSION = '1.0'

          class Money
            def cents
              @cents
            end
          end
        end
    """))  # fmt: skip
    assert "lib/shop/helpers.rb::Helpers" in helpers
    # a class is a type whatever it holds: Kotlin's sealed hierarchy is asked for by its name
    sealed = by_anchor(run_chunk("src/Result.kt", """
        sealed class Result {
            data class Ok(val value: Int) : Result()
            data class Err(val message: String) : Result()
        }
    """))  # fmt: skip
    assert "src/Result.kt::Result" in sealed


def test_rubys_attributes_are_its_classs_fields_one_chunk_a_line() -> None:
    """A rack trial: "where is ip_filter defined" (`class << self; attr_accessor :ip_filter`)
    answered `trusted_proxy?`. Each name `attr_*` defines is a field; names one line declares
    share its one chunk (not one chunk of the same text each)."""
    r = run_chunk("lib/shop/cart.rb", """
        module Shop
          class Cart
            class << self
              attr_accessor :ip_filter
            end
            attr_reader :items, :total

            def initialize
              @items = []
            end
          end
        end
    """, min_tokens=0)  # fmt: skip
    fields = [(c.anchors, c.start_line) for c in r.chunks if c.kind == "field"]
    assert fields == [(["lib/shop/cart.rb::Shop.Cart.ip_filter"], 4),
                      (["lib/shop/cart.rb::Shop.Cart.items", "lib/shop/cart.rb::Shop.Cart.total"], 6)], fields  # fmt: skip


def test_rubys_requires_are_its_files_imports() -> None:
    """A rack trial: `generator.rb:3-3 module None`, a chunk of its `require` lines, came back as a
    result; they are the file chunk's, as other languages' imports are."""
    r = run_chunk("lib/shop/gen.rb", """
        # frozen_string_literal: true

        require 'set'
        require_relative 'cart'

        module Shop
          def self.make
            Set.new
          end
        end
    """, min_tokens=0)  # fmt: skip
    assert [c.kind for c in r.chunks] == ["file", "type", "method"], [
        (c.kind, c.start_line) for c in r.chunks
    ]
    assert "require_relative 'cart'" in r.chunks[0].text


def test_kotlin_declarations_without_name_fields() -> None:
    """Kotlin's grammar gives a class or function no `name` field: the name is the identifier among
    its children (after an extension function's receiver), and the keyword says what a class is."""
    r = run_chunk("src/Cart.kt", """
        package shop

        class Cart(val items: List<Int>) {
            fun total(): Int = items.sum()

            companion object {
                fun empty(): Cart = Cart(listOf())
            }
        }

        object Registry {
            val carts = mutableListOf<Cart>()
        }

        interface Priced {
            fun price(): Int
        }

        enum class Size { SMALL, LARGE }

        fun String.shout(): String = uppercase() + "!"
    """, min_tokens=2)  # fmt: skip
    assert r.lang == "kotlin" and r.strategy == "structural"
    chunks = by_anchor(r)
    labels = {a.split("::")[1]: c.hierarchy[-1] for a, c in chunks.items() if "::" in a and c.hierarchy}
    assert labels["Cart"] == "class:Cart" and labels["Cart.total"] == "method:total"
    assert labels["Registry"] == "object:Registry" and labels["Priced"] == "interface:Priced"
    assert labels["Size"] == "enum:Size" and labels["shout"] == "function:shout"


def test_swift_types_and_extensions_by_their_keyword() -> None:
    r = run_chunk("Sources/Point.swift", """
        struct Point {
            var x: Int
            func twice() -> Int { return x * 2 }
        }

        extension Point {
            func thrice() -> Int { return x * 3 }
        }

        protocol Shape {
            func area() -> Double
        }
    """, min_tokens=2)  # fmt: skip
    types = sorted(c.hierarchy[-1] for c in r.chunks if c.kind == "type")
    assert types == ["extension:Point", "protocol:Shape", "struct:Point"]


def test_swift_and_kotlin_properties_are_members() -> None:
    """A `var`/`val` of a Swift or Kotlin type is a property when code computes or observes it or a
    protocol requires it, else a field; it was none (its code was the type's), and a protocol's
    requirement was a protocol named `var configuration`."""
    swift = run_chunk("Sources/Command.swift", """
        public protocol ParsableCommand {
            /// Configuration for this command.
            static var configuration: CommandConfiguration { get }
        }

        extension ParsableCommand {
            public static var _commandName: String {
                configuration.commandName ?? "main"
            }
        }

        struct Point {
            var x: Int
            var norm: Double { didSet { print(norm) } }
        }

        let version = "1.0"
    """, min_tokens=0)  # fmt: skip
    got = {
        a.split("::")[1]: (c.kind, c.start_line, c.end_line) for a, c in by_anchor(swift).items() if "::" in a
    }
    assert got["ParsableCommand.configuration"] == ("property", 2, 3)  # with its doc comment
    assert got["ParsableCommand._commandName"] == ("property", 7, 9)
    assert got["Point.x"][0] == "field" and got["Point.norm"][0] == "property"
    assert got["version"][0] == "field" and not any(" " in name for name in got)  # a file's constant, as Go's
    kotlin = run_chunk("src/Cart.kt", """
        class Cart(val items: List<Int>) {
            val total: Int get() = items.sum()
            private var touched = 0
            val summary by lazy { "cart" }
        }

        val registry = mutableListOf<Cart>()
    """, min_tokens=0)  # fmt: skip
    got = {a.split("::")[1]: c.kind for a, c in by_anchor(kotlin).items() if "::" in a}
    assert (got["Cart.total"], got["Cart.touched"], got["Cart.summary"]) == ("property", "field", "property")
    assert got["registry"] == "field"  # the file's own (revision 60)


def test_r_functions_are_named_by_what_they_are_assigned_to() -> None:
    """R's grammar names a function definition by its keyword: the name is the assignment's."""
    r = run_chunk("R/greet.R", """
        greet <- function(name) {
          paste("hello", name, "and welcome to the R script that greets people")
        }

        shout = function(x) {
          toupper(paste(x, "and more text so that it is a chunk of its own", "!"))
        }

        doubled <- lapply(1:3, function(i) {
          i * 2 + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11 + 12 + 13 + 14
        })
    """, min_tokens=2)  # fmt: skip
    names = sorted(s for c in r.chunks if c.kind == "method" for s in c.symbols)
    assert names == ["greet", "shout"]


def test_an_r_functions_roxygen_doc_is_its_own() -> None:
    """A tidyverse trial (glue): the `#'` block above `glue_collapse <- function(...)` was the
    file's module code, the function its three lines (the assignment, not the function inside
    it, stands where the doc ends)."""
    r = run_chunk("R/glue.R", """
        library(stats)

        #' Collapse a character vector
        #'
        #' @param x The character vector to collapse.
        #' @param sep a character string to separate the terms.
        #' @export
        glue_collapse <- function(x, sep = "") {
          paste0(x, collapse = sep)
        }

        doubled <- lapply(1:3, function(i) i * 2)
    """, min_tokens=0)  # fmt: skip
    (c,) = [c for c in r.chunks if c.symbols == ["glue_collapse"]]
    assert (c.start_line, c.end_line) == (3, 10) and c.text.startswith("#' Collapse a character vector")


HELPERS = "".join(
    f"inline int helper{i}(int a) {{\n  int b = a * {i};\n  return b + {i};\n}}\n\n" for i in range(8)
)
BOX_H = (
    "#ifndef LIB_BOX_H_\n#define LIB_BOX_H_\n\n#include <string>\n\nnamespace lib {\n\n"
    "template <typename T> class Box {\n public:\n  T get() const { return value_; }\n\n private:\n  T value_;\n};\n\n"
    + HELPERS
    + "inline void emit(int x) {\n#if LIB_FAST\n  if (x >= 100) {\n#else\n  {\n#endif\n    write(x);\n  }\n}\n\n"
    "}  // namespace lib\n\n#endif  // LIB_BOX_H_\n"
)


def test_a_cpp_header_in_dot_h_is_parsed_as_cpp_and_keeps_its_definitions() -> None:
    """`.h` is C, C++ or Objective-C by what the file says. And a branch of conditional compilation
    that opens a brace the other closes makes the whole include guard one ERROR node: what the
    walk finds intact inside it (the class, the functions) is parsed, so the file is not cut
    into lines (it was, as C: the guard's 69 lines one error)."""
    r = run_chunk("include/lib/box.h", BOX_H)
    assert r.lang == "cpp" and r.strategy == "structural"
    found = sorted(s for c in r.chunks if c.kind in ("method", "type") for s in c.symbols)
    assert found == ["Box", *(f"helper{i}" for i in range(8))]
    c_header = '#include <stdio.h>\n#ifdef __cplusplus\nextern "C" {\n#endif\nint add(int a, int b);\n'
    assert run_chunk("include/add.h", c_header).lang == "c"
    objc = "#import <Foundation/Foundation.h>\n@interface Box : NSObject\n@end\n"
    assert run_chunk("Box.h", objc).lang == "objc"


def test_a_cpp_template_line_and_the_doc_above_it_belong_to_its_definition() -> None:
    """`template <...>` on its own line wraps the function or class after it: the chunk starts
    there, with the doc comment above it (they were module code, the doc the class's no more)."""
    src = (
        "namespace lib {\n\n/// A value in a box.\ntemplate <typename T,\n          typename A = int>\n"
        "class Box {\n public:\n  template <typename U>\n  U get() const { return U(); }\n};\n\n"
        "// Makes one.\ntemplate <typename T>\nauto make_box(T v) -> Box<T> {\n  return Box<T>{v};\n}\n\n}\n"
    )
    r = run_chunk("box.hpp", src, min_tokens=0)
    got = {c.anchor: (c.start_line, c.end_line, c.header) for c in r.chunks if c.kind in ("type", "method")}
    assert got["box.hpp::lib.Box"][:2] == (3, 10) and got["box.hpp::lib.Box"][2].endswith("A value in a box.")
    assert got["box.hpp::lib.Box.get"][:2] == (8, 9)
    assert got["box.hpp::lib.make_box"][:2] == (12, 16)
    assert uncovered(r, src.encode()) == []


CPP_NAMESPACES = (
    "#include <cstdint>\n\nnamespace leveldb {\nnamespace {\nint helper(int a) { return a; }\n}  // namespace\n\n"
    "class DBImpl {\n public:\n  int Write(int x);\n};\n\nint DBImpl::Write(int x) { return helper(x); }\n\n"
    "namespace dragonbox {\ntemplate <typename T> auto to_decimal(T x) -> int { return 0; }\n}  // namespace dragonbox\n"
    "}  // namespace leveldb\n"
)


def test_a_cpp_namespace_is_in_its_definitions_anchors_and_headers() -> None:
    """As C#'s and Rust's modules are: `leveldb.DBImpl::Write`, `fmt.detail.parse_width`; an
    anonymous namespace names nothing. They were left out, so a question that says the namespace
    ("how are floats formatted (dragonbox)") did not reach `dragonbox`'s functions."""
    r = run_chunk("db/db_impl.cc", CPP_NAMESPACES, min_tokens=0)
    got = {c.anchor.split("::", 1)[1]: c for c in r.chunks if c.kind in ("type", "method")}
    assert sorted(got) == [
        "leveldb.DBImpl",
        "leveldb.DBImpl.Write",  # the class's declaration of it
        "leveldb.DBImpl::Write",
        "leveldb.dragonbox.to_decimal",
        "leveldb.helper",
    ]
    assert got["leveldb.DBImpl.Write"].hierarchy[-1] == "declaration:Write"
    assert got["leveldb.dragonbox.to_decimal"].header.startswith(
        "Function to_decimal in namespace dragonbox."
    )


def test_a_cpp_function_returning_a_reference_is_named_by_its_declarator() -> None:
    """`const TestPartResult& TestPartResultArray::GetTestPartResult(int) const {` was anchored
    `testing.TestPartResult` (its return type), so the name found its declaration, not it."""
    src = (
        "namespace testing {\n"
        "const Part& Parts::Get(int index) const {\n  return array_[index];\n}\n\n"
        "class Parts {\n public:\n  Parts& operator=(const Parts&) = delete;\n"
        "  const Part& first() const { return array_[0]; }\n};\n"
        "std::ostream& operator<<(std::ostream& os, const Part& p) {\n  return os << p.name;\n}\n"
        "}  // namespace testing\n"
    )
    r = run_chunk("src/parts.cc", src, min_tokens=0)
    anchors = sorted(a.split("::", 1)[1] for c in r.chunks for a in c.anchors if "::" in a)
    assert anchors == [
        "testing.Parts", "testing.Parts.first", "testing.Parts.operator=", "testing.Parts::Get", "testing.operator<<",
    ]  # fmt: skip


def test_a_c_type_is_defined_where_its_body_is_and_named_by_its_typedef() -> None:
    """`struct foo;` and `struct foo *p;` name a type, they do not define it: they were types of
    their own, so the definition came third, anchored `foo#3` (leveldb's `version_set.h` declares
    nine classes ahead, its `Version` was `Version#2`). An anonymous `typedef struct {...} Point;`
    is `Point`; a typedef of a tagged type declared elsewhere defines its own name (revision 76:
    libuv's API says `uv_loop_t` for its `struct uv_loop_s`, and a query of it found no definition)."""
    c = (
        "struct foo;\nstruct foo *head;\nvoid f(struct foo *x) { struct foo *y = x; }\n"
        "struct foo {\n  int a;\n};\ntypedef struct foo foo_t;\n"
        "typedef struct {\n  int x;\n  int y;\n} Point;\ntypedef enum { RED, BLUE } color_t;\n"
    )
    r = run_chunk("list.c", c, min_tokens=0)
    got = {c.anchor: (c.kind, c.start_line, c.end_line) for c in r.chunks if c.kind in ("type", "method")}
    assert got == {
        "list.c::f": ("method", 3, 3), "list.c::foo": ("type", 4, 6), "list.c::foo_t": ("type", 7, 7),
        "list.c::Point": ("type", 8, 11), "list.c::color_t": ("type", 12, 12),
    }  # fmt: skip
    cpp = (
        "class Writer;\nclass Version;\n\nclass Version {\n public:\n  friend class Writer;\n  int n_;\n};\n"
    )
    r = run_chunk("version_set.h", cpp, min_tokens=0)
    assert r.lang == "cpp"
    assert [(c.anchor, c.start_line) for c in r.chunks if c.kind == "type"] == [("version_set.h::Version", 4)]


def test_a_c_or_cpp_type_alias_is_a_type_named_by_its_alias_and_a_class_keeps_its_own() -> None:
    """A typedef of a type declared elsewhere, of a function pointer or of a builtin, and C++'s
    `using` alias at namespace level, name types the code uses (libuv's `uv_loop_t`, `uv_close_cb`,
    `uv_file`): each is a symbol. A class's own `using char_type = ...;` stays in its code (as
    symbols, spdlog's `custom_flags` came first for a question about its pattern formatter)."""
    c = (
        "typedef struct uv_loop_s uv_loop_t;\ntypedef void (*uv_close_cb)(uv_loop_t* loop);\n"
        "typedef int uv_file;\ntypedef unsigned long long u64, *u64p;\n"
    )
    r = run_chunk("uv.h", c, min_tokens=0)
    labels = {
        a.split("::")[1]: (ch.kind, ch.hierarchy[-1]) for ch in r.chunks for a in ch.anchors if "::" in a
    }
    assert labels == {
        name: ("type", f"typedef:{name}") for name in ("uv_loop_t", "uv_close_cb", "uv_file", "u64")
    }
    cpp = (
        "namespace spd {\nusing sink_ptr = std::shared_ptr<sink>;\n\nclass formatter {\n public:\n"
        "  using custom_flags = std::unordered_map<char, int>;\n  void format(int n) { n_ = n; }\n"
        " private:\n  int n_;\n};\n}  // namespace spd\n"
    )
    r = run_chunk("common.h", cpp, min_tokens=0)
    assert r.lang == "cpp"
    anchors = sorted(a.split("::", 1)[1] for ch in r.chunks for a in ch.anchors if "::" in a)
    assert "spd.sink_ptr" in anchors and "spd.formatter.format" in anchors
    assert not any(a.endswith("custom_flags") for a in anchors), anchors


def test_a_c_test_case_a_macro_defines_is_named_by_its_suite_and_name() -> None:
    """GoogleTest's `TEST(Suite, Name) {` parses as a function named `TEST`: each case was `TEST`,
    `TEST#2`, ..., renumbered by any case added above. Its arguments name it, as a Go method's
    receiver and name do; a function with an upper-case name and typed parameters is a function."""
    src = (
        '#include "gtest/gtest.h"\n\nTEST(FormatTest, Precision) {\n  EXPECT_EQ(1, 1);\n}\n\n'
        "TEST_F(DBTest, Empty) {\n  EXPECT_TRUE(db_);\n}\n\nBOOST_AUTO_TEST_CASE(parses_ints) {\n}\n\n"
        "int MAX(int a, int b) { return a > b ? a : b; }\n"
    )
    r = run_chunk("db/db_test.cc", src, min_tokens=0)
    anchors = [c.anchor.split("::")[1] for c in r.chunks if c.kind == "method"]
    assert anchors == ["FormatTest.Precision", "DBTest.Empty", "parses_ints", "MAX"]


def test_objective_c_classes_categories_protocols_and_their_members() -> None:
    """`@interface`, `@implementation` and `@protocol` hold their members as their own children:
    the generic rule found the methods but no class (and a property's `NSString *name` was a
    struct `NSString`), and `NS_ASSUME_NONNULL_BEGIN` before `@interface` left no symbol at all."""
    src = (
        '#import "Box.h"\n\nNS_ASSUME_NONNULL_BEGIN\n\n@protocol Boxing <NSObject>\n- (void)box:(id)thing;\n@end\n\n'
        "@interface Box : NSObject <Boxing>\n@property (nonatomic, copy) NSString *name;\n"
        "+ (instancetype)boxNamed:(NSString *)name;\n@end\n\n@interface Box (Extras)\n- (void)shake;\n@end\n\n"
        "NS_ASSUME_NONNULL_END\n\n@implementation Box {\n  NSInteger _size;\n}\n\n"
        "+ (instancetype)boxNamed:(NSString *)name {\n  return [[self alloc] init];\n}\n\n@end\n"
    )
    r = run_chunk("Box.m", src, min_tokens=0)
    got = [
        (c.kind, c.anchor.split("::")[1], c.hierarchy[-1])
        for c in r.chunks
        if c.kind not in ("file", "module")
    ]
    assert got == [
        ("type", "Boxing", "protocol:Boxing"), ("method", "Boxing.box", "method:box"),
        ("type", "Box", "interface:Box"), ("property", "Box.name", "property:name"),
        ("method", "Box.boxNamed", "method:boxNamed"), ("type", "Box#2", "extension:Box"),
        ("method", "Box.shake", "method:shake"), ("type", "Box#3", "implementation:Box"),
        ("field", "Box._size", "field:_size"), ("method", "Box.boxNamed#2", "method:boxNamed"),
    ]  # fmt: skip
    impl = next(c for c in r.chunks if c.anchor == "Box.m::Box.boxNamed#2")
    assert impl.header.endswith("Signature: + (instancetype)boxNamed:(NSString *)name.")


def test_text_that_is_not_the_language_is_still_cut_into_lines() -> None:
    """A mistyped file (Python saved as `.c`, prose as `.java`) yields stray definitions at best:
    most of it unparsed, it is chunked by lines as before."""
    python = "".join(
        f"def f{i}(x):\n    return {{'a': [x, {i}],\n            'b': (x, x)}}\n\n" for i in range(30)
    )
    prose = "".join(
        f"The parser reads section {i} (see below) and then {{ writes }} its output.\n" for i in range(60)
    )
    for path, text in (("lib/util.c", python), ("docs/Notes.java", prose), ("app/main.js", python)):
        r = run_chunk(path, text)
        assert r.strategy == "lines", (path, r.strategy)


def _labels(r: Any) -> dict[str, tuple[str, int, int]]:
    """Each anchored symbol's qualified name -> (hierarchy label, first line, last line)."""
    return {a.split("::", 1)[1]: (c.hierarchy[-1], c.start_line, c.end_line)
            for c in r.chunks if c.hierarchy for a in c.anchors}  # fmt: skip


def test_elixir_modules_and_functions_are_calls() -> None:
    """`defmodule` and `def` are calls in Elixir's grammar: a module is a type, its functions
    (guards and private ones too) and macros are its members, and `@doc`/`@spec` above a
    function belong to it."""
    r = run_chunk("lib/shop/cart.ex", """
        defmodule Shop.Cart do
          @moduledoc "A cart of items."

          @doc "Adds an item to the cart, once."
          @spec add(t(), item()) :: t()
          def add(cart, item) when is_map(item) do
            if item in cart.items, do: cart, else: %{cart | items: [item | cart.items]}
          end

          defp total(items), do: Enum.sum(Enum.map(items, & &1.price))

          defmacro empty?(cart) do
            quote do: unquote(cart).items == []
          end

          defmodule Item do
            def new(name, price), do: %{name: name, price: price}
          end
        end
    """, min_tokens=2)  # fmt: skip
    labels = _labels(r)
    assert labels["Shop.Cart"][0] == "module:Shop.Cart"
    assert labels["Shop.Cart.add"] == ("function:add", 4, 8)  # from its @doc
    assert labels["Shop.Cart.total"][0] == "function:total"
    assert labels["Shop.Cart.empty?"][0] == "macro:empty?"
    assert labels["Shop.Cart.Item.new"][0] == "function:new"


def test_zig_declarations_are_functions_and_bound_containers() -> None:
    r = run_chunk("src/point.zig", """
        const std = @import("std");

        /// Adds two numbers.
        pub fn add(a: i32, b: i32) i32 {
            return a + b;
        }

        pub const Point = struct {
            x: i32,
            y: i32,

            pub fn twice(self: Point) i32 {
                return self.x * 2 + self.y * 2;
            }
        };

        const Color = enum { red, green };
    """, min_tokens=2)  # fmt: skip
    labels = _labels(r)
    assert labels["add"] == ("function:add", 3, 6)  # with its doc comment
    assert labels["Point"][0] == "struct:Point" and labels["Point.twice"][0] == "method:twice"
    assert labels["Color"][0] == "enum:Color"


def test_dart_functions_are_a_signature_and_the_body_after_it() -> None:
    r = run_chunk("lib/src/shape.dart", """
        /// A shape.
        abstract class Shape {
          const Shape();

          double get area;

          double scaled(double factor) {
            return area * factor;
          }
        }

        int countSides(Shape s) {
          return s is Square ? 4 : 0;
        }

        mixin Named {
          String get name => 'shape';
        }

        extension Describe on Shape {
          String describe() => 'a shape of area $area';
        }
    """, min_tokens=2)  # fmt: skip
    labels = _labels(r)
    assert labels["Shape"][0] == "class:Shape" and labels["Shape.scaled"] == ("method:scaled", 7, 9)
    assert labels["countSides"] == ("function:countSides", 12, 14)
    assert labels["Named"][0] == "mixin:Named" and labels["Named.name"][0] == "property:name"
    assert (
        labels["Describe"][0] == "extension:Describe" and labels["Describe.describe"][0] == "method:describe"
    )


def test_dart_constructors_fields_and_accessors_are_members() -> None:
    """A dart-lang/http trial: `factory MultipartFile.fromBytes(...)` was anchored
    `MultipartFile.MultipartFile` (so `show MultipartFile.fromBytes` failed), and a constructor
    with an initializer list and no body, a field and a getter declared without a body were no
    symbols (`query Response.bytes`, `query abortTrigger` missed); Dart 3's `abstract final`
    field and an unnamed `library;` were parse errors."""
    src = """
        library;

        class MultipartFile {
          final String field;
          final int length;

          MultipartFile(this.field, Stream<List<int>> stream, this.length)
              : _stream = toByteStream(stream);

          factory MultipartFile.fromBytes(String field, List<int> value) {
            var stream = ByteStream.fromBytes(value);
            return MultipartFile(field, stream, value.length);
          }

          const MultipartFile.empty(this.field) : length = 0;

          bool get isFinalized => _isFinalized;
        }

        abstract mixin class Abortable {
          /// Completes when the request is to be aborted.
          abstract final Future<void>? abortTrigger;

          bool get canAbort;
        }
    """
    r = run_chunk("lib/src/multipart_file.dart", src, min_tokens=0)
    labels = _labels(r)
    assert labels["MultipartFile.fromBytes"] == ("constructor:fromBytes", 10, 13), labels
    assert labels["MultipartFile.MultipartFile"] == ("constructor:MultipartFile", 7, 8)
    assert labels["MultipartFile.empty"][0] == "constructor:empty"
    assert (
        labels["MultipartFile.field"][0] == "field:field"
        and labels["MultipartFile.length"][0] == "field:length"
    )
    assert labels["MultipartFile.isFinalized"] == ("property:isFinalized", 17, 17)
    assert labels["Abortable.abortTrigger"] == ("field:abortTrigger", 21, 22)
    assert labels["Abortable.canAbort"][0] == "property:canAbort"
    assert not [d for d in r.diagnostics if d.code in ("CORA-CHK-001", "CORA-CHK-002")]


def test_scala_values_package_objects_brace_less_bodies_and_overloads() -> None:
    """An os-lib trial: a `val`/`lazy val` was no symbol (`query defaultPathSerializer` missed),
    a `package object` was module code, a method whose body is indented without braces took in
    the next definition's first line (the grammar's block reads the next line's indentation),
    and an overload's anchor held its parameters' comments and default values (300 characters)."""
    r = run_chunk("os/src/Path.scala", """
        package object os extends ResourceApi {
          val root: Path = Path("/")
        }

        object Path {
          @experimental lazy val defaultPathSerializer: Serializer = {
            new Serializer {}
          }
          private var count: Int = 0
          val (first, second) = (1, 2)

          private def reduceUps(in: Array[String]): List[String] =
            in.foldLeft(List.empty[String]) { case (acc, x) =>
              x :: acc
            }.reverse
          def call(
              cwd: Path = null,
              // a comment between the parameters
              check: Boolean = true
          ): Int = {
            val local = 3
            local
          }
          def call(cmd: Shellable): Int = 1
        }
    """, min_tokens=0)  # fmt: skip
    labels = _labels(r)
    assert labels["os"][0] == "package object:os" and labels["os.root"][0] == "field:root"
    assert labels["Path.defaultPathSerializer"] == ("field:defaultPathSerializer", 6, 8)
    assert (
        labels["Path.count"][0] == "field:count" and "Path.first" not in labels and "Path.local" not in labels
    )
    assert labels["Path.reduceUps"][1:] == (12, 15)
    calls = [a for a in labels if a.startswith("Path.call")]
    assert calls == ["Path.call(cwd: Path, check: Boolean)", "Path.call(cmd: Shellable)"], calls


def test_elixir_callbacks_are_declarations() -> None:
    """A phoenix trial: a behaviour's `@callback`s declare the functions its modules implement, and
    were no symbols (`Phoenix.Endpoint.static_path` found no declaration of the behaviour). Each
    is a declaration, merged with no definition, its `@doc` above it its own."""
    r = run_chunk("lib/phoenix/endpoint.ex", """
        defmodule Phoenix.Endpoint do
          @moduledoc "An endpoint."

          @doc "Starts the endpoint."
          @callback start_link(keyword) :: Supervisor.on_start()

          @doc "The static path."
          @callback static_path(path :: String.t()) :: String.t()
          @macrocallback router(x :: term) :: Macro.t()

          def url, do: "/"
        end
    """, min_tokens=0)  # fmt: skip
    labels = _labels(r)
    assert labels["Phoenix.Endpoint.static_path"][:2] == ("declaration:static_path", 7)
    assert labels["Phoenix.Endpoint.start_link"][0] == "declaration:start_link"
    assert labels["Phoenix.Endpoint.router"][0] == "declaration:router"
    assert labels["Phoenix.Endpoint.url"][0] == "function:url"


def test_haskell_types_classes_instances_and_signed_functions() -> None:
    """Haskell's data types, classes and instances are types (an instance extends its type as a
    Rust impl does, named like one); a function takes in its type signature."""
    r = run_chunk("src/Shop/Cart.hs", """
        module Shop.Cart (Cart(..), add) where

        -- | A cart.
        data Cart = Cart
          { items :: [Int]
          , owner :: String
          } deriving (Show)

        newtype Price = Price Int

        -- | Things with a price.
        class Priced a where
          price :: a -> Int

        instance Priced Cart where
          price c = sum (items c)

        -- | Adds an item.
        add :: Int -> Cart -> Cart
        add i c = c { items = i : items c }

        -- | Empties a cart.
        clear :: Cart -> Cart
        clear = const (Cart [] "")
    """, min_tokens=2)  # fmt: skip
    labels = _labels(r)
    assert labels["Priced.price"][0] == "method:price"  # a class declares its methods by signature
    assert labels["clear"] == ("function:clear", 22, 24)  # a function defined without its arguments
    assert labels["Cart"][0] == "data:Cart" and labels["Price"][0] == "newtype:Price"
    assert labels["Priced"][0] == "class:Priced" and labels["<Cart as Priced>"][0] == "impl:<Cart as Priced>"
    assert labels["add"] == ("function:add", 18, 20)  # its haddock and signature


def test_lua_functions_bound_by_assignment() -> None:
    r = run_chunk("lua/plugin/init.lua", """
        local M = {}

        --- Greets someone.
        M.greet = function(name)
          local msg = "hi " .. name .. ", welcome to the plugin and its many options"
          return msg
        end

        local helper = function(x)
          return x * 2 + 1
        end

        local handlers = { on_exit = function() end, on_error = function() end }

        M.commands = {
          clear = function()
            Manage.clear()
            View.show()
          end,
          ["health"] = true,
        }

        return M
    """, min_tokens=2)  # fmt: skip
    labels = _labels(r)
    assert labels["M.greet"] == ("function:M.greet", 3, 7) and labels["helper"][0] == "function:helper"
    assert "handlers" not in labels and "M.commands" not in labels  # a table of functions is data,
    assert labels["on_exit"][0] == "function:on_exit"  # its functions are functions (lazy.nvim's commands)
    assert labels["clear"] == ("function:clear", 16, 19) and "health" not in labels


def test_language_detection_by_extension_shebang_and_content() -> None:
    assert run_chunk("bin/tool", "#!/usr/bin/env python3\nprint('x')\n").lang == "python"
    assert run_chunk("bin/run", "#!/usr/bin/env node\nconsole.log(1)\n").lang == "javascript"
    assert run_chunk("data", '{"a": 1}\n').lang == "json"
    assert run_chunk("notes", "just some words\n").lang == "text"
    assert run_chunk("notes", "just some words\n").strategy == "lines"
    assert run_chunk("Dockerfile", "FROM python:3.12\n").lang == "dockerfile"


def test_anchors_do_not_change_when_code_elsewhere_changes() -> None:
    before = run_chunk("a.py", PYTHON, min_tokens=4)
    edited = PYTHON.replace("RETRIES = 3", "RETRIES = 3\n\n\n    def added(x):\n        return x * 2\n")
    edited = edited.replace('return "auth"', 'return "auth-service-name"')
    after = run_chunk("a.py", edited, min_tokens=4)
    old, new = by_anchor(before), by_anchor(after)
    assert set(old) <= set(new)
    for anchor in old:
        assert old[anchor].id == new[anchor].id
    assert new["a.py::Auth.login"].start_line == old["a.py::Auth.login"].start_line + 5


def test_a_c_function_like_macro_is_a_symbol() -> None:
    """Lua's API is half macros: "where is lua_tostring defined" answered `luaB_tostring`, and
    `lua_pop` was a line of a 160-line module chunk. An object-like macro or a guard is not one."""
    r = run_chunk("src/lua.h", """
        #ifndef lua_h
        #define lua_h

        #define LUA_VERSION_NUM 504

        #define lua_pop(L,n)		lua_settop(L, -(n)-1)

        LUA_API void  (lua_settop) (lua_State *L, int idx);
        #endif
    """, min_tokens=0)  # fmt: skip
    chunks = by_anchor(r)
    pop = chunks["src/lua.h::lua_pop"]
    assert (
        pop.kind == "method"
        and pop.hierarchy[-1] == "macro:lua_pop"
        and pop.text.startswith("#define lua_pop")
    )
    assert not any(a.endswith(("::lua_h", "::LUA_VERSION_NUM")) for a in chunks)


def test_swift_initializers_cases_typealiases_and_conditional_members() -> None:
    """An Alamofire trial: a type body holding `#if ... #else ... #endif` closed at the directive
    (`Protected` was 2 lines, its members top-level functions), and `init`, `deinit`,
    `subscript`, `typealias` and enum cases were no symbols (an initializer's locals were read as
    the type's fields)."""
    src = """
        public enum AFError: Error {
            case explicitlyCancelled
            case invalidURL(url: String)
            public typealias Handler = (Int) -> Void
        }

        final class Protected<T> {
            #if compiler(>=6)
            private let lock = NSLock()
            #else
            #error("This platform needs a lock.")
            #endif
            private var value: T

            init(_ value: T) {
                let copy = value
                self.value = copy
            }

            deinit { print("gone") }

            subscript(key: String) -> T? { nil }

            func read() -> T { value }
        }
    """
    r = run_chunk("Source/Protected.swift", src, min_tokens=0)
    got = {a: (c.kind, c.hierarchy[-1].split(":")[0]) for c in r.chunks for a in c.anchors}
    p = "Source/Protected.swift::"
    for anchor, want in [("AFError.explicitlyCancelled", ("field", "case")), ("AFError.invalidURL", ("field", "case")),
                         ("AFError.Handler", ("type", "typealias")), ("Protected.init", ("method", "initializer")),
                         ("Protected.deinit", ("method", "deinit")), ("Protected.subscript", ("method", "subscript")),
                         ("Protected.read", ("method", "method")), ("Protected.lock", ("field", "field"))]:  # fmt: skip
        assert got.get(p + anchor) == want, (anchor, sorted(got))
    assert p + "Protected.copy" not in got and p + "read" not in got
    protected = by_anchor(r)[p + "Protected"]
    assert (protected.start_line, protected.end_line) == (7, 25)  # the whole class


def test_kotlin_top_level_properties_getters_and_typealiases() -> None:
    """An okio trial: `val FileSystem.Companion.SYSTEM` (a top-level extension property) and
    `actual typealias ...` were no symbols, and `actual val isAbsolute: Boolean` was shown
    without its `get() = ...` (the grammar makes the getter the declaration's sibling)."""
    r = run_chunk("okio/src/jvmMain/kotlin/okio/Path.kt", """
        package okio

        val FileSystem.Companion.SYSTEM: FileSystem
          get() = JvmSystemFileSystem()

        private val EMPTY = ByteArray(0)

        actual typealias ArrayIndexOutOfBoundsException = java.lang.ArrayIndexOutOfBoundsException

        class Path {
          actual val isAbsolute: Boolean
            get() = commonIsAbsolute()

          fun f(): Int {
            val local = 3
            return local
          }
        }
    """, min_tokens=0)  # fmt: skip
    got = {a.split("::")[1]: (c.kind, c.start_line, c.end_line) for c in r.chunks for a in c.anchors}
    assert got["SYSTEM"] == ("property", 3, 4) and got["EMPTY"][0] == "field", got
    assert got["ArrayIndexOutOfBoundsException"][0] == "type" and got["Path.isAbsolute"] == (
        "property",
        11,
        12,
    )
    assert "local" not in got and "Path.local" not in got


def test_a_kotlin_declarations_kdoc_after_the_imports_or_package_is_its_own() -> None:
    """tree-sitter-kotlin folds the comments after the imports (or the package line) into them:
    okhttp's `CertificatePinner` was a class without its doc, its 120 lines of KDoc the file's
    header. A comment apart from the class (a blank line between) stays the file's."""
    body = "class CertificatePinner {\n  fun check(hostname: String) {\n    println(hostname)\n  }\n}\n"
    doc = "/**\n * Constrains which certificates are trusted: pinning.\n */\n"
    for head in ("package okhttp3\n\nimport java.io.File\n\n", "package okhttp3\n\n"):
        r = run_chunk("okhttp3/CertificatePinner.kt", head + doc + body, min_tokens=0)
        (cls,) = [c for c in r.chunks if c.anchor == "okhttp3/CertificatePinner.kt::CertificatePinner"]
        assert cls.start_line == head.count("\n") + 1 and "pinning" in cls.text, (head, cls.start_line)
        assert all("pinning" not in c.text for c in r.chunks if c is not cls and c.kind in ("file", "module"))
    r = run_chunk(
        "okhttp3/Pinner.kt", "package okhttp3\n\nimport java.io.File\n\n// ---- pins ----\n\n" + body
    )
    (cls,) = [c for c in r.chunks if c.kind == "type"]
    assert cls.start_line == 7 and "pins ----" not in cls.text


def test_ocaml_erlang_clojure_and_julia_definitions_are_symbols() -> None:
    """Their grammars' definitions are no node the generic rule names (OCaml's `let` binding,
    Erlang's clause, Clojure's `(defn ...)` list, Julia's function named inside its signature):
    a file of any of them was one module chunk (`functional.py`)."""
    ocaml = run_chunk("lib/shapes.ml", """
        (** Add two numbers. *)
        let add x y = x + y

        let origin = (0, 0)

        type shape = Circle of float | Square of float

        module Geometry = struct
          (** The area of a shape. *)
          let area = function
            | Circle r -> 3.14 *. r *. r
            | Square s -> s *. s
        end
    """, min_tokens=0)  # fmt: skip
    assert _labels(ocaml) == {
        "add": ("function:add", 1, 2), "origin": ("value:origin", 4, 4), "shape": ("type:shape", 6, 6),
        "Geometry": ("module:Geometry", 8, 13), "Geometry.area": ("function:area", 9, 12),
    }  # fmt: skip
    mli = run_chunk("lib/shapes.mli", "(** Add two numbers. *)\nval add : int -> int -> int\n", min_tokens=0)
    assert _labels(mli) == {"add": ("declaration:add", 1, 2)}
    erlang = run_chunk("src/shapes.erl", """
        -module(shapes).
        -export([area/1]).

        %% @doc The area of a shape.
        area({circle, R}) ->
            3.14 * R * R;
        %% a square's
        area({square, S}) ->
            S * S.
        -spec area(number(), number()) -> number().
        area(W, H) ->
            W * H.
    """, min_tokens=0)  # fmt: skip
    # a function's clauses are one function (of one name and arity: `area/2` is another), its
    # `-spec` with it
    assert _labels(erlang) == {"area": ("function:area", 4, 9), "area#2": ("function:area", 10, 12)}
    clojure = run_chunk("src/shapes/core.clj", """
        (ns shapes.core)

        (defn area
          "The area of a shape."
          [shape]
          (* 3.14 (:r shape) (:r shape)))

        (def unit 1)

        (defrecord Circle [r])
    """, min_tokens=0)  # fmt: skip
    assert _labels(clojure) == {
        "area": ("function:area", 3, 6), "unit": ("var:unit", 8, 8), "Circle": ("record:Circle", 10, 10),
    }  # fmt: skip
    julia = run_chunk("src/Shapes.jl", '''
        module Shapes

        """
            area(s)

        Compute the area of a shape.
        """
        function area(s::Circle)
            return pi * s.r^2
        end

        struct Circle <: Shape
            r::Float64
        end

        perimeter(s::Circle) = 2pi * s.r
        Base.show(io::IO, s::Circle) = print(io, "Circle")

        end
    ''', min_tokens=0)  # fmt: skip
    assert _labels(julia) == {
        "Shapes": ("module:Shapes", 1, 19), "Shapes.area": ("function:area", 3, 10),
        "Shapes.Circle": ("struct:Circle", 12, 14), "Shapes.perimeter": ("function:perimeter", 16, 16),
        "Shapes.show": ("function:show", 17, 17),
    }  # fmt: skip
