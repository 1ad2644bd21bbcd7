#!/usr/bin/env python3
"""Capture REAL failing test logs for the realistic benchmark (source_type "logs").

For bug-fix commits of pure-Python repositories that add regression tests, this
script checks out the PARENT commit's source, overlays the test file(s) from the
fix commit, runs pytest on the changed test file and records the real output.
A case is kept only if the new tests fail at the parent and pass at the fix
commit (same interpreter, same packages), so the failure is the real bug.

Gold = the failure lines of the log: pytest "E   ..." lines, the failing
statement line ("> ..."), the "path:NN: ExcType" location lines and the
"FAILED ..." summary lines.  Query = what a developer would ask about the
failure: which test fails and the exception type seen in the output.

This runs third-party test code, so it is NOT part of build_realistic.py; it is
run once and its output (bench-data/realistic_logs.jsonl) is committed; capture_rust_logs.py then
appends its `cargo test` cases to the same file (run it again after this script).
build_realistic.py appends that file's cases verbatim (so realistic.jsonl stays
deterministic).  Requires a Python env with pytest (+ hypothesis for attrs,
pygments + markdown-it-py for rich):

    python3 -m venv /tmp/logsenv && /tmp/logsenv/bin/pip install pytest hypothesis pygments markdown-it-py
    python3 bench-data/capture_realistic_logs.py --python /tmp/logsenv/bin/python \
        --mirrors /work/.mirror --out bench-data/realistic_logs.jsonl
"""

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("br", os.path.join(HERE, "build_realistic.py"))
br = importlib.util.module_from_spec(spec)
spec.loader.exec_module(br)

REPOS = ["pallets/click", "python-attrs/attrs", "Textualize/rich"]
PER_REPO = 8
MAX_TRIES = 40
FAKE_ROOT = "/home/dev/src"


def export(gitdir, rev, dest):
    os.makedirs(dest, exist_ok=True)
    a = subprocess.run(["git", "--git-dir=" + gitdir, "archive", rev],
                       stdout=subprocess.PIPE, check=True).stdout
    subprocess.run(["tar", "-x", "-C", dest], input=a, check=True)


def run_pytest(python, root, args, timeout=300):
    env = dict(os.environ)
    src = os.path.join(root, "src")
    env["PYTHONPATH"] = src if os.path.isdir(src) else root
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["COLUMNS"] = "100"
    env["NO_COLOR"] = "1"
    env.pop("FORCE_COLOR", None)
    cmd = [python, "-m", "pytest", "-p", "no:cacheprovider", "--color=no",
           "-o", "addopts=", "-rfE", "-v"] + args
    return run_captured(cmd, root, env, timeout)


def run_captured(cmd, cwd, env, timeout):
    """Runs `cmd` with stdout and stderr merged, as a CI log shows them: (exit code, text), or
    (None, "") past `timeout` seconds."""
    try:
        r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, ""
    return r.returncode, r.stdout.decode("utf-8", errors="replace")


def diff_of(gitdir, parent, sha, path):
    """The fix's diff of `path`, without context lines."""
    return subprocess.run(["git", "--git-dir=" + gitdir, "diff", "-U0", parent, sha, "--", path],
                          stdout=subprocess.PIPE).stdout.decode("utf-8", "replace")


def added_tests(gitdir, parent, sha, path):
    d = diff_of(gitdir, parent, sha, path)
    return sorted(set(re.findall(r"^\+\s*(?:async\s+)?def\s+(test_\w+)", d, re.M)))


def gold_for_log(text):
    gold = []
    lines = text.split("\n")
    for i, ln in enumerate(lines, 1):
        if (ln.startswith("E   ") or ln.startswith(">   ") or ln.startswith("> ")
                or re.match(r"^[\w./-]+\.py:\d+: \w+", ln)
                or ln.startswith("FAILED ") or ln.startswith("ERROR ")):
            gold.append(i)
    return gold


def repo_heads(path=os.path.join(HERE, "realistic_repos.txt")):
    """The pinned head of each repository listed in `path` and its dev/test split."""
    shas = dict(br.read_repo_list(path))
    return shas, br.assign_splits(list(shas))


def fix_commits(gitdir, head):
    """Yield (sha, parent, files) of the commits whose cleaned subject reads as a bug fix (the
    benchmark builder's rules), newest first."""
    for sha, parent, msg, files in br.iter_commits(gitdir, head):
        subject = br.clean_subject(msg)
        if not br.FIX_RE.search(subject) or br.NOISE_SUBJECT_RE.search(subject) \
                or br.CODE_NOISE_SUBJECT_RE.search(subject):
            continue
        yield sha, parent, files


def question(tests, test_path, tail):
    """What a developer asks about failing `tests` (names, sorted) of `test_path`; `tail` names the
    failure (" with KeyError") or is empty."""
    tn = ", ".join("`%s`" % t for t in tests[:3])
    verb = "do" if len(tests) > 1 else "does"
    return "Why %s %s in %s fail%s?" % (verb, tn, test_path, tail)


def log_case(repo, sha, test_path, language, split, query, text, gold):
    """One benchmark case for a captured log (and a line on stderr saying it was kept)."""
    print("ok   %s %s lines=%d gold=%d %s" % (repo, sha[:12], br.count_lines(text), len(gold), query),
          file=sys.stderr)
    return {
        "query": query, "text": text, "source_type": "logs", "gold_lines": gold,
        "origin": "%s@%s:%s" % (repo, sha[:12], test_path),
        "language": language, "repo": repo, "commit": sha, "split": split,
    }


def write_cases(path, cases, mode):
    """Writes (`mode` "w") or appends (`mode` "a") `cases` to `path`, one JSON object per line."""
    with open(path, mode, encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print("%s %d log cases to %s" % ("wrote" if mode == "w" else "appended", len(cases), path),
          file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", required=True)
    ap.add_argument("--mirrors", default="/work/.mirror")
    default_repos = os.path.join(HERE, "realistic_repos.txt")
    ap.add_argument("--out", default=None,
                    help="default: bench-data/realistic_logs.jsonl, only with the default --repos")
    ap.add_argument("--repos", default=default_repos,
                    help="the pinned repository list (build_realistic.py's format)")
    ap.add_argument("--only", nargs="*", default=None,
                    help="the pure-Python repositories of that list to capture from "
                         "(default: %s with the default list, else its python group)" % ", ".join(REPOS))
    ap.add_argument("--split", default=None,
                    help="label every case with this split instead of the repository's dev/test")
    args = ap.parse_args()
    default_list = os.path.abspath(args.repos) == default_repos
    if args.out is None:
        if not default_list:
            ap.error("--out is required with --repos (the default output holds the realistic set's logs)")
        args.out = os.path.join(HERE, "realistic_logs.jsonl")
    shas, split = repo_heads(args.repos)
    if args.only is None:
        args.only = REPOS if default_list else [r for r in shas if br.REPO_GROUP.get(r) == "python"]
    for r in args.only:
        if r not in shas:
            ap.error("--only %s: not in %s" % (r, args.repos))
        if br.REPO_GROUP.get(r) != "python":
            ap.error("--only %s: not a python repository (pytest logs only)" % r)
    if args.split:
        split = {r: args.split for r in shas}
    cases = []
    tmp = tempfile.mkdtemp(prefix="rlogs_")
    try:
        for repo in args.only:
            gitdir = br.find_gitdir(args.mirrors, repo)
            if gitdir is None:
                sys.exit("missing mirror for %s (fetch it first)" % repo)
            got = tries = 0
            for sha, parent, files in fix_commits(gitdir, shas[repo]):
                if got >= PER_REPO or tries >= MAX_TRIES:
                    break
                src = [p for st, p in files if p.endswith(".py") and not br.is_excluded_path(p)]
                tests = [p for st, p in files if st in "AM" and re.match(r"^tests?/(.*/)?test_\w+\.py$", p)]
                if not (1 <= len(src) <= 3) or len(tests) != 1:
                    continue
                names = added_tests(gitdir, parent, sha, tests[0])
                if not names:
                    continue
                tries += 1
                pdir = os.path.join(tmp, "p"); cdir = os.path.join(tmp, "c")
                shutil.rmtree(pdir, ignore_errors=True); shutil.rmtree(cdir, ignore_errors=True)
                export(gitdir, parent, pdir)
                export(gitdir, sha, cdir)
                # overlay the fix commit's test file onto the parent tree
                shutil.copy(os.path.join(cdir, tests[0]), os.path.join(pdir, tests[0]))
                # -k rather than node ids: new tests may be methods of a class
                rc_c, out_c = run_pytest(args.python, cdir, ["-q", tests[0], "-k", " or ".join(names)])
                if rc_c != 0:
                    print("skip %s %s: new tests do not pass at fix (rc=%s)" % (repo, sha[:12], rc_c), file=sys.stderr)
                    continue
                rc_p, out_p = run_pytest(args.python, pdir, [tests[0]])
                if rc_p != 1:
                    print("skip %s %s: parent rc=%s" % (repo, sha[:12], rc_p), file=sys.stderr)
                    continue
                failed = re.findall(r"^FAILED (\S+?)(?: - |$)", out_p, re.M)
                failed_new = [f for f in failed if f.split("::")[-1].split("[")[0] in names]
                if not failed_new or len(failed_new) != len(failed):
                    print("skip %s %s: failures not (only) the new tests" % (repo, sha[:12]), file=sys.stderr)
                    continue
                venv = os.path.dirname(os.path.dirname(os.path.abspath(args.python)))
                out_p = out_p.replace(os.path.relpath(venv, pdir) + "/", "../../.venv/")
                out_p = out_p.replace(venv + "/", "/home/dev/.venv/")
                text = out_p.replace(pdir, FAKE_ROOT + "/" + repo.split("/")[1]).replace(tmp, FAKE_ROOT)
                text = text.replace(args.python, "/home/dev/.venv/bin/python")
                n = br.count_lines(text)
                gold = gold_for_log(text)
                if not (40 <= n <= 4000) or not gold or len(gold) > 0.4 * n:
                    print("skip %s %s: size n=%d gold=%d" % (repo, sha[:12], n, len(gold)), file=sys.stderr)
                    continue
                exc = re.findall(r"^E\s+(\w+(?:\.\w+)*(?:Error|Exception|Warning|Exit))\b", text, re.M)
                exc = exc[0] if exc else ("AssertionError" if re.search(r"^E\s+assert", text, re.M) else None)
                tnames = sorted({f.split("::")[-1].split("[")[0] for f in failed_new})
                q = question(tnames, tests[0], " with %s" % exc if exc else "")
                cases.append(log_case(repo, sha, tests[0], "python", split[repo], q, text, gold))
                got += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write_cases(args.out, cases, "w")


if __name__ == "__main__":
    main()
