"""Strict replay compares what each API treats as different, not the spellings it reads alike,
and still names the first real difference; and a recorded turn is used up only when its reply
begins, so a fault fires once and a retry gets the recording."""

import httpx
import ollama
import pytest
from conftest import PROJECT_DIR

from labkit import load_recording, serve_recording
from labkit.harness.tools import SCHEMAS
from labkit.models.anthropic_server import canonical_messages as anthropic_canonical
from labkit.models.openai_server import canonical_messages as openai_canonical
from labkit.models.replay import first_difference
from labkit.models.replay_faults import Faults
from labkit.settings import DEFAULT_MODEL

SYSTEM = {"role": "system", "content": "You fix code."}
TASK = {"role": "user", "content": "Fix it."}
CALL = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x = 1"}
RECORDED = [
    SYSTEM,
    TASK,
    {"role": "assistant", "content": [CALL]},
    {"role": "user", "content": [RESULT]},
]


def anthropic_difference(sent):
    return first_difference(
        {"messages": RECORDED}, sent, [], canonical=anthropic_canonical, over_http=True
    )


def text(value):
    return [{"type": "text", "text": value}]


@pytest.mark.parametrize(
    "name, sent",
    [
        (
            "system as a list of one text block",
            [{**SYSTEM, "content": text("You fix code.")}, *RECORDED[1:]],
        ),
        (
            "the task as a list of one text block",
            [SYSTEM, {**TASK, "content": text("Fix it.")}, *RECORDED[2:]],
        ),
        (
            "is_error false",
            [*RECORDED[:3], {"role": "user", "content": [{**RESULT, "is_error": False}]}],
        ),
        (
            "a result's text as a block",
            [*RECORDED[:3], {"role": "user", "content": [{**RESULT, "content": text("x = 1")}]}],
        ),
        (
            "a null field in a block",
            [
                *RECORDED[:2],
                {"role": "assistant", "content": [{**CALL, "caller": None}]},
                RECORDED[3],
            ],
        ),
    ],
)
def test_anthropic_spellings_the_api_reads_alike_are_no_difference(name, sent):
    assert anthropic_difference(sent) is None


def test_anthropic_consecutive_user_messages_are_one_as_the_api_combines_them():
    other = {**RESULT, "tool_use_id": "toolu_2"}
    two_calls = {"role": "assistant", "content": [CALL, {**CALL, "id": "toolu_2"}]}
    recorded = [SYSTEM, TASK, two_calls, {"role": "user", "content": [RESULT, other]}]
    split = [SYSTEM, TASK, two_calls, {"role": "user", "content": [RESULT]}]
    split.append({"role": "user", "content": [other]})
    assert (
        first_difference({"messages": recorded}, split, [], canonical=anthropic_canonical) is None
    )
    swapped = [*split[:3], split[4], split[3]]
    assert "message 3 (user) differs at content[0].tool_use_id" in first_difference(
        {"messages": recorded}, swapped, [], canonical=anthropic_canonical
    )


@pytest.mark.parametrize(
    "sent, named",
    [
        (
            [*RECORDED[:3], {"role": "user", "content": [{**RESULT, "is_error": True}]}],
            "message 3 (user) differs at content[0].is_error: the recording has nothing but "
            "the harness sent true",
        ),
        (
            [SYSTEM, {**TASK, "content": text("Fix that.")}, *RECORDED[2:]],
            "message 1 (user) differs at content, character 4",
        ),
        (
            [
                *RECORDED[:2],
                {"role": "assistant", "content": [{**CALL, "input": {"path": None}}]},
                RECORDED[3],
            ],
            "message 2 (assistant) differs at content[0].input.path",
        ),
        (
            [*RECORDED[:3], {"role": "user", "content": [RESULT, RESULT]}],
            "message 3 (user) differs at content: the recording has 1 item but the harness "
            "sent 2 items",
        ),
    ],
)
def test_anthropic_real_differences_are_named_where_they_are(sent, named):
    assert named in anthropic_difference(sent)


OPENAI_CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
}
OPENAI_RECORDED = [
    {"role": "system", "content": "You fix code."},
    {"role": "user", "content": "Fix it."},
    {"role": "assistant", "content": "", "tool_calls": [OPENAI_CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": "x = 1"},
]


def openai_difference(sent):
    return first_difference({"messages": OPENAI_RECORDED}, sent, [], canonical=openai_canonical)


def test_openai_spellings_the_api_reads_alike_are_no_difference():
    assistant = {
        "role": "assistant",
        "content": None,
        "refusal": None,
        "annotations": [],
        "parsed": None,
        "tool_calls": [
            {
                **OPENAI_CALL,
                "index": 0,
                "function": {**OPENAI_CALL["function"], "parsed_arguments": None},
            }
        ],
    }
    sent = [
        {"role": "system", "content": text("You fix code.")},
        {"role": "user", "content": text("Fix it.")},
        assistant,
        {"role": "tool", "tool_call_id": "call_1", "content": text("x = 1")},
    ]
    assert openai_difference(sent) is None


def test_openai_real_differences_are_named_where_they_are():
    legacy = {**OPENAI_RECORDED[2], "function_call": {"name": "read_file", "arguments": "{}"}}
    assert "message 2 (assistant) differs at function_call" in openai_difference(
        [*OPENAI_RECORDED[:2], legacy, OPENAI_RECORDED[3]]
    )
    other = {**OPENAI_CALL, "function": {"name": "read_file", "arguments": '{"path": "b.py"}'}}
    assert (
        "message 2 (assistant) differs at tool_calls[0].function.arguments, character 10"
        in openai_difference(
            [
                *OPENAI_RECORDED[:2],
                {**OPENAI_RECORDED[2], "tool_calls": [other]},
                OPENAI_RECORDED[3],
            ]
        )
    )
    assert "message 1 (user) differs at content" in openai_difference(
        [OPENAI_RECORDED[0], {"role": "user", "content": text("Fix it")}, *OPENAI_RECORDED[2:]]
    )


# --- a turn is used up only when its reply begins ------------------------------------------

REPAIR = load_recording(PROJECT_DIR / "recordings" / "repair.json")


def request(number):
    return REPAIR["turns"][number - 1]["request"]["messages"]


def test_a_fault_fires_once_per_conversation_and_the_next_request_gets_the_turn():
    with serve_recording(REPAIR, turn=2, status=500, error="the runner restarted") as server:
        client = ollama.Client(host=server.url)  # the ollama SDK never retries
        for _ in range(2):  # a new conversation re-arms the fault
            client.chat(DEFAULT_MODEL, request(1), tools=SCHEMAS)
            with pytest.raises(ollama.ResponseError, match="the runner restarted"):
                client.chat(DEFAULT_MODEL, request(2), tools=SCHEMAS)
            again = client.chat(DEFAULT_MODEL, request(2), tools=SCHEMAS)  # turn 2, kept
            assert again.message.tool_calls[0].function.arguments == {
                "path": "tests/test_path_rules.py"
            }


def test_times_breaks_that_many_requests_in_a_row():
    with serve_recording(REPAIR, status=503, times=2) as server:
        answers = [
            httpx.post(
                f"{server.url}/api/chat",
                json={
                    "model": DEFAULT_MODEL,
                    "messages": request(1),
                    "tools": SCHEMAS,
                    "stream": False,
                },
            ).status_code
            for _ in range(3)
        ]
    assert answers == [503, 503, 200]
    with pytest.raises(ValueError, match="times"):
        Faults(times=0)


def test_a_stream_that_began_uses_its_turn_and_the_same_request_again_gets_it_again():
    with serve_recording(REPAIR, turn=1, close_after=2) as server:
        client = ollama.Client(host=server.url)
        with pytest.raises((ollama.ResponseError, httpx.HTTPError)):  # broke after 2 chunks
            list(client.chat(DEFAULT_MODEL, request(1), tools=SCHEMAS, stream=True))
        second = client.chat(DEFAULT_MODEL, request(2), tools=SCHEMAS)  # turn 1 was used
        again = client.chat(DEFAULT_MODEL, request(2), tools=SCHEMAS)  # sent again: turn 2
    assert second.message.tool_calls == again.message.tool_calls
    assert len(server.chat_requests) == 3
