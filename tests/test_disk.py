"""A full disk or an unwritable target: `cora-ci index` stops with CORA-BND-006 (one line, exit 5)
and the previous bundle stays as it was and verifies.

Tests may run as root, where chmod stops nothing, so the target is made read-only by a bind mount
and full by a tiny tmpfs, each in a user and mount namespace of its own (`unshare -rm`), and files
are capped with RLIMIT_FSIZE; a case is skipped, with the reason, where the machine allows none.
"""

from __future__ import annotations

import resource
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git

from cora_ci.bundle import manifest as mf


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    return probe.returncode == 0


needs_unshare = pytest.mark.skipif(not _unshare_works(), reason="no user+mount namespaces (unshare -rm)")


def _index_cmd(repo: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "cora_ci", "index", str(repo), "--out", str(out), "--model", "none"]


def _verify(out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cora_ci", "verify", str(out)], capture_output=True, text=True
    )


@pytest.fixture
def changed_repo(make_repo: Callable[[dict[str, str]], Path], tmp_path: Path) -> tuple[Path, Path, bytes]:
    """A repository with a bundle of its first commit in `tmp_path/target/index`, and a second
    commit that adds a large file, so the update has much to write."""
    repo = make_repo({f"m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(20)})
    out = tmp_path / "target" / "index"
    assert subprocess.run(_index_cmd(repo, out), capture_output=True).returncode == 0
    (repo / "big.md").write_text(
        "".join(f"# Part {i}\n\nwords about topic {i} " * 20 + "\n" for i in range(300))
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "big")
    return repo, out, (out / mf.MANIFEST).read_bytes()


def _assert_clean_failure(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode == 5, res.stdout + res.stderr
    errors = [line for line in res.stderr.splitlines() if not line.startswith("chunk: ")]  # progress
    assert len(errors) == 1 and errors[0].startswith("error: CORA-BND-006: cannot write bundle"), res.stderr
    assert "Traceback" not in res.stderr


@needs_unshare
def test_read_only_target(changed_repo: tuple[Path, Path, bytes]) -> None:
    repo, out, before = changed_repo
    target = shlex.quote(str(out.parent))
    script = f"mount --bind {target} {target} && mount -o remount,bind,ro {target} && exec " + shlex.join(
        _index_cmd(repo, out)
    )
    res = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True)
    _assert_clean_failure(res)
    assert (out / mf.MANIFEST).read_bytes() == before and _verify(out).returncode == 0


@needs_unshare
def test_full_disk(changed_repo: tuple[Path, Path, bytes], tmp_path: Path) -> None:
    """The old bundle on a tmpfs with a few KB to spare; the update runs out of space."""
    repo, out, _ = changed_repo
    used = sum(p.stat().st_size for p in out.parent.rglob("*") if p.is_file())
    disk = tmp_path / "disk"
    disk.mkdir()
    on_disk = disk / "index"
    q = shlex.quote
    script = " && ".join([
        f"mount -t tmpfs -o size={used + 64 * 1024} tmpfs {q(str(disk))}",
        f"cp -a {q(str(out))} {q(str(on_disk))}",
        f"{{ {shlex.join(_index_cmd(repo, on_disk))}; echo \"index-exit=$?\" >&2; }}",
        f"{shlex.join([sys.executable, '-m', 'cora_ci', 'verify', str(on_disk)])}",
        f"cmp {q(str(on_disk / mf.MANIFEST))} {q(str(out / mf.MANIFEST))}",
        f"test -z \"$(ls -A {q(str(disk))} | grep -v '^index$' | grep -v '^.index.lock$')\"",
    ])  # fmt: skip
    res = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr  # verify passed, manifest unchanged, no leftovers
    index_err = res.stderr.replace("index-exit=5\n", "")
    _assert_clean_failure(subprocess.CompletedProcess(res.args, 5, "", index_err))
    assert "index-exit=5" in res.stderr


def _cap_file_size() -> None:
    """In the child: files larger than 4 KB cannot be written (EFBIG, not SIGXFSZ)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def test_file_size_limit(changed_repo: tuple[Path, Path, bytes]) -> None:
    repo, out, before = changed_repo
    res = subprocess.run(_index_cmd(repo, out), capture_output=True, text=True, preexec_fn=_cap_file_size)
    _assert_clean_failure(res)
    assert (out / mf.MANIFEST).read_bytes() == before and _verify(out).returncode == 0
    assert not list(out.parent.glob(".index.tmp-*"))


@pytest.mark.parametrize(
    ("message", "errno"),
    [
        ("Failed to write: IO error (os error 28)", 28),
        (  # opening a segment file on a full disk (seen in CI: a CORA-INT-001 before)
            "Failed to open file for write: 'IoError { io_error: Custom { kind: StorageFull, error: "
            'PathError { path: "/x/.tmpjU7X0C", err: Os { code: 28, kind: StorageFull, message: "No '
            'space left on device" } } }, filepath: "1923.fieldnorm" }\'',
            28,
        ),
        ("IO error: short write", 5),
    ],
)
def test_tantivy_write_errors_are_os_errors(message: str, errno: int) -> None:
    """Each way tantivy words a failed write becomes OSError (the writer's clean CORA-BND-006),
    wherever the disk fills up."""
    from cora_ci.bundle.lexical import _io_errors

    with pytest.raises(OSError) as e, _io_errors():
        raise ValueError(message)
    assert e.value.errno == errno
    with pytest.raises(ValueError), _io_errors():  # anything else stays what it is
        raise ValueError("Schema error: field `body` is missing")
