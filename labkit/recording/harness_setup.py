"""The harness a recording ran with, beside the model: which tools, which gate, which
budget, which hooks.

A replay must set up the same harness as the run it replays, or its requests differ:
other tools offered, another decision from the gate or a hook, another conversation after
the budget. So a recording that used more than the course's three tools keeps a
``"harness"`` entry, plain JSON, and ``replay_harness`` builds the same pieces again:

    "harness": {"tools": "shell",
                "policy": {"rules": ["allow python -m pytest *", "deny rm *"],
                           "tools": {"read_file": "allow"}, "default": "ask"},
                "budget": {"max_chars": 6000, "keep_last": 1},
                "hooks": {"hooks": [{"name": "protect-tests", "on": ["before_tool"], ...}]},
                "sandbox": {"profile": "workspace-write"}}

A sandbox (lesson 12) is kept by its profile's name: the replay runs in the same profile,
with the default limits, or says it cannot start.

``"tools": "mcp"`` is the course's MCP server (``labkit.extensions.mcp_server``), started
in the run's copy and ended with the run (``open_tools``). A budget of a conversation in
another wire format than Ollama's also keeps its ``"wire_format"``. A person's answers to
the gate are not repeated here: the recorded ``permission`` events hold every decision,
and the replay gives the same answers in the same order. Hooks are kept as their
configuration (commands): a replay runs them again, as it runs the tools again.
"""

from __future__ import annotations

from contextlib import closing, nullcontext
from pathlib import Path

from ..harness.budget import Budget
from ..harness.gate import ACTIONS, Answers, Gate, Policy, Rule
from ..harness.hooks import load_hooks
from ..harness.mcp_tools import MCPTools
from ..harness.project import SAMPLES
from ..harness.retrieval import BM25Retriever, K
from ..harness.sandbox import PROFILES, Sandbox
from ..harness.shell import ShellTools
from ..harness.symbols import SymbolTools
from ..harness.toolkit import Toolkit
from ..harness.tools import RepoTools

#: The course's MCP server, as a command run in the copy it serves.
MCP_SERVER = ["python", "-I", "-m", "labkit.extensions.mcp_server"]


def course_mcp_tools(root: Path, wire_format: str = "ollama") -> MCPTools:
    """The course's MCP server started in ``root``, its tools offered as the loop's."""
    return MCPTools(MCP_SERVER, cwd=root, wire_format=wire_format)


#: The toolsets a run may offer, by the name a recording keeps.
TOOLSETS = {
    "repo": RepoTools,
    "shell": ShellTools,
    "toolkit": Toolkit,
    "symbols": SymbolTools,  # lesson 13: the toolkit and a language server's answers
    "mcp": course_mcp_tools,
}
#: The retrievers a run may inject chunks with (lesson 13), by the name a recording keeps.
RETRIEVERS = ("bm25", "minilm")


def make_retriever(name: str):
    """A fresh retriever named ``name``: BM25 (standard library), or the embedding model
    (numpy and the model's package, imported only when asked for)."""
    if name == "minilm":
        from ..extensions.embeddings import MiniLMRetriever

        return MiniLMRetriever()
    if name == "bm25":
        return BM25Retriever()
    raise ValueError(f"retriever is one of {', '.join(RETRIEVERS)}, not {name!r}")


def open_tools(tools: str, root: Path, wire_format: str = "ollama", sandbox=None):
    """A context giving the toolset named ``tools`` in ``root`` (its programs run inside
    ``sandbox`` if given), closed when it ends (the MCP server's process with it). A sandbox
    that cannot start stops here."""
    if tools == "mcp":
        if sandbox is not None:
            raise ValueError(
                "the course's MCP server runs its tools in its own process, outside the "
                "sandbox: run tools='mcp' without a sandbox, or tools='shell' inside one"
            )
        return closing(course_mcp_tools(root, wire_format))
    toolset = TOOLSETS[tools](root, sandbox=sandbox)
    return closing(toolset) if hasattr(toolset, "close") else nullcontext(toolset)


def harness_setup(
    tools: str = "repo",
    gate=None,
    budget=None,
    hooks=None,
    sandbox=None,
    sample: str = "sample_repo",
    retrieval: dict | None = None,
) -> dict:
    """What a recording keeps of the harness: empty for the course's plain repair run.
    ``hooks`` is a hooks configuration (``{"hooks": [...]}``); ``retrieval`` is
    ``{"retriever": "bm25" or "minilm", "k": chunks}``."""
    if sample not in SAMPLES:
        raise ValueError(f"sample is one of {', '.join(SAMPLES)}, not {sample!r}")
    setup = {}
    if sample != "sample_repo":
        setup["sample"] = sample
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
    if hooks is not None:
        setup["hooks"] = load_hooks(hooks, ".").config()
    if sandbox is not None:
        setup["sandbox"] = {"profile": sandbox.name}
    if retrieval is not None:
        problem = retrieval_problem(retrieval)
        if problem:
            raise ValueError(problem)
        setup["retrieval"] = {"retriever": retrieval["retriever"], "k": retrieval["k"]}
    return setup


def retrieval_problem(retrieval) -> str | None:
    """What makes a retrieval setting unusable, or None. Pure."""
    if (
        not isinstance(retrieval, dict)
        or set(retrieval) != {"retriever", "k"}
        or retrieval["retriever"] not in RETRIEVERS
        or type(retrieval["k"]) is not int
        or not 1 <= retrieval["k"] <= 20
    ):
        return (
            f"retrieval is {{'retriever': one of {', '.join(RETRIEVERS)}, 'k': 1 to 20}} "
            f"(for example {{'retriever': 'bm25', 'k': {K}}}), not {str(retrieval)[:100]}"
        )
    return None


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
    """``run_attempt``'s ``tools``, ``gate``, ``budget``, ``hooks`` and ``sandbox`` for
    replaying ``recording``:
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
    if "hooks" in setup:
        pieces["hooks"] = setup["hooks"]
    if "sandbox" in setup:
        pieces["sandbox"] = Sandbox(setup["sandbox"]["profile"])
    if "sample" in setup:
        pieces["sample"] = setup["sample"]
    if "retrieval" in setup:
        pieces["retrieval"] = dict(setup["retrieval"])
    return pieces


def setup_problem(setup) -> str | None:
    """What makes a recording's ``"harness"`` entry unusable, or None. Pure."""
    keys = {"tools", "policy", "budget", "hooks", "sandbox", "sample", "retrieval"}
    if not isinstance(setup, dict) or set(setup) - keys:
        return (
            "'harness' is not an object with only 'tools', 'policy', 'budget', 'hooks', "
            "'sandbox', 'sample' and 'retrieval'"
        )
    if setup.get("sample", "sample_repo") not in SAMPLES:
        return f"'harness.sample' is {setup.get('sample')!r}; one of {', '.join(SAMPLES)}"
    if "retrieval" in setup and retrieval_problem(setup["retrieval"]):
        return f"'harness.retrieval': {retrieval_problem(setup['retrieval'])}"
    sandbox = setup.get("sandbox", {"profile": "none"})
    if not isinstance(sandbox, dict) or set(sandbox) != {"profile"}:
        return "'harness.sandbox' is an object with only 'profile'"
    if sandbox["profile"] not in PROFILES:
        return f"'harness.sandbox.profile' is {sandbox['profile']!r}; one of {', '.join(PROFILES)}"
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
        load_hooks(setup["hooks"], ".") if "hooks" in setup else None
    except (ValueError, TypeError, KeyError) as exc:
        return f"'harness' cannot be set up again: {exc!s}"
    return None
