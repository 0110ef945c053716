"""Lesson 14's section "One loop, every SDK": the lesson's answer to exercise 14a, unchanged,
behind a strict replay server of each wire format, through labkit's model built on that
provider's official SDK, repairs the sample as the recordings did."""

import nbformat
from conftest import PROJECT_DIR

from labkit import behind_every_sdk

NOTEBOOK = PROJECT_DIR / "notebooks" / "14_your_loop.ipynb"
REPAIR_CALLS = ["read_file", "read_file", "replace_text", "run_tests"]  # every recorded repair


def lessons_answer():
    """``my_loop`` as the lesson's answer cell defines it, run as a learner's cell is."""
    cell = next(
        c
        for c in nbformat.read(NOTEBOOK, as_version=4).cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == "my_loop"
    )
    namespace = {"__name__": "learner"}
    exec(compile(cell.source, "exercise 14a", "exec"), namespace)
    return namespace["my_loop"]


def test_the_answer_loop_runs_unchanged_behind_every_sdk():
    runs = behind_every_sdk(lessons_answer())
    assert [run.provider for run in runs] == [
        "ollama",
        "openai",
        "anthropic",
        "openai-responses",
        "gemini",
    ]
    assert [run.model_class for run in runs] == [
        "OllamaModel",
        "OpenAIModel",
        "AnthropicModel",
        "ResponsesModel",
        "GeminiModel",
    ]
    for run in runs:
        stop = run.events[-1]
        assert (stop["reason"], stop["turns"], stop["tool_calls"]) == ("assistant_finished", 5, 4)
        assert run.requests == 5, run.provider  # none refused and asked again
        calls = [event["name"] for event in run.events if event["type"] == "tool_start"]
        assert calls == REPAIR_CALLS, run.provider
        assert run.line().endswith(
            "assistant_finished after 5 requests and 4 calls "
            "(read_file, read_file, replace_text, run_tests)"
        )


def test_a_loop_that_breaks_the_conversation_is_refused_by_the_servers_as_a_model_error():
    answer = lessons_answer()

    def forgets_the_system_prompt(chat, tools, task, max_turns):
        def without_system(messages, schemas):
            return chat(messages[1:], schemas)

        without_system.wire_format = getattr(chat, "wire_format", "ollama")
        return answer(without_system, tools, task, max_turns)

    for run in behind_every_sdk(forgets_the_system_prompt)[:2]:
        stop = run.events[-1]
        assert (stop["reason"], stop["turns"], stop["tool_calls"]) == ("model_error", 1, 0)
