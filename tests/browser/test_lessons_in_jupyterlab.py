"""What a learner sees: each lesson run live in JupyterLab in Chromium, its widgets drawn and
stepped.

nbval and papermill run the notebooks in a kernel but never draw a widget, so a widget
that works there can still show "Error displaying widget" in JupyterLab. This test
opens every lesson as a learner gets it (a copy of ``edition/``, the student edition that
``make lab`` writes into ``student/``: the answers are stubs) in the project's JupyterLab,
runs all its cells but the graded test cells from the Run menu, checks that no cell shows an
error (so every demonstration runs with no exercise answered yet), then clicks through
the chunk stepper and the conversation view and compares what they show with what
labkit computes from the recording. A screenshot of each lesson is saved in
``artifacts/screenshots/``. One server and one browser serve all the lessons: JupyterLab is
loaded once and the lessons are opened in turn from its file browser, as a learner goes on
from one to the next (after a lesson that fails, the next loads JupyterLab afresh).

Each lesson runs in live mode, as a learner with a model server runs it: its parameters
(injected after its parameters cell, as papermill does) point the official SDK at the
project's replay server serving the lesson's recording, so this one run is also the
check that live mode works in every lesson (replay mode is run by nbval, from the wheel, on
the reference lessons: the same cells but the answers and the test cells).

Needs Chromium at /usr/bin/chromium (``apt-get install chromium``); without it the
test is skipped on a learner's machine and fails in CI (``CI=true``).
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from conftest import lesson_recording, live_parameters, parameters_of
from lab_server import MARKER, JupyterLab, kill_processes, processes_left
from notebook_page import NotebookPage, wait_for_text
from papermill.iorw import load_notebook_node
from papermill.parameterize import parameterize_notebook
from playwright.sync_api import expect, sync_playwright

from labkit import assemble_turn, load_recording, serve_recording
from labkit.grading.conventions import nbgrader_role
from labkit.lessons.mcp_traffic import traffic_steps

ROOT = Path(__file__).resolve().parents[2]
EDITION = ROOT / "edition"  # the student edition, what a learner opens
RECORDINGS = ROOT / "recordings"
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = Path(os.environ.get("LABKIT_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass(frozen=True)
class Lesson:
    """A lesson, and what its first chunk stepper and first conversation view show."""

    name: str
    stepper: tuple[str, int] | None = None  # (recording, turn index) whose chunks it steps
    conversation: tuple[str, int] | None = None  # (recording, max_turns) of the run it shows
    approve: tuple[str, str] | None = (
        None  # an Approve/Deny panel: (command shown, what running it prints)
    )
    wire_format: str = "ollama"  # the format of the stepper's turn
    schemas: tuple[str, str] | None = None  # a schema inspector: (tool to pick, text it shows)
    search_replace: str | None = None  # a SEARCH/REPLACE stepper: what its last step says
    traffic: str | None = None  # the recording whose MCP traffic an MCPTrafficView steps
    plan: str | None = None  # a plan stepper: what its second step says and its first does not

    def __str__(self) -> str:
        return self.name


LESSONS = [
    Lesson("01_one_file_read", conversation=("repair.json", 2)),
    Lesson("02_streamed_turn", stepper=("repair.json", -1)),
    Lesson("03_tool_results", conversation=("repair.json", 8)),
    Lesson("04_repair_and_verify", conversation=("repair.json", 8)),
    Lesson("05_failure_cases", conversation=("bounded.json", 1)),
    Lesson("06_providers", stepper=("repair_openai.json", 2), wire_format="openai"),
    Lesson(
        "07_permissions",
        conversation=("permissions.json", 8),
        approve=("getpass.getuser()", '"stdout": "I run as '),
    ),
    Lesson("08_context_budget", conversation=("budget.json", 8)),
    Lesson(
        "09_toolkit",
        schemas=("edit", "functions.edit:"),
        search_replace="the end of the text: 1 block(s): path_rules.py",
    ),
    Lesson("10_ground_state", plan="update 2 of 4"),
    Lesson("11_extension", conversation=("extension.json", 8), traffic="extension.json"),
    Lesson("12_sandbox", conversation=("sandbox.json", 8)),
    Lesson("13_finding_code", conversation=("finding_symbols.json", 8)),
    Lesson("14_your_loop", conversation=("repair.json", 8)),
]


# --- what the widgets should show, computed by labkit from the recording ---------------


def recorded_chunks(recording_name: str, turn: int) -> list[dict]:
    recording = load_recording(RECORDINGS / recording_name)
    return [entry["chunk"] for entry in recording["turns"][turn]["chunks"]]


def assembled_text(chunks: list[dict], count: int) -> str:
    """The assistant's text after the first ``count`` chunks."""
    return assemble_turn(chunks[:count]).message["content"]


def dispatch_state(chunks: list[dict], count: int) -> str:
    """How the stepper's dispatch line must begin after the first ``count`` chunks."""
    turn = assemble_turn(chunks[:count])
    if turn.may_dispatch:
        return "may dispatch"
    return "refused" if turn.done or turn.problem or count == len(chunks) else "not yet"


def conversation_roles(recording_name: str, max_turns: int) -> list[str]:
    """The role of each message in the conversation of a replay of the recording that may
    make at most ``max_turns`` model requests, in order."""
    turns = load_recording(RECORDINGS / recording_name)["turns"]
    if max_turns < len(turns):  # the request the run did not make holds the whole list
        return [message["role"] for message in turns[max_turns]["request"]["messages"]]
    roles = [message["role"] for message in turns[-1]["request"]["messages"]]
    reply = assemble_turn(entry["chunk"] for entry in turns[-1]["chunks"])
    if reply.may_dispatch:
        roles += ["assistant"] + ["tool"] * len(reply.calls)
    return roles


# --- fixtures: one server, one browser, nothing left behind -----------------------------


@pytest.fixture(scope="module")
def chromium() -> Path:
    if not CHROMIUM.is_file():
        message = (
            f"no Chromium at {CHROMIUM}, so the lessons were not checked in a browser. "
            "To enable this test install it (Debian/Ubuntu: sudo apt-get install chromium) "
            "or point LABKIT_CHROMIUM at a Chromium or Chrome binary."
        )
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(f"CI: {message}", pytrace=False)
        pytest.skip(message)
    return CHROMIUM


@pytest.fixture(scope="module")
def lab(chromium, tmp_path_factory):
    """JupyterLab serving a fresh copy of the lessons; stopped, and checked for survivors, after."""
    home = tmp_path_factory.mktemp("jupyterlab")
    copy_lessons(EDITION, home / "notebooks")
    server = JupyterLab(home / "notebooks", home, run_id=uuid.uuid4().hex)
    try:
        yield server.start()
    finally:
        server.stop()
        left = processes_left(server.run_id)
        kill_processes(pid for pid, _ in left)
        assert not left, f"processes outlived the browser test (now killed): {left}"


@pytest.fixture(scope="module")
def page(chromium, lab):
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(chromium),
            args=CHROMIUM_ARGS,
            env={**os.environ, MARKER: lab.run_id},
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1100})
            page.set_default_timeout(60_000)
            yield page
        finally:
            browser.close()


def copy_lessons(source: Path, target: Path) -> None:
    """Copy the notebooks with outputs, counts and saved widget state cleared, so that
    everything the test sees comes from this run and the sources are never touched.

    The graded test cells are left out: on the stubs they fail, and Run All would stop at
    the first; what they say on a stub, a wrong and a right answer is the graded class's
    (tests/grading/test_student_edition.py), and nbval runs them on the reference."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for path in target.rglob("*.ipynb"):
        notebook = nbformat.read(path, as_version=4)
        notebook.metadata.pop("widgets", None)
        notebook.cells = [cell for cell in notebook.cells if nbgrader_role(cell) != "test"]
        for cell in notebook.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        nbformat.write(notebook, path)


def set_parameters(path: Path, parameters: dict) -> None:
    """Inject ``parameters`` into the copy at ``path``, in a cell after its parameters cell."""
    notebook = parameterize_notebook(load_notebook_node(str(path)), parameters)
    nbformat.write(notebook, path)


# --- the test --------------------------------------------------------------------------


@pytest.mark.parametrize("lesson", LESSONS, ids=str)
def test_lesson_runs_live_cleanly_and_its_widgets_step(lesson, lab, page):
    source = EDITION / f"{lesson.name}.ipynb"
    assert source.is_file(), f"edition/{lesson.name}.ipynb is missing"
    parameters = parameters_of(source)
    with serve_recording(lesson_recording(parameters)) as server:
        set_parameters(lab.root_dir / source.name, live_parameters(parameters, server.url))
        see_lesson_run_and_step_its_widgets(lesson, lab, page)
        served = len(server.chat_requests)
    assert served >= 1, "live mode never asked the server for a reply"  # the SDK path was taken


def see_lesson_run_and_step_its_widgets(lesson, lab, page) -> None:
    notebook, seen = NotebookPage(page, lab.url), False
    try:
        notebook.open(f"{lesson.name}.ipynb")
        notebook.run_all()
        problems = notebook.problems()
        assert not problems, f"{lesson.name} after Run All Cells:\n" + "\n".join(problems)
        # live widgets only: a .labkit-static copy is the fallback shown without a widget renderer
        stepper = notebook.panel.locator(".labkit-stepper.jupyter-widgets")
        conversation = notebook.panel.locator(".labkit-conversation.jupyter-widgets")
        if lesson.stepper:
            assert stepper.count(), f"{lesson.name} shows no live chunk stepper (.labkit-stepper)"
            check = check_stepper if lesson.wire_format == "ollama" else check_fragment_stepper
            check(stepper.first, recorded_chunks(*lesson.stepper))
        if lesson.conversation:
            assert conversation.count(), (
                f"{lesson.name} shows no live conversation view (.labkit-conversation)"
            )
            check_conversation(conversation.first, conversation_roles(*lesson.conversation))
        for index in range(stepper.count()):
            check_newest_is_in_view(stepper.nth(index), DISPATCH, f"{lesson.name} stepper {index}")
        for index in range(conversation.count()):
            check_newest_is_in_view(
                conversation.nth(index), ".labkit-new", f"{lesson.name} conversation {index}"
            )
        if lesson.approve:
            check_approval(notebook.panel.locator(".labkit-approval"), *lesson.approve)
        inspector = notebook.panel.locator(".labkit-schemas.jupyter-widgets")
        if lesson.schemas:
            check_schema_inspector(inspector, *lesson.schemas)
        if lesson.search_replace:
            check_next_shows(
                notebook.panel.locator(".labkit-sr-stepper.jupyter-widgets"),
                lesson.search_replace,
                "SEARCH/REPLACE stepper (.labkit-sr-stepper)",
            )
        if lesson.plan:
            check_next_shows(
                notebook.panel.locator(".labkit-plan-stepper.jupyter-widgets"),
                lesson.plan,
                "plan stepper (.labkit-plan-stepper)",
            )
        if lesson.traffic:
            traffic = notebook.panel.locator(".labkit-traffic.jupyter-widgets")
            assert traffic.count(), (
                f"{lesson.name} shows no live MCP traffic view (.labkit-traffic)"
            )
            check_traffic(traffic.first, traffic_captions(lesson.traffic))
        # the screenshot shows the lesson's first widget, else its first picture
        approval = notebook.panel.locator(".labkit-approval")
        shown = [
            found
            for found in (
                approval,
                stepper,
                conversation,
                inspector,
                notebook.panel.locator(".jp-RenderedImage"),
            )
            if found.count()
        ]
        if shown:
            shown[0].first.evaluate("element => element.scrollIntoView({block: 'start'})")
        seen = True
    finally:
        notebook.screenshot(SCREENSHOTS / f"{lesson.name}.png")
        if not seen:  # whatever this lesson left on the page, the next one starts afresh
            page.goto("about:blank")
        lab.shut_down_kernels()


READOUT, TEXT, DISPATCH = (
    ".labkit-slider .widget-readout",
    ".labkit-assembled-text",
    ".labkit-dispatch",
)


def check_stepper(stepper, chunks: list[dict]) -> None:
    """Next adds the next recorded text fragment; the last chunk lets the turn be dispatched."""
    stepper.scroll_into_view_if_needed()
    position = int(stepper.locator(READOUT).text_content())
    wait_for_text(stepper, TEXT, assembled_text(chunks, position), what=f"text at chunk {position}")

    carrying_text = next(
        (
            index
            for index in range(position, len(chunks))
            if chunks[index]["message"].get("content")
        ),
        None,
    )
    assert carrying_text is not None, f"no chunk after {position} carries text: pick another turn"
    fragment = chunks[carrying_text]["message"]["content"]
    while position < carrying_text:  # walk up to the chunk that carries text...
        position = click_next(stepper, position)
    wait_for_text(
        stepper,
        TEXT,
        assembled_text(chunks, position),
        what=f"text at chunk {position}, before the fragment {fragment!r}",
    )
    position = click_next(stepper, position)  # ...and step over it
    wait_for_text(
        stepper,
        TEXT,
        assembled_text(chunks, position),
        what=f"text after Next added the recorded fragment {fragment!r}",
    )
    assert dispatch_state(chunks, position) == "not yet", "pick a turn whose text precedes 'done'"
    wait_for_text(
        stepper, DISPATCH, "not yet", prefix=True, what="dispatch state before the last chunk"
    )

    stepper.locator(".labkit-slider .noUi-handle").press("End")
    wait_for_text(
        stepper, READOUT, str(len(chunks)), what="chunk number after moving to the last chunk"
    )
    assert dispatch_state(chunks, len(chunks)) == "may dispatch", "pick a turn that ends cleanly"
    wait_for_text(
        stepper, DISPATCH, "may dispatch", prefix=True, what="dispatch state at the last chunk"
    )


def openai_arguments(chunks: list[dict], count: int) -> str:
    """The JSON text of an OpenAI stream's tool-call arguments after ``count`` chunks, read
    straight from the chunks (the turns the lessons step hold one call)."""
    return "".join(
        entry["function"].get("arguments") or ""
        for chunk in chunks[:count]
        for choice in chunk["choices"]
        for entry in choice["delta"].get("tool_calls") or []
    )


def check_fragment_stepper(stepper, chunks: list[dict]) -> None:
    """Next adds the next argument fragment to the call's JSON text, json.loads fails while
    that text is a prefix, and only the finish_reason chunk lets the turn be dispatched."""
    stepper.scroll_into_view_if_needed()
    position = int(stepper.locator(READOUT).text_content())
    carrying = next(
        index
        for index in range(max(position, 2), len(chunks))
        if openai_arguments(chunks, index + 1) != openai_arguments(chunks, index)
    )
    while position < carrying:
        position = click_next(stepper, position)
    position = click_next(stepper, position)  # the chunk that adds a fragment
    wait_for_text(
        stepper,
        ".labkit-call-arguments",
        openai_arguments(chunks, position),
        what=f"the call's arguments after Next added chunk {position}",
    )
    wait_for_text(
        stepper,
        ".labkit-json-verdict",
        "json.loads fails here",
        prefix=True,
        what="what json.loads makes of a prefix of the arguments",
    )
    wait_for_text(stepper, DISPATCH, "not yet", prefix=True, what="dispatch state mid-stream")

    stepper.locator(".labkit-slider .noUi-handle").press("End")
    wait_for_text(
        stepper, READOUT, str(len(chunks)), what="chunk number after moving to the last chunk"
    )
    wait_for_text(
        stepper,
        ".labkit-call-arguments",
        openai_arguments(chunks, len(chunks)),
        what="the call's whole arguments",
    )
    wait_for_text(stepper, DISPATCH, "may dispatch", prefix=True, what="dispatch state at the end")


def click_next(stepper, position: int) -> int:
    """Click the stepper's Next and wait until it shows the following chunk."""
    stepper.locator(".labkit-next").click()
    wait_for_text(
        stepper, READOUT, str(position + 1), what=f"chunk number after Next from {position}"
    )
    return position + 1


def check_conversation(view, roles: list[str]) -> None:
    """Next shows one more message, with the role the recorded conversation has next."""
    view.scroll_into_view_if_needed()
    messages = view.locator(".labkit-message")
    shown = messages.count()
    assert shown < len(roles), "the conversation view must not start at its last message"
    assert [role_of(messages.nth(index)) for index in range(shown)] == roles[:shown], (
        "the conversation view's first messages differ from the recording's"
    )
    view.locator(".labkit-next").first.click()
    expect(messages).to_have_count(shown + 1, timeout=30_000)
    assert role_of(messages.nth(shown)) == roles[shown], (
        f"after Next, message {shown + 1} should be the recording's {roles[shown]!r} message"
    )


def traffic_captions(recording_name: str) -> list[str]:
    """What an MCPTrafficView of the recording says at each step."""
    steps = traffic_steps(load_recording(RECORDINGS / recording_name))
    return [f"step {n} of {len(steps)}: {step.caption}" for n, step in enumerate(steps, 1)]


def check_traffic(view, captions: list[str]) -> None:
    """The view starts at the first JSON-RPC line; Next shows the next step's caption."""
    view.scroll_into_view_if_needed()
    heading = view.locator(".labkit-head").first
    expect(heading).to_have_text(captions[0], timeout=30_000)
    view.locator(".labkit-next").first.click()
    expect(heading).to_have_text(captions[1], timeout=30_000)


#: Where the widget's newest content is, relative to the notebook's visible area, once the
#: widget's top is scrolled to the top of that area (as a learner scrolls to a widget).
_NEWEST_IN_VIEW = r"""(widget, selector) => {
    widget.scrollIntoView({block: 'start'});
    const newest = [...widget.querySelectorAll(selector)].pop();
    if (!newest) return null;
    let area = widget.parentElement;
    while (area && !/(auto|scroll)/.test(getComputedStyle(area).overflowY)) {
        area = area.parentElement;
    }
    const seen = (area || document.documentElement).getBoundingClientRect();
    const box = newest.getBoundingClientRect();
    const end = Math.min(window.innerHeight, seen.bottom);
    return {top: box.top - seen.top, bottom: box.bottom - seen.top, height: box.height,
            area: end - seen.top};
}"""


def check_newest_is_in_view(widget, newest: str, what: str) -> None:
    """At its last step, with its top at the top of the notebook's visible area, a widget shows
    its newest content (the newest message; the stepper's verdict) inside that area, not
    below it: a learner who steps sees what the step added without scrolling to find it."""
    next_button = widget.locator(".labkit-next").first
    widget.locator(".labkit-slider .noUi-handle").press("End")
    expect(next_button).to_be_disabled(timeout=30_000)
    found = widget.element_handle().evaluate(_NEWEST_IN_VIEW, newest)
    assert found is not None, f"{what}: no {newest} at its last step"
    inside = found["bottom"] <= found["area"] or (
        found["height"] > found["area"] and found["top"] < found["area"]  # taller: its top shows
    )
    assert found["top"] >= 0 and inside, (
        f"{what}: its newest content ({newest}, {found['height']:.0f} px high) lies outside "
        f"the visible area ({found['area']:.0f} px) once the widget is scrolled to: {found}"
    )


def role_of(message) -> str | None:
    found = re.search(r"\blabkit-role-(\w+)", message.get_attribute("class") or "")
    return found and found.group(1)


def check_approval(panel, command: str, printed: str) -> None:
    """The panel shows the exact command before it runs; a click on Approve lets it run, and
    its output appears in the panel's log."""
    assert panel.count() == 1, "the lesson shows no Approve/Deny panel (.labkit-approval)"
    panel.scroll_into_view_if_needed()
    approve, log = panel.locator(".labkit-approve"), panel.locator(".labkit-approval-log")
    expect(approve).to_be_enabled(timeout=30_000)
    expect(panel.locator("pre").first).to_contain_text(command)
    shown = panel.locator("pre").first.text_content()
    assert "'\"'\"'" not in shown, f"the panel shows shell quoting, not the command: {shown}"
    expect(log).not_to_contain_text("->")  # nothing ran before the click
    approve.click()
    expect(log).to_contain_text(printed, timeout=30_000)
    expect(log).to_contain_text("gate: ask, so allow (by person)")
    expect(log).to_contain_text("Stopped: assistant_finished", timeout=30_000)
    expect(approve).to_be_disabled()


def check_schema_inspector(inspector, tool: str, shown: str) -> None:
    """Picking a tool shows its schema, and what the server's prompt made of it."""
    assert inspector.count(), "the lesson shows no live schema inspector (.labkit-schemas)"
    inspector.first.scroll_into_view_if_needed()
    inspector.first.locator(".labkit-picker select").select_option(tool)
    expect(inspector.first.locator(".labkit-schema")).to_contain_text(shown, timeout=30_000)


def check_next_shows(stepper, shown: str, what: str) -> None:
    """Next shows ``shown``, which the stepper's first step does not (a plan stepper's second
    update; a SEARCH/REPLACE stepper's end of the text, where it says what it read)."""
    assert stepper.count(), f"the lesson shows no live {what}"
    stepper.first.scroll_into_view_if_needed()
    expect(stepper.first).not_to_contain_text(shown)
    stepper.first.locator(".labkit-next").click()
    expect(stepper.first).to_contain_text(shown, timeout=30_000)
