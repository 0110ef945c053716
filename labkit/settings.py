"""The course's defaults and folders, in one place: every entry point reads them from here.

The harness (``labkit.harness``) states its own limits in the module that applies
them, so that it can be read and lifted out alone; this module repeats none of them,
it names them for the rest of the course (the turn budget too is the loop's own:
``labkit.harness.loop.MAX_TURNS``, also ``labkit.MAX_TURNS``). Everything else (the
models, the servers, grading, where files are) is set here; which provider reads which
variable is ``labkit.models.providers``'s table.

The sample repository, the recordings, the student edition of the lessons and the pinned
versions are package data: in a clone ``labkit/harness/sample_repo``, ``labkit/course/recordings``,
``labkit/course/edition`` and ``labkit/course/requirements.lock`` are symbolic links to the
top-level folders and file of those names, and the wheel carries them. Both are found the same
way, through ``importlib.resources``: nothing here assumes a checkout. The lessons with their
reference answers are not labkit's: they are in the instructor's package, ``labkit_answers``
(``NOTEBOOKS_DIR`` is None where it is not installed, as in a workshop's image).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from .harness.sample import CHECK_TIMEOUT, SAMPLE_DIR  # noqa: F401
from .harness.sandbox import Limits
from .harness.tools import TEST_TIMEOUT  # noqa: F401

# --- The live model ---------------------------------------------------------------------------
DEFAULT_MODEL = "gemma4:e2b"  # the Ollama tag the lessons and `record` use live
#: The model each provider uses when none is named. For an OpenAI-compatible server of your
#: own (LM Studio, llama.cpp's server, vLLM, Ollama's /v1), name the model it serves.
DEFAULT_MODELS = {
    "ollama": DEFAULT_MODEL,
    "openai": "gpt-4.1-mini",
    "anthropic": "claude-haiku-4-5",
    "openai-responses": "gpt-4.1-mini",
    "gemini": "gemini-2.5-flash",
}
#: Where each provider's API is when no address is given (argument, else its variable).
DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "openai-responses": "https://api.openai.com/v1",
    "gemini": "https://generativelanguage.googleapis.com",
}
#: The course's recorded repair, in each provider's wire format (replay mode's default).
PROVIDER_RECORDINGS = {
    "ollama": "repair.json",
    "openai": "repair_openai.json",
    "anthropic": "repair_anthropic.json",
    "openai-responses": "repair_responses.json",
    "gemini": "repair_gemini.json",
}
DEFAULT_HOST = (
    "http://127.0.0.1:11434"  # Ollama's address when neither argument nor OLLAMA_HOST says
)
REQUEST_TIMEOUT = 120.0  # seconds the SDK waits to connect, or for the next piece of a reply
#: Sampling options: deterministic as far as Ollama allows, and room for the whole task.
OLLAMA_OPTIONS = {"temperature": 0, "seed": 7, "num_ctx": 8192, "num_predict": 2048}
MAX_OUTPUT_TOKENS = OLLAMA_OPTIONS["num_predict"]  # the same room for the other providers' replies

# --- The replay server ------------------------------------------------------------------------
SERVER_REQUEST_TIMEOUT = 10.0  # seconds for a request's headers and body to arrive (else 408)

# --- Grading ----------------------------------------------------------------------------------
CELL_TIMEOUT = 120  # seconds a notebook cell may run under autograde before it is interrupted
ANSWER_TIMEOUT = 30  # seconds a learner's answer may run for one check
NOTEBOOK_TIMEOUT = 1800  # seconds a whole notebook may run under autograde (then: 0, named)
#: What a learner's kernel may use while it is graded, in its sandbox (labkit.grading.sandboxes):
#: a whole lesson runs there (servers, test runs, sample copies in /tmp).
KERNEL_LIMITS = Limits(
    cpu_seconds=NOTEBOOK_TIMEOUT,
    memory_bytes=4 << 30,
    open_files=1024,
    file_bytes=64 << 20,
    processes=128,
    tmp_bytes=256 << 20,
)
#: What one run of a learner's answer may use (a pure function of JSON data: little).
ANSWER_LIMITS = Limits(
    cpu_seconds=2 * ANSWER_TIMEOUT,
    memory_bytes=2 << 30,
    open_files=64,
    file_bytes=16 << 20,
    processes=16,
    tmp_bytes=16 << 20,
)


def package_folder(*parts: str) -> Path:
    """A folder labkit carries (``"course", "recordings"``), wherever labkit is installed."""
    place = files(__package__)
    for part in parts:
        place = place.joinpath(part)
    folder = Path(str(place)).resolve()
    if not folder.is_dir():
        raise RuntimeError(
            f"labkit is installed without its {'/'.join(parts)} folder ({folder}); "
            "reinstall it: `make setup` in a clone, else install labkit's wheel again with pip"
        )
    return folder


# --- Folders ----------------------------------------------------------------------------------
RECORDINGS_DIR = package_folder("course", "recordings")  # the course's recordings, found by name
EDITION_DIR = package_folder("course", "edition")  # the student edition: the lessons, no answers
try:  # the lessons with their reference answers: in the instructor's package, not in labkit
    from labkit_answers import NOTEBOOKS_DIR
except ImportError:
    NOTEBOOKS_DIR = None
#: The versions the course is tested with (requirements.lock, carried by the wheel), for
#: `python -m labkit constraints`.
CONSTRAINTS_FILE = package_folder("course") / "requirements.lock"
MY_RECORDINGS = Path("recordings", "mine")  # where `record` saves, below the current folder
STUDENT_DIR = Path("student")  # where `make student` writes the learner's copy, below the clone
