"""Batches of attempts over a task set (lesson 14): the runner on the course's engine
(``runner.py``), one attempt in a process of its own (``job.py``, ``attempt_process.py``),
and the results file with its summary (``results.py``)."""

from .results import ATTEMPT_STOPS, read_results, resolved, summary, summary_lines
from .runner import TASK_RECORDINGS, Batch, run_batch

__all__ = [
    "ATTEMPT_STOPS",
    "TASK_RECORDINGS",
    "Batch",
    "read_results",
    "resolved",
    "run_batch",
    "summary",
    "summary_lines",
]
