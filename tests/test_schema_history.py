"""A schema's migrations, one numbered file a change, rank below the code unless asked for."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import init_repo

from cora_ci.build import build
from cora_ci.bundle import Bundle, open_bundle
from cora_ci.retrieval import PARAMS, search
from cora_ci.retrieval.kinds import path_class


@pytest.mark.parametrize(
    ("path", "cls"),
    [
        ("django/contrib/auth/migrations/0011_update_proxy_permissions.py", "migration"),
        ("db/migrate/20230101000000_create_users.rb", "migration"),
        ("alembic/versions/1975ea83b712_create_account_table.py", "migration"),
        ("database/migrations/2014_10_12_000000_create_users_table.php", "migration"),
        ("migrations/000001_create_users.up.sql", "migration"), ("db/migration/V2_1__add_email.sql", "migration"),
        ("src/Migrations/20230101120000_Init.cs", "migration"),
        # the machinery that writes them is code, and a test's fixtures are a test's
        ("django/db/migrations/serializer.py", None), ("django/db/migrations/0_notes.py", None),
        ("app/migrations/__init__.py", None), ("src/migrate/index.ts", None), ("src/0001_setup.py", None),
        ("tests/migrations/test_migrations/0001_initial.py", "test"),
    ],
)  # fmt: skip
def test_migrations_are_told_by_their_place_and_number(path: str, cls: str | None) -> None:
    assert path_class(path) == cls


_FILES = {
    "shop/writer.py": (
        "def serialize_default(field):\n"
        '    """An enum member by its value."""\n'
        "    return repr(field.default.value)\n"
    ),
    "shop/models.py": "class Order:\n    total = 0\n",
    "shop/migrations/0001_initial.py": (
        "from shop import fields\n\n\nclass Migration:\n"
        '    operations = [fields.CreateModel(name="order", fields=[("total", fields.Integer())])]\n'
    ),
    "shop/migrations/0002_order_status_default.py": (
        "from shop import fields\n\n\nclass Migration:\n"
        "    # the generated migration of the order's status field: its enum default\n"
        '    operations = [fields.AlterField(model_name="order", name="status",\n'
        '                                    field=fields.Enum(default="open", max_length=10))]\n'
    ),
}
_REPORT = (
    "Migration writes the value of an enum default instead of its name. When an Enum member is "
    "the default of an order's status field, the generated migration holds the member's value, "
    "so a translated value breaks the migration later: AlterField(model_name='order', "
    "name='status', field=Enum(default='open')). The field default should be written by name, "
    "Status['OPEN'], and the migration would then keep working whatever the value becomes."
)


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    repo = init_repo(tmp_path_factory.mktemp("shop") / "repo", _FILES)
    build(repo, model="none")
    return open_bundle(repo / ".cora" / "index")


def _path(b: Bundle, cid: int) -> str:
    return b.chunks.chunk(b.chunks.row_of[cid]).path


def test_a_report_finds_the_code_that_writes_migrations_over_the_migrations(shop: Bundle) -> None:
    """Each migration repeats the report's words (order, status, default, AlterField): without
    the class they outrank the writer the report is about, as Django's own did."""
    hits = search(shop, _REPORT, expand=False)
    assert _path(shop, hits[0].chunk_id) == "shop/writer.py"
    assert {h.explain["demoted"] for h in hits if "/migrations/" in _path(shop, h.chunk_id)} == {"migration"}
    plain = search(shop, _REPORT, expand=False, params=replace(PARAMS, demote=1.0))
    assert "/migrations/" in _path(shop, plain[0].chunk_id)


def test_a_migration_asked_for_or_named_is_not_lowered(shop: Bundle) -> None:
    asked = search(shop, "the migration that sets the order status default", expand=False)
    assert _path(shop, asked[0].chunk_id) == "shop/migrations/0002_order_status_default.py"
    assert asked[0].explain["demoted"] is None
    named = search(shop, f"shop.0001_initial fails to apply. {_REPORT}", expand=False)
    got = {_path(shop, h.chunk_id): h.explain["demoted"] for h in named}
    assert got["shop/migrations/0001_initial.py"] is None
    assert got["shop/migrations/0002_order_status_default.py"] == "migration"
