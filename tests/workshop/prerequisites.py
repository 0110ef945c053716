"""What the JupyterHub test needs beyond the course's environment, made once and reused:
configurable-http-proxy from npm, and a Python other uids can run, with the course's pins.

Without them the test is skipped on a learner's machine and fails in CI (``CI=true``), as the
JavaScript SDK test does (tests/models/test_node_clients.py).
"""

import fcntl
import hashlib
import os
import shutil
import stat
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import PROJECT_DIR

PINNED_PROXY = Path(__file__).parent / "proxy"  # package.json + package-lock.json
NPM_CACHE = Path(os.environ.get("LABKIT_NPM_CACHE", Path.home() / ".cache" / "labkit" / "npm"))
# Not under the home folder: learners' uids must be able to run this Python (root's home is
# 0700 on most machines). LABKIT_HUB_PYTHON_CACHE chooses another folder.
PYTHON_CACHE = Path(os.environ.get("LABKIT_HUB_PYTHON_CACHE", "/var/tmp/labkit-hub-python"))
#: The Pythons the learners' environment may be made from, the course's own first.
PYTHON_CANDIDATES = (Path(sys.base_prefix) / "bin" / "python3", Path("/usr/bin/python3"))


def unavailable(message: str):
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail(f"CI: {message}", pytrace=False)
    pytest.skip(message)


@contextmanager
def only_one_maker(folder: Path):
    """Hold ``folder``'s lock: one process at a time makes what it caches, across processes."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


def digest(*parts: bytes) -> str:
    return hashlib.sha256(b"".join(parts)).hexdigest()[:16]


def proxy_command() -> Path:
    """configurable-http-proxy, the version pinned in proxy/package-lock.json (``npm ci``)."""
    npm = shutil.which("npm")
    if not (shutil.which("node") and npm):
        unavailable("the JupyterHub test needs node and npm on PATH (configurable-http-proxy)")
    pins = [PINNED_PROXY / "package.json", PINNED_PROXY / "package-lock.json"]
    folder = NPM_CACHE / digest(*(pin.read_bytes() for pin in pins))
    with only_one_maker(folder):
        if not (folder / "node_modules" / ".installed").exists():
            for pin in pins:
                shutil.copyfile(pin, folder / pin.name)
            command = [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"]
            done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                unavailable(f"npm ci failed in {folder}: {done.stderr[-800:]}")
            (folder / "node_modules" / ".installed").touch()
    return folder / "node_modules" / ".bin" / "configurable-http-proxy"


def runnable_by_anyone(path: Path) -> bool:
    """Whether a uid that is neither the owner nor in the group can run ``path``: every folder
    above it searchable by others, the file itself executable by others."""
    path = path.resolve()
    folders_open = all(folder.stat().st_mode & stat.S_IXOTH for folder in path.parents)
    return folders_open and bool(path.stat().st_mode & stat.S_IXOTH)


def learners_python() -> Path:
    """The ``bin/`` of a virtual environment every uid can run, holding requirements.lock's
    pins (labkit itself comes from the test's copy, on PYTHONPATH; the instructor's package is
    never installed in it). Made once per lock with uv (about 20 s), then reused."""
    usable = (python for python in PYTHON_CANDIDATES if python.exists())
    base = next((python for python in usable if runnable_by_anyone(python)), None)
    if base is None:
        unavailable(f"no Python that other uids can run (tried {PYTHON_CANDIDATES})")
    uv = shutil.which("uv") or PROJECT_DIR / ".venv" / "uv" / "bin" / "uv"
    if not Path(uv).exists():
        unavailable("the JupyterHub test needs uv (make setup fetches it into .venv/uv/)")
    lock = PROJECT_DIR / "requirements.lock"
    folder = PYTHON_CACHE / digest(lock.read_bytes(), str(base.resolve()).encode())
    venv = folder / "venv"
    with only_one_maker(folder):
        folder.chmod(0o755)
        PYTHON_CACHE.chmod(0o755)
        if not (venv / ".installed").exists():
            shutil.rmtree(venv, ignore_errors=True)
            made = subprocess.run(
                [str(base), "-m", "venv", "--without-pip", str(venv)],
                capture_output=True,
                text=True,
            )
            # The course's Python may be a newer patch release than the one other uids can run
            # (Debian's 3.11.2 here): the pins are resolved for the course's, as the lock was.
            version = ".".join(map(str, sys.version_info[:3]))
            install = [uv, "pip", "install", "--quiet", "--compile-bytecode"]
            install += ["--python", str(venv / "bin" / "python"), "--python-version", version]
            done = made.returncode == 0 and subprocess.run(
                [*install, "-r", str(lock)], capture_output=True, text=True, timeout=900
            )
            if not done or done.returncode != 0:
                log = (done.stderr if done else made.stderr)[-800:]
                unavailable(f"could not make the learners' Python in {venv}: {log}")
            (venv / ".installed").touch()
    return venv / "bin"
