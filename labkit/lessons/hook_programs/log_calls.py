"""A hook for any point that only logs: it appends one JSON line per event to the file
named by its argument (the point, the tool, the time it ran), and changes nothing. A
``before_tool`` line and the ``after_tool`` line that follows it say how long a call took.
"""

import json
import sys
import time


def main(log: str) -> None:
    event = json.load(sys.stdin)
    line = {"at": time.time(), "point": event["point"], "turn": event.get("turn")}
    if "tool" in event:
        line["tool"] = event["tool"]
    with open(log, "a", encoding="utf-8") as file:
        file.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
