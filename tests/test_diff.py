"""`cora-ci diff OLD NEW` on two bundles of one real repository, a commit apart."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import dedent_files, git

CORA = shutil.which("cora-ci", path=os.path.dirname(sys.executable)) or "cora-ci"

BEFORE = {
    "shop/prices.py": '''\
        def total(items):
            """The sum of the item prices."""
            return sum(i.price for i in items)


        def discount(amount, rate):
            return amount * (1 - rate)


        def legacy_round(x):
            return int(x + 0.5)


        def old_tax(amount):
            """Tax at the standard rate, rounded to cents."""
            return round(amount * 0.2, 2)


        def ship(order):
            return order.weight * 3
        ''',
    "shop/cart.py": """\
        from shop.prices import discount, legacy_round, total


        def checkout(cart):
            return legacy_round(discount(total(cart.items), cart.rate))
        """,
}


def cora(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CORA, *args], cwd=cwd, capture_output=True, text=True, check=False,
                          env={**os.environ, "NO_COLOR": "1"})  # fmt: skip


@pytest.fixture
def bundles(make_repo: Callable[[dict[str, str]], Path], private_cache: None) -> tuple[Path, Path, Path]:
    repo = make_repo(dedent_files(BEFORE))
    assert cora("index", "--model", "none", "-q", "--out", str(repo.parent / "old"), cwd=repo).returncode == 0
    prices = repo / "shop" / "prices.py"
    text = prices.read_text()
    text = text.replace("return sum(i.price for i in items)", "return sum(i.price * i.count for i in items)")
    text = text.replace("def discount(amount, rate):", "def discount(amount, rate, floor=0):")
    text = text.replace("def legacy_round(x):\n    return int(x + 0.5)\n\n\n", "")
    text = text.replace("def old_tax(amount):", "def vat(amount):")
    text = text.replace("def ship(order):\n    return order.weight * 3\n", "")
    prices.write_text(text.rstrip() + "\n\n\ndef refund(order):\n    return -total(order.items)\n")
    (repo / "shop" / "shipping.py").write_text("def ship(order):\n    return order.weight * 3\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "change")
    assert cora("index", "--model", "none", "-q", "--out", str(repo.parent / "new"), cwd=repo).returncode == 0
    return repo, repo.parent / "old", repo.parent / "new"


def test_each_kind_of_change_is_named(bundles: tuple[Path, Path, Path]) -> None:
    repo, old, new = bundles
    out = cora("diff", str(old), str(new), "--format", "json", cwd=repo)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    got = {(c["change"], c["anchor"], c["detail"]) for c in doc["changes"]}
    assert got == {
        ("modified", "shop/prices.py::total", "body"),
        ("modified", "shop/prices.py::discount", "signature"),
        ("removed", "shop/prices.py::legacy_round", None),
        ("renamed", "shop/prices.py::vat", None),
        ("moved", "shop/shipping.py::ship", None),
        ("added", "shop/prices.py::refund", None),
    }
    renamed = next(c for c in doc["changes"] if c["change"] == "renamed")
    assert (
        renamed["old"]["anchor"] == "shop/prices.py::old_tax"
        and renamed["new"]["signature"] == "def vat(amount):"
    )
    assert doc["files"] == {"shop/prices.py": "modified", "shop/shipping.py": "added"}


def test_impact_names_the_code_that_uses_a_change(bundles: tuple[Path, Path, Path]) -> None:
    repo, old, new = bundles
    doc = json.loads(cora("diff", str(old), str(new), "--impact", "--format", "json", cwd=repo).stdout)
    impact = {c["anchor"]: {(i["anchor"], i["how"]) for i in c["impact"]} for c in doc["changes"]}
    assert ("shop/cart.py::checkout", "references it") in impact["shop/prices.py::discount"]
    assert ("shop/cart.py::checkout", "references it") in impact["shop/prices.py::total"]
    assert all(how != "references it" or a != "shop/cart.py" for a, how in impact["shop/prices.py::total"])
    # the removed function is still called: that call is likely broken
    assert ("shop/cart.py::checkout", "still uses the old name") in impact["shop/prices.py::legacy_round"]


def test_text_and_markdown(bundles: tuple[Path, Path, Path]) -> None:
    repo, old, new = bundles
    text = cora("diff", str(old), str(new), "--impact", cwd=repo).stdout.splitlines()
    assert text[0] == "2 files changed; symbols: 1 added, 2 modified, 1 removed, 1 renamed, 1 moved"
    assert any(line.startswith("- shop/prices.py::legacy_round  method  removed") for line in text)
    md = cora("diff", str(old), str(new), "--impact", "--format", "markdown", cwd=repo).stdout
    assert (
        md.startswith("### Changed symbols\n") and "| change | symbol | kind | where | referenced by |" in md
    )
    assert "| renamed from shop/prices.py::old_tax | `shop/prices.py::vat` |" in md


def test_the_same_bundle_has_no_changes_and_bad_paths_are_errors(bundles: tuple[Path, Path, Path]) -> None:
    repo, old, _ = bundles
    same = cora("diff", str(old), str(old), "--format", "json", cwd=repo)
    assert json.loads(same.stdout)["changes"] == []
    missing = cora("diff", str(old), str(repo / "nope"), cwd=repo)
    assert missing.returncode == 5 and missing.stderr.startswith("error: CORA-BND-001: ")
