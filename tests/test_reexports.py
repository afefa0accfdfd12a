"""A name the bundle defines nowhere is found where a module publishes it (`reexports.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import init_repo

from cora_ci.build import build
from cora_ci.bundle import Bundle, open_bundle
from cora_ci.retrieval import search
from cora_ci.retrieval.catalog import catalog
from cora_ci.retrieval.reexports import reexports

_RUST_MOD = """\
use http::header::HeaderMap;

pub mod path;
mod raw_form;

#[doc(inline)]
pub use web_core::extract::{
    DefaultBodyLimit, FromRef, FromRequest, Request,
};

pub use self::raw_form::RawForm as Form;
"""


@pytest.mark.parametrize(
    ("name", "lang", "path", "text", "published"),
    [
        ("FromRequest", "rust", "src/extract/mod.rs", _RUST_MOD, True),
        ("Request", "rust", "src/extract/mod.rs", _RUST_MOD, True),
        ("Form", "rust", "src/extract/mod.rs", _RUST_MOD, True),  # renamed to it
        ("RawForm", "rust", "src/extract/mod.rs", _RUST_MOD, False),  # renamed away
        ("HeaderMap", "rust", "src/extract/mod.rs", _RUST_MOD, False),  # a private `use`
        ("extract", "rust", "src/extract/mod.rs", _RUST_MOD, False),  # a path's inner part
        ("Thing", "rust", "src/lib.rs", "pub(crate) use other::{a::Thing, b};\n", True),
        ("Request", "python", "web/requests.py", "from base.requests import Request as Request\n", True),
        ("Request", "python", "web/handlers.py", "from base.requests import Request\n", False),
        (
            "Request",
            "python",
            "web/__init__.py",
            "from .requests import (\n    Headers,\n    Request,\n)",
            True,
        ),
        ("Other", "python", "web/__init__.py", "from .requests import Request as Other\n", True),
        ("Request", "python", "web/__init__.py", "from .requests import Request as Other\n", False),
        ("Config", "python", "web/api.py", "from .conf import *\n__all__ = ['Config', 'load']\n", True),
        ("Foo", "typescript", "src/index.ts", "export { Foo } from './foo';\n", True),
        ("Foo", "typescript", "src/index.ts", "export { Foo as Bar } from './foo';\n", False),
        ("Bar", "typescript", "src/index.ts", "export { Foo as Bar } from './foo';\n", True),
        ("z", "typescript", "src/index.ts", "export * as z from './external';\n", True),
        ("T", "typescript", "src/index.ts", "export type {\n  S,\n  T,\n} from './types';\n", True),
        ("Foo", "typescript", "src/index.ts", "import { Foo } from './foo';\n", False),
        ("Foo", "go", "pkg/foo.go", 'import foo "example.com/foo"\n', False),
    ],
)
def test_what_publishes_a_name(name: str, lang: str, path: str, text: str, published: bool) -> None:
    assert reexports(name, lang, path, text) is published


def _bundle(tmp_path: Path, files: dict[str, str]) -> Bundle:
    repo = init_repo(tmp_path / "repo", files)
    build(repo, model="none")
    return open_bundle(repo / ".cora" / "index")


def _first(b: Bundle, query: str) -> tuple[str, str]:
    cat = catalog(b)
    m = cat.meta(search(b, query, k=5)[0].chunk_id)
    assert m is not None
    return m.path, m.kind


_HANDLERS = "".join(
    f"""
impl FromRequest for Handler{i} {{
    fn from_request(req: Request) -> Self {{
        let body = req.into_body();
        Handler{i} {{ body }}
    }}
}}
"""
    for i in range(4)
)


def test_a_dependency_s_name_is_found_where_the_crate_re_exports_it(tmp_path: Path) -> None:
    """axum re-exports `axum_core`'s `FromRequest` from `extract/mod.rs`; its implementations
    (short, their names holding the name) came first, and the module that says where the trait
    comes from was not in the first ten."""
    filler = "".join(f"pub mod part{i};\n" for i in range(60))
    b = _bundle(tmp_path, {
        "src/extract/mod.rs": _RUST_MOD + filler + "\npub fn helper() -> u32 {\n    1\n}\n",
        "src/handlers.rs": "use web_core::extract::{FromRequest, Request};\n" + _HANDLERS,
    })  # fmt: skip
    assert _first(b, "FromRequest") == ("src/extract/mod.rs", "file")
    assert _first(b, "where is FromRequest defined") == ("src/extract/mod.rs", "file")


def test_a_python_module_re_exporting_a_name_is_found_for_it(tmp_path: Path) -> None:
    b = _bundle(tmp_path, {
        "web/requests.py": "from base.requests import Request as Request  # noqa: F401\n",
        "web/routing.py": "".join(
            f"from base.requests import Request\n\n\ndef handle_{i}(request: Request) -> str:\n"
            f"    return request.url + '{i}'\n\n\n" for i in range(3)
        ),
    })  # fmt: skip
    assert _first(b, "Request") == ("web/requests.py", "file")


def test_a_name_the_code_defines_is_found_at_its_definition_not_where_it_is_re_exported(
    tmp_path: Path,
) -> None:
    b = _bundle(tmp_path, {
        "web/__init__.py": "from .requests import Request\n\n__all__ = ['Request']\n",
        "web/requests.py": "class Request:\n    def __init__(self, url: str) -> None:\n        self.url = url\n",
    })  # fmt: skip
    assert _first(b, "Request") == ("web/requests.py", "type")
