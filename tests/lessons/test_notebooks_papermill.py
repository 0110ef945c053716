"""The lessons' parameters, as papermill sets them: lesson 06 with each of the five providers,
replayed and live through its SDK, and live mode without a usable model.

Live mode runs the cells through the official SDK over HTTP, pointed at the project's
replay server serving the lesson's recording, so the live code path runs without a model.
Every lesson runs whole in live mode in tests/browser (in JupyterLab, so the same run
shows the widgets); replay mode, the default, is run by nbval on the saved lessons from
an installed wheel (tests/test_package.py). Executed copies go to a temporary folder; the
sources are never rewritten.
"""

import nbformat
import papermill
import pytest
from conftest import PROJECT_DIR, parameters_of

from labkit import PROVIDER_PARAMETERS, serve_recording
from labkit.grading.conventions import nbgrader_role
from labkit.settings import DEFAULT_MODEL, PROVIDER_RECORDINGS

NOTEBOOKS = sorted((PROJECT_DIR / "notebooks").glob("[0-9][0-9]_*.ipynb"))
PROVIDERS_LESSON = PROJECT_DIR / "notebooks" / "06_providers.ipynb"
FIRST_RUN = "run = run_lesson(chat)"  # lesson 06's only cell that reads PROVIDER and MODE


def printed_by(cells, source):
    """What the code cell holding ``source`` printed."""
    cell = next(c for c in cells if c.cell_type == "code" and source in c.source)
    return "".join(o.get("text", "") for o in cell.outputs)


def execute(notebook, output, *, until=None, **parameters):
    """Run the lesson under papermill with ``parameters``; return its cells.

    Its graded test cells are left out: they check an answer whatever the mode, and run
    in nbval's run of every lesson and in the graded class. ``until``: stop after the
    first code cell holding that text (the cells after it do not read the parameters)."""
    lesson = nbformat.read(notebook, as_version=4)
    kept = []
    for cell in lesson.cells:
        if nbgrader_role(cell) != "test":
            kept.append(cell)
        if until and cell.cell_type == "code" and until in cell.source:
            break
    lesson.cells = kept
    source = output.with_name("given-" + output.name)
    nbformat.write(lesson, source)
    papermill.execute_notebook(
        str(source),
        str(output),
        parameters=parameters,
        cwd=str(notebook.parent),
        kernel_name="python3",
        progress_bar=False,
    )
    cells = nbformat.read(output, as_version=4).cells
    errors = [
        o
        for c in cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    assert not errors, errors
    return cells


def test_the_lessons_are_numbered_without_gaps_and_the_readme_lists_each():
    assert len(NOTEBOOKS) >= 5
    numbers = [n.stem[:2] for n in NOTEBOOKS]
    expected = [f"{i:02d}" for i in range(1, int(numbers[-1]) + 1)]
    assert numbers == expected  # in order, each once, none missing
    readme = (PROJECT_DIR / "README.md").read_text()
    assert all(f"`{n.stem}`" in readme for n in NOTEBOOKS)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda n: n.stem)
def test_each_lesson_opens_in_replay_mode_and_names_its_parameters(notebook):
    """Replay mode, the default, runs top to bottom twice elsewhere: nbval executes every
    lesson here and compares its outputs, and tests/test_package.py runs every lesson from
    the installed wheel. This checks what a papermill user may set."""
    params = parameters_of(notebook)
    assert params["MODE"] == "replay" and set(PROVIDER_PARAMETERS) <= set(params)


def test_a_parameter_the_lesson_does_not_take_stops_it_saying_so(tmp_path):
    """papermill only warns about a name the lesson does not take; the lesson's check, in the
    cell after its parameters, makes it an error (a misspelt MODE would run in replay mode)."""
    notebook = NOTEBOOKS[0]
    with pytest.raises(papermill.PapermillExecutionError) as stopped:
        execute(notebook, tmp_path / notebook.name, until="check_parameters(", MDOE="live")
    assert stopped.value.ename == "LessonError"
    assert "this lesson takes no parameter MDOE: it takes MODE, PROVIDER" in stopped.value.evalue


def test_a_sample_changed_in_place_stops_each_lesson_at_its_first_model_cell(monkeypatch):
    """The sample as shipped is what every recording was made against: changed, each lesson
    stops where it first loads a recording, naming the file and how to restore it, rather
    than blaming the recording."""
    from labkit.harness import project, sample

    repair = ("sample_repo", sample.SHIPPED, "path_rules.py")
    larger = {"13_finding_code": ("sample_project", project.PROJECT_SHIPPED, "ledger/models.py")}
    for notebook in NOTEBOOKS:
        name, shipped, path = larger.get(notebook.stem, repair)  # the sample its runs copy
        with monkeypatch.context() as patch:
            patch.setitem(shipped, path, "0" * 64)  # as if it had been edited
            index, error = run_cells(notebook)
        assert index == first_model_cell(notebook), (notebook.stem, index, error)
        assert isinstance(error, sample.SampleChanged), (notebook.stem, error)
        assert f"{name}/{path} was changed in place" in str(error)
        assert f"checkout -- {name}" in str(error)


# --- Lesson 06 with each of the other providers ----------------------------------------


OTHER_PROVIDERS = ["openai", "anthropic", "openai-responses", "gemini"]
SUFFIXES = {"openai": "/v1", "anthropic": "", "openai-responses": "/v1", "gemini": ""}


@pytest.mark.parametrize("provider", OTHER_PROVIDERS)
def test_the_providers_lesson_runs_in_replay_mode_with_each_provider(provider, tmp_path):
    cells = execute(
        PROVIDERS_LESSON, tmp_path / "06.ipynb", until=FIRST_RUN, MODE="replay", PROVIDER=provider
    )
    first = printed_by(cells, FIRST_RUN)
    assert first.startswith(f"{provider} (replay): assistant_finished after 5 requests")


@pytest.mark.parametrize("provider", OTHER_PROVIDERS)
def test_the_providers_lesson_runs_live_through_each_sdk(provider, tmp_path):
    suffix = SUFFIXES[provider]
    with serve_recording(PROJECT_DIR / "recordings" / PROVIDER_RECORDINGS[provider]) as server:
        cells = execute(
            PROVIDERS_LESSON,
            tmp_path / "06.ipynb",
            until=FIRST_RUN,
            MODE="live",
            PROVIDER=provider,
            BASE_URL=server.url + suffix,
        )
        served = len(server.chat_requests)
    assert served == 5  # the lesson's own run went through the SDK and the server
    first = printed_by(cells, FIRST_RUN)
    assert first.startswith(f"{provider} (live): assistant_finished after 5 requests")


# --- Live mode when the model is not there --------------------------------------------
# Each lesson must stop at the first cell that talks to the model, with one LessonError
# whose text says what to do, and no cell before it may fail. The lessons' cells are run
# in order in this process (parameters injected after their cell, as papermill does), which
# takes about a second a lesson instead of a kernel's several; one papermill run below
# shows the same stop in a real kernel, and how Jupyter renders it.

import linecache  # noqa: E402
import socket  # noqa: E402

from labkit.lessons.lesson import LessonError  # noqa: E402


def run_cells(notebook, **parameters):
    """Run a lesson's code cells in order; return ``(index of the failing cell, error)``,
    or ``(None, None)`` if all ran."""
    namespace = {"__name__": "__main__"}
    for index, cell in enumerate(nbformat.read(notebook, as_version=4).cells):
        if cell.cell_type != "code":
            continue
        filename = f"{notebook.name} cell {index}"
        # as IPython does: a cell's source stays readable, so a check can find an answer's
        linecache.cache[filename] = (len(cell.source), None, cell.source.splitlines(True), filename)
        try:
            exec(compile(cell.source, filename, "exec"), namespace)
            if "parameters" in cell.metadata.get("tags", []):
                namespace.update(parameters)
        except Exception as exc:
            return index, exc
    return None, None


def first_model_cell(notebook):
    """The first cell that talks to the model: the one that makes the lesson's model."""
    cells = nbformat.read(notebook, as_version=4).cells
    return next(i for i, c in enumerate(cells) if "lesson_model(" in c.source)


@pytest.fixture(scope="module")
def closed_port():
    with socket.socket() as probe:  # bound, then closed: nothing listens there
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


@pytest.fixture(scope="module")
def replay_server():
    with serve_recording(PROJECT_DIR / "recordings" / "repair.json") as server:
        yield server


def live_failures(closed_port, replay_server):
    return {
        "server down": ({"OLLAMA_HOST": closed_port}, f"Ollama is not running at {closed_port}"),
        "model not pulled": (
            {"OLLAMA_HOST": replay_server.url, "MODEL": "qwen3:4b"},
            "download it with `ollama pull qwen3:4b` (Ollama said: model 'qwen3:4b' not found)",
        ),
    }


@pytest.mark.parametrize("failure", ["server down", "model not pulled"])
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda n: n.stem)
def test_live_mode_without_a_usable_model_stops_at_the_first_model_cell_saying_what_to_do(
    notebook, failure, closed_port, replay_server
):
    parameters, words = live_failures(closed_port, replay_server)[failure]
    index, error = run_cells(notebook, MODE="live", **parameters)
    assert index == first_model_cell(notebook), f"cell {index} failed first: {error!r}"
    assert isinstance(error, LessonError) and words in str(error)
    assert 'set MODE = "replay"' in str(error)


@pytest.mark.parametrize("provider", OTHER_PROVIDERS)
def test_the_providers_lesson_live_without_a_server_stops_saying_what_to_do(provider, closed_port):
    index, error = run_cells(PROVIDERS_LESSON, MODE="live", PROVIDER=provider, BASE_URL=closed_port)
    assert index == first_model_cell(PROVIDERS_LESSON) and isinstance(error, LessonError)
    assert f"nothing is listening at {closed_port}" in str(error)
    assert 'set MODE = "replay"' in str(error)


@pytest.mark.parametrize("provider", ["openai-responses", "gemini"])
def test_the_providers_lesson_live_with_a_key_refused_a_model_missing_or_no_tools(
    provider, monkeypatch
):
    """The new providers' other checks before a run, one message each (what to do)."""
    variable = {"openai-responses": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}[provider]
    recording = PROJECT_DIR / "recordings" / PROVIDER_RECORDINGS[provider]
    expected = {
        "key refused": ({"api_key": "the-right-key"}, {}, f"check {variable}"),
        "model missing": ({}, {"MODEL": "no-such-model"}, "set MODEL (or --model) to one of"),
        "no tools": ({"capabilities": ("completion",)}, {}, "cannot call tools"),
    }
    monkeypatch.setenv(variable, "a-wrong-key")
    for served, parameters, words in expected.values():
        with serve_recording(recording, **served) as server:
            index, error = run_cells(
                PROVIDERS_LESSON,
                MODE="live",
                PROVIDER=provider,
                BASE_URL=server.url + SUFFIXES[provider],
                **{"MODEL": DEFAULT_MODEL, **parameters},
            )
        assert index == first_model_cell(PROVIDERS_LESSON) and isinstance(error, LessonError)
        assert words in str(error) and 'set MODE = "replay"' in str(error), error


@pytest.mark.parametrize(
    "capabilities, words",
    [
        (("completion", "thinking"), "cannot call tools, which the loop needs"),
        (("completion", "tools"), "does not support thinking, and this course asks for it"),
    ],
)
def test_live_mode_with_a_model_that_cannot_call_tools_or_think_says_so(capabilities, words):
    notebook = NOTEBOOKS[0]
    with serve_recording(
        PROJECT_DIR / "recordings" / "repair.json", capabilities=capabilities
    ) as server:
        index, error = run_cells(notebook, MODE="live", OLLAMA_HOST=server.url)
    assert index == first_model_cell(notebook) and isinstance(error, LessonError)
    assert words in str(error) and f"ollama pull {DEFAULT_MODEL}" in str(error)


def test_in_a_kernel_the_stop_shows_the_message_alone(closed_port, tmp_path):
    notebook = NOTEBOOKS[0]
    with pytest.raises(papermill.PapermillExecutionError) as stopped:
        papermill.execute_notebook(
            str(notebook),
            str(tmp_path / notebook.name),
            parameters={"MODE": "live", "OLLAMA_HOST": closed_port},
            cwd=str(notebook.parent),
            kernel_name="python3",
            progress_bar=False,
        )
    assert stopped.value.ename == "LessonError"
    assert f"Ollama is not running at {closed_port}" in stopped.value.evalue
    cells = nbformat.read(tmp_path / notebook.name, as_version=4).cells
    [error] = [
        o
        for c in cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    assert len(error["traceback"]) == 1  # the message, not a traceback through labkit
