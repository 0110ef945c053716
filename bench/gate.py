"""How long the gate takes to judge hostile megabyte commands, and order_problems 8,000
results (issue 29: two 1 MB words took over 20 s, 8,000 results 4-12 s, both quadratic).

Prints each shape's CPU time at 125 kB and 1 MB and their ratio (linear work: about 8).

Run: python bench/gate.py
"""

import time

from labkit import allow, check_command, deny, order_problems
from labkit.harness.gate import Policy

POLICY = Policy([allow("echo *"), allow("python -m pytest *"), deny("rm *")])
SHAPES = {
    "two words": lambda n: "echo " + "a" * (n // 2) + " " + "b" * (n // 2),
    "a double-quoted word": lambda n: 'echo "' + "a" * n + '"',
    "escapes": lambda n: "echo " + "\\a" * (n // 2),
    "variables": lambda n: "echo " + "$x" * (n // 2),
    "words": lambda n: "echo " + "a " * (n // 2),
    "arithmetic": lambda n: "echo $((" + "1+" * (n // 2) + "1))",
}


def best(work, runs=5):
    """The least CPU time of ``runs`` calls: this process's own work, not the shared machine's."""
    times = []
    for _ in range(runs):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times)


def one_turn(results: int) -> list:
    calls = [{"id": f"c{i}", "function": {"name": "t", "arguments": {}}} for i in range(results)]
    return [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "", "tool_calls": calls},
        *({"role": "tool", "tool_call_id": f"c{i}", "content": "{}"} for i in range(results)),
    ]


def main() -> None:
    print(f"{'shape':>22} {'125 kB (ms)':>12} {'1 MB (ms)':>10} {'ratio':>6}")
    for name, shape in SHAPES.items():
        small, large = shape(125_000), shape(1_000_000)
        t_small = best(lambda small=small: check_command(POLICY, small))
        t_large = best(lambda large=large: check_command(POLICY, large))
        print(f"{name:>22} {t_small * 1e3:>12.1f} {t_large * 1e3:>10.1f} {t_large / t_small:>6.1f}")
    turns = {n: one_turn(n) for n in (1000, 8000)}
    t_small, t_large = (best(lambda n=n: order_problems(turns[n])) for n in (1000, 8000))
    print(f"order_problems: 1,000 results {t_small * 1e3:.1f} ms, 8,000 results "
          f"{t_large * 1e3:.1f} ms (ratio {t_large / t_small:.1f})")  # fmt: skip


if __name__ == "__main__":
    main()
