#!/usr/bin/env python3
"""Issue-report cases in Python: the question is a real GitHub issue (title and body as the
reporter wrote it, cut to 600 characters as in build_issue_reports.py), the text one non-test
Python file the fix of that issue modifies, taken at the fix's parent, the gold its lines the fix
touches.  The cases are made by build_issue_reports2.py's cases_of_fix, with its rules, keys
and origin form, so validate_issue_reports2.py checks this set too.

Inputs:

  * issue_reports_py_inputs/issues.json: one record per issue (repo, num, url, fix, title,
    body) and the split of each repository.  The fix is a commit of the repository whose
    message says it fixes, closes or resolves #num and nothing else
    (issue_reports_py_inputs/find_fixes.py lists them per mirror, newest first; of each
    repository, the first 26 issues whose fix's subject names no typo, docs, bump, changelog,
    readme, lint, flake8, mypy, typing or type hints were looked up).  The title and body are
    the issue thread's description as the workplace search tool stores it (corpus "issues"),
    found by the issue's address, as far as the stored excerpt reaches.  Issues whose stored
    thread starts past the description, or that the search did not return, are not there.
  * the repositories' git mirrors (<mirrors>/<owner>+<name>/repo).

Repositories of the forbidden list and of every other bench set are skipped.  Split by
repository, as issues.json's "splits" says: each batch of repositories was split when it was
collected, in sha256 order of the name, alternating, starting with the side that had fewer
repositories (the first batch: pydicom, hydra, conan, sqlfluff, dvc, from dev; the second:
textual, pvlib, dask, poetry, networkx, from test), so a repository added later never moves
another one's split.  Two repositories were renamed since their mirrors were made: their
records keep the mirror's name (iterative/dvc, facebookresearch/hydra) and the address the
issue has now (treeverse/dvc, hydra-ecosystem/hydra).  Python 3 stdlib + git only; the output
is deterministic.

Usage:
    python3 bench-data/build_issue_reports_py.py --mirrors /work/.mirror \\
        --out bench-data/issue_reports_py.jsonl
    python3 bench-data/validate_issue_reports2.py bench-data/issue_reports_py.jsonl
"""
import argparse
import json
import os
import sys
from collections import Counter, defaultdict

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
import build_issue_reports as bi  # noqa: E402
import build_issue_reports2 as b2  # noqa: E402  (KEYS, used_repos, mirror_of, cases_of_fix)

ml = bi.ml
INPUT = os.path.join(BENCH, "issue_reports_py_inputs", "issues.json")
PY = {".py": "python"}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--issues", default=INPUT)
    ap.add_argument("--out", default=os.path.join(BENCH, "issue_reports_py.jsonl"))
    args = ap.parse_args()

    used = b2.used_repos(args.out, [], own_name="issue_reports_py.jsonl")
    with open(args.issues, encoding="utf-8") as f:
        inputs = json.load(f)
    recs, splits = inputs["issues"], inputs["splits"]
    missing = sorted({r["repo"] for r in recs} - set(splits))
    if missing:
        sys.exit("no split for %s in %s" % (", ".join(missing), args.issues))
    stats, per_repo, seen_q = defaultdict(Counter), defaultdict(list), set()
    for rec in sorted(recs, key=lambda r: (r["repo"].lower(), r["num"])):
        repo, st = rec["repo"], stats[rec["repo"]]
        g = b2.mirror_of(repo, used, args.mirrors, st)
        if g is None:
            continue
        parent = b2.git(g, "rev-parse", rec["fix"] + "^1")
        if parent is None:
            st["fix_missing"] += 1
            continue
        base = parent.decode().strip()
        patch = b2.git(g, "diff", "-U3", "--no-color", "--no-ext-diff", "--no-renames",
                       base, rec["fix"]).decode("utf-8", "replace")
        q = bi.issue_query(rec["title"], rec["body"])
        if q is None or q in seen_q:
            st["bad_issue"] += 1
            continue
        made = b2.cases_of_fix(g, repo, base, bi.split_patch(patch), q, PY, st, rec["url"],
                               "%s#%d" % (repo, rec["num"]), {
                                   "commit": rec["fix"],
                                   "dataset": "search:issues %s" % rec["url"],
                                   "_num": rec["num"]})
        if made:
            seen_q.add(q)
            per_repo[repo].append(made)

    split = {r: splits[r] for r in per_repo}
    group = {r: "python" for r in per_repo}
    cases = bi.pick_cases(per_repo, split, group, stats, 30)
    ml.write_cases(args.out, cases, b2.KEYS, width=8)


if __name__ == "__main__":
    main()
