#!/usr/bin/env python3
"""Candidate fixes of one repository for issue_reports_py: non-merge commits whose message says
they fix, close or resolve exactly one issue (`Fixes #123`, `closes
https://github.com/<owner>/<name>/issues/123`, under the mirror's name or an --alias, the name
a renamed repository goes by now), that modify 1 to 3 non-test Python files and add, delete or
rename none.  Reverts are skipped.  Newest first, one JSON object per line on stdout (repo,
issue, sha, parent, files, subject); their issues' texts were then looked up by address with the
workplace search tool, and each one found went into issues.json with its fix.

Usage: python3 find_fixes.py OWNER/NAME [--alias OWNER/NAME ...] [--mirrors DIR] > cands.jsonl
"""
import argparse
import json
import re
import subprocess
import sys

TEST_PATH = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_|_test\.py$|conftest|(^|/)docs?/")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo")
    ap.add_argument("--alias", action="append", default=[])
    ap.add_argument("--mirrors", default="/work/.mirror")
    args = ap.parse_args()
    gitdir = "%s/%s/repo" % (args.mirrors, args.repo.replace("/", "+"))

    def git(*a):
        return subprocess.run(["git", "--git-dir", gitdir, *a], capture_output=True, text=True,
                              errors="replace").stdout

    names = "|".join(re.escape(n) for n in [args.repo] + args.alias)
    pattern = re.compile(r"\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?)\b\s*:?\s*"
                         r"(?:#|https://github\.com/(?:%s)/issues/)(\d+)\b" % names, re.I)
    log = git("log", "--no-merges", "--format=%H%x00%P%x00%B%x01", "-n", "20000")
    found = 0
    for rec in log.split("\x01"):
        rec = rec.strip("\n")
        if not rec:
            continue
        sha, parents, msg = rec.split("\x00", 2)
        if msg.lstrip().lower().startswith("revert"):
            continue
        nums = sorted(set(pattern.findall(msg)))
        if len(nums) != 1 or len(parents.split()) != 1:
            continue
        parent = parents.split()[0]
        status = [ln.split("\t") for ln in git("diff", "--name-status", parent, sha).split("\n")
                  if ln]
        src = [f for f in status if f[-1].endswith(".py") and not TEST_PATH.search(f[-1])]
        if not src or any(f[0] != "M" for f in src) or len(src) > 3:
            continue
        found += 1
        print(json.dumps({"repo": args.repo, "issue": int(nums[0]), "sha": sha,
                          "parent": parent, "files": [f[-1] for f in src],
                          "subject": msg.split("\n")[0][:120]}))
    print("%s: %d candidates" % (args.repo, found), file=sys.stderr)


if __name__ == "__main__":
    main()
