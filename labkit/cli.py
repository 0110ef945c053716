"""``python -m labkit``: replay a recording, serve one over its API, record a live attempt, write
the lessons into a folder, grade a class and report what it got wrong, or print the versions the
course is tested with."""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import threading
from pathlib import Path

from .batch.command import add_arguments as batch_arguments
from .batch.command import batch_command
from .grading import grade_class, report
from .grading.edition import add_arguments as lessons_arguments
from .grading.edition import write_lessons
from .harness.loop import MAX_TURNS, positive_int
from .harness.prompt import REPAIR_TASK
from .harness.sample import SampleChanged
from .harness.sandbox import SandboxUnavailable
from .lessons.trace import event_line
from .models.errors import MODEL_ERRORS
from .models.provenance import timestamp
from .models.providers import KEY_VARIABLES, PROVIDERS, live_model
from .recording.attempt import run_attempt
from .recording.contents import RecordingError
from .recording.files import load_recording, save_recording
from .recording.replaying import replay_attempt
from .recording.serving import serve_recording
from .settings import CONSTRAINTS_FILE, MY_RECORDINGS


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m labkit", description="Tools of the 'Build a coding-agent loop' course."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    replay = commands.add_parser(
        "replay",
        help="replay a recording through the loop on a fresh copy of the sample",
        description="Feed a recording's chunks to the agent loop, with the real tools and "
        "tests on a fresh copy of sample_repo/, and print a trace. Exits 0 when "
        "the replay matched the recording.",
    )
    _replay_options(replay)
    replay.add_argument(
        "--max-turns",
        type=_positive_int,
        default=None,
        metavar="N",
        help="model-request budget (default: the recording's own)",
    )
    serve = commands.add_parser(
        "serve",
        help="serve a recording over its API (Ollama's, OpenAI's or Anthropic's) on 127.0.0.1",
        description="Answer chat requests from a recording, one recorded turn per request, "
        "over the API it was recorded in (Ollama's, OpenAI's Chat Completions or "
        "Anthropic's Messages), so the real SDK runs offline. It says it is a "
        "replay server, never a model. Ctrl-C stops it.",
    )
    _replay_options(serve)
    serve.add_argument(
        "--port",
        type=_port,
        default=0,
        metavar="N",
        help="port to listen on (default: a free one, printed at start)",
    )
    record = commands.add_parser(
        "record",
        help="run the loop live (Ollama, an OpenAI-compatible server, Anthropic) "
        "and save the attempt as a recording",
        description="Check a fresh copy of sample_repo/, run the loop live, check again, and "
        "save the attempt as a recording that says which provider, server and "
        "model wrote it. A run that ends in a model error, or that you interrupt, "
        "writes nothing. API keys are read from OPENAI_API_KEY or "
        "ANTHROPIC_API_KEY, never from the command line, and never saved.",
    )
    _live_options(record)
    record.add_argument(
        "--max-turns",
        type=_positive_int,
        default=MAX_TURNS,
        metavar="N",
        help=f"model-request budget (default: {MAX_TURNS})",
    )
    record.add_argument(
        "--output",
        default=None,
        metavar="PATH",
        help="where to save it (default: recordings/mine/TAG-TIME.json); "
        "an existing file is never overwritten",
    )
    batch_arguments(
        commands.add_parser(
            "batch",
            help="run one attempt at every task of a task set, on this machine's cores or a "
            "Dask cluster, and score each by its tests",
            description="Give each task of a task set (default: the course's) one attempt, each "
            "on its own copy, in lesson 12's sandbox where it can start, on workers (this "
            "machine's cores, or a Dask cluster with --scheduler). Replays the course's scripted "
            "attempts unless --provider names a live model. Writes OUT/results.jsonl and each "
            "attempt's journal and recording; run again, it skips finished attempts and picks "
            "up the others where they stopped.",
        ),
        _live_options,
    )
    lessons_arguments(
        commands.add_parser(
            "lessons", help="write the lessons into a folder of yours, never overwriting one"
        )
    )
    grade_class.add_arguments(
        commands.add_parser("grade", help="autograde a class in parallel, each learner sandboxed")
    )
    report.add_arguments(
        commands.add_parser("report", help="what a graded class got wrong: HTML page and CSV")
    )
    commands.add_parser(
        "constraints",
        help="print the versions the course is tested with (its requirements.lock), for pip",
        description="Print the pinned versions of every package the course is tested with, "
        "one per line, as pip reads them: `python -m labkit constraints > pins.txt`, then "
        "`pip install -r pins.txt`. Works before those packages are installed.",
    )
    args = parser.parse_args(argv)
    commands = {
        "replay": replay_command,
        "serve": serve_command,
        "record": record_command,
        "lessons": write_lessons,
        "batch": lambda args: batch_command(args, declared_facts, chosen_model),
        "grade": grade_class.run,
        "report": report.run,
        "constraints": constraints_command,
    }
    try:
        return commands[args.command](args)
    except SampleChanged as exc:  # every command that copies the sample or loads a recording
        print(f"error: {exc}", file=sys.stderr)
        return 2


def constraints_command(args) -> int:
    sys.stdout.write(CONSTRAINTS_FILE.read_text(encoding="utf-8"))
    return 0


def replay_command(args) -> int:
    try:
        recording = load_recording(args.recording)
    except RecordingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    max_turns = args.max_turns or recording["max_turns"]
    source = recording["provenance"]["source"]
    print(
        f"Replaying {args.recording} ({source}) on a fresh copy of sample_repo, "
        f"max_turns={max_turns}"
    )
    try:
        replay = replay_attempt(
            recording,
            strict=not args.loose,
            speed=args.speed,
            max_turns=max_turns,
            on_event=print_progress,
        )
    except SandboxUnavailable as exc:  # the recording ran in a sandbox: so must its replay
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_test_file_line(replay.recording)
    problem = replay.difference
    print("Replay matches the recording." if problem is None else f"Replay differs: {problem}")
    return 0 if problem is None else 1


def serve_command(args) -> int:
    try:
        server = serve_recording(
            args.recording,
            port=args.port,
            strict=not args.loose,
            speed=args.speed,
            log=lambda line: print(line, flush=True),
        )
    except RecordingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(
            f"error: cannot listen on 127.0.0.1 port {args.port} ({exc.strerror or exc}); "
            "choose another --port",
            file=sys.stderr,
        )
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop as cleanly as on Ctrl-C
    with server:
        identity = server.identity
        print(
            f"Serving {args.recording} ({identity['provenance']['source']}, "
            f"{identity['turns']} turns, {identity['wire_format']} API) at {server.url}: a "
            "replay, not a live model."
        )
        print(how_to_use(server.recording, identity["wire_format"], server.url))
        print("Press Ctrl-C to stop.", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print("Stopped.")
    return 0


SERVED_AS = {
    "ollama": ("an Ollama server", "OLLAMA_HOST={url} python -m labkit record"),
    "openai": (
        "an OpenAI-compatible server",
        "python -m labkit record --provider openai --base-url {url}/v1",
    ),
    "anthropic": (
        "Anthropic's API",
        "python -m labkit record --provider anthropic --base-url {url}",
    ),
    "openai-responses": (
        "OpenAI's Responses API",
        "python -m labkit record --provider openai-responses --base-url {url}/v1",
    ),
    "gemini": ("Gemini's API", "python -m labkit record --provider gemini --base-url {url}"),
}


def how_to_use(recording: dict, wire_format: str, url: str) -> str:
    """The ``record`` command whose requests a served recording answers: its model, its
    budget, and whole replies if it was captured whole (``record`` asks as it was asked)."""
    title, command = SERVED_AS[wire_format]
    if recording.get("harness") or recording["task"] != REPAIR_TASK:
        return (
            f"Use it as {title}, with a client of your own (its requests must be the "
            "recording's: `record` runs the repair task with the file tools, which they are not)."
        )
    command = command.format(url=url)
    provenance = recording["provenance"]
    model = provenance.get("model")
    if model and model != PROVIDERS[wire_format].default_model:
        command += f" --model {model}"
    if (provenance.get("request") or {}).get("stream") is False:
        command += " --no-stream"
    if recording["max_turns"] != MAX_TURNS:
        command += f" --max-turns {recording['max_turns']}"
    return f"Use it as {title}: `{command}`"


def chosen_model(args):
    """The live model ``record`` asked for (ValueError or a model error if it cannot be made):
    each provider takes its address in one option, and only some give whole replies."""
    provider = PROVIDERS[args.provider]
    for argument, given in (("host", args.host), ("base_url", args.base_url)):
        if given and argument != provider.address:
            raise ValueError(
                f"{_option(argument)} is for --provider {_takers(argument)}; give the "
                f"{provider.title} server's address with {_option(provider.address)}"
            )
    if args.no_stream and not provider.whole_replies:
        whole = " or ".join(p.name for p in PROVIDERS.values() if p.whole_replies)
        raise ValueError(f"--no-stream is for --provider {whole}")
    return live_model(
        args.provider,
        args.model,
        host=args.host,
        base_url=args.base_url,
        stream=not args.no_stream,
    )


def record_command(args) -> int:
    output = Path(args.output) if args.output else None
    if output and output.exists():
        print(
            f"error: {output} exists; recordings are never overwritten: choose another --output",
            file=sys.stderr,
        )
        return 2
    try:
        declared = declared_facts(args.about)
        model = chosen_model(args)
    except (ValueError, *MODEL_ERRORS) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with model:
        try:
            model.preflight()
            provenance = model.provenance()
        except MODEL_ERRORS as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if declared:  # a replay's facts belong to the replay, not to whoever wrote the chunks
            (provenance.get("replayed_from") or provenance)["declared"] = declared
        output = output or default_output(provenance)
        replayed = provenance.get("replayed_from")
        if replayed:
            print(
                f"Note: {model.address} is a labkit replay server serving "
                f"{replayed['recording']} ({provenance['source']}); the recording will say "
                f"it was replayed, not written by {model.model}."
            )
        else:
            print(model.about(provenance))
        print(f"Recording an attempt on a fresh copy of sample_repo, max_turns={args.max_turns}")
        interrupted = []

        def on_interrupt(signum, frame):  # remembered: the SDK may turn the interrupt into
            interrupted.append(signum)  # an error that ends the run as a model_error
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGINT, on_interrupt)
        try:
            recording, events = run_attempt(
                model, provenance=provenance, max_turns=args.max_turns, on_event=LiveProgress()
            )
        except KeyboardInterrupt:
            interrupted.append(signal.SIGINT)
        finally:
            signal.signal(signal.SIGINT, previous)
        if interrupted:
            print("\nInterrupted: no recording written.", file=sys.stderr)
            return 130
    print_test_file_line(recording)
    stop = events[-1]
    if stop["reason"] == "model_error":
        print(
            f"No recording written: the model call failed, so this is not a whole attempt. "
            f"{stop['error']}",
            file=sys.stderr,
        )
        return 1
    model.finish_provenance(recording)
    save_recording(recording, output)
    chunks = sum(len(turn["chunks"]) for turn in recording["turns"])
    print(
        f"Wrote {output} ({len(recording['turns'])} turns, {chunks} chunks). "
        f"Replay it: `python -m labkit replay {output}`"
    )
    return 0


class LiveProgress:
    """The replay trace, plus each request as it is sent and the reply's text as it streams."""

    def __init__(self):
        self.streaming = False

    def __call__(self, event: dict) -> None:
        if event["type"] == "text_delta":
            if not self.streaming:
                print(f"  turn {event['turn']} says: ", end="")
                self.streaming = True
            print(event["text"].replace("\n", "\n    "), end="", flush=True)
            return
        if self.streaming:
            print()
            self.streaming = False
        if event["type"] == "model_start":
            print(
                f"  turn {event['turn']}: sent {len(event['messages'])} messages, waiting "
                "for the reply...",
                flush=True,
            )
        print_progress(event)


def default_output(provenance: dict, now=None) -> Path:
    """Where a new recording goes by default: ``recordings/mine/`` (not shipped with the course)."""
    stamp = timestamp(now).replace(":", "").replace("-", "")
    if "replayed_from" in provenance:
        stem = "replayed-" + (provenance["replayed_from"].get("recording") or "recording")
    else:
        stem = provenance["model"]
    stem = re.sub(r"[^A-Za-z0-9._]+", "-", stem.removesuffix(".json"))
    return MY_RECORDINGS / f"{stem}-{stamp}.json"


def print_test_file_line(recording: dict) -> None:
    digests = recording["test_file_sha256"]
    print(f"Test file unchanged: {'yes' if digests['after'] == digests['before'] else 'NO'}")


def print_progress(event: dict) -> None:
    if event["type"] == "checks":
        print(checks_line(event["when"], event["checks"]))
        return
    line = event_line(event)
    if line:
        print(line)


def checks_line(when: str, checks) -> str:
    return f"Tests {when}: {checks.summary} (exit code {checks.exit_code})"


def _live_options(command, provider: str | None = "ollama") -> None:
    """The options that choose a live model: its provider (default ``provider``), model,
    address, whole replies, and the facts about it that its server cannot report."""
    command.add_argument(
        "--provider",
        choices=tuple(PROVIDERS),
        default=provider,
        help=f"the API the server speaks (default: {provider or 'none: replay'}); openai is "
        "any OpenAI-compatible server: LM Studio, llama.cpp's server, vLLM, Ollama's /v1",
    )
    command.add_argument(
        "--model",
        default=None,
        metavar="NAME",
        help="the model (default: the provider's: "
        + ", ".join(f"{p.name} {p.default_model}" for p in PROVIDERS.values())
        + ")",
    )
    command.add_argument(
        "--host",
        default=None,
        metavar="URL",
        help=_address_help("host"),
    )
    command.add_argument(
        "--base-url",
        default=None,
        metavar="URL",
        help=_address_help("base_url") + ", e.g. http://127.0.0.1:1234/v1",
    )
    command.add_argument(
        "--no-stream",
        action="store_true",
        help="ask an OpenAI-compatible server for whole replies, for servers "
        "that cannot stream tool calls",
    )
    command.add_argument(
        "--about",
        type=_fact,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a fact about the server or model that it cannot report itself "
        "(its software and version, the model file and its sha256), saved "
        "in the recording's provenance under 'declared'; repeatable",
    )


def _replay_options(command) -> None:
    """What replaying a recording needs, in process or served: the file, strictness, pace."""
    command.add_argument(
        "recording",
        help="a recording: its path, or the name of one of the "
        "course's, e.g. repair.json (or repair)",
    )
    command.add_argument(
        "--loose", action="store_true", help="do not compare each request with the recorded one"
    )
    command.add_argument(
        "--speed",
        type=float,
        default=None,
        metavar="X",
        help="pace the chunks at X times their recorded speed (default: no pacing)",
    )


def _option(argument: str) -> str:
    """The command-line option of a model's argument (``base_url``: ``--base-url``)."""
    return "--" + argument.replace("_", "-")


def _takers(argument: str) -> str:
    """The providers whose address goes in ``argument``."""
    return " or ".join(p.name for p in PROVIDERS.values() if p.address == argument)


def _address_help(argument: str) -> str:
    """The help of an address option, from the providers that take their address in it."""
    takers = [p for p in PROVIDERS.values() if p.address == argument]
    return (
        " or ".join(p.title for p in takers)
        + " server (default: "
        + " or ".join(f"${p.address_variable}" for p in takers)
        + ", else "
        + " or ".join(p.default_address for p in takers)
        + ")"
    )


def _fact(text: str) -> tuple:
    key, sep, value = text.partition("=")
    if not (sep and re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", key) and value.strip()):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not KEY=VALUE (a key of letters, digits "
            "and _, then a value), e.g. model_sha256=a5fd3b..."
        )
    return key, value.strip()


def declared_facts(facts: list) -> dict:
    """The ``--about`` facts as a dict; ValueError for a key given twice or an API key's value
    (a recording never holds a key)."""
    declared = {}
    for key, value in facts:
        if key in declared:
            raise ValueError(f"--about {key}=... is given twice; give each fact once")
        declared[key] = value
    keys = [os.environ.get(variable) for variable in KEY_VARIABLES]
    if any(k and k in value for k in keys for value in declared.values()):
        raise ValueError("an --about value holds an API key; a recording never keeps a key")
    return declared


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("must be a port number, 0-65535 (0: a free port)")
    return value


def _positive_int(text: str) -> int:
    try:
        return positive_int(int(text), "it")
    except ValueError:
        raise argparse.ArgumentTypeError("must be a positive integer") from None


if __name__ == "__main__":
    sys.exit(main())
