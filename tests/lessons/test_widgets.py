import subprocess
import sys

import ipywidgets
import pytest
from conftest import chunk, texts_with_class, wait_until

from labkit import ChunkStepper, ConversationView

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def assembled(stepper):
    [text] = texts_with_class(stepper.view.value, "labkit-assembled-text")
    return text


LOADED_ON_FIRST_USE = (
    "ipywidgets",
    "openai",
    "anthropic",
    "ollama",
    "httpx",
    "httpx2",
    "pydantic",
    "mcp",
)


def test_importing_labkit_loads_neither_ipywidgets_nor_any_sdk_or_http_client():
    """Each is loaded when first used: together they took over 2 s to import, paid by every
    process that imports labkit (a replay, each regraded test cell, each kernel)."""
    code = (
        f"import sys, labkit, labkit.cli; print(*(m in sys.modules for m in "
        f"{LOADED_ON_FIRST_USE!r}), labkit.ChunkStepper.__name__, labkit.OpenAIModel('m', "
        "base_url='http://127.0.0.1:9/v1').sdk.__name__, labkit.OllamaModel.__name__, "
        "labkit.AnthropicModel.__name__, labkit.OllamaError.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"] * len(LOADED_ON_FIRST_USE) + [
        "ChunkStepper",
        "openai",
        "OllamaModel",
        "AnthropicModel",
        "labkit.models.errors",
    ]


def test_stepper_starts_at_the_first_chunk_and_next_moves_on(repair_recording):
    turn = repair_recording["turns"][-1]
    stepper = ChunkStepper(turn)
    assert (stepper.slider.min, stepper.slider.value, stepper.slider.max) == (
        1,
        1,
        len(turn["chunks"]),
    )
    assert stepper.prev_button.disabled and not stepper.next_button.disabled
    before = stepper.view.value
    stepper.next_button.click()
    assert stepper.slider.value == 2 and stepper.view.value != before
    assert f"chunk 2 of {len(turn['chunks'])}" in stepper.view.value
    stepper.prev_button.click()
    assert stepper.slider.value == 1 and stepper.view.value == before


def test_moving_the_slider_shows_that_step_and_the_ends_hold(repair_recording):
    turn = repair_recording["turns"][-1]
    stepper = ChunkStepper(turn)
    stepper.slider.value = stepper.slider.max
    full = "".join(e["chunk"]["message"].get("content", "") for e in turn["chunks"])
    assert assembled(stepper) == full
    [verdict] = texts_with_class(stepper.view.value, "labkit-dispatch")
    assert verdict.startswith("may dispatch")
    stepper.next_button.click()
    assert stepper.slider.value == stepper.slider.max and stepper.next_button.disabled


def test_stepper_carries_the_css_classes_the_browser_test_relies_on(repair_recording):
    stepper = ChunkStepper(repair_recording["turns"][0])
    assert "labkit-stepper" in stepper._dom_classes
    assert "labkit-next" in stepper.next_button._dom_classes
    assert "labkit-prev" in stepper.prev_button._dom_classes
    assert "labkit-slider" in stepper.slider._dom_classes
    for css in (
        "labkit-wire",
        "labkit-assembled-text",
        "labkit-assembled-thinking",
        "labkit-dispatch",
    ):
        assert len(texts_with_class(stepper.view.value, css)) == 1, css
    assert "labkit-play" in stepper.play._dom_classes


def test_play_steps_to_the_end_and_pauses_there(repair_recording):
    stepper = ChunkStepper(repair_recording["turns"][0], interval=1)
    stepper.play.value = True
    assert stepper.play.description == "Pause"
    assert wait_until(lambda: not stepper.play.value, timeout=10)
    assert stepper.slider.value == stepper.slider.max and stepper.play.description == "Play"


def test_every_button_says_in_words_what_it_does(repair_recording, repair_events):
    """No button is an icon alone: each has a text label and a tooltip."""
    from labkit import ApprovalPanel

    buttons = []
    for shown in (
        ChunkStepper(repair_recording["turns"][0]),
        ConversationView(repair_events),
        ApprovalPanel(),
    ):
        found = [shown]
        while found:
            widget = found.pop()
            found += list(getattr(widget, "children", ()))
            if isinstance(widget, (ipywidgets.Button, ipywidgets.ToggleButton)):
                buttons.append(widget)
            assert not isinstance(widget, ipywidgets.Play)  # icon-only buttons
    assert len(buttons) == 7
    assert all(button.description.strip() and button.tooltip.strip() for button in buttons)


def test_stepper_takes_a_plain_chunk_list_and_refuses_a_bad_tail():
    stepper = ChunkStepper([chunk("Hel"), chunk("lo"), chunk(done=True)])
    stepper.next_button.click()
    assert assembled(stepper) == "Hello"
    with pytest.raises(ValueError, match="tail"):
        ChunkStepper([chunk(done=True)], tail=0)


def test_stepper_bundle_has_the_live_view_and_a_static_final_state(repair_recording):
    turn = repair_recording["turns"][0]
    bundle = ChunkStepper(turn)._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"]
    [text] = texts_with_class(bundle["text/html"], "labkit-assembled-thinking")
    assert text == "".join(e["chunk"]["message"].get("thinking", "") for e in turn["chunks"])
    [verdict] = texts_with_class(bundle["text/html"], "labkit-dispatch")
    assert verdict.startswith("may dispatch")
    assert bundle["text/plain"].startswith(f"ChunkStepper: {len(turn['chunks'])} chunks")
    assert "may dispatch" in bundle["text/plain"]
    again = ChunkStepper(turn)._repr_mimebundle_()
    assert again["text/html"] == bundle["text/html"] and again[WIDGET_VIEW] != bundle[WIDGET_VIEW]


def test_conversation_view_steps_one_message_at_a_time(repair_events):
    view = ConversationView(repair_events)
    assert "labkit-conversation" in view._dom_classes
    assert (
        "labkit-next" in view.next_button._dom_classes
        and "labkit-prev" in view.prev_button._dom_classes
    )
    assert len(texts_with_class(view.view.value, "labkit-message")) == 2
    view.next_button.click()
    assert view.slider.value == 2
    assert len(texts_with_class(view.view.value, "labkit-message")) == 3
    assert len(texts_with_class(view.view.value, "labkit-role-assistant")) == 1
    view.slider.value = view.slider.max
    assert len(texts_with_class(view.view.value, "labkit-message")) == len(
        repair_events[-1]["messages"]
    )


def test_conversation_bundle_shows_the_whole_final_list(repair_events):
    bundle = ConversationView(repair_events)._repr_mimebundle_()
    final = repair_events[-1]["messages"]
    assert WIDGET_VIEW in bundle
    assert len(texts_with_class(bundle["text/html"], "labkit-message")) == len(final)
    assert final[-1]["content"] in bundle["text/html"]
    assert bundle["text/plain"].startswith("ConversationView: ")
    assert f"{len(final)} messages" in bundle["text/plain"]
