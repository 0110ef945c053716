"""Every lesson runs top to bottom under papermill, offline, in both of its modes.

Replay mode uses the recordings in process. Live mode runs the same cells through
``OllamaModel`` — the official SDK over HTTP — pointed at the project's replay server
serving the lesson's recording, so the live code path runs without a model.
Executed copies go to a temporary folder; the sources are never rewritten.
"""

import nbformat
import papermill
import pytest

from labkit import load_recording, serve_recording
from labkit.lesson import recording_path
from labkit.sample import PROJECT_DIR

NOTEBOOKS = sorted((PROJECT_DIR / "notebooks").glob("0*.ipynb"))


def parameters_of(notebook):
    """The lesson's default parameters, read from its tagged cell."""
    cell = next(c for c in nbformat.read(notebook, as_version=4).cells
                if "parameters" in c.metadata.get("tags", []))
    values = {}
    exec(cell.source, {}, values)
    return values


def execute(notebook, output, **parameters):
    papermill.execute_notebook(str(notebook), str(output), parameters=parameters,
                               cwd=str(notebook.parent), kernel_name="python3",
                               progress_bar=False)
    cells = nbformat.read(output, as_version=4).cells
    errors = [o for c in cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, errors
    return cells


def test_there_are_five_lessons():
    assert [n.stem[:2] for n in NOTEBOOKS] == ["01", "02", "03", "04", "05"]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda n: n.stem)
def test_lesson_runs_in_replay_mode(notebook, tmp_path):
    params = parameters_of(notebook)
    assert params["MODE"] == "replay" and {"MODEL", "OLLAMA_HOST", "RECORDING"} <= set(params)
    execute(notebook, tmp_path / notebook.name, MODE="replay")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda n: n.stem)
def test_lesson_runs_in_live_mode_through_the_sdk(notebook, tmp_path):
    recording = load_recording(recording_path(parameters_of(notebook)["RECORDING"]))
    with serve_recording(recording) as server:
        execute(notebook, tmp_path / notebook.name, MODE="live", OLLAMA_HOST=server.url)
        served = len(server.chat_requests)
    assert served >= 1, "live mode never asked the server for a reply"  # the SDK path was taken
