"""Shared test helpers: the checkout's folder, chats and tools written for tests, and a
guard on the sample's bytes. Chunks and calls come from the one builder,
``labkit.models.chunks``."""

import hashlib
import os
import time
from collections import Counter
from functools import partial
from pathlib import Path

import nbformat
import pytest

from labkit import load_recording, recorded_answers
from labkit.harness.run_cache import VARIABLE as RUN_CACHE
from labkit.harness.sample import SAMPLE_DIR
from labkit.models import chunks
from labkit.recording import recording_path
from labkit.settings import PROVIDER_RECORDINGS

PROJECT_DIR = Path(__file__).resolve().parent.parent  # the checkout these tests belong to
#: The pip commands the README and labkit's messages suggest: tests/test_package.py runs each
#: against the wheel it builds (tests/test_suggested_commands.py checks the list is whole).
WHEEL_COMMANDS = (
    "pip wheel --no-deps -w dist .",
    "pip install --no-deps dist/labkit-0.1.0-py3-none-any.whl",
    "pip install -r pins.txt",
    'pip install "dist/labkit-0.1.0-py3-none-any.whl[course]"',
    "pip install -r requirements.lock labkit-0.1.0-py3-none-any.whl",
    "pip wheel --no-deps -w dist instructor/",  # the instructor's package, built beside labkit's
)


def _sample_digest():
    files = sorted(
        p
        for p in SAMPLE_DIR.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and ".pytest_cache" not in p.parts
    )
    return {
        str(p.relative_to(SAMPLE_DIR)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files
    }


#: The files that take longest, longest first (``make test`` keeps this order for
#: pytest-xdist; the other files follow, each a few seconds at most). The graded class and
#: the browser test start at once, on workers of their own, and the short files come last,
#: so the workers finish together instead of one long file running alone at the end (the
#: timeouts of test_test_run_faults.py among them: it waits more than it computes).
LONGEST_FIRST = (
    "grading/test_student_edition.py",
    "grading/test_parallel_grading.py",
    "browser/test_lessons_in_jupyterlab.py",
    "test_package.py",
    "test_suggested_commands.py",
    "grading/test_exercises.py",
    "grading/test_exchange.py",
    "workshop/test_jupyterhub.py",
    "lessons/test_notebooks_papermill.py",
    "recording/test_recordings.py",
    "safety/test_test_run_faults.py",
    "safety/test_sandbox_escapes.py",
    "recording/test_provider_recorder.py",
    "models/test_provider_models.py",
    "models/test_ollama_model.py",
    "recording/test_recorder.py",
    "safety/test_shell_and_gate.py",
    "safety/test_stream_properties.py",
)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: how many workers `-n auto` starts
def pytest_xdist_auto_num_workers(config):
    """One worker more than this process may use cores. With one per core the cores stood idle
    about 16% of the time in `make test`, while tests waited on kernels, servers and timeouts;
    with one more, about 3%. PYTEST_XDIST_AUTO_NUM_WORKERS, if set, decides instead."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist reads it
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


#: The folders of tests/ whose test runs all really run: they try the harness itself, runs
#: that misbehave among them (`make test` keeps finished runs otherwise: run_cache.py).
EVERY_RUN_RUNS = ("harness", "safety")


def pytest_collection_modifyitems(items):
    def rank(item):
        path = item.path.relative_to(PROJECT_DIR / "tests").as_posix()
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: each file's tests keep their order
    for item in items:
        if item.path.relative_to(PROJECT_DIR / "tests").parts[0] in EVERY_RUN_RUNS:
            item.add_marker(pytest.mark.usefixtures("no_kept_runs"))


@pytest.fixture
def no_kept_runs(monkeypatch):
    """Every test run of this test runs: none is taken from make test's kept runs."""
    monkeypatch.delenv(RUN_CACHE, raising=False)


@pytest.fixture(scope="session", autouse=True)
def sample_is_never_changed():
    """Fails the run if anything the suite does changes a byte of sample_repo/."""
    before = _sample_digest()
    yield
    assert _sample_digest() == before, "the test suite changed sample_repo/"


SAFETY_TALLY = Counter()  # what the safety suite (tests/safety/) tried in this run
SAFETY_NOTES = []  # measurements worth reading, e.g. how long a hung test run took to stop


@pytest.fixture(scope="session")
def safety_tally():
    """Count a safety case: ``safety_tally["hostile tool arguments"] += 1``."""
    return SAFETY_TALLY


@pytest.fixture(scope="session")
def safety_notes():
    return SAFETY_NOTES


def pytest_sessionfinish(session):
    """A worker of pytest-xdist hands its safety tally to the main process."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["safety"] = [dict(SAFETY_TALLY), list(SAFETY_NOTES)]


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: unknown when it is not installed
def pytest_testnodedown(node, error):
    """The main process adds up what each worker's safety suite tried."""
    tally, notes = getattr(node, "workeroutput", {}).get("safety", ({}, []))
    SAFETY_TALLY.update(tally)
    SAFETY_NOTES.extend(notes)


def pytest_terminal_summary(terminalreporter):
    """Print what the safety suite tried, so each run reports its own numbers."""
    if SAFETY_TALLY or SAFETY_NOTES:
        terminalreporter.section("safety suite")
        for kind, count in sorted(SAFETY_TALLY.items()):
            terminalreporter.line(f"{count:6d}  {kind}")
        for note in SAFETY_NOTES:
            terminalreporter.line(f"        {note}")


chunk = partial(chunks.chunk, model="test")  # one Ollama chat chunk, written out by hand
call = chunks.call


def final_text_turn(text):
    """A complete reply that streams ``text`` in two pieces and ends normally."""
    half = len(text) // 2
    return [chunk(text[:half]), chunk(text[half:]), chunk(done=True)]


def tool_turn(*calls):
    """A complete reply that asks for ``calls`` on a done:false chunk, then ends."""
    return [chunk(thinking="planning"), chunk(tool_calls=list(calls)), chunk(done=True)]


def conversation(*results):
    """A conversation: system, user, then one assistant call of read_file (ids call_1,
    call_2...) and its result per item of ``results``."""
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "TASK"}]
    for number, result in enumerate(results, start=1):
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": f"call_{number}", "function": {"name": "read_file", "arguments": {}}}
                ],
            }
        )
        messages.append(
            {
                "role": "tool",
                "tool_name": "read_file",
                "tool_call_id": f"call_{number}",
                "content": result,
            }
        )
    return messages


class ListChat:
    """A chat that answers each request with the next list of chunks and keeps the requests.
    ``wire_format``: the format its chunks are in (None: Ollama's)."""

    def __init__(self, *turns, wire_format=None):
        self.turns = list(turns)
        self.requests = []
        self.wire_format = wire_format

    def __call__(self, messages, tool_schemas):
        self.requests.append(messages)
        return iter(self.turns[len(self.requests) - 1])


class FakeTools:
    """Tools that record their calls; 'boom' raises ValueError, anything else echoes."""

    schemas = [{"type": "function", "function": {"name": "echo", "parameters": {}}}]

    def __init__(self):
        self.calls = []

    def invoke(self, name, arguments):
        self.calls.append((name, arguments))
        if name == "boom":
            raise ValueError("boom went wrong")
        if not isinstance(arguments, dict):
            raise TypeError("arguments must be an object")
        return {"echo": name, **arguments}


def process_alive(pid, wait=2.0):
    """True if ``pid`` still runs after ``wait`` seconds (a zombie awaiting its reaper is dead)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        if state in ("Z", "X"):
            return False
        if time.monotonic() > deadline:
            return True
        time.sleep(0.05)


@pytest.fixture
def closed_port_url():
    """The address of a loopback port that refuses connections (bound, never listening)."""
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{holder.getsockname()[1]}"


def wait_until(condition, timeout=10.0):
    """Poll ``condition`` until it is true or ``timeout`` seconds pass; return its last value."""
    deadline = time.monotonic() + timeout
    while not (value := condition()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return value


@pytest.fixture(scope="session")
def repair_recording():
    from labkit import load_recording

    return load_recording(PROJECT_DIR / "recordings" / "repair.json")


@pytest.fixture(scope="session")
def repair_events(repair_recording):
    """The full loop events (with message snapshots) of a strict replay of repair.json."""
    from labkit import ReplayModel, RepoTools, agent_events, sample_copy

    with sample_copy() as root:
        return list(
            agent_events(
                ReplayModel(repair_recording),
                RepoTools(root),
                repair_recording["task"],
                max_turns=repair_recording["max_turns"],
            )
        )


def replayed_events(name):
    """The full loop events of a strict replay of a course recording, on the harness it
    was recorded with (tools, gate answered as recorded, budget)."""
    from labkit import ReplayModel, load_recording, run_attempt
    from labkit.recording import replay_harness

    recording = load_recording(PROJECT_DIR / "recordings" / f"{name}.json")
    _, events = run_attempt(
        ReplayModel(recording),
        provenance=recording["provenance"],
        task=recording["task"],
        max_turns=recording["max_turns"],
        **replay_harness(recording),
    )
    return events


@pytest.fixture(scope="session")
def permissions_events():
    return replayed_events("permissions")


@pytest.fixture(scope="session")
def budget_events():
    return replayed_events("budget")


def texts_with_class(html, css_class):
    """The text content of each element of ``html`` whose class list holds ``css_class``."""
    from html.parser import HTMLParser

    class Collector(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.open, self.found = [], []

        def handle_starttag(self, tag, attrs):
            if css_class in (dict(attrs).get("class") or "").split():
                self.found.append([])
                self.open.append(self.found[-1])
            else:
                self.open.append(None)

        def handle_endtag(self, tag):
            self.open.pop()

        def handle_data(self, data):
            for buffer in self.open:
                if buffer is not None:
                    buffer.append(data)

    collector = Collector()
    collector.feed(html)
    collector.close()
    return ["".join(parts) for parts in collector.found]


def assert_time_grows_in_step(seconds_for, small=10_000, large=160_000):
    """Fail unless the least CPU time of 3 runs of ``seconds_for(n)`` (a function timing some
    work on n fragments and returning the seconds) grows at most 2.5 times faster than n."""

    def best(n):
        return min(seconds_for(n) for _ in range(3))

    short, long = best(small), best(large)
    assert long < large / small * 2.5 * max(short, 1e-3), (short, long)


# --- A lesson's parameters, and the ones that run it live against its recording ----------


def parameters_of(notebook) -> dict:
    """The lesson's default parameters, read from its tagged cell."""
    cell = next(
        c
        for c in nbformat.read(notebook, as_version=4).cells
        if "parameters" in c.metadata.get("tags", [])
    )
    values = {}
    exec(cell.source, {}, values)
    return values


def lesson_recording(parameters) -> dict:
    """The recording a lesson replays: its RECORDING, else its provider's recorded repair."""
    chosen = parameters["RECORDING"] or PROVIDER_RECORDINGS[parameters.get("PROVIDER", "ollama")]
    return load_recording(recording_path(chosen))


def live_parameters(parameters, server_url) -> dict:
    """What runs a lesson in live mode through the SDK against ``server_url`` (a replay
    server of its recording), unattended: a gate that asks a person gets the recorded answers."""
    answers = (
        {"ANSWERS": recorded_answers(lesson_recording(parameters))}
        if "ANSWERS" in parameters
        else {}
    )
    return {"MODE": "live", "OLLAMA_HOST": server_url, **answers}
