#!/usr/bin/env python3
"""Sanity check of multilang.jsonl and issue_reports.jsonl: every line parses, has the
bench's fields, gold lines are 1-based lines inside the text, the query is <= 600
chars, no forbidden / already-used repository appears, and no repository is in
both splits.  Prints counts per language x split x style.  Exit status 1 on error."""
import json
import os
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import build_multilang as ml  # noqa: E402

FILES = sys.argv[1:] or [os.path.join(HERE, f) for f in ("multilang.jsonl", "issue_reports.jsonl")]
errors = 0
used = ml.other_repo_lists()
split_of = defaultdict(set)
for path in FILES:
    cnt = Counter()
    for i, ln in enumerate(open(path, encoding="utf-8"), 1):
        def err(msg):
            global errors
            errors += 1
            print("%s:%d: %s" % (os.path.basename(path), i, msg))
        try:
            c = json.loads(ln)
        except ValueError as e:
            err("does not parse: %s" % e)
            continue
        for k in ("query", "text", "source_type", "gold_lines", "origin", "language", "split", "repo", "style"):
            if k not in c:
                err("missing field " + k)
        n = c["text"].count("\n") + (0 if c["text"].endswith("\n") else 1)
        g = c["gold_lines"]
        if not g or any(not isinstance(x, int) or x < 1 or x > n for x in g) or g != sorted(set(g)):
            err("gold lines out of range / unsorted (n=%d)" % n)
        if len(c["query"]) > 600 or not c["query"].strip():
            err("query length %d" % len(c["query"]))
        if c["split"] not in ("dev", "test"):
            err("split " + c["split"])
        if ml.is_forbidden(c["repo"]) or any(ml.is_forbidden(w) for w in c["origin"].split("@")[:1]):
            err("forbidden repository " + c["repo"])
        if c["repo"].lower() in used:
            err("repository of realistic/fresh sets " + c["repo"])
        split_of[c["repo"]].add(c["split"])
        cnt[(c["language"], c["split"], c["style"])] += 1
    print("%s: %d cases, %d bytes" % (os.path.basename(path), sum(cnt.values()), os.path.getsize(path)))
    for k in sorted(cnt):
        print("  %-11s %-5s %-6s %d" % (k + (cnt[k],)))
for r, s in sorted(split_of.items()):
    if len(s) > 1:
        errors += 1
        print("repository in both splits: %s" % r)
print("check: %s (%d errors)" % ("OK" if errors == 0 else "FAILED", errors))
sys.exit(1 if errors else 0)
