"""The harness a recording ran with, beside the model: which tools, which gate, which budget.

A replay must set up the same harness as the run it replays, or its requests differ:
other tools offered, another decision from the gate, another conversation after the
budget. So a recording that used more than the course's three tools keeps a
``"harness"`` entry, plain JSON, and ``replay_harness`` builds the same pieces again:

    "harness": {"tools": "shell",
                "policy": {"rules": ["allow python -m pytest *", "deny rm *"],
                           "tools": {"read_file": "allow"}, "default": "ask"},
                "budget": {"max_chars": 6000, "keep_last": 1}}

A budget of a conversation in another wire format than Ollama's also keeps its
``"wire_format"``. A person's answers to the gate are not repeated here: the recorded
``permission`` events hold every decision, and the replay gives the same answers in the
same order.
"""

from __future__ import annotations

from ..harness.budget import Budget
from ..harness.gate import ACTIONS, Answers, Gate, Policy, Rule
from ..harness.shell import ShellTools
from ..harness.tools import RepoTools

#: The toolsets a run may offer, by the name a recording keeps.
TOOLSETS = {"repo": RepoTools, "shell": ShellTools}


def harness_setup(tools: str = "repo", gate=None, budget=None) -> dict:
    """What a recording keeps of the harness: empty for the course's plain repair run."""
    setup = {}
    if tools != "repo":
        setup["tools"] = tools
    if gate is not None:
        policy = gate.policy
        setup["policy"] = {
            "rules": [str(rule) for rule in policy.rules],
            "tools": dict(policy.tools),
            "default": policy.default,
        }
    if budget is not None:
        setup["budget"] = {"max_chars": budget.max_chars, "keep_last": budget.keep_last}
        if getattr(budget, "wire_format", "ollama") != "ollama":
            setup["budget"]["wire_format"] = budget.wire_format
    return setup


def policy_from(data: dict) -> Policy:
    """The policy ``harness_setup`` wrote down (``"deny rm *"`` is ``deny("rm *")``)."""
    rules = [Rule(*text.split(" ", 1)) for text in data["rules"]]
    return Policy(rules, tools=data["tools"], default=data["default"])


def recorded_answers(recording: dict) -> list:
    """The answers a person (or a list of answers) gave to the gate's questions, in order."""
    return [
        event["decision"]
        for event in recording["events"]
        if event["type"] == "permission"
        and event["verdict"] == "ask"
        and event["by"] not in ("policy", "nobody")
    ]


def replay_harness(recording: dict) -> dict:
    """``run_attempt``'s ``tools``, ``gate`` and ``budget`` for replaying ``recording``:
    the harness it ran with, with the gate's questions answered as they were then."""
    setup = recording.get("harness", {})
    pieces = {"tools": setup.get("tools", "repo")}
    if "policy" in setup:
        answers = recorded_answers(recording)
        policy = policy_from(setup["policy"])
        pieces["gate"] = Gate(policy, Answers(answers))
    if "budget" in setup:  # it measures in the recording's wire format unless it says
        pieces["budget"] = Budget(
            **{"wire_format": recording.get("wire_format", "ollama"), **setup["budget"]}
        )
    return pieces


def setup_problem(setup) -> str | None:
    """What makes a recording's ``"harness"`` entry unusable, or None. Pure."""
    if not isinstance(setup, dict) or set(setup) - {"tools", "policy", "budget"}:
        return "'harness' is not an object with only 'tools', 'policy' and 'budget'"
    if setup.get("tools", "repo") not in TOOLSETS:
        return f"'harness.tools' is {setup.get('tools')!r}; it must be one of {sorted(TOOLSETS)}"
    policy = setup.get("policy", {"rules": [], "tools": {}, "default": "ask"})
    if not (
        isinstance(policy, dict)
        and isinstance(policy.get("rules"), list)
        and all(
            isinstance(rule, str) and rule.split(" ", 1)[0] in ACTIONS for rule in policy["rules"]
        )
        and isinstance(policy.get("tools"), dict)
    ):
        return "'harness.policy' needs 'rules' (texts such as 'allow ls'), 'tools' and 'default'"
    try:
        policy_from(policy)
        Budget(**setup["budget"]) if "budget" in setup else None
    except (ValueError, TypeError, KeyError) as exc:
        return f"'harness' cannot be set up again: {exc!s}"
    return None
