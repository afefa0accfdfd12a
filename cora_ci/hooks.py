"""Git hooks that keep `.cora/index` at the commit being made or checked out.

A hook must never stand between a developer and git: by default any failure becomes a one-line
warning that says what to do and exit status 0 (the bundle is written atomically, so it is left as
it was); `--strict` turns failures into a non-zero exit for teams that want a stale index to block
the commit. A hook nobody notices is quick: a post-* sync hands the update to a process of its own
and returns, as git's own `gc --auto` detaches (`start_sync`); its failure is told by the next hook.
And quiet: a hook git waits for prints one line when the bundle's content changed, none when only
the commit it is at moved (a sync after the pre-commit update, a no-op commit).

Two ways in: the pre-commit framework (`.pre-commit-hooks.yaml` runs `cora-ci hook index|sync`), or
the plain POSIX scripts of `cora_ci/hook_scripts/` that `install_hooks` puts into a repository's
hooks directory, chaining to whatever hook was there before instead of replacing it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from cora_ci.errors import CODES, CoraError
from cora_ci.lock import acquire, adopt

HOOK_NAMES = ("pre-commit", "post-checkout", "post-merge", "post-rewrite", "post-commit")
MARKER = b"# cora-ci-managed-hook"  # the second line of each of our scripts
CHAINED = ".cora-chained"  # suffix of a pre-existing hook that our script now runs first
FILE_CHECKOUT = "0"  # post-checkout's third argument for `git checkout -- <paths>`
FAILED = "cora-ci-sync.failed"  # in the git directory: a background sync's warning, for the next hook
_HANDED = "CORA_HOOK_LOCK"  # the descriptor of the bundle's lock, held, that a hook hands its sync
_WAIT = 60.0  # seconds a hook that git waits for gives an update already running (a background sync)
_WAIT_BACKGROUND = 1800.0  # seconds a background sync waits for its turn
_ROUNDS = 5  # updates a background sync makes while HEAD keeps moving under it, at most
_MAX_TOLD = 2000  # bytes of a failure record read


@dataclass(frozen=True)
class Outcome:
    """What a hook run prints (one line at most, `None` for nothing) and its exit status."""

    status: int
    line: str | None
    to_stderr: bool = False

    def show(self) -> None:
        """Print the line. A fail-open warning under the pre-commit framework goes to the terminal:
        pre-commit shows a passing hook's output only when the hook is `verbose`, which would cost
        every successful run five lines; without a terminal it goes to stderr as elsewhere."""
        if self.line is None:
            return
        if self.to_stderr and self.status == 0 and os.environ.get("PRE_COMMIT") == "1":
            try:
                with open("/dev/tty", "w", encoding="utf-8") as tty:
                    tty.write(f"\n{self.line}\n")  # pre-commit's dots precede it; `Passed` follows
                return
            except OSError:
                pass  # no controlling terminal (an IDE, CI): stderr, shown with `verbose: true`
        print(self.line, file=sys.stderr if self.to_stderr else sys.stdout, flush=True)


# -- running as a hook ------------------------------------------------------------------------


def run_hook(action: str, repo: Path, *, strict: bool, checkout_type: str | None = None,
             rewrite_command: str | None = None) -> Outcome:  # fmt: skip
    """`index` (pre-commit: the staged content) or `sync` (post-*: HEAD) while git waits, failing
    open unless strict. An update already running (a background sync) is waited for, a while."""
    try:
        if action != "index" and _sync_places(repo, checkout_type, rewrite_command) is None:
            return Outcome(0, None)
        return Outcome(0, _update(repo, "staged" if action == "index" else "rev", _WAIT))
    except Exception as e:  # fail open on anything, bugs included: the commit matters more
        if strict and os.environ.get("CORA_DEBUG"):
            raise
        return _failure(e, strict)


def start_sync(repo: Path, checkout_type: str | None = None, rewrite_command: str | None = None) -> Outcome:
    """A post-* sync git does not wait for (~0.1 s, against ~0.6 s for 5 files in 1,000): take the
    bundle's lock, hand it to a new process (a session of its own, no terminal, no output) that
    updates the bundle under it (`background_sync`), and return. Nothing is printed unless the
    last background sync failed: its warning is this run's one line, until a sync succeeds."""
    try:
        places = _sync_places(repo, checkout_type, rewrite_command)
        if places is None:
            return Outcome(0, None)
        told = _told(places.record)
        _spawn(places.out)
        return Outcome(0, told, True)
    except Exception as e:
        return _failure(e, False)


def background_sync(repo: Path) -> None:
    """The process `start_sync` starts: the update under the lock it was handed (or, when another
    update held it, once that one is done), its failure left in `FAILED` for the next hook to tell.
    It lets the lock go only with the bundle at HEAD: a checkout while it ran (a commit's sync still
    running) had its own sync wait for the lock, and whoever else waited for it (`cora-ci index`,
    a query's user, a test) could take it first and find the bundle a commit behind."""
    out, record, _ = _places(repo)
    try:
        handed = os.environ.pop(_HANDED, None)
        fd = int(handed) if handed is not None else acquire(out, _WAIT_BACKGROUND)
        try:
            for _ in range(_ROUNDS):
                at = _head(repo)
                adopt(out, os.dup(fd))  # the update closes its copy; the lock stays held by `fd`
                _update(repo, "rev", 0.0)
                if _head(repo) == at:
                    break
        finally:
            os.close(fd)
    except Exception as e:
        line = (_failure(e, False).line or "").replace(": warning: ", ": warning: the last sync failed: ", 1)
        tmp = record.with_name(f".{record.name}.{os.getpid()}")
        tmp.write_text(line + "\n")
        os.replace(tmp, record)
    else:
        record.unlink(missing_ok=True)


def _head(repo: Path) -> str:
    """The commit HEAD names now ("" when it names none yet)."""
    out = subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=repo, capture_output=True,
                         text=True, check=False)  # fmt: skip
    return out.stdout.strip()


class _Places(NamedTuple):
    """What a hook's one `git rev-parse` tells."""

    out: Path  # the bundle a hook updates: `.cora/index` at the top of the work tree
    record: Path  # a background sync's failure record, in the git directory
    rebasing: bool  # a rebase is in progress


def _places(repo: Path) -> _Places:
    names = (FAILED, "rebase-merge", "rebase-apply")
    paths = [a for n in names for a in ("--git-path", n)]
    out = subprocess.run(["git", "rev-parse", "--show-toplevel", *paths], cwd=repo, capture_output=True,
                         text=True, check=False)  # fmt: skip
    lines = out.stdout.splitlines()
    if out.returncode != 0 or len(lines) != 1 + len(names):
        raise CoraError("CORA-IO-003", f"{repo} is not a git repository with a work tree")
    record, *rebase = (repo / line for line in lines[1:])  # relative to `repo`, or absolute
    return _Places(Path(lines[0]) / ".cora" / "index", record, any(p.is_dir() for p in rebase))


def _told(record: Path) -> str | None:
    try:
        with record.open("rb") as f:
            return f.read(_MAX_TOLD).decode(errors="replace").strip().splitlines()[0] or None
    except (OSError, IndexError):
        return None


def _spawn(out: Path) -> None:
    """Start `background_sync` for the bundle `out` with its lock, when free, handed over: it stays
    held from this process to that one, so whoever waits for it (`cora-ci index`, the next hook)
    sees the bundle only once the sync has swapped it in."""
    fd = None
    try:
        fd = acquire(out)
    except CoraError as e:  # a sync or a manual update is running: the new process waits its turn
        if e.code != "CORA-BND-007":
            raise
    root = out.parent.parent
    env = {**os.environ, _HANDED: str(fd)} if fd is not None else dict(os.environ)
    try:
        subprocess.Popen([sys.executable, "-m", "cora_ci", "hook", "sync", str(root), "--background"],
                         cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True,
                         pass_fds=() if fd is None else (fd,))  # fmt: skip
    finally:
        if fd is not None:
            os.close(fd)


def _sync_places(repo: Path, checkout_type: str | None, rewrite_command: str | None) -> _Places | None:
    """Where a post-* hook syncs, or None when it need not update the bundle.

    A file checkout leaves HEAD where it was. During a rebase git fires post-checkout and
    post-commit for every step; post-rewrite fires once at its end, so only that one syncs.
    """
    if checkout_type == FILE_CHECKOUT:
        return None
    places = _places(repo)
    return None if rewrite_command is None and places.rebasing else places


def _update(repo: Path, kind: str, wait: float) -> str | None:
    """Update the bundle, waiting up to `wait` seconds for an update that holds it (a background
    sync); one summary line when its content changed, None when only its commit did."""
    from cora_ci.build import build

    s = build(repo, kind=kind, wait=wait)
    if not (s.rechunked or s.removed or s.rebuilt):
        return None
    n = s.rechunked + s.removed
    counts = f"{n} file{'s' * (n != 1)} changed ({s.files} indexed, {s.chunks} chunks)"
    return f"cora-ci: {os.path.relpath(s.out)} at {s.source}: {counts}, {s.seconds:.1f} s"


def _failure(e: Exception, strict: bool) -> Outcome:
    if isinstance(e, CoraError):
        code, message, status = e.code, e.message, e.exit_status
    else:
        code, message, status = "CORA-INT-001", f"{type(e).__name__}: {e}", CODES["CORA-INT-001"].exit_status
    text = " ".join(f"{code}: {message}".split())  # one line, whatever the message holds
    hint = CODES[code].hint if code in CODES else CODES["CORA-INT-001"].hint
    todo = f"{hint}; `cora-ci index` then updates it"
    if strict:
        return Outcome(status, f"cora-ci: error: {text} (bundle left as it was; {todo}; --strict)", True)
    return Outcome(0, f"cora-ci: warning: {text} (bundle left as it was; {todo})", True)


# -- installing the plain git hooks -------------------------------------------------------------


def git_path(repo: Path, name: str) -> Path:
    """`git rev-parse --git-path`: honours core.hooksPath and linked worktrees."""
    out = subprocess.run(["git", "rev-parse", "--git-path", name], cwd=repo, capture_output=True,
                         text=True, check=False)  # fmt: skip
    if out.returncode != 0:
        raise CoraError("CORA-IO-003", f"{repo} is not a git repository")
    return repo / out.stdout.strip()  # relative to `repo`, or absolute (then `/` keeps it)


def script(name: str) -> bytes:
    """Our hook script `name`, shipped as package data so an installed wheel can install hooks."""
    from importlib import resources

    return (resources.files("cora_ci") / "hook_scripts" / name).read_bytes()


def is_ours(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return MARKER in f.read(512)
    except OSError:
        return False


def install_hooks(repo: Path) -> list[str]:
    """Install our scripts, moving a foreign hook aside to be run first. Checks every hook before
    changing any, so a refusal leaves the directory as it was; installing twice changes nothing."""
    hooks = git_path(repo, "hooks")
    plan = [(hooks / name, script(name)) for name in HOOK_NAMES]
    for path, _ in plan:
        chained = _chained(path)
        if _exists(path) and not is_ours(path) and _exists(chained):
            raise CoraError("CORA-HOOK-001", f"{path} is not ours and {chained.name} already exists")
    hooks.mkdir(parents=True, exist_ok=True)
    return [_install_one(path, body) for path, body in plan]


def _install_one(path: Path, body: bytes) -> str:
    if is_ours(path) and path.read_bytes() == body and os.access(path, os.X_OK):
        return f"unchanged {path}"
    note = ""
    if _exists(path) and not is_ours(path):
        os.rename(path, _chained(path))
        note = f" (runs the existing hook first, now {_chained(path).name})"
    tmp = path.with_name(f".{path.name}.cora-tmp")
    tmp.write_bytes(body)
    tmp.chmod(0o755)
    os.replace(tmp, path)
    return f"installed {path}{note}"


def uninstall_hooks(repo: Path) -> list[str]:
    """Remove only our scripts and put back the hooks they chained; foreign hooks stay untouched."""
    hooks = git_path(repo, "hooks")
    done = []
    for name in HOOK_NAMES:
        path = hooks / name
        ours = is_ours(path)
        if ours:
            path.unlink()
        if not _exists(path) and _exists(_chained(path)):
            os.rename(_chained(path), path)
            done.append(f"restored {path}")
        elif ours:
            done.append(f"removed {path}")
    return done


def _chained(path: Path) -> Path:
    return path.with_name(path.name + CHAINED)


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()  # a dangling symlink is still a hook in the way
