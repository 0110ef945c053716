"""The hub of tests/workshop/test_jupyterhub.py: a real JupyterHub on loopback, as root, that
runs each learner's server under a uid of their own and writes the course's lessons at spawn.

Everything that differs between runs comes from the environment the test starts the hub with
(``LABKIT_HUB_*``), so this file holds no secret: the service token and the shared password
never reach a file a learner could read, nor a command line (``/proc/PID/cmdline`` is public;
``/proc/PID/environ`` is the owner's only). The README's workshop section is the config a real
workshop starts from; this one swaps its authenticator and its spawner for ones a single test
machine can run.
"""

import json
import os

from jupyterhub.spawner import SimpleLocalProcessSpawner

c = get_config()  # noqa: F821 (JupyterHub's config loader defines it)
env = os.environ
HUB_DIR = env["LABKIT_HUB_DIR"]  # 0700: the database, the cookie secret, the pid files
#: {learner name: uid}: learners need no /etc/passwd entry, the hub (root) drops to the uid
LEARNER_UIDS = json.loads(env["LABKIT_HUB_LEARNER_UIDS"])


class UidSpawner(SimpleLocalProcessSpawner):
    """A local spawner that runs each learner's server as the learner's own uid, in a home
    only that uid can open (0700), with no supplementary groups (root's are dropped)."""

    def make_preexec_fn(self, name):
        uid, home = LEARNER_UIDS[name], self.home_dir

        def become_the_learner():  # in the child, after fork, before exec
            os.makedirs(home, 0o700, exist_ok=True)
            os.chown(home, uid, uid)
            os.chmod(home, 0o700)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.chdir(home)

        return become_the_learner


c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = int(env["LABKIT_HUB_PORT"])
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(env["LABKIT_HUB_API_PORT"])
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{env['LABKIT_HUB_PROXY_API_PORT']}"
c.ConfigurableHTTPProxy.command = [env["LABKIT_HUB_PROXY"]]  # configurable-http-proxy (npm)
c.ConfigurableHTTPProxy.pid_file = f"{HUB_DIR}/proxy.pid"
c.JupyterHub.db_url = f"sqlite:///{HUB_DIR}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = f"{HUB_DIR}/cookie_secret"
c.JupyterHub.pid_file = f"{HUB_DIR}/jupyterhub.pid"

# fit for a test only: any name, one shared password (a workshop uses its real login)
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = env["LABKIT_HUB_PASSWORD"]
c.Authenticator.allow_all = True  # a name without a uid in LEARNER_UIDS cannot spawn

c.JupyterHub.spawner_class = UidSpawner
c.SimpleLocalProcessSpawner.home_dir_template = env["LABKIT_HUB_HOMES"] + "/{username}"
# The learner's server gets this environment and nothing of the hub's (its PATH holds root's
# Python, which other uids cannot run): a Python every uid can run, and the student package.
c.Spawner.env_keep = []
c.Spawner.environment = {
    "PATH": f"{env['LABKIT_HUB_LEARNER_BIN']}:/usr/bin:/bin",
    "PYTHONPATH": env["LABKIT_HUB_LEARNER_PYTHONPATH"],
    "PYTHONDONTWRITEBYTECODE": "1",
}
# The lessons are written by the learner's own server, as the learner, before it starts (what
# Zero to JupyterHub's lifecycleHooks.postStart does); `labkit lessons` never overwrites a file.
c.Spawner.cmd = [
    "sh",
    "-c",
    'python -m labkit lessons "$HOME/student" >/dev/null && exec jupyterhub-singleuser "$@"',
    "labkit-lessons",
]
c.Spawner.default_url = "/lab/tree/student/01_one_file_read.ipynb"
c.Spawner.start_timeout = 90
c.Spawner.http_timeout = 90

# the test's own service: creates learners and their tokens, starts and stops servers
c.JupyterHub.services = [{"name": "workshop-test", "api_token": env["LABKIT_HUB_SERVICE_TOKEN"]}]
c.JupyterHub.load_roles = [
    {
        "name": "workshop-test",
        "scopes": ["admin:users", "admin:servers", "tokens", "access:servers", "list:users"],
        "services": ["workshop-test"],
    }
]
