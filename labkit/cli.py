"""``python -m labkit``: replay a recording on a fresh copy and print what happened."""

from __future__ import annotations

import argparse
import sys

from .attempt import run_attempt
from .recording import RecordingError, compact_event, load_recording
from .replay import ReplayModel
from .trace import checks_line, event_line


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
    replay.add_argument("recording", help="path of a recording, e.g. recordings/repair.json")
    replay.add_argument("--max-turns", type=_positive_int, default=None, metavar="N",
                        help="model-request budget (default: the recording's own)")
    replay.add_argument("--loose", action="store_true",
                        help="do not compare each request with the recorded one")
    replay.add_argument("--speed", type=float, default=None, metavar="X",
                        help="pace the chunks at X times their recorded speed (default: no pacing)")
    args = parser.parse_args(argv)
    return replay_command(args)


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
                                   on_event=print_progress)
    unchanged = replayed["test_file_sha256"]["after"] == replayed["test_file_sha256"]["before"]
    print(f"Test file unchanged: {'yes' if unchanged else 'NO'}")
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


def print_progress(event: dict) -> None:
    if event["type"] == "checks":
        print(checks_line(event["when"], event["checks"]))
        return
    line = event_line(event)
    if line:
        print(line)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return value


if __name__ == "__main__":
    sys.exit(main())
