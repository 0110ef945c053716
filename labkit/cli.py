"""``python -m labkit``: replay a recording, serve one over Ollama's API, or record a live attempt."""

from __future__ import annotations

import argparse
import re
import signal
import sys
import threading
from pathlib import Path

from .grading.edition import add_arguments as lessons_arguments, write_lessons
from .harness.loop import positive_int
from .models.ollama_model import OllamaError, OllamaModel
from .models.replay import ReplayModel
from .models.server import serve_recording
from .recording.attempt import run_attempt
from .lessons.trace import event_line
from .recording.setup import replay_harness
from .recording.format import (RecordingError, compact_event, load_recording, save_recording,
                               timestamp)
from .settings import DEFAULT_HOST, DEFAULT_MAX_TURNS, DEFAULT_MODEL, MY_RECORDINGS



def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m labkit",
        description="Tools of the 'Build a coding-agent loop' course.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    replay = commands.add_parser(
        "replay", help="replay a recording through the loop on a fresh copy of the sample",
        description="Feed a recording's chunks to the agent loop, with the real tools and "
                    "tests on a fresh copy of sample_repo/, and print a trace. Exits 0 when "
                    "the replay matched the recording.")
    _replay_options(replay)
    replay.add_argument("--max-turns", type=_positive_int, default=None, metavar="N",
                        help="model-request budget (default: the recording's own)")
    serve = commands.add_parser(
        "serve", help="serve a recording over Ollama's HTTP API on 127.0.0.1",
        description="Answer Ollama chat requests from a recording, one recorded turn per "
                    "request, so the real ollama SDK (OllamaModel, or any Ollama client) runs "
                    "offline. It says it is a replay server, never a model. Ctrl-C stops it.")
    _replay_options(serve)
    serve.add_argument("--port", type=_port, default=0, metavar="N",
                       help="port to listen on (default: a free one, printed at start)")
    record = commands.add_parser(
        "record", help="run the loop live through Ollama and save the attempt as a recording",
        description="Check a fresh copy of sample_repo/, run the loop live through Ollama, "
                    "check again, and save the attempt as a recording that says which model, "
                    "digest and server wrote it. A run that ends in a model error, or that you "
                    "interrupt, writes nothing.")
    record.add_argument("--model", default=DEFAULT_MODEL, metavar="TAG",
                        help=f"Ollama model tag (default: {DEFAULT_MODEL})")
    record.add_argument("--host", default=None, metavar="URL",
                        help=f"Ollama server (default: $OLLAMA_HOST, else {DEFAULT_HOST})")
    record.add_argument("--max-turns", type=_positive_int, default=DEFAULT_MAX_TURNS, metavar="N",
                        help=f"model-request budget (default: {DEFAULT_MAX_TURNS})")
    record.add_argument("--output", default=None, metavar="PATH",
                        help="where to save it (default: recordings/mine/TAG-TIME.json); "
                             "an existing file is never overwritten")
    lessons_arguments(commands.add_parser(
        "lessons", help="write the lessons into a folder of yours, never overwriting one"))
    args = parser.parse_args(argv)
    commands = {"replay": replay_command, "serve": serve_command, "record": record_command,
                "lessons": write_lessons}
    return commands[args.command](args)


def replay_command(args) -> int:
    try:
        recording = load_recording(args.recording)
    except RecordingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    max_turns = args.max_turns or recording["max_turns"]
    source = recording["provenance"]["source"]
    print(f"Replaying {args.recording} ({source}) on a fresh copy of sample_repo, "
          f"max_turns={max_turns}")
    model = ReplayModel(recording, strict=not args.loose, speed=args.speed)
    replayed, events = run_attempt(model, provenance=recording["provenance"],
                                   task=recording["task"], max_turns=max_turns,
                                   on_event=print_progress, **replay_harness(recording))
    print_test_file_line(replayed)
    problem = replay_difference(recording, replayed, events, compare_outcome=max_turns == recording["max_turns"])
    print("Replay matches the recording." if problem is None else f"Replay differs: {problem}")
    return 0 if problem is None else 1


def replay_difference(recording: dict, replayed: dict, events: list, *, compare_outcome: bool):
    """Say how a replay differs from its recording, or return None when it matched."""
    stop = events[-1]
    if stop["reason"] == "model_error" and "does not match the recording" in stop.get("error", ""):
        return stop["error"]
    if not compare_outcome:
        return None
    if [compact_event(e) for e in events] != recording["events"]:
        first = next(i for i, (a, b) in enumerate(zip(replayed["events"] + [None],
                                                      recording["events"] + [None])) if a != b)
        return f"event {first} differs from the recorded one"
    if replayed["checks"]["after"] != recording["checks"]["after"]:
        return f"final tests {replayed['checks']['after']} differ from {recording['checks']['after']}"
    return None


def serve_command(args) -> int:
    try:
        server = serve_recording(args.recording, port=args.port, strict=not args.loose,
                                 speed=args.speed, log=lambda line: print(line, flush=True))
    except RecordingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot listen on 127.0.0.1 port {args.port} ({exc.strerror or exc}); "
              "choose another --port", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop as cleanly as on Ctrl-C
    with server:
        identity = server.identity
        print(f"Serving {args.recording} ({identity['provenance']['source']}, "
              f"{identity['turns']} turns) at {server.url}: a replay, not a live model.")
        print(f"Use it as an Ollama server: OLLAMA_HOST={server.url} python -m labkit record")
        print("Press Ctrl-C to stop.", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print("Stopped.")
    return 0


def record_command(args) -> int:
    output = Path(args.output) if args.output else None
    if output and output.exists():
        print(f"error: {output} exists; recordings are never overwritten: choose another "
              "--output", file=sys.stderr)
        return 2
    try:
        model = OllamaModel(args.model, args.host)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with model:
        try:
            provenance = model.provenance()
        except OllamaError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        output = output or default_output(provenance)
        replayed = provenance.get("replayed_from")
        if replayed:
            print(f"Note: {model.host} is a labkit replay server serving {replayed['recording']} "
                  f"({provenance['source']}); the recording will say it was replayed, not "
                  f"written by {model.model}.")
        else:
            print(f"Model {model.model} (digest {provenance['digest'][:12]}) on Ollama "
                  f"{provenance['server_version']} at {model.host}")
        print(f"Recording an attempt on a fresh copy of sample_repo, max_turns={args.max_turns}")
        interrupted = []

        def on_interrupt(signum, frame):  # remembered: the SDK may turn the interrupt into
            interrupted.append(signum)    # an error that ends the run as a model_error
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGINT, on_interrupt)
        try:
            recording, events = run_attempt(model, provenance=provenance,
                                            max_turns=args.max_turns, on_event=LiveProgress())
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
        print(f"No recording written: the model call failed, so this is not a whole attempt. "
              f"{stop['error']}", file=sys.stderr)
        return 1
    save_recording(recording, output)
    chunks = sum(len(turn["chunks"]) for turn in recording["turns"])
    print(f"Wrote {output} ({len(recording['turns'])} turns, {chunks} chunks). "
          f"Replay it: python -m labkit replay {output}")
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
            print(f"  turn {event['turn']}: sent {len(event['messages'])} messages, waiting "
                  "for the reply...", flush=True)
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


def _replay_options(command) -> None:
    """What replaying a recording needs, in process or served: the file, strictness, pace."""
    command.add_argument("recording", help="a recording: its path, or the name of one of the "
                                           "course's, e.g. repair.json")
    command.add_argument("--loose", action="store_true",
                         help="do not compare each request with the recorded one")
    command.add_argument("--speed", type=float, default=None, metavar="X",
                         help="pace the chunks at X times their recorded speed "
                              "(default: no pacing)")


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
