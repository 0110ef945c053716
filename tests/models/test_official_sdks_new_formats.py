"""The official SDKs' own calls for the Responses API and Gemini, written as a learner writes
them (no labkit model in between), run the recorded repair to the end against the replay
server in strict mode: ``openai``'s ``responses.create(stream=True)``, ``responses.stream()``
and ``responses.create()``; ``google-genai``'s ``generate_content_stream`` and
``generate_content``. Each learner's loop keeps the conversation as its SDK's documentation
shows (``input += response.output``; the model's ``Content`` appended as it came), so the
requests differ in spelling from the harness's (ids, statuses, empty annotations, bytes
re-encoded) and must still match."""

import json

import pytest
from conftest import PROJECT_DIR

from labkit import SYSTEM_PROMPT, RepoTools, load_recording, sample_copy, serve_recording
from labkit.settings import DEFAULT_MODELS

RESPONSES = PROJECT_DIR / "recordings" / "repair_responses.json"
GEMINI = PROJECT_DIR / "recordings" / "repair_gemini.json"
FINAL_WORDS = "The last run_tests returned exit code 0: 4 passed."


def responses_turn(client, style, **request):
    """One reply, asked for the way ``style`` says; the final ``Response``."""
    if style == "whole":
        return client.responses.create(**request)
    if style == "stream helper":
        with client.responses.stream(**request) as stream:
            for _ in stream:
                pass
            return stream.get_final_response()
    events = list(client.responses.create(stream=True, **request))
    return next(event.response for event in events if event.type == "response.completed")


def learner_responses_loop(url, style, task):
    import openai

    client = openai.OpenAI(base_url=f"{url}/v1", api_key="no-key", max_retries=0)
    with sample_copy() as root:
        tools = RepoTools(root)
        described = [
            {"type": "function", "strict": False, **schema["function"]} for schema in tools.schemas
        ]
        items = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": task}]
        for _ in range(8):
            response = responses_turn(
                client, style, model=DEFAULT_MODELS["openai-responses"], input=items,
                tools=described,
            )  # fmt: skip
            items += response.output  # the documented way: the output items as they came
            calls = [item for item in response.output if item.type == "function_call"]
            if not calls:
                return response.output_text
            for call in calls:
                result = tools.invoke(call.name, json.loads(call.arguments))
                items.append(
                    {"type": "function_call_output", "call_id": call.call_id,
                     "output": json.dumps(result)}
                )  # fmt: skip
    raise AssertionError("the repair did not end within 8 turns")


@pytest.mark.parametrize("style", ["create(stream=True)", "stream helper", "whole"])
def test_the_openai_sdks_responses_calls_run_the_repair_in_strict_mode(style):
    task = load_recording(RESPONSES)["task"]
    with serve_recording(RESPONSES, strict=True) as server:
        final = learner_responses_loop(server.url, style, task)
        assert len(server.chat_requests) == 5 and server.errors == []
    assert final.endswith(FINAL_WORDS)


def learner_gemini_loop(url, streamed, task, api_version="v1beta"):
    from google import genai
    from google.genai import types

    client = genai.Client(
        api_key="no-key", http_options=types.HttpOptions(base_url=url, api_version=api_version)
    )
    with sample_copy() as root:
        tools = RepoTools(root)
        config = types.GenerateContentConfig(
            system_instruction=SYSTEM_PROMPT,
            tools=[
                types.Tool(
                    function_declarations=[
                        types.FunctionDeclaration(
                            name=s["function"]["name"],
                            description=s["function"]["description"],
                            parameters_json_schema=s["function"]["parameters"],
                        )
                        for s in tools.schemas
                    ]
                )
            ],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        contents = [types.Content(role="user", parts=[types.Part(text=task)])]
        model = DEFAULT_MODELS["gemini"]
        for _ in range(8):
            if streamed:
                chunks = list(
                    client.models.generate_content_stream(
                        model=model, contents=contents, config=config
                    )
                )
                parts = [part for chunk in chunks for part in chunk.candidates[0].content.parts]
                content = types.Content(role="model", parts=parts)  # every part, as it came
            else:
                reply = client.models.generate_content(
                    model=model, contents=contents, config=config
                )
                content = reply.candidates[0].content
            contents.append(content)
            calls = [part.function_call for part in content.parts if part.function_call]
            if not calls:
                return "".join(part.text or "" for part in content.parts)
            contents.append(
                types.Content(
                    role="user",
                    parts=[
                        types.Part(
                            function_response=types.FunctionResponse(
                                id=call.id,
                                name=call.name,
                                response={"output": tools.invoke(call.name, call.args)},
                            )
                        )
                        for call in calls
                    ],
                )
            )
    raise AssertionError("the repair did not end within 8 turns")


@pytest.mark.parametrize(
    "streamed", [True, False], ids=["generate_content_stream", "generate_content"]
)
def test_the_google_genai_sdk_runs_the_repair_in_strict_mode(streamed):
    task = load_recording(GEMINI)["task"]
    with serve_recording(GEMINI, strict=True) as server:
        final = learner_gemini_loop(server.url, streamed, task)
        assert len(server.chat_requests) == 5 and server.errors == []
    assert final.endswith(FINAL_WORDS)


def test_the_pinned_google_genai_sdk_calls_v1_unless_told_and_both_versions_are_served():
    task = load_recording(GEMINI)["task"]
    with serve_recording(GEMINI, strict=True) as server:
        final = learner_gemini_loop(server.url, True, task, api_version=None)
    assert final.endswith(FINAL_WORDS)
