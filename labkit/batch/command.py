"""``python -m labkit batch``: a batch over a task set from the command line (``runner.py``),
its progress as a bar, its rows as a table and its summary."""

from __future__ import annotations

import sys

from ..harness.loop import MAX_TURNS
from ..harness.sandbox import SandboxUnavailable
from ..harness.taskset import TASKS_DIR, TaskSetError
from ..models.errors import MODEL_ERRORS
from .results import ATTEMPT_STOPS, summary, summary_lines
from .runner import ATTEMPT_TIMEOUT, TASK_RECORDINGS, run_batch

#: The batch's own options: (flags, keywords of add_argument).
OPTIONS = [
    (("--out",), {"default": "batch", "metavar": "DIR",
                  "help": "where the results and the attempts go (default: ./batch)"}),
    (("--only",), {"action": "append", "default": None, "metavar": "TASK",
                   "help": "run only this task (repeatable)"}),
    (("--redo",), {"action": "store_true",
                   "help": "start the chosen tasks afresh, even those already finished"}),
    (("--workers",), {"type": int, "default": None, "metavar": "N",
                      "help": "attempts at a time on this machine (default: one per core)"}),
    (("--scheduler",), {"default": None, "metavar": "ADDRESS",
                        "help": "run on the Dask cluster of this scheduler (tcp://host:port)"}),
    (("--max-turns",), {"type": int, "default": MAX_TURNS, "metavar": "N",
                        "help": f"model requests per attempt (default: {MAX_TURNS})"}),
    (("--timeout",), {"type": float, "default": ATTEMPT_TIMEOUT, "metavar": "SECONDS",
                      "help": f"time per attempt (default: {ATTEMPT_TIMEOUT:g})"}),
    (("--no-sandbox",), {"action": "store_true",
                         "help": "run the tools without lesson 12's sandbox"}),
    (("--recordings",), {"default": str(TASK_RECORDINGS), "metavar": "DIR",
                         "help": "replay TASK.json from here (default: the course's scripted "
                         "attempts); not read with --provider"}),
]  # fmt: skip


def add_arguments(command, live_options) -> None:
    command.add_argument(
        "taskset", nargs="?", default=str(TASKS_DIR),
        help="a folder of tasks, each a folder with task.json and repo/ (default: the course's)",
    )  # fmt: skip
    for flags, options in OPTIONS:
        command.add_argument(*flags, **options)
    live_options(command, provider=None)


def batch_command(args, declared_facts, chosen_model) -> int:
    """Run the batch the options describe; print the rows and the summary. Exit 0 when every
    attempt reached a stop of the loop's, 1 when one failed, 2 when the batch cannot start."""
    model = {"replay": args.recordings}
    try:
        if args.provider:
            live = chosen_model(args)
            live.preflight()  # once, before any attempt: a server that cannot serve stops here
            model = {
                "provider": args.provider,
                "model": args.model,
                "host": args.host,
                "base_url": args.base_url,
                "stream": not args.no_stream,
                "declared": declared_facts(args.about),
            }
        batch = run_batch(
            args.out,
            taskset=args.taskset,
            model=model,
            only=args.only,
            redo=args.redo,
            workers=args.workers,
            scheduler=args.scheduler,
            max_turns=args.max_turns,
            sandbox=None if args.no_sandbox else "auto",
            timeout=args.timeout,
            progress=sys.stderr.isatty(),
        )
    except (ValueError, TaskSetError, SandboxUnavailable, RuntimeError, *MODEL_ERRORS) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"sandbox: {batch.sandbox}")
    if batch.skipped:
        print(f"finished before, skipped: {', '.join(batch.skipped)} (--redo starts them again)")
    for line in table_lines(batch.rows):
        print(line)
    print("\n".join(summary_lines(summary(batch.rows))))
    print(f"results: {args.out}/results.jsonl")
    return 1 if any(row["stop"] in ATTEMPT_STOPS for row in batch.rows) else 0


def table_lines(rows: list[dict]) -> list[str]:
    """The rows as a table, one line per attempt."""
    lines = [f"{'task':16} {'stop':22} {'tests after':22} {'turns':>5} {'calls':>5} "
             f"{'tokens':>7} {'seconds':>7}"]  # fmt: skip
    for row in rows:
        after = row["tests_after"]
        tests = f"{after['passed']} passed, {after['failed']} failed" if after else "-"
        lines.append(
            f"{row['task']:16} {row['stop']:22} {tests:22} {row['turns'] or '-':>5} "
            f"{row['tool_calls'] if row['tool_calls'] is not None else '-':>5} "
            f"{row['prompt_tokens'] or '-':>7} "
            f"{'-' if row['seconds'] is None else format(row['seconds'], '.1f'):>7}"
        )
    return lines
