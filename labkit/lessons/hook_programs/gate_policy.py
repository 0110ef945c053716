"""Lesson 07's permission gate as a ``before_tool`` hook: ``gate_policy POLICY_JSON``.

The policy comes as JSON in its argument, as a recording keeps one (``{"rules": ["allow
python -m pytest *", "deny rm *"], "tools": {"read_file": "allow"}, "default": "ask"}``).
The verdict is the gate's own (``gate.check``): allow passes silently; deny says no
(exit 2) with the policy's reason; ask says no too, since a hook has no one to ask (the
built-in gate can ask a person: ``Gate(policy, decide=...)``).
"""

import json
import sys

from labkit.harness.gate import check
from labkit.recording.harness_setup import policy_from


def main(policy_json: str) -> None:
    policy = policy_from(json.loads(policy_json))
    event = json.load(sys.stdin)
    verdict = check(policy, event["tool"], event["arguments"])
    if verdict.action == "deny":
        print(f"denied by the policy: {verdict.reason}", file=sys.stderr)
        sys.exit(2)
    if verdict.action == "ask":
        print(f"the policy says ask ({verdict.reason}), and a hook has no one to ask",
              file=sys.stderr)  # fmt: skip
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1])
