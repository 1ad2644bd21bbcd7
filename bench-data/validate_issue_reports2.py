#!/usr/bin/env python3
"""Independent checks of issue_reports2.jsonl: text == base file, gold lines in
range, query <= 600 chars with a non-empty body, no excluded repository, no
duplicate case.  Usage: python3 validate_issue_reports2.py [FILE]"""
import json, re, subprocess, sys, glob
from collections import Counter
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import build_multilang as ml  # noqa
import build_issue_reports2 as b2  # noqa

path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "issue_reports2.jsonl")
used = b2.used_repos(path, [])
bad, seen = Counter(), set()
rows = [json.loads(l) for l in open(path, encoding="utf-8")]
for d in rows:
    m = re.match(r"^(\S+?)@([0-9a-f]{12}):(\S+) \(issue ", d["origin"])
    repo, p = m.group(1), m.group(3)
    assert repo == d["repo"] and d["base_commit"].startswith(m.group(2))
    g = "/work/.mirror/%s/repo" % repo.replace("/", "+")
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
print(len(rows), "cases; problems:", dict(bad) or "none")
