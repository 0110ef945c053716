"""The official JavaScript SDKs (npm ``openai`` and ``@anthropic-ai/sdk``, pinned in
``node/package-lock.json``) run the whole repair through the replay servers in strict mode,
in each call style, with their default retries (``node/repair.mjs``).

The pinned packages are installed once (``npm ci``, which checks each package's integrity
hash) into ``~/.cache/labkit/npm/<the lock's digest>/`` and reused by later runs, from any
clone on this machine. Without node and npm, or the npm registry, the test is skipped on a
learner's machine and fails in CI (``CI=true``), as the browser test does.
"""

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import PROJECT_DIR

from labkit import RepoTools, load_recording, run_checks, sample_copy, serve_recording
from labkit.settings import DEFAULT_MODELS

PINNED = Path(__file__).parent / "node"
CACHE = Path(os.environ.get("LABKIT_NPM_CACHE", Path.home() / ".cache" / "labkit" / "npm"))
RECORDINGS = PROJECT_DIR / "recordings"
CASES = {
    "openai": RECORDINGS / "repair_openai.json",
    "anthropic": RECORDINGS / "repair_anthropic.json",
    "anthropic-thinking": RECORDINGS / "repair_anthropic_thinking.json",
}
STYLES = ["whole", "create_stream", "stream_helper"]


def unavailable(message: str):
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail(f"CI: {message}", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="module")
def node_folder() -> Path:
    """The folder holding the pinned SDKs (installed on first use) and the client program."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not (node and npm):
        unavailable("the JavaScript SDK test needs node and npm on PATH")
    lock = (PINNED / "package-lock.json").read_bytes()
    folder = CACHE / hashlib.sha256(lock + (PINNED / "package.json").read_bytes()).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as held:  # one installer at a time, across processes
        fcntl.flock(held, fcntl.LOCK_EX)
        if not (folder / "node_modules" / ".installed").exists():
            for name in ("package.json", "package-lock.json"):
                shutil.copyfile(PINNED / name, folder / name)
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
                cwd=folder,
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0:
                unavailable(f"npm ci failed in {folder}: {done.stderr[-800:]}")
            (folder / "node_modules" / ".installed").touch()
    shutil.copyfile(PINNED / "repair.mjs", folder / "repair.mjs")  # beside its packages
    return folder


def node_repair(folder: Path, provider: str, style: str, server, root: Path) -> dict:
    """Run the client program against ``server``, answering its tool calls with the course's
    tools on ``root``; return what it reports at the end."""
    first = load_recording(server.identity["recording"])["turns"][0]["request"]["messages"]
    tools = RepoTools(root)
    config = {
        "provider": provider,
        "style": style,
        "url": server.url,
        "model": DEFAULT_MODELS[provider],
        "system": first[0]["content"],
        "task": first[1]["content"],
        "tools": tools.schemas,
    }
    child = subprocess.Popen(
        [shutil.which("node"), "repair.mjs"],
        cwd=folder,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        child.stdin.write(json.dumps(config) + "\n")
        child.stdin.flush()
        for line in child.stdout:
            said = json.loads(line)
            if "done" in said:
                return said["done"]
            call = said["call"]
            result = tools.invoke(call["name"], call["arguments"])
            child.stdin.write(json.dumps(result) + "\n")  # one line: JSON escapes newlines
            child.stdin.flush()
        raise AssertionError(f"the client stopped: {child.stderr.read()[-2000:]}")
    finally:
        child.kill()
        child.wait()


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_javascript_sdk_runs_the_whole_repair_in_strict_mode(node_folder, case, style):
    provider = case.split("-")[0]
    with serve_recording(CASES[case]) as server, sample_copy() as root:
        done = node_repair(node_folder, provider, style, server, root)
        checks = run_checks(root)
    assert done["calls"] == ["read_file", "read_file", "replace_text", "run_tests"]
    assert len(server.chat_requests) == 5 and server.errors == []
    assert (checks.exit_code, checks.passed) == (0, 4) and "4 passed" in done["finalText"]
    ids = done["requestIds"]
    if (provider, style) == ("openai", "stream_helper"):
        assert ids == [None] * 5  # openai's chat stream helper exposes no request id
    else:
        assert len(set(ids)) == 5 and all(i.startswith("req_replay_") for i in ids)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_javascript_sdk_retries_past_a_refused_reply_and_the_turn_is_kept(node_folder, provider):
    path = CASES[provider]
    with serve_recording(path, turn=3, status=503) as server, sample_copy() as root:
        done = node_repair(node_folder, provider, "whole", server, root)
    assert len(server.chat_requests) == 6 and len(done["calls"]) == 4
    assert server.chat_requests[2] == server.chat_requests[3]
