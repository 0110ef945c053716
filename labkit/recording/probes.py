"""Probes: one request, asked many times (one seed each), and every reply kept.

Lesson 09 asks what a model does *first* under different offers: 3, 6, 15 or 25 tools
(the extra ones plausible but irrelevant), and the same six tools described with and
without their usage-policy sentences (``toolkit.NUDGES``). A whole run per seed would
spend minutes on tests that say nothing about the first choice, so a probe sends only the
loop's first request (the system prompt, the task, the tools' schemas), once per seed,
and keeps each reply as the server sent it. The SEARCH/REPLACE probe sends Aider's kind
of request instead: no tools, the file in the task.

A probe recording holds, per condition, the request it sent (messages and schemas) and,
per sample, the seed and the reply. Replaying one (``replayed``) builds each condition's
request again from today's code and refuses a recording whose request differs (its
counts would describe another prompt), then folds each reply through the harness's own
wire format, as the loop would: the first tool call's name, ``"text"``, or ``"no
reply"`` (a reply the loop would refuse: unfinished or malformed).

A live recording also holds what the server made of each request (``server``: the
prompt it built, the grammar and temperature of its first choice, whether the seed
reached it, the prompt's tokens), that first choice sampled once per seed where the
server itself makes it greedily (``first_choice``, counted by ``sampled_choice_counts``),
and what each tool adds to the prompt in tokens (``token_probes``).

``python -m labkit.recording.probe_live`` records them against a live server
(``make live-test`` does, with Gemma 3 270M); ``scripted_search_replace`` writes the
scripted SEARCH/REPLACE answer the lesson applies.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import Any

from ..harness.atomic import write_atomically
from ..harness.contracts import Turn
from ..harness.formats import FORMATS
from ..harness.prompt import SEARCH_REPLACE_SYSTEM, SYSTEM_PROMPT, TOOLKIT_TASK, search_replace_task
from ..harness.sample import SAMPLE_DIR, SOURCE_FILE
from ..harness.toolkit import NUDGES, Toolkit
from ..harness.toolset import Tool
from ..settings import RECORDINGS_DIR

FORMAT = "labkit-probe"
VERSION = 1
#: Where each count comes from: the toolkit's order, then the extra tools appended.
FIRST_THREE = ("read_file", "edit", "run_command")


def _string(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


def _unavailable(self: object, **arguments: object) -> dict[str, Any]:
    raise ValueError("this tool is offered only to measure tool choice; it does nothing here")


#: Tools a coding assistant might plausibly be given, none of any use for this repair.
EXTRA_TOOLS = tuple(
    Tool(
        name,
        description,
        {
            "type": "object",
            "properties": {key: _string(text) for key, text in properties.items()},
            "required": list(properties),
            "additionalProperties": False,
        },
        _unavailable,
        read_only=True,
    )
    for name, description, properties in (
        ("web_search", "Search the web and return the top results.", {"query": "What to search"}),
        ("fetch_url", "Download a web page and return its text.", {"url": "The page's address"}),
        (
            "send_email",
            "Send an email from the team's account.",
            {"to": "Address", "subject": "Subject", "body": "Text"},
        ),
        (
            "create_calendar_event",
            "Put an event in the team's calendar.",
            {"title": "Title", "start": "ISO date and time", "end": "ISO date and time"},
        ),
        ("query_database", "Run a read-only SQL query on the analytics database.", {"sql": "SQL"}),
        ("git_commit", "Commit the staged changes.", {"message": "The commit message"}),
        ("git_push", "Push a branch to the remote.", {"remote": "Remote", "branch": "Branch"}),
        (
            "open_pull_request",
            "Open a pull request on the code host.",
            {"title": "Title", "body": "Description"},
        ),
        (
            "post_chat_message",
            "Post a message in a team chat channel.",
            {"channel": "Channel", "text": "Message"},
        ),
        (
            "translate_text",
            "Translate a text into another language.",
            {"text": "Text", "language": "Target language"},
        ),
        ("get_weather", "Get the weather forecast for a city.", {"city": "City"}),
        (
            "convert_currency",
            "Convert an amount between currencies.",
            {"amount": "Amount", "source": "From", "target": "To"},
        ),
        (
            "resize_image",
            "Resize an image file.",
            {"path": "Image", "width": "Pixels", "height": "Pixels"},
        ),
        ("generate_chart", "Draw a chart from CSV data.", {"data": "CSV", "kind": "bar or line"}),
        ("list_processes", "List the processes running on the build server.", {"host": "Host"}),
        ("deploy_service", "Deploy a service version.", {"name": "Service", "version": "Version"}),
        (
            "create_ticket",
            "Open a ticket in the issue tracker.",
            {"title": "Title", "description": "Description"},
        ),
        (
            "schedule_job",
            "Run a command later on the build server.",
            {"command": "Command", "when": "When"},
        ),
        ("summarize_document", "Summarize a document found at a URL.", {"url": "The document"}),
    )
)


def toolkit_schemas(*, nudged: bool = True) -> list[dict]:
    """The toolkit's six schemas, as shipped (``nudged``) or with its usage-policy
    sentences taken out (the same tools described without them)."""
    if nudged:
        return list(Toolkit.schemas)
    plain = []
    for record in Toolkit.tools:
        description = record.description
        for sentence in NUDGES:
            description = description.replace(" " + sentence, "").replace(sentence + " ", "")
        plain.append(dataclasses.replace(record, description=description).schema)
    return plain


def nudged_parameters() -> list[dict]:
    """The toolkit's schemas with each usage-policy sentence also in a parameter's
    description (read_file's ``path``, run_command's ``command``): some servers render a
    tool's parameters into the prompt but not its description."""
    schemas = copy.deepcopy(toolkit_schemas())
    where = {"read_file": ("path", NUDGES[0]), "run_command": ("command", NUDGES[1])}
    for schema in schemas:
        function = schema["function"]
        if function["name"] in where:
            key, sentence = where[function["name"]]
            parameter = function["parameters"]["properties"][key]
            parameter["description"] = f"{parameter['description']} {sentence}"
    return schemas


def offered(count: int) -> list[dict]:
    """The schemas of ``count`` tools: 3 (read, edit, run), the toolkit's 6, or the toolkit
    and ``count - 6`` extra tools."""
    kit = toolkit_schemas()
    if count == 3:
        return [schema for schema in kit if schema["function"]["name"] in FIRST_THREE]
    if not 6 <= count <= 6 + len(EXTRA_TOOLS):
        raise ValueError(f"offer 3, or 6 to {6 + len(EXTRA_TOOLS)} tools, not {count}")
    return kit + [record.schema for record in EXTRA_TOOLS[: count - 6]]


def loop_messages(task: str = TOOLKIT_TASK) -> list[dict]:
    """The loop's first request: its system prompt and the task."""
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": task}]


def search_replace_messages() -> list[dict]:
    """Aider's kind of request: no tools, the file's text in the task."""
    source = (SAMPLE_DIR / SOURCE_FILE).read_text("utf-8")
    return [
        {"role": "system", "content": SEARCH_REPLACE_SYSTEM},
        {"role": "user", "content": search_replace_task(source)},
    ]


#: Every condition a probe recording may hold: what it offers, in words.
CONDITIONS = {
    "no_tools": ("the loop's first request with no tools (what the prompt alone costs)", None),
    "tools_3": ("3 tools: read_file, edit, run_command", lambda: offered(3)),
    "tools_6": ("the toolkit's 6 tools, described as shipped", lambda: offered(6)),
    "tools_15": ("the toolkit and 9 extra tools", lambda: offered(15)),
    "tools_25": ("the toolkit and 19 extra tools", lambda: offered(25)),
    "plain_6": (
        "the toolkit's 6 tools without their usage-policy sentences",
        lambda: toolkit_schemas(nudged=False),
    ),
    "nudge_in_parameters_6": (
        "the toolkit's 6 tools with the two policy sentences in parameter descriptions too",
        lambda: nudged_parameters(),
    ),
    "search_replace": ("no tools; the file in the task; answer with SEARCH/REPLACE", None),
}


def request(condition: str) -> dict:
    """The request ``condition`` sends: ``{"messages": [...], "tools": [...]}``."""
    if condition not in CONDITIONS:
        raise ValueError(f"unknown condition {condition!r}; known: {', '.join(CONDITIONS)}")
    if condition == "search_replace":
        return {"messages": search_replace_messages(), "tools": []}
    build = CONDITIONS[condition][1]
    return {"messages": loop_messages(), "tools": build() if build else []}


# --- Replaying -------------------------------------------------------------------------------


def reply_turn(reply: list, wire_format: str) -> Turn:
    """One recorded reply (its chunks) folded into a turn by the harness's wire format."""
    assembler = FORMATS[wire_format].assembler()
    for chunk in reply:
        assembler.add(chunk)
        if assembler.problem:
            break
    return assembler.turn()


def first_choice(turn: Turn) -> str:
    """What the model did first: the first call's name, ``"text"``, or ``"no reply"``."""
    if not turn.may_dispatch:
        return "no reply"
    if turn.calls:
        return turn.calls[0].name
    return "text" if turn.text.strip() else "no reply"


def request_difference(condition: str, recorded: dict) -> str | None:
    """Where the recorded request of ``condition`` differs from today's, or None."""
    today = request(condition)
    for key in ("messages", "tools"):
        if recorded.get(key) == today[key]:
            continue
        mine, theirs = recorded.get(key) or [], today[key]
        for index, (a, b) in enumerate(zip(mine, theirs)):
            if a != b:
                return f"{condition}: {key}[{index}] differs from what labkit sends today"
        return f"{condition}: {len(mine)} {key} recorded, {len(theirs)} sent today"
    return None


def replayed(recording: dict) -> dict[str, list[dict]]:
    """Each condition's samples, replayed: seed, turn, first choice.

    Raises ``ValueError`` if a recorded request is not the one labkit sends today."""
    for condition, kept in recording["conditions"].items():
        difference = request_difference(condition, kept["request"])
        if difference:
            raise ValueError(f"the probe recording no longer matches: {difference}")
    results: dict[str, list[dict]] = {name: [] for name in recording["conditions"]}
    for sample in recording["samples"]:
        turn = reply_turn(sample["reply"], recording["wire_format"])
        results[sample["condition"]].append(
            {"seed": sample["seed"], "turn": turn, "choice": first_choice(turn)}
        )
    return results


def choice_counts(recording: dict) -> dict[str, Counter]:
    """How often each first choice came, per condition, in the loop's own requests."""
    return {
        condition: Counter(sample["choice"] for sample in samples)
        for condition, samples in replayed(recording).items()
    }


def chosen(completion: dict) -> str:
    """The choice a sampled first step made: ``functions.read_file`` is ``read_file``,
    ``message`` is ``"text"`` (the server's grammar allows nothing else)."""
    text = completion["choices"][0]["text"].strip()
    if text == "message":
        return "text"
    if text.startswith("functions."):
        return text.removeprefix("functions.")
    raise ValueError(f"a first step the server's grammar does not allow: {text!r}")


def sampled_choice_counts(recording: dict) -> dict[str, Counter]:
    """How often each first choice came, per condition, when the server's first step was
    sampled at the request's temperature, one seed each (``first_choice``)."""
    replayed(recording)  # the same check: the requests are today's
    counts: dict[str, Counter] = {}
    for sample in recording.get("first_choice", {}).get("samples", []):
        counts.setdefault(sample["condition"], Counter())[chosen(sample["reply"])] += 1
    return counts


def server_prompt(recording: dict, condition: str) -> str:
    """The prompt the server built from ``condition``'s request, as recorded."""
    return recording["conditions"][condition]["server"]["prompt"]


def condition_tokens(recording: dict) -> dict[str, int]:
    """Each condition's prompt tokens, as the server counted the prompt it built."""
    return {
        name: kept["server"]["prompt_tokens"]
        for name, kept in recording["conditions"].items()
        if "server" in kept
    }


def tool_tokens(recording: dict) -> dict[str, int]:
    """What each tool's schema adds to the prompt the server builds, in its tokens."""
    return {row["tool"]: row["tokens"] for row in recording["token_probes"]["tools"]}


# --- Files -----------------------------------------------------------------------------------

#: Probe recordings live apart from the run recordings (they replay no run).
PROBES_DIR = RECORDINGS_DIR / "probes"


def load_probes(name: str) -> dict:
    """A probe recording by name (``gemma3_270m_probes``) or path; checked for its format."""
    path = Path(name)
    if not path.is_file():
        path = PROBES_DIR / (name if name.endswith(".json") else f"{name}.json")
    recording = json.loads(path.read_text("utf-8"))
    if recording.get("format") != FORMAT or recording.get("version") != VERSION:
        raise ValueError(f"{path} is not a probe recording (format {FORMAT!r}, version {VERSION})")
    return recording


def save_probes(recording: dict, path: str | Path) -> Path:
    """Write a probe recording atomically, as the run recordings are written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(recording, indent=1, ensure_ascii=False) + "\n"
    write_atomically(path, text.encode("utf-8"), mode=0o644)
    return path
