#!/usr/bin/env python3
"""Multi-language fix-commit cases (Java, C, C++, C#, Ruby, PHP, Kotlin).

A thin extension of build_realistic.py: the same commit mining, message
cleaning, parent-file extraction, gold rule (removed/modified parent lines; for
a pure insertion the lines around the insertion point), size limits and
deterministic spread pick.  This file only adds

  * the language groups and their extensions (GROUP_EXT),
  * per-language test/vendor exclusion rules (wrapping is_excluded_path),
  * a pre-clean of bracketed issue tags such as rubocop's "[Fix #123]",
  * the forbidden-repository list of the evaluation sets,
  * "style": "commit" on every case, and code cases only (no docs cases).

Usage:
    python3 bench-data/build_multilang.py --mirrors /work/.mirror \
        --out bench-data/multilang.jsonl

Repositories, pinned shas and language groups are read from
bench-data/multilang_repos.txt (``owner/name <sha> <group>`` per line); each
must be a bare git dir at <mirrors>/<owner>+<name>/repo (what the snapshot
fetcher produces).  Python 3 stdlib + git only; output is deterministic.
"""

import argparse
import json
import os
import re
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import build_realistic as br  # noqa: E402

# ---------------------------------------------------------------- languages --
# C and C++ are separate groups so that a C++ project's ".h" headers are
# reported as cpp and a C project's as c (the split is per group, so each of
# c and cpp gets a dev and a test repository).
NEW_GROUP_EXT = {
    "java": {".java": "java"},
    "c": {".c": "c", ".h": "c"},
    "cpp": {".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
            ".hh": "cpp", ".hxx": "cpp", ".h": "cpp", ".ipp": "cpp"},
    "csharp": {".cs": "csharp"},
    "ruby": {".rb": "ruby"},
    "php": {".php": "php"},
    "kotlin": {".kt": "kotlin", ".kts": "kotlin"},
}
br.GROUP_EXT.update(NEW_GROUP_EXT)

# Every repository evaluated elsewhere: none may appear here.  Entries with a
# slash match owner/name, the others match the repository name.
FORBIDDEN_NAMES = {
    "django", "sympy", "sphinx", "scikit-learn", "matplotlib", "xarray",
    "astropy", "pytest", "pylint", "requests", "flask", "seaborn", "ansible",
    "nodebb", "langchain", "keras", "transformers",
}
FORBIDDEN_REPOS = {
    "cli/cli", "fasterxml/jackson-core", "fasterxml/jackson-databind",
    "tokio-rs/tracing", "sveltejs/svelte", "mui/material-ui", "rayon-rs/rayon",
    "iamkun/dayjs", "facebook/zstd", "jqlang/jq", "internetarchive/openlibrary",
    "huggingface/transformers", "langchain-ai/langchain", "keras-team/keras",
    "nodebb/nodebb", "ansible/ansible",
}
br.FORBIDDEN |= FORBIDDEN_NAMES


def is_forbidden(repo):
    low = repo.lower()
    return low in FORBIDDEN_REPOS or low.split("/")[-1] in FORBIDDEN_NAMES


def other_repo_lists(own=None):
    """Repos of the existing sets (realistic, fresh, fresh2): not reused. With `own` (the path of
    the list being built), the repositories of every other set's list too (multilang, unseen,
    margin, langs2..: ``*_repos.txt`` and ``langs*_dev.txt``/``langs*_test.txt``), so no two sets
    share a repository."""
    names = ["realistic_repos.txt", "fresh_repos.txt", "fresh2_repos.txt"]
    if own is not None:
        own = os.path.abspath(own)
        names += sorted(n for n in os.listdir(HERE)
                        if n.endswith("_repos.txt") or re.match(r"langs\d+_(dev|test)\.txt$", n))
        names = [n for n in dict.fromkeys(names) if os.path.join(HERE, n) != own]
    seen = set()
    for name in names:
        p = os.path.join(HERE, name)
        if os.path.exists(p):
            with open(p) as f:
                for ln in f:
                    ln = ln.split("#", 1)[0].strip()
                    if ln:
                        seen.add(ln.split()[0].lower())
    return seen


# --------------------------------------------------------------- exclusions --
# Directories that hold tests, vendored code, samples or build logic in the
# new ecosystems (compared lower-case, on any directory of the path).
EXTRA_EXCLUDED_DIRS = {
    "androidtest", "testfixtures", "test-fixtures", "integrationtest",
    "integration-test", "integration-tests", "functionaltest", "it",
    "testlib", "test-lib", "testkit", "test-support", "testsupport",
    "features",             # cucumber step definitions (jekyll)
    "deps", "3rdparty", "thirdparty", "external", "extern", "bundled",
    "contrib", "samples", "sample", "demo", "demos", "buildsrc",
    "benchmark-tests", "perf", "jmh", "stubs",
    "rspec",                # lib/rubocop/rspec: helpers for the users' specs
}
_TEST_DIR_RE = re.compile(
    # Kotlin multiplatform / Gradle source sets: jvmTest, commonTest, nativeTest
    r"^([a-z][A-Za-z0-9]*)?Test$|"
    # .NET test / benchmark projects: Foo.Tests, Foo.UnitTests, Foo.Tests.Net45
    r"^.*\.([Tt]ests?|UnitTests?|IntegrationTests?|Specs?|Benchmarks?|Testing)(\..*)?$|"
    r"^.*(Tests|Benchmarks)$")
# Test sources by file name.  Case-sensitive for the CamelCase languages
# (FooTest.java, FooTests.cs, FooIT.java, FooSpec.kt, TestFoo.java) so that
# Latest.java / Edit.java stay; lower-case rules for the others.
_CAMEL_TEST_RE = re.compile(
    r"((Test|Tests|TestCase|IT|Spec|Specs|Benchmark)\.(java|kt|kts|cs|php)|"
    r"^Test[A-Z_]\w*\.(java|kt|cs|php))$")
_LOWER_TEST_RE = re.compile(
    r"^(.*_(spec|test|tests)\.rb|"
    r".*[_-](test|tests|unittest|bench|benchmark)\.(c|cc|cpp|cxx|h|hpp)|"
    r"test_.*\.(c|cc|cpp|cxx)|"
    r"(.*[_-]|.*spec)?tests?\.(c|cc|cpp|cxx)|"   # spectests.cpp, unit-tests.c
    r"assemblyinfo\.cs|globalusings\.cs|.*\.(designer|g|g\.i|generated)\.cs|"
    r"build\.gradle\.kts|settings\.gradle\.kts)$")
# Translation / locale tables (Carbon's src/Carbon/Lang/*.php ...) are data.
DATA_DIRS = {"lang", "langs", "locale", "locales", "i18n", "l10n", "translations"}
_orig_is_excluded_path = br.is_excluded_path


def is_excluded_path(path):
    if _orig_is_excluded_path(path):
        return True
    parts = path.split("/")
    for d in parts[:-1]:
        if (d.lower() in EXTRA_EXCLUDED_DIRS or d.lower() in DATA_DIRS
                or _TEST_DIR_RE.match(d)):
            return True
    name = parts[-1]
    return bool(_CAMEL_TEST_RE.search(name) or _LOWER_TEST_RE.match(name.lower()))


br.is_excluded_path = is_excluded_path  # repo_cases looks it up at call time

# ------------------------------------------------------------------ messages --
# "[Fix #123] Fix a false positive ..." (rubocop), "[Fixes #1, #2] ..." and
# "Fix #123: ..." leave "[Fix ]" residue in the base cleaner: drop the tag.
BRACKET_TAG_RE = re.compile(
    r"^\s*\[(fix(es|ed)?|close[sd]?|resolve[sd]?|refs?|see|gh)?\s*"
    r"((([\w.-]+/[\w.-]+)?#\d+|gh-\d+)\s*(,|and)?\s*)+\]\s*", re.I)
_orig_clean_message = br.clean_message
_orig_clean_subject = br.clean_subject


# Import residue of old VCS bridges and merge lines: "--HG--" + "extra :
# convert_revision ..." (hg->git), "Created by MOE: ..."/"MOE_MIGRATED_REVID=..."
# (Google's MOE), "Merge pull request 123" / "Merge pull request #123 from ...".
IMPORT_NOISE_RE = re.compile(
    r"^\s*(--HG--|extra\s*:\s*(convert_revision|branch|rebase_source|source)\b.*|"
    r"created by moe:.*|moe_migrated_revid=\S*|"
    r"merge pull request #?\d+.*|closes? pull request #?\d+.*)\s*$", re.I)


def _pre(msg):
    msg = BRACKET_TAG_RE.sub("", msg.lstrip(), count=1)
    lines = msg.split("\n")
    kept = [lines[0]] + [ln for ln in lines[1:] if not IMPORT_NOISE_RE.match(ln)]
    return "\n".join(kept)


br.clean_message = lambda msg: _orig_clean_message(_pre(msg))
br.clean_subject = lambda msg: _orig_clean_subject(_pre(msg))

# Subjects about style checkers, API docs and build warnings of these
# ecosystems, added to the base CODE_NOISE_SUBJECT_RE (which has the Rust /
# Python / Go / JS ones): they change no behaviour.
EXTRA_CODE_NOISE = (
    r"\b(styleci|php[-_ ]?cs(-fixer)?|cs[-_ ]fix(es|er)?|checkstyle|spotless|"
    r"javadocs?|jdocs?|kdocs?|phpdocs?|rdoc|yard|xmldocs?|xml docs?|"
    r"documentation|clang[-_ ]tidy|cppcheck|coverity|warnings?|"
    r"compil(e|es|ing|ation)|indentation|whitespace|rubocop offen[cs]es?|"
    r"error ?prone|sonar(cloud|qube)?|analy[sz]er warnings?)\b")
br.CODE_NOISE_SUBJECT_RE = re.compile(
    br.CODE_NOISE_SUBJECT_RE.pattern + "|" + EXTRA_CODE_NOISE, re.I)

CODE_CAP_PER_REPO = 14
br.CODE_CAP_PER_REPO = CODE_CAP_PER_REPO


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--out", default=os.path.join(HERE, "multilang.jsonl"))
    ap.add_argument("--repos", default=os.path.join(HERE, "multilang_repos.txt"))
    args = ap.parse_args()

    repos = br.read_repo_list(args.repos)  # fills br.REPO_GROUP from column 3
    used = other_repo_lists()
    for r, sha in repos:
        if is_forbidden(r):
            sys.exit("forbidden repository: %s" % r)
        if r.lower() in used:
            sys.exit("repository already in another set: %s" % r)
        if r not in br.REPO_GROUP or br.REPO_GROUP[r] not in NEW_GROUP_EXT:
            sys.exit("%s: needs a group, one of %s" % (r, ", ".join(NEW_GROUP_EXT)))
        if not sha:
            sys.exit("%s: pin a sha" % r)
    split = br.assign_splits([r for r, _ in repos])

    cases = []
    for repo, sha in repos:
        gitdir = br.find_gitdir(args.mirrors, repo)
        if gitdir is None:
            sys.exit("missing mirror for %s under %s (fetch it first)" % (repo, args.mirrors))
        if br.git(gitdir, "cat-file", "-e", sha + "^{commit}", check=False) is None:
            sys.exit("%s: listed sha %s not present in mirror %s" % (repo, sha, gitdir))
        stats = Counter()
        code, _docs, ncode, _ndocs = br.repo_cases(gitdir, repo, sha, stats)
        for c in code:
            c["split"] = split[repo]
            c["style"] = "commit"
            cases.append(c)
        print("%-34s %-6s %-4s code %3d/%4d  %s" % (
            repo, br.REPO_GROUP[repo], split[repo], len(code), ncode,
            {k: v for k, v in sorted(stats.items()) if k.startswith("code_")}),
            file=sys.stderr)

    write_cases(args.out, cases, ["query", "text", "source_type", "gold_lines", "origin",
                                  "language", "repo", "commit", "split", "style"], width=7)


def write_cases(out, cases, keys, width):
    """Writes `cases` to `out` as JSON lines holding `keys`, then counts them per language and
    split on stderr (the language column `width` wide)."""
    with open(out, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps({k: c[k] for k in keys}, ensure_ascii=False) + "\n")
    cnt = Counter((c["language"], c["split"]) for c in cases)
    print("\nTotal cases: %d -> %s (%d bytes)" % (len(cases), out, os.path.getsize(out)),
          file=sys.stderr)
    for (language, split) in sorted(cnt):
        print("  %-*s %-5s %d" % (width, language, split, cnt[(language, split)]),
              file=sys.stderr)


if __name__ == "__main__":
    main()
