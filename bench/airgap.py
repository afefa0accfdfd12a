"""The README's air-gapped path, run with the network really gone.

    python bench/airgap.py [--keep DIR] [--json FILE]

On the connected side it builds cora-ci's wheel from this checkout (`pip wheel --no-deps`, which
needs the registry for the build backend). Everything after that runs under `unshare -n` (a network
namespace with no interface but loopback, which is down): a fresh venv, `pip install --no-index
--find-links wheelhouse cora-ci`, indexing a small git repository, packing it, and `cora-ci query`
on the archive. The dependencies' wheels are not rebuilt here (that is `pip wheel`/`pip download`
with the registry); the fresh venv sees the current environment's installed packages through a
`.pth` file instead, so the check stays cheap while cora-ci itself comes from the wheelhouse.

The test suite checks the query path offline with socket creation disabled
(`tests/test_query_cli.py::test_query_is_offline_and_writes_nothing_into_the_bundle`); this script
adds the install from a wheelhouse and a real network namespace. Needs `unshare` (root, or user
namespaces for `unshare -rn`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from benchlib import Figures, json_option

ROOT = Path(__file__).resolve().parent.parent
FILES = {
    "src/vault.py": (
        "class Vault:\n"
        '    """Keeps secrets sealed until a quorum of keys opens it."""\n\n'
        "    def unseal(self, keys):\n"
        '        """Open the vault when enough key shares are given."""\n'
        "        return len(keys) >= 3\n"
    ),
    "README.md": "# Vault\n\nA toy vault.\n",
}


def sh(*cmd: str | Path, cwd: Path | None = None, offline: list[str] | None = None) -> str:
    argv = [*(offline or []), *map(str, cmd)]
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(argv)}\n{p.stdout}{p.stderr}")
    return p.stdout


def no_network() -> list[str]:
    """The prefix that runs a command without network: inside it, loopback is the only interface
    (checked by listing interfaces, never by sending anything)."""
    probe = "import socket; print(' '.join(sorted(n for _, n in socket.if_nameindex())))"
    for prefix in (["unshare", "-n"], ["unshare", "-rn"]) if shutil.which("unshare") else ():
        p = subprocess.run([*prefix, sys.executable, "-c", probe], capture_output=True, text=True)
        if p.returncode == 0 and p.stdout.split() == ["lo"]:
            return prefix
    sys.exit("needs `unshare -n` (root) or `unshare -rn` (user namespaces); see tests/test_query_cli.py")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", type=Path, default=None, help="work in DIR and leave it there")
    json_option(ap)
    args = ap.parse_args()
    offline = no_network()
    work = args.keep or Path(tempfile.mkdtemp(prefix="cora-airgap-"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    timings: dict[str, float] = {}

    def lap(name: str) -> None:
        timings[name] = round(time.perf_counter() - t0 - sum(timings.values()), 2)

    wheelhouse = work / "wheelhouse"
    sh(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", wheelhouse, ROOT)
    lap("wheel (connected)")

    venv = work / "venv"
    sh(sys.executable, "-m", "venv", venv, offline=offline)
    py = venv / "bin" / "python"
    site = Path(sh(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "airgap-deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    sh(py, "-m", "pip", "install", "-q", "--no-index", "--find-links", wheelhouse, "--ignore-installed",
       "--no-deps", "cora-ci", offline=offline)  # fmt: skip
    where = sh(py, "-c", "import cora_ci; print(cora_ci.__file__)", cwd=work, offline=offline).strip()
    assert Path(where).is_relative_to(venv), f"cora_ci imported from {where}, not the wheelhouse install"
    lap("install (offline)")

    repo = work / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    for cmd in (["init", "-q", "-b", "main"], ["add", "-A"],
                ["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "init"]):  # fmt: skip
        sh("git", *cmd, cwd=repo)
    cora = venv / "bin" / "cora-ci"
    env_cache = ["env", f"XDG_CACHE_HOME={work / 'cache'}"]
    sh(*env_cache, cora, "index", "-q", repo, offline=offline)
    archive = work / "dl" / "cora-index.tar.gz"
    sh(*env_cache, cora, "pack", repo / ".cora" / "index", "-o", archive, offline=offline)
    lap("index + pack (offline)")

    out = sh(*env_cache, cora, "query", "open the vault with key shares", "--bundle", archive,
             "--format", "json", "-k", "3", cwd=work, offline=offline)  # fmt: skip
    results = json.loads(out)["results"]
    assert results and results[0]["anchor"] == "src/vault.py::Vault.unseal", results
    lap("query (offline)")

    print(f"ok: cora-ci from a wheelhouse answered offline ({' '.join(offline)}): {results[0]['anchor']}")
    print("seconds: " + ", ".join(f"{k} {v}" for k, v in timings.items()))
    fig = Figures("airgap")
    fig.add("airgap.ok", "offline install, index, pack and query answered (1 = yes)", 1, "", (">=", 1),
            "issue 5: offline")  # fmt: skip
    for step, sec in timings.items():
        fig.add(f"airgap.{step.split()[0]}", f"air-gapped path: {step}", sec, "s")
    fig.write(args.json)
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
