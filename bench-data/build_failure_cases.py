#!/usr/bin/env python3
"""Build code cases whose question is a pasted test failure.

An agent handed a failing test pastes the failure and reads the source it suspects. For each
captured failure log (``bench-data/realistic_logs.jsonl``, ``bench-data/fresh_logs.jsonl``: the
fix's new test run against the parent's code), this makes one code case per source file the fix
modifies:

- question: the log case's question ("Why does `test_x` in tests/... fail with E?") followed by the
  failure lines as pytest or cargo printed them (the log case's gold: assertion lines, ``E`` lines,
  ``path:line: Error`` frames; ``FAILED`` summary lines and repeats dropped), cut at a line boundary
  to at most 600 characters. It comes from the failing run at the parent, never from the fix;
- text: the source file at the parent commit (test files excluded, as in build_realistic.py);
- gold: the parent's lines the fix removes or changes (for a pure insertion, the lines around it),
  by build_realistic.py's own recipe.

Usage:
    python3 bench-data/build_failure_cases.py --mirrors /work/.mirror \
        --logs bench-data/realistic_logs.jsonl bench-data/fresh_logs.jsonl \
        --out bench-data/failure_code.jsonl

Each repository must be a git dir under --mirrors as for build_realistic.py. Output is
deterministic (log order, then path order).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_realistic as br  # noqa: E402

MAX_QUERY_CHARS = 600
EXTS = {".py": "python", ".rs": "rust"}


def excerpt(log_case):
    """The failure lines a developer pastes: the log case's gold lines, in order, without the
    `FAILED ...` summary and without repeats."""
    lines = log_case["text"].split("\n")
    seen, out = set(), []
    for g in log_case["gold_lines"]:
        line = lines[g - 1].rstrip()
        key = line.strip()
        if not key or key.startswith("FAILED ") or key in seen:
            continue
        seen.add(key)
        out.append(line)
    return out


def question(log_case):
    q = log_case["query"]
    for line in excerpt(log_case):
        if len(q) + 1 + len(line) > MAX_QUERY_CHARS:
            break
        q += "\n" + line
    return q


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", required=True)
    ap.add_argument("--logs", nargs="+", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    cases, missing = [], set()
    for path in args.logs:
        for raw in open(path, encoding="utf-8"):
            log = json.loads(raw)
            repo, sha = log["repo"], log["commit"]
            gitdir = br.find_gitdir(args.mirrors, repo)
            if gitdir is None:
                missing.add(repo)
                continue
            parent = br.git(gitdir, "rev-parse", sha + "^").decode().strip()
            names = br.git(gitdir, "diff", "--name-only", "--no-renames", parent, sha)
            q = question(log)
            for p in sorted(names.decode().splitlines()):
                ext = os.path.splitext(p)[1].lower()
                if ext not in EXTS or br.is_excluded_path(p) or "/tests/" in "/" + p:
                    continue
                case, why = br.make_case(gitdir, repo, sha, parent, p, q, "code", EXTS[ext],
                                         br.CODE_MIN_LINES, br.CODE_MAX_LINES)
                if case is None:
                    print("skip %s@%s:%s (%s)" % (repo, sha[:12], p, why), file=sys.stderr)
                    continue
                case["split"] = log.get("split", "")
                cases.append(case)
    if missing:
        sys.exit("no git dir under %s for: %s (bring them with fetch)"
                 % (args.mirrors, ", ".join(sorted(missing))))
    with open(args.out, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print("%d cases from %d log files -> %s" % (len(cases), len(args.logs), args.out))


if __name__ == "__main__":
    main()
