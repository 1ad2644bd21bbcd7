#!/usr/bin/env python3
"""Config-file cases: the question is the message of a commit that changes one large configuration
file (a Maven `pom.xml`, a Gradle version catalog, a YAML rule set, an Android manifest, a
`package.json`), the text is that file at the commit's parent, and the gold is the parent's lines
the commit removes or changes (for a pure insertion, the lines around it): build_realistic.py's
recipe on files it never takes. Agents read such files to change one dependency or one setting;
most are one long run of lines with no blank line between their parts.

Files and splits: bench-data/config_files.txt (``owner/name path split``). Per file, at most
CAP_PER_FILE commits spread over its history: not merges, not releases (``[maven-release-plugin]``,
``prepare release``), changing at most MAX_CHANGED lines of it and nothing else in more than
MAX_OTHER_FILES other files.

Usage:
    python3 bench-data/build_config.py --mirrors /work/.mirror --out bench-data/config.jsonl
"""

import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import build_realistic as br  # noqa: E402
import build_multilang as bm  # noqa: E402  (the excluded list, the case writer)

CAP_PER_FILE = 14
# Candidates taken from the newest commits before spreading the pick over them.
SCAN_CAP = 120
MAX_CHANGED = 20
MAX_OTHER_FILES = 3
MIN_LINES, MAX_LINES = 120, 6000
SKIP_SUBJECT = re.compile(r"^(merge\b|revert\b)|maven-release-plugin|prepare (for )?(next )?release|"
                          r"^\[?release\]?\b|^v?\d+\.\d+(\.\d+)?$", re.I)
LANG = {".xml": "xml", ".yml": "yaml", ".yaml": "yaml", ".toml": "toml", ".json": "json"}


def commits(gitdir, path):
    out = br.git(gitdir, "log", "--no-merges", "--format=%H%x00%P%x00%B%x01", "--", path)
    for rec in out.decode("utf-8", "replace").split("\x01"):
        rec = rec.strip("\n")
        if not rec:
            continue
        sha, parents, msg = rec.split("\x00", 2)
        parents = parents.split()
        if len(parents) == 1:
            yield sha, parents[0], msg


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--files", default=os.path.join(HERE, "config_files.txt"))
    ap.add_argument("--out", default=os.path.join(HERE, "config.jsonl"))
    args = ap.parse_args()
    cases = []
    for ln in open(args.files):
        ln = ln.split("#", 1)[0].strip()
        if not ln:
            continue
        repo, path, split = ln.split()
        if bm.is_forbidden(repo):
            sys.exit("repository evaluated elsewhere: %s" % repo)
        gitdir = br.find_gitdir(args.mirrors, repo)
        if gitdir is None:
            sys.exit("missing mirror for %s under %s (fetch it first)" % (repo, args.mirrors))
        lang = LANG[os.path.splitext(path)[1]]
        picked = []
        for sha, parent, msg in commits(gitdir, path):
            if len(picked) >= SCAN_CAP:
                break
            subject = msg.strip().splitlines()[0] if msg.strip() else ""
            if not subject or SKIP_SUBJECT.search(subject):
                continue
            files = br.git(gitdir, "diff", "--name-only", parent, sha, check=False)
            if files is None or len(files.decode().split()) > 1 + MAX_OTHER_FILES:
                continue
            ns = br.numstat(gitdir, parent, sha, [path])
            if not ns or not 1 <= sum(ns.values()) <= MAX_CHANGED:
                continue
            q = br.clean_message(msg)
            if q is None or any(q == c["query"] for c in picked):
                continue
            case, _why = br.make_case(gitdir, repo, sha, parent, path, q, "code", lang,
                                      MIN_LINES, MAX_LINES)
            if case:
                case["split"] = split
                case["style"] = "commit"
                picked.append(case)
        chosen = br.spread_pick(picked, CAP_PER_FILE)
        print("%-28s %-48s %-5s %3d/%4d" % (repo, path, split, len(chosen), len(picked)),
              file=sys.stderr)
        cases.extend(chosen)
    bm.write_cases(args.out, cases, ["query", "text", "source_type", "gold_lines", "origin",
                                     "language", "repo", "commit", "split", "style"], width=5)


if __name__ == "__main__":
    main()
