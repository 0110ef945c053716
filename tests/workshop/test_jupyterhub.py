"""A workshop through a real JupyterHub on this machine (issue 38, 4.2 and 4.3).

``jupyterhub`` (the pinned 6.1.1) runs as root on loopback with configurable-http-proxy (npm,
pinned in proxy/), the shared-password authenticator and a local spawner that runs each
learner's server under a uid of their own, in a home only that uid can open
(hub/jupyterhub_config.py). The learner's server writes the course's lessons into
``~/student`` as the learner before it starts (``python -m labkit lessons``, what Zero to
JupyterHub's ``lifecycleHooks.postStart`` runs in the README). The test logs two learners in
through the hub's REST API (a service token asks the hub for each learner's own token), starts
their servers, runs lesson 01's code cells up to its first exercise in alice's kernel over
the websocket, and from that kernel tries to open bob's home, the hub's database and cookie
secret, and the instructor's reference lessons, and to import the instructor's package.

The learners' Python is a virtual environment other uids can run (prerequisites.py), holding
requirements.lock's pins but not the instructor's package, with a copy of ``labkit`` (the
student package) on its PYTHONPATH. What one machine cannot show: containers (Zero to
JupyterHub's one pod per learner, its image without the instructor's package), TLS, a real
authenticator. Needs root (the spawner changes uid); skipped without it on a learner's
machine, failed in CI.
"""

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
import requests
from conftest import PROJECT_DIR
from hub_client import Learner
from prerequisites import learners_python, proxy_command, unavailable

from labkit.settings import EDITION_DIR

HERE = Path(__file__).parent
CONFIG = HERE / "hub" / "jupyterhub_config.py"
LEARNER_UIDS = {"alice": 40001, "bob": 40002}  # no account; the spawner drops to them
LESSON = "student/01_one_file_read.ipynb"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def folder(path: Path, mode: int) -> Path:
    path.mkdir()
    path.chmod(mode)
    return path


def wait_for(condition, timeout: float, what: str, log: Path):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if condition():
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.1)
    pytest.fail(f"{what} not within {timeout} s; the hub's log ends:\n{log.read_text()[-3000:]}")


def leftovers(base: Path) -> list:
    """Processes of the learners' uids, or with the test's folder on their command line."""
    found = []
    for process in psutil.process_iter(["pid", "uids", "cmdline"]):
        uids, command = process.info["uids"], " ".join(process.info["cmdline"] or ())
        if (uids and uids.real in LEARNER_UIDS.values()) or str(base) in command:
            found.append((process.info["pid"], command[:120]))
    return found


@pytest.fixture
def hub():
    """A running hub; stopped (SIGTERM: it stops the proxy and the servers) at the end."""
    if os.geteuid() != 0:
        unavailable("the JupyterHub test runs learners' servers under their own uids: run as root")
    proxy, learner_bin = proxy_command(), learners_python()
    base = Path(tempfile.mkdtemp(prefix="labkit-hub-"))
    base.chmod(0o711)  # learners reach their homes and the student package, list nothing
    hub_dir, instructor = folder(base / "hub", 0o700), folder(base / "instructor", 0o700)
    homes, student_python = folder(base / "homes", 0o711), folder(base / "python", 0o755)
    shutil.copytree(  # the student package: labkit alone, its links followed
        PROJECT_DIR / "labkit",
        student_python / "labkit",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    reference = subprocess.Popen(  # the instructor's own copy, with the answers
        [sys.executable, "-m", "labkit", "lessons", "--reference", str(instructor / "reference")],
        stdout=subprocess.DEVNULL,
    )
    token, port = secrets.token_hex(32), free_port()
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    env |= {
        "LABKIT_HUB_DIR": str(hub_dir),
        "LABKIT_HUB_HOMES": str(homes),
        "LABKIT_HUB_PORT": str(port),
        "LABKIT_HUB_API_PORT": str(free_port()),
        "LABKIT_HUB_PROXY_API_PORT": str(free_port()),
        "LABKIT_HUB_PROXY": str(proxy),
        "LABKIT_HUB_PASSWORD": secrets.token_hex(8),
        "LABKIT_HUB_SERVICE_TOKEN": token,
        "LABKIT_HUB_LEARNER_UIDS": json.dumps(LEARNER_UIDS),
        "LABKIT_HUB_LEARNER_BIN": str(learner_bin),
        "LABKIT_HUB_LEARNER_PYTHONPATH": str(student_python),
    }
    log = hub_dir / "hub.log"
    with open(log, "w") as output:
        process = subprocess.Popen(
            [str(Path(sys.executable).parent / "jupyterhub"), "-f", str(CONFIG)],
            cwd=hub_dir,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    running = {
        "url": f"http://127.0.0.1:{port}",
        "service": {"Authorization": f"token {token}"},
        "password": env["LABKIT_HUB_PASSWORD"],
        "base": base,
        "log": log,
        "process": process,
    }
    try:
        assert reference.wait(60) == 0, "python -m labkit lessons --reference failed"
        wait_for(lambda: requests.get(f"{running['url']}/hub/api/", timeout=2).ok, 60, "hub", log)
        yield running
    finally:
        stop_hub(process)
        reference.kill()
        shutil.rmtree(base, ignore_errors=True)


def stop_hub(process: subprocess.Popen):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def log_in(hub: dict, name: str) -> Learner:
    """The service creates ``name`` and asks the hub for their own token (no password: what
    the hub hands a learner's browser after the login form); the learner starts their server."""
    url, service = hub["url"], hub["service"]
    made = requests.post(f"{url}/hub/api/users/{name}", headers=service, timeout=30)
    assert made.status_code == 201, made.text
    scopes = [f"access:servers!user={name}", f"servers!user={name}"]
    given = requests.post(
        f"{url}/hub/api/users/{name}/tokens",
        headers=service,
        json={"note": "workshop test", "expires_in": 600, "scopes": scopes},
        timeout=30,
    )
    assert given.status_code == 201, given.text
    learner = Learner(url, name, given.json()["token"])
    started = requests.post(f"{url}/hub/api/users/{name}/server", headers=learner.headers)
    assert started.status_code in (201, 202), started.text
    return learner


def server_ready(hub: dict, name: str) -> bool:
    user = requests.get(f"{hub['url']}/hub/api/users/{name}", headers=hub["service"], timeout=10)
    return bool(user.json()["servers"].get("", {}).get("ready"))


def cells_before_first_exercise(notebook: dict) -> list[str]:
    cells = []
    for cell in notebook["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("solution"):
            return cells
        if cell["cell_type"] == "code":
            cells.append(cell["source"])
    pytest.fail("lesson 01 has no exercise (no nbgrader solution cell)")


def test_a_learner_logs_in_gets_the_lessons_and_runs_lesson_01_as_their_own_uid(hub):
    base, url = hub["base"], hub["url"]
    alice = log_in(hub, "alice")
    log_in(hub, "bob")  # both servers start together; bob's home is what alice must not open
    for name in LEARNER_UIDS:
        wait_for(lambda name=name: server_ready(hub, name), 90, f"{name}'s server", hub["log"])

    # the lessons were written at spawn, by the learner: every lesson of the student edition
    listed = {item["name"] for item in alice.get("api/contents/student")["content"]}
    assert listed == {path.name for path in EDITION_DIR.glob("*.ipynb")}
    home = base / "homes" / "alice"
    assert home.stat().st_uid == LEARNER_UIDS["alice"] and home.stat().st_mode & 0o777 == 0o700
    assert (home / LESSON).stat().st_uid == LEARNER_UIDS["alice"]

    # lesson 01 runs in alice's kernel, through the proxy, up to its first exercise; then the
    # same kernel says who it runs as and what it can open
    targets = {
        "bob's home": base / "homes" / "bob",
        "bob's lesson": base / "homes" / "bob" / LESSON,
        "the hub's database": base / "hub" / "jupyterhub.sqlite",
        "the hub's cookie secret": base / "hub" / "cookie_secret",
        "the hub's log": hub["log"],
        "the reference lessons": base / "instructor" / "reference" / "01_one_file_read.ipynb",
        "her own lesson": home / LESSON,
    }
    probe = (HERE / "isolation_probe.py").read_text()
    probe += f"\nprint(probe({ {label: str(path) for label, path in targets.items()}!r}))\n"
    cells = cells_before_first_exercise(alice.get(f"api/contents/{LESSON}")["content"])
    ran = alice.run_cells(LESSON, [*cells, probe])
    failed = [(i, run) for i, run in enumerate(ran) if run["status"] != "ok"]
    assert not failed and len(ran) == len(cells) + 1, failed  # cell i of lesson 01 (or the probe)
    seen = ran[-1]
    seen = json.loads(seen["stdout"])
    uid = LEARNER_UIDS["alice"]
    assert (seen["uid"], seen["gid"], seen["groups"]) == (uid, uid, [])
    assert seen["opened"] == {label: "PermissionError" for label in targets} | {
        "her own lesson": "read"
    }
    assert seen["packages"]["labkit_answers"] is None  # the instructor's package is not there
    assert seen["packages"]["labkit"].startswith(str(base / "python" / "labkit"))

    # the authenticator: the login form takes the shared password, and only it
    browser = requests.Session()
    browser.get(f"{url}/hub/login", timeout=10)
    form = {"username": "bob", "_xsrf": browser.cookies.get("_xsrf")}
    right = browser.post(
        f"{url}/hub/login", data=form | {"password": hub["password"]}, allow_redirects=False
    )
    wrong = browser.post(
        f"{url}/hub/login", data=form | {"password": "not-the-password"}, allow_redirects=False
    )
    assert (right.status_code, wrong.status_code) == (302, 403)

    # the servers stop, then the hub (with its proxy); nothing of the workshop is left running
    for name in LEARNER_UIDS:
        requests.delete(f"{url}/hub/api/users/{name}/server", headers=hub["service"], timeout=30)
    stop_hub(hub["process"])
    assert hub["process"].returncode == 0, hub["log"].read_text()[-3000:]
    end = time.monotonic() + 10
    while leftovers(base) and time.monotonic() < end:
        time.sleep(0.2)
    assert not leftovers(base)
