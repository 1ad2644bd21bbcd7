#!/usr/bin/env python3
"""Questions phrased the way an agent asks them (stop 47): each code case of a benchmark file with
its question wrapped in one of five templates, chosen by a hash of the case's origin, so the topic
stays the reporter's and only the agent's words around it are new.

Two template sets written before anything was measured: A ("Where in this file is the code that
handles this: ...") and B ("Which function in here is relevant to: ..."). A change meant for such
questions is fitted on one set and read on the other (and on the unwrapped sets, which must not
move). A third, C, was written in stop 57 after A and B had served a fitting: read it to check one.

Usage:
    python3 bench-data/experiments/agent_phrasing.py bench-data/realistic.jsonl A /tmp/agent/realistic.A.jsonl
    cargo bench --bench prune_quality -- /tmp/agent/realistic.A.jsonl
"""

import hashlib
import json
import sys

TEMPLATES = {
    "A": [
        "Where in this file is the code that handles this: {m}",
        "Find the function responsible for the following. {m}",
        "I need to understand the logic behind this change: {m} Which part of this file implements it?",
        "Show me where this is implemented: {m}",
        "How does this file deal with the following? {m}",
    ],
    "B": [
        "Which function in here is relevant to: {m}",
        "Can you point me to the code path for {m}?",
        "Explain how this module handles the case described here: {m}",
        "Looking for the place where we need to change things for: {m}",
        "What code is involved in: {m}",
    ],
    # Written in stop 57, after A and B had been used to fit the rule that drops a request's
    # framing clause: the holdout for that rule.
    "C": [
        "Locate the code that implements: {m}",
        "Which method in this class should change to address this? {m}",
        "Help me find the relevant function. Context: {m}",
        "In this file, what handles the following issue? {m}",
        "Look for the logic related to {m}",
        "{m} Where is this handled?",
    ],
}


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in TEMPLATES:
        sys.exit(__doc__)
    source, which, out = sys.argv[1:]
    templates = TEMPLATES[which]
    with open(source) as f, open(out, "w") as w:
        for line in f:
            case = json.loads(line)
            if case["source_type"] != "code":
                continue
            pick = int(hashlib.md5(case["origin"].encode()).hexdigest(), 16) % len(templates)
            case["query"] = templates[pick].format(m=case["query"].strip())
            w.write(json.dumps(case) + "\n")


if __name__ == "__main__":
    main()
