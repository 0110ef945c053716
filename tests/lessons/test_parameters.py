"""A lesson's parameters: the providers' set is required, and a name papermill passes that
the lesson does not take is an error (papermill itself only warns)."""

import pytest

from labkit import PROVIDER_PARAMETERS, LessonError, check_parameters

DEFAULTS = dict.fromkeys(PROVIDER_PARAMETERS)
INJECTED = '# Parameters\nMODE = "live"\nMDOEL = "qwen3:4b"\n'


def test_the_set_is_lesson_06s():
    assert PROVIDER_PARAMETERS == (
        "MODE",
        "PROVIDER",
        "MODEL",
        "OLLAMA_HOST",
        "BASE_URL",
        "RECORDING",
    )


def test_a_name_papermill_passed_that_the_lesson_does_not_take_is_an_error():
    with pytest.raises(LessonError) as refused:
        check_parameters({**DEFAULTS, "MDOEL": "x"}, previous_cell=INJECTED)
    message = str(refused.value)
    assert message.startswith("this lesson takes no parameter MDOEL: it takes MODE, PROVIDER")
    assert "Check the spelling" in message


def test_the_lessons_own_parameters_and_the_providers_set_pass():
    injected = '# Parameters\nMODE = "live"\nPROVIDER = "openai"\nANSWERS = ["allow"]\n'
    check_parameters({**DEFAULTS, "ANSWERS": None}, "ANSWERS", previous_cell=injected)
    with pytest.raises(LessonError, match="no parameter ANSWERS"):
        check_parameters({**DEFAULTS, "ANSWERS": None}, previous_cell=injected)


def test_a_cell_papermill_did_not_add_is_not_read():
    check_parameters(DEFAULTS, previous_cell='# Parameters. "replay" needs no server\nX = 1\n')
    check_parameters(DEFAULTS, previous_cell="")
    check_parameters(DEFAULTS)  # no kernel: nothing was injected


def test_a_parameters_cell_without_the_providers_set_is_named():
    with pytest.raises(LessonError, match="sets no PROVIDER, BASE_URL"):
        check_parameters({"MODE": "replay", "MODEL": "m", "OLLAMA_HOST": None, "RECORDING": "r"})
