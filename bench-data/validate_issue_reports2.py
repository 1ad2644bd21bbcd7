#!/usr/bin/env python3
"""Independent checks of an issue-report set built like issue_reports2.jsonl (that file by
default; issue_reports_py.jsonl too): text == base file, gold lines in
range, query <= 600 chars with a non-empty body, no repository of the forbidden
list or of another bench-data set (read here from the sets' own files, not from
the builder), no test path, no duplicate case.

Usage: python3 bench-data/validate_issue_reports2.py [--mirrors DIR] [FILE]"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import build_multilang as ml  # noqa: E402
import build_issue_reports2 as b2  # noqa: E402  (only its KEYS, the case format)

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--mirrors", default="/work/.mirror")
ap.add_argument("file", nargs="?", default=os.path.join(HERE, "issue_reports2.jsonl"))
args = ap.parse_args()
path = args.file
# The checked set's own file, wherever the copy checked lies (a rebuild in /tmp checks against
# every other set, and not against the committed copy of itself).
own = {os.path.abspath(path), os.path.join(HERE, os.path.basename(path))}
used = set()
for other in glob.glob(os.path.join(HERE, "*.jsonl")):
    if os.path.abspath(other) in own:
        continue
    for ln in open(other, encoding="utf-8"):
        if ln.strip():
            d = json.loads(ln)
            if d.get("repo"):
                used.add(d["repo"].lower())
            m = re.match(r"^([\w.-]+/[\w.-]+)@", d.get("origin") or "")
            if m:
                used.add(m.group(1).lower())
# ...and the repositories the other sets only list (`*_repos.txt`, `langs*_{dev,test}.txt`: the
# first word of each line that is not a comment), some of them reserved for sets not built yet.
for lst in glob.glob(os.path.join(HERE, "*.txt")):
    name = os.path.basename(lst)
    if name.endswith("_repos.txt") or re.match(r"langs\d+_(dev|test)\.txt$", name):
        for ln in open(lst, encoding="utf-8"):
            words = ln.split()
            if words and not words[0].startswith("#") and "/" in words[0]:
                used.add(words[0].lower())


def git(gitdir, *a):
    return subprocess.run(["git", "--git-dir=" + gitdir, *a], capture_output=True).stdout


def fix_gold(gitdir, base, fix, path, n):
    """The base-file lines the fix touches, read from its own -U0 diff: removed lines, or for a
    pure insertion the line before it and the one after; None when the fix's first parent is not
    the base (the diff would then be against another text)."""
    if git(gitdir, "rev-parse", fix + "^1").decode().strip() != base:
        return None
    gold = set()
    diff = git(gitdir, "diff", "-U0", "--no-color", "--no-ext-diff", "--no-renames", base, fix,
               "--", path).decode("utf-8", "replace")
    for h in re.finditer(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", diff, re.M):
        start, count = int(h.group(1)), int(h.group(2) or 1)
        lines = range(start, start + count) if count else (start, start + 1)
        gold.update(x for x in lines if 1 <= x <= n)
    return sorted(gold)


bad, seen, checked = Counter(), set(), 0
rows = [json.loads(l) for l in open(path, encoding="utf-8")]
for d in rows:
    m = re.match(r"^(\S+?)@([0-9a-f]{12}):(\S+) \(issue ", d["origin"])
    repo, p = m.group(1), m.group(3)
    assert repo == d["repo"] and d["base_commit"].startswith(m.group(2))
    g = os.path.join(args.mirrors, repo.replace("/", "+"), "repo")
    blob = subprocess.run(["git", "--git-dir=" + g, "show", "%s:%s" % (d["base_commit"], p)],
                          capture_output=True).stdout.decode("utf-8")
    if blob != d["text"]: bad["text_mismatch"] += 1
    n = len(d["text"].split("\n")) - (1 if d["text"].endswith("\n") else 0)
    if not d["gold_lines"] or min(d["gold_lines"]) < 1 or max(d["gold_lines"]) > n: bad["gold_range"] += 1
    if d["gold_lines"] != sorted(set(d["gold_lines"])): bad["gold_order"] += 1
    q = d["query"]
    title, sep, body = q.partition("\n\n")
    if len(q) > 600 or not sep or not body.strip() or not title.strip(): bad["query"] += 1
    if ml.is_forbidden(repo) or repo.lower() in used: bad["excluded_repo"] += 1
    if ml.br.is_excluded_path(p): bad["test_path"] += 1
    k = (q, d["origin"])
    if k in seen: bad["dup"] += 1
    seen.add(k)
    if set(d) != set(b2.KEYS): bad["keys"] += 1
    # The gold, against the fix's own diff when the fix is a commit on the base.
    if d["commit"] != d["base_commit"]:
        expected = fix_gold(g, d["base_commit"], d["commit"], p, n)
        if expected is not None:
            checked += 1
            if expected != d["gold_lines"]: bad["gold_not_the_fix"] += 1
    # An origin naming the issue as `owner/name#N` names the issue its address ends with.
    num = re.search(r"; [\w.-]+/[\w.-]+#(\d+)\)$", d["origin"])
    if num and not re.search(r"/(issues|pull)/%s$" % num.group(1), d["issue"]): bad["issue_number"] += 1
print(len(rows), "cases (gold checked against the fix's diff: %d); problems:" % checked,
      dict(bad) or "none")
