"""Configuration: where it is found, strict validation, include/exclude and .gitignore."""

from __future__ import annotations

from pathlib import Path

import pytest

from cora_ci.config import Config, discover, from_mapping, load_file
from cora_ci.errors import CoraError
from cora_ci.files.walk import list_files


def test_defaults_and_hash_stability() -> None:
    assert Config().max_tokens == 800 and Config().overlap_lines == 6
    assert Config().chunker_hash() == from_mapping({}).chunker_hash()
    assert from_mapping({"exclude": ["*.md"]}).chunker_hash() == Config().chunker_hash()
    assert from_mapping({"max_tokens": 500}).chunker_hash() != Config().chunker_hash()


@pytest.mark.parametrize(
    ("table", "code", "named"),
    [
        ({"max_tokenz": 3}, "CORA-CFG-001", "max_tokenz"),
        ({"max_tokens": "big"}, "CORA-CFG-002", "max_tokens"),
        ({"max_tokens": 4}, "CORA-CFG-002", "max_tokens"),
        ({"overlap_lines": -1}, "CORA-CFG-002", "overlap_lines"),
        ({"min_tokens": 900}, "CORA-CFG-002", "min_tokens"),
        ({"include": [1]}, "CORA-CFG-002", "include"),
        (
            {"languages": {"csharp": {"chunk_level": "namespace"}}},
            "CORA-CFG-002",
            "languages.csharp.chunk_level",
        ),
        ({"languages": {"csharp": {"level": "class"}}}, "CORA-CFG-001", "languages.csharp.level"),
        ({"max_file_bytes": True}, "CORA-CFG-002", "max_file_bytes"),
    ],
)
def test_bad_config_names_the_key(table: dict[str, object], code: str, named: str) -> None:
    with pytest.raises(CoraError) as e:
        from_mapping(table, "test")
    assert e.value.code == code and named in e.value.message


def test_discovery_prefers_cora_toml(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.cora-ci]\nmax_tokens = 300\n")
    assert discover(tmp_path).max_tokens == 300
    (tmp_path / ".cora.toml").write_text("max_tokens = 400\n[languages.python]\nchunk_level = 'class'\n")
    cfg = discover(tmp_path)
    assert (
        cfg.max_tokens == 400 and cfg.chunk_level("python") == "class" and cfg.chunk_level("go") == "method"
    )
    (tmp_path / ".cora.toml").write_text("max_tokens = = 4\n")
    with pytest.raises(CoraError) as e:
        load_file(tmp_path / ".cora.toml")
    assert e.value.code == "CORA-CFG-003"


FILES = {
    ".gitignore": "build/\n*.log\n",
    "src/app.py": "def a():\n    return 1\n",
    "src/gen/out.py": "X = 1\n",
    "build/x.py": "Y = 1\n",
    "debug.log": "noise\n",
    "docs/readme.md": "# Docs\n",
}


def test_gitignore_and_globs_in_a_git_repository(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(FILES)
    (repo / "untracked.py").write_text("Z = 1\n")
    (repo / "more.log").write_text("ignored\n")
    names = [f.relpath for f in list_files([repo], Config())]
    assert names == [".gitignore", "docs/readme.md", "src/app.py", "src/gen/out.py", "untracked.py"]
    cfg = from_mapping({"include": ["src/**", "*.md"], "exclude": ["src/gen/"]})
    assert [f.relpath for f in list_files([repo], cfg)] == ["docs/readme.md", "src/app.py"]
    # a subdirectory keeps repository-relative paths
    assert [f.relpath for f in list_files([repo / "src"], Config())] == ["src/app.py", "src/gen/out.py"]


def test_gitignore_in_a_plain_directory(tmp_path: Path) -> None:
    for name, text in {**FILES, "src/.gitignore": "gen/\n"}.items():
        p = tmp_path / "plain" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    names = [f.relpath for f in list_files([tmp_path / "plain"], Config())]
    assert names == [".gitignore", "docs/readme.md", "src/.gitignore", "src/app.py"]


def test_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CoraError) as e:
        list_files([tmp_path / "nope"], Config())
    assert e.value.code == "CORA-IO-001"


def test_lock_files_are_skipped_unless_configured(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(
        {
            "app.py": "X = 1\n",
            "uv.lock": "version = 1\n",
            "web/package-lock.json": "{}\n",
            "web/yarn.lock": "# yarn\n",
            "Cargo.lock": "# cargo\n",
            "go.sum": "x v1 h1:abc\n",
        }
    )
    assert [f.relpath for f in list_files([repo], Config())] == ["app.py"]
    cfg = from_mapping({"lock_files": True})
    assert len(list_files([repo], cfg)) == 6
    assert cfg.chunker_hash() != Config().chunker_hash()  # switching it rebuilds once
    with pytest.raises(CoraError) as e:
        from_mapping({"lock_files": "yes"})
    assert e.value.code == "CORA-CFG-002"
