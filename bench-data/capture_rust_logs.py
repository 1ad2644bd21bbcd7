#!/usr/bin/env python3
"""Capture REAL failing `cargo test` logs for the realistic benchmark (source_type "logs").

The Rust counterpart of capture_realistic_logs.py (pytest): for bug-fix commits of Rust crates
that add or change an integration test (`tests/*.rs`), check out the PARENT commit, overlay the
fix commit's test file, run `cargo test --test NAME -- TESTS...` (the tests the fix adds or
changes, as a developer re-running them would) and record the real output (build lines,
test list, panics, summary; stdout and stderr merged as a CI log shows them). A case is kept only
if the new or changed tests fail at runtime at the parent (not a compile error) and pass at the
fix commit, so the failure is the real bug.

Gold = the failure lines: `thread '…' panicked at …` and the panic message that follows it (up to
a blank line or the `note:` line). Like the pytest capture's gold, it leaves out the progress lines
(`test NAME ... FAILED`), which only say that a test failed. Query = what a developer
asks: "Why does `NAME` in tests/FILE.rs fail?" (the panic's kind when it is an assertion).

This compiles and runs third-party code, so it is not part of build_realistic.py; it is run once,
its cases are appended to bench-data/realistic_logs.jsonl, and build_realistic.py appends that file
verbatim. The crates have no Cargo.lock, so a new run resolves today's dependency versions and may
get other failures; registry paths ($CARGO_HOME) are not scrubbed (no captured panic is inside a
dependency). The tests asked about are those the fix adds (`+fn`) or whose hunk header names them,
which can be the test just before an addition: serde_json f74b422d6473 adds two tests after
`test_float_key`, and it is `test_float_key` that fails at the parent and passes at the fix.
Needs cargo and the crates.io registry:

    python3 bench-data/capture_rust_logs.py --mirrors /work/.mirror --append bench-data/realistic_logs.jsonl
"""

import argparse
import importlib.util
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("br", os.path.join(HERE, "build_realistic.py"))
br = importlib.util.module_from_spec(spec)
spec.loader.exec_module(br)
spec = importlib.util.spec_from_file_location("pylogs", os.path.join(HERE, "capture_realistic_logs.py"))
pylogs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pylogs)

REPOS = ["dtolnay/anyhow", "rust-lang/log", "serde-rs/json", "chronotope/chrono"]
PER_REPO = 6
MAX_TRIES = 40
FAKE_ROOT = "/home/dev/src"


def export(gitdir, rev, dest):
    shutil.rmtree(dest, ignore_errors=True)
    pylogs.export(gitdir, rev, dest)


def cargo_test(root, target, test, names=(), timeout=900):
    env = dict(os.environ, CARGO_TARGET_DIR=target, CARGO_TERM_COLOR="never",
               RUST_BACKTRACE="0")
    cmd = ["cargo", "test", "--test", test]
    if names:
        cmd += ["--"] + list(names)
    return pylogs.run_captured(cmd, root, env, timeout)


def changed_tests(gitdir, parent, sha, path):
    """Names of the test functions the fix adds or edits in `path` (hunk headers and added fns)."""
    d = pylogs.diff_of(gitdir, parent, sha, path)
    names = set(re.findall(r"^\+\s*(?:pub\s+)?(?:async\s+)?fn\s+(\w+)\s*\(", d, re.M))
    names |= set(re.findall(r"^@@.*@@\s*(?:pub\s+)?(?:async\s+)?fn\s+(\w+)\s*\(", d, re.M))
    return sorted(names)


def gold_for_log(text):
    gold = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        ln = lines[i]
        if re.match(r"^thread '.*'( \(\d+\))? panicked at ", ln):
            gold.append(i + 1)
            j = i + 1
            while j < len(lines) and lines[j].strip() and not lines[j].startswith("note:"):
                gold.append(j + 1)
                j += 1
            i = j
            continue
        i += 1
    return gold


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--append", default=os.path.join(HERE, "realistic_logs.jsonl"))
    args = ap.parse_args()
    shas, split = pylogs.repo_heads()
    cases = []
    tmp = tempfile.mkdtemp(prefix="rustlogs_")
    try:
        for repo in REPOS:
            gitdir = br.find_gitdir(args.mirrors, repo)
            if gitdir is None:
                sys.exit("missing mirror for %s (fetch it first)" % repo)
            target = os.path.join(tmp, "target-" + repo.replace("/", "+"))
            got = tries = 0
            for sha, parent, files in pylogs.fix_commits(gitdir, shas[repo]):
                if got >= PER_REPO or tries >= MAX_TRIES:
                    break
                src = [p for st, p in files if p.startswith("src/") and p.endswith(".rs")]
                tests = [p for st, p in files if st in "AM" and re.match(r"^tests/\w+\.rs$", p)]
                if not (1 <= len(src) <= 3) or len(tests) != 1:
                    continue
                names = changed_tests(gitdir, parent, sha, tests[0])
                if not names:
                    continue
                tries += 1
                stem = os.path.basename(tests[0])[:-3]
                pdir = os.path.join(tmp, repo.split("/")[1])
                cdir = os.path.join(tmp, "fix")
                export(gitdir, sha, cdir)
                rc_c, out_c = cargo_test(cdir, target, stem, names)
                if rc_c != 0:
                    print("skip %s %s: tests do not pass at the fix (rc=%s)" % (repo, sha[:12], rc_c),
                          file=sys.stderr)
                    continue
                export(gitdir, parent, pdir)
                shutil.copy(os.path.join(cdir, tests[0]), os.path.join(pdir, tests[0]))
                rc_p, out_p = cargo_test(pdir, target, stem, names)
                if rc_p != 101 or "test result: FAILED" not in out_p:
                    print("skip %s %s: parent rc=%s (not a runtime failure)" % (repo, sha[:12], rc_p),
                          file=sys.stderr)
                    continue
                failed = re.findall(r"^test (\S+) \.\.\. FAILED$", out_p, re.M)
                if not failed or any(f.split("::")[-1] not in names for f in failed):
                    print("skip %s %s: failures not (only) the changed tests" % (repo, sha[:12]),
                          file=sys.stderr)
                    continue
                text = out_p.replace(pdir, FAKE_ROOT + "/" + repo.split("/")[1])
                text = text.replace(target, FAKE_ROOT + "/" + repo.split("/")[1] + "/target")
                text = text.replace(tmp, FAKE_ROOT)
                text = re.sub(r"(?m)^[ \t]+Finished .*$", "    Finished `test` profile", text)
                text = re.sub(r"finished in \d+\.\d+s", "finished in 0.01s", text)
                n = br.count_lines(text)
                gold = gold_for_log(text)
                if not (20 <= n <= 4000) or not gold or len(gold) > 0.4 * n:
                    print("skip %s %s: size n=%d gold=%d" % (repo, sha[:12], n, len(gold)),
                          file=sys.stderr)
                    continue
                tnames = sorted({f.split("::")[-1] for f in failed})
                kind = " with an assertion failure" if re.search(
                    r"^assertion .*failed", text, re.M) else ""
                q = pylogs.question(tnames, tests[0], kind)
                cases.append(pylogs.log_case(repo, sha, tests[0], "rust", split[repo], q, text, gold))
                got += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    pylogs.write_cases(args.append, cases, "a")


if __name__ == "__main__":
    main()
