"""The chunk stepper over OpenAI and Anthropic streams: each call's arguments as the JSON text
so far, json.loads failing until that text is whole, and the loop's verdict at every step."""

import copy
import json

import pytest
from conftest import PROJECT_DIR, texts_with_class

from labkit import ChunkStepper, load_recording
from labkit.lessons.render import fragment_step_html, fragments_static_html
from labkit.lessons.steps import FragmentSteps

RECORDINGS = {"openai": "repair_openai.json", "anthropic": "repair_anthropic.json"}


def turn_of(provider, number):
    return load_recording(PROJECT_DIR / "recordings" / RECORDINGS[provider])["turns"][number - 1]


def only(html, css_class):
    [text] = texts_with_class(html, css_class)
    return text


def pieces_of(provider, chunk):
    """The argument fragments a raw chunk carries, read straight from the wire shape."""
    if provider == "openai":
        return "".join(
            entry.get("function", {}).get("arguments") or ""
            for choice in chunk["choices"]
            for entry in choice["delta"].get("tool_calls") or []
        )
    return (
        chunk.get("delta", {}).get("partial_json", "")
        if chunk["type"] == "content_block_delta"
        else ""
    )


def ends(provider, chunk):
    if provider == "openai":
        return any(choice["finish_reason"] for choice in chunk["choices"])
    return chunk["type"] == "message_stop"


@pytest.mark.parametrize("provider", sorted(RECORDINGS))
def test_each_step_shows_the_arguments_so_far_and_json_loads_fails_until_they_are_whole(provider):
    turn = turn_of(provider, 3)  # replace_text: the longest arguments of the repair
    steps = FragmentSteps(turn, provider)
    chunks = [entry["chunk"] for entry in turn["chunks"]]
    whole = "".join(pieces_of(provider, c) for c in chunks)
    first_valid = None
    for k in range(1, len(steps) + 1):
        html = fragment_step_html(steps.step(k))
        so_far = "".join(pieces_of(provider, c) for c in chunks[:k])
        arguments = texts_with_class(html, "labkit-call-arguments")
        if not arguments:
            continue  # the call has not started yet
        assert arguments == [so_far]
        judged = only(html, "labkit-json-verdict")
        valid = so_far == whole
        assert judged.startswith("json.loads gives" if valid else "json.loads fails here:"), (
            k,
            judged,
        )
        if valid and first_valid is None:
            first_valid = k
        verdict = only(html, "labkit-dispatch")
        finished = any(ends(provider, c) for c in chunks[:k])
        assert verdict.startswith("may dispatch" if finished else "not yet"), (k, verdict)
    assert json.loads(whole)["old"] == "        path = PurePosixPath(name)"
    assert first_valid < len(steps)  # whole JSON before the end, and still the loop waits


@pytest.mark.parametrize(
    "provider, cut, words",
    [
        (
            "openai",
            lambda chunk: chunk["choices"][0].update(finish_reason="length"),
            "refused: the reply was cut by the output-length limit (finish_reason 'length')",
        ),
        (
            "anthropic",
            lambda chunk: chunk["delta"].update(stop_reason="max_tokens"),
            "refused: the reply was cut by the output-length limit (stop_reason 'max_tokens')",
        ),
    ],
)
def test_a_length_cut_is_refused_at_the_last_step_whatever_the_json(provider, cut, words):
    turn = copy.deepcopy(turn_of(provider, 1))
    ending = -1 if provider == "openai" else -2  # the finish chunk; message_delta
    cut(turn["chunks"][ending]["chunk"])
    steps = FragmentSteps(turn, provider)
    html = fragment_step_html(steps.step(len(steps)))
    assert only(html, "labkit-dispatch").startswith(words)
    assert only(html, "labkit-json-verdict").startswith("json.loads gives")


def test_a_stream_that_stops_early_is_refused_at_its_last_chunk():
    turn = copy.deepcopy(turn_of("openai", 1))
    turn["chunks"] = turn["chunks"][:4]
    steps = FragmentSteps(turn, "openai")
    assert only(fragment_step_html(steps.step(3)), "labkit-dispatch").startswith("not yet")
    assert only(fragment_step_html(steps.step(4)), "labkit-dispatch").startswith(
        "refused: the stream ended before the choice's finish_reason arrived"
    )


def test_text_is_escaped_and_the_wire_event_shown_as_it_came():
    turn = turn_of("anthropic", 5)  # the final summary, a text block
    steps = FragmentSteps(turn, "anthropic")
    html = fragment_step_html(steps.step(4))
    assert only(html, "labkit-wire") == turn["chunks"][3]["line"]
    assert only(html, "labkit-assembled-text") == "".join(
        e["chunk"]["delta"]["text"]
        for e in turn["chunks"][:4]
        if e["chunk"]["type"] == "content_block_delta"
    )
    odd = [{"choices": [{"index": 0, "delta": {"content": "<b>&"}, "finish_reason": "stop"}]}]
    html = fragment_step_html(FragmentSteps(odd, "openai").step(1))
    assert "&lt;b&gt;&amp;" in html and "<b>&" not in html


def test_the_stepper_refuses_a_format_it_does_not_step_and_a_bad_step():
    with pytest.raises(ValueError, match="an Ollama turn goes to TurnSteps"):
        FragmentSteps([], "ollama")
    with pytest.raises(ValueError, match="step must be an int from 0 to 0"):
        FragmentSteps([], "openai").step(1)


def test_the_widget_steps_an_openai_turn_and_keeps_a_static_view():
    turn = turn_of("openai", 3)
    stepper = ChunkStepper(turn, wire_format="openai")
    assert stepper.slider.max == len(turn["chunks"])
    stepper.next_button.click()
    stepper.next_button.click()
    assert only(stepper.view.value, "labkit-dispatch").startswith("not yet")
    stepper.slider.value = stepper.slider.max
    assert only(stepper.view.value, "labkit-dispatch").startswith("may dispatch")
    bundle = stepper._repr_mimebundle_()
    assert bundle["text/plain"].startswith(
        f"ChunkStepper: {len(turn['chunks'])} chunks; at the end, may dispatch"
    )
    assert bundle["text/html"] == fragments_static_html(stepper.steps)
