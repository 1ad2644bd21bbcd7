#!/usr/bin/env python3
"""Build a realistic pruning benchmark from real bug-fix commits.

Each case: the question is the (cleaned) commit message of a bug-fix commit,
the text is one file the fix modifies, taken at the PARENT commit, and the gold
is the set of parent-file lines the fix touches (removed/modified lines; for a
pure insertion, the line before and the line after the insertion point).

Usage:
    python3 bench-data/build_realistic.py --mirrors /work/.mirror \
        --out bench-data/realistic.jsonl

Repositories and the HEAD sha to use are read from
bench-data/realistic_repos.txt (``owner/name <sha>`` per line).  Each repo must
be available as a bare git dir at <mirrors>/<owner>+<name>/repo (the layout the
snapshot fetcher produces); a plain <mirrors>/<owner>+<name> git dir also works.
Only Python 3 stdlib + git are needed.  Output is deterministic.
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))

# Language group of each repository (controls which extensions are "source").
REPO_GROUP = {
    # Rust
    "serde-rs/json": "rust",
    "BurntSushi/ripgrep": "rust",
    "clap-rs/clap": "rust",
    "dtolnay/anyhow": "rust",
    "hyperium/hyper": "rust",
    "chronotope/chrono": "rust",
    "rust-lang/log": "rust",
    # Python
    "psf/black": "python",
    "pallets/click": "python",
    "encode/httpx": "python",
    "Textualize/rich": "python",
    "pydantic/pydantic": "python",
    "aio-libs/aiohttp": "python",
    "python-attrs/attrs": "python",
    # TypeScript / JavaScript
    "expressjs/express": "tsjs",
    "axios/axios": "tsjs",
    "sindresorhus/got": "tsjs",
    "date-fns/date-fns": "tsjs",
    "vuejs/core": "tsjs",
    "chalk/chalk": "tsjs",
    "yargs/yargs": "tsjs",
    # Go
    "spf13/cobra": "go",
    "gin-gonic/gin": "go",
    "gorilla/mux": "go",
    "urfave/cli": "go",
    "go-chi/chi": "go",
    "sirupsen/logrus": "go",
    "BurntSushi/toml": "go",
}

FORBIDDEN = {
    "django", "sympy", "sphinx", "scikit-learn", "matplotlib", "xarray",
    "astropy", "pytest", "pylint", "requests", "flask", "seaborn",
}

GROUP_EXT = {
    "rust": {".rs": "rust"},
    "python": {".py": "python"},
    "tsjs": {".ts": "typescript", ".tsx": "typescript", ".mts": "typescript",
             ".cts": "typescript", ".js": "javascript", ".mjs": "javascript",
             ".cjs": "javascript", ".jsx": "javascript"},
    "go": {".go": "go"},
}
DOC_EXT = {".md", ".rst"}

CODE_CAP_PER_REPO = 16
DOCS_CAP_PER_REPO = 5
MAX_CHANGED_LINES = 80
CODE_MIN_LINES, CODE_MAX_LINES = 40, 4000
DOC_MIN_LINES, DOC_MAX_LINES = 40, 3000
MAX_BYTES = 400 * 1024
MAX_GOLD_FRACTION = 0.40
MAX_QUERY_CHARS = 600

FIX_RE = re.compile(
    r"\b(fix|fixes|fixed|fixing|bugfix|hotfix|bug|bugs|crash|crashes|crashed|"
    r"crashing|panic|panics|panicking|wrong|incorrect|incorrectly|"
    r"regression|prevent|prevents|avoid|avoids)\b|"
    # weak keywords: only as plain words, not identifiers/paths (error.rs,
    # anyhow::Error, `handle`, handle())
    r"(?<![\w:.`/])(error|errors|handle|handles|handling)(?![\w.:`(/])",
    re.I)
DOC_FIX_RE = re.compile(
    r"\b(fix|fixes|fixed|fixing|correct|corrects|corrected|correction|"
    r"corrections|typo|typos|clarify|clarifies|clarified|clarification|"
    r"wrong|incorrect|outdated|broken)\b", re.I)
# Subjects that are not real bug fixes even if they match the regex.
NOISE_SUBJECT_RE = re.compile(
    r"^(merge\b|revert\b|release\b|bump\b|v?\d+\.\d+(\.\d+)?\b)|"
    r"\b(dependabot|deps|dependencies|changelog|lint|clippy|rustfmt|gofmt|"
    r"prettier|eslint|formatting|format code|typo|typos|spelling)\b", re.I)
# Code-fix subjects that are about tests/CI/typing/comments rather than behaviour.
CODE_NOISE_SUBJECT_RE = re.compile(
    r"^(docs?|chore|ci|tests?|style|build|refactor|typo)(\([^)]*\))?!?:|"
    r"\b(mypy|pyright|typing|typings|type hints?|type annotations?|docstrings?|"
    r"doctests?|doc tests?|comments?|ci|flake8|ruff|staticcheck|golint|"
    r"go vet|vet|tsc|typescript errors?|type errors?|types)\b|"
    r"\b(fix(es|ed|ing)?|repair)\s+((the|a|some|failing|flaky|broken|unit|"
    r"integration)\s+)*(tests?|build|docs?|"
    r"examples?|benchmarks?|coverage|warnings?)\b", re.I)
DOC_NOISE_SUBJECT_RE = re.compile(
    r"^(merge\b|revert\b|release\b|bump\b|v?\d+\.\d+(\.\d+)?\b)|"
    r"\b(dependabot|changelog)\b", re.I)

EXCLUDED_DIRS = {
    "test", "tests", "testdata", "testing", "__tests__", "__mocks__", "spec",
    "specs", "fixtures", "fixture", "examples", "example", "benches", "bench",
    "benchmark", "benchmarks", "vendor", "node_modules", "dist", "third_party",
    "generated", "e2e", "test-dts", "__snapshots__", "playground", "_examples",
    "_example", "docs", "doc", ".github", "ci", "test-utils", "test_utils",
    "testutil", "testutils", "internal_tests",
}
LOCK_NAMES = {"cargo.lock", "package-lock.json", "yarn.lock", "pnpm-lock.yaml",
              "go.sum", "poetry.lock", "pipfile.lock", "uv.lock"}
DOC_EXCLUDED_NAMES = re.compile(
    r"^(changelog|changes|history|news|release[-_ ]?notes?|authors|contributors|"
    r"code_of_conduct|security|license|licence)(\.|$)", re.I)

TRAILER_RE = re.compile(
    r"^\s*(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|"
    r"reported-by|suggested-by|helped-by|cc|change-id|reviewed-on|pr-url|"
    r"pr-close|closes|resolves|refs|backport-of|git-svn-id|co-developed-by|"
    r"original-commit|upstream|issue|issues|ticket|github-issue)\s*:", re.I)
ISSUE_LINE_RE = re.compile(
    r"^\s*[-*]?\s*(fix(es|ed)?|close[sd]?|resolve[sd]?|refs?|see|related to|"
    r"part of|addresses|address|towards|related)\s*:?\s+(([\w.-]+/[\w.-]+)?#\d+|gh-\d+|"
    r"https?://\S+)[\s,.;]*((and|,)\s*(([\w.-]+/[\w.-]+)?#\d+|https?://\S+)[\s,.;]*)*$",
    re.I)
URL_RE = re.compile(r"<?https?://\S+>?")
PR_REF_RE = re.compile(r"\s*\((?:[\w.-]+/[\w.-]+)?#\d+(?:\s*,\s*#\d+)*\)")
GH_REF_RE = re.compile(
    r"\b(fix(es|ed)?|close[sd]?|resolve[sd]?)\s+(([\w.-]+/[\w.-]+)?#\d+|gh-\d+)"
    r"(\s*(,|and)\s*(([\w.-]+/[\w.-]+)?#\d+|gh-\d+))*", re.I)
BARE_REF_RE = re.compile(r"(?<![\w&.-])(?:[\w.-]+/)?[\w.-]*#\d+\b|\bgh-\d+\b", re.I)
DIFF_LINE_RE = re.compile(
    r"^(@@ |diff --git |--- a/|\+\+\+ b/|index [0-9a-f]{7,}\.\.[0-9a-f]{7,})")
LINE_NUM_RE = re.compile(r"\blines?\s+\d+|\bL\d+\b|:\d+:\d+\b", re.I)
SQUASH_NOISE_RE = re.compile(
    r"^\s*[*-]?\s*(merge branch|merge remote|update \S+\.(md|rst)\s*$|"
    r"\[pre-commit\.ci\]|pre-commit-ci|for more information, see|"
    r"apply suggestions? from code review|address (review )?comments?$|"
    r"wip$|fixup!?|squash!?|lint\s*$|fmt\s*$|format\s*$|cargo fmt\s*$|"
    r"update tests?\s*$|add tests?\s*$|tests?\s*$|changelog\s*$|"
    r"add (a )?changelog( entry)?\s*$|update changelog\s*$|news\s*$|"
    r"add news( entry)?\s*$|---+\s*$|\*\*\*+\s*$)", re.I)
GIT_HOSTS = ("github.com", "gitlab.com")


def git(gitdir, *args, check=True):
    r = subprocess.run(["git", "--git-dir=" + gitdir, *args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and r.returncode != 0:
        raise RuntimeError("git %s failed: %s" % (" ".join(args),
                                                   r.stderr.decode(errors="replace")))
    return r.stdout if r.returncode == 0 else None


def find_gitdir(mirrors, repo):
    base = os.path.join(mirrors, repo.replace("/", "+"))
    for cand in (os.path.join(base, "repo"), base, base + ".git"):
        if os.path.isdir(cand) and (os.path.exists(os.path.join(cand, "HEAD"))
                                    or os.path.exists(os.path.join(cand, ".git"))):
            return cand
    return None


def is_excluded_path(path):
    parts = path.split("/")
    low = [p.lower() for p in parts]
    if any(p in EXCLUDED_DIRS for p in low[:-1]):
        return True
    name = low[-1]
    if name in LOCK_NAMES:
        return True
    if ".min." in name or name.endswith(".d.ts") or name.endswith(".map"):
        return True
    if (name.endswith("_test.go") or name.startswith("test_") or
            name.endswith("_test.py") or name == "conftest.py" or
            re.search(r"\.(test|spec)\.[cm]?[jt]sx?$", name) or
            re.match(r"^(test|tests|spec)\.[cm]?[jt]sx?$", name) or
            name in ("tests.rs", "test.rs", "tests.py", "test.py")):
        return True
    if "generated" in name or name.endswith(".pb.go") or "_gen." in name:
        return True
    return False


def is_doc_path(path):
    name = path.split("/")[-1]
    ext = os.path.splitext(name)[1].lower()
    if ext not in DOC_EXT:
        return False
    if DOC_EXCLUDED_NAMES.match(name):
        return False
    low = [p.lower() for p in path.split("/")]
    if any(p in {"node_modules", "vendor", "third_party", "changes", "changelog",
                 ".github", "fixtures", "testdata", "tests", "test"}
           for p in low[:-1]):
        return False
    # README anywhere, or anything under a docs folder.
    return (name.lower().startswith("readme") or
            any(p in ("docs", "doc", "documentation", "guide", "book") for p in low[:-1]))


def clean_message(msg):
    """Return the cleaned question text, or None if the message is unusable."""
    lines = msg.replace("\r\n", "\n").strip().split("\n")
    # "Fix #123 by doing X" -> "Fix by doing X" (keep the verb of the subject)
    lines[0] = re.sub(r"^\s*(fix(es|ed)?|close[sd]?|resolve[sd]?)\s+"
                      r"(([\w.-]+/[\w.-]+)?#\d+|gh-\d+)\s*:?", r"\1 ", lines[0],
                      flags=re.I)
    subj_key = re.sub(r"\W+", " ", BARE_REF_RE.sub(" ", PR_REF_RE.sub("", lines[0]))).strip().lower()
    out = []
    for i, ln in enumerate(lines):
        if DIFF_LINE_RE.match(ln):
            return None
        s = ln.strip()
        if i > 0 and subj_key and re.sub(r"\W+", " ", BARE_REF_RE.sub(" ", PR_REF_RE.sub("", s))).strip().lower() == subj_key:
            continue  # squash-merge bodies often repeat the subject
        if i > 0 and (TRAILER_RE.match(s) or s.lower().startswith("(cherry picked from")):
            continue
        if ISSUE_LINE_RE.match(s):
            continue
        if SQUASH_NOISE_RE.match(s):
            continue
        if re.match(r"^\s*(\[[^\]]*\]\s*)?(x|\s)?\s*$", s) and s:
            continue
        out.append(ln)
    text = "\n".join(out)
    # Backport / CI markers: "[PR #123/abcdef backport][3.10]", "[3.x]", "[ci skip]".
    text = re.sub(r"\[PR\s*#?\d*/?[0-9a-f]*\s*backport\]\s*(\[[^\]]*\])?", " ", text, flags=re.I)
    text = re.sub(r"\[(ci skip|skip ci|skip changelog|no ci|backport[^\]]*|\d+\.(\d+|x))\]", " ", text, flags=re.I)
    text = re.sub(r"\b(this|which|that)\s+(pr\s+|commit\s+|change\s+)?"
                  r"(fix(es|ed)?|close[sd]?|resolve[sd]?|address(es)?)\s+"
                  r"(issue\s+)?(([\w.-]+/[\w.-]+)?#\d+|gh-\d+)[.,;]?", " ", text, flags=re.I)
    text = URL_RE.sub(" ", text)
    text = PR_REF_RE.sub("", text)
    text = GH_REF_RE.sub(" ", text)
    text = BARE_REF_RE.sub(" ", text)
    # Drop empty brackets left behind, markdown checkbox residue.
    text = re.sub(r"\(\s*\)|\[\s*\]", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,.;:)])(?=\s|$)", r"\1", text)
    text = text.strip(" -*:;,")
    if LINE_NUM_RE.search(text):
        return None
    if len(text) > MAX_QUERY_CHARS:
        cut = text[:MAX_QUERY_CHARS + 1]
        sp = cut.rfind(" ")
        text = cut[:sp if sp > 0 else MAX_QUERY_CHARS].rstrip(" ,;:-")
    if len(re.findall(r"[A-Za-z]\w*", text)) < 4:
        return None
    return text


def clean_subject(msg):
    """Cleaned first line only (refs/markers removed) for keyword matching."""
    first = msg.strip().split("\n", 1)[0]
    first = re.sub(r"^\s*(fix(es|ed)?|close[sd]?|resolve[sd]?)\s+"
                   r"(([\w.-]+/[\w.-]+)?#\d+|gh-\d+)\s*:?", r"\1 ", first, flags=re.I)
    first = PR_REF_RE.sub("", first)
    first = GH_REF_RE.sub(" ", first)
    first = BARE_REF_RE.sub(" ", first)
    first = URL_RE.sub(" ", first)
    return first.strip()


def count_lines(text):
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


HUNK_RE = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def gold_from_diff(diff, nlines):
    gold = set()
    hunks = 0
    for ln in diff.split(b"\n"):
        m = HUNK_RE.match(ln)
        if not m:
            continue
        hunks += 1
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) is not None else 1
        if b > 0:
            gold.update(range(a, a + b))
        else:
            # Pure insertion after old line `a` (a may be 0 = top of file).
            for x in (a, a + 1):
                if 1 <= x <= nlines:
                    gold.add(x)
    return sorted(x for x in gold if 1 <= x <= nlines), hunks


def iter_commits(gitdir, head):
    """Yield (sha, parent, message, [(status, path)]) newest first.

    Uses --raw (tree data only) so that mirrors lacking some large blobs
    still work; line counts are computed later, only for candidate paths.
    """
    fmt = "%x1e%H%x1f%P%x1f%B%x1f"
    raw = git(gitdir, "log", "--no-merges", "--no-renames", "--raw",
              "--no-abbrev", "--format=" + fmt, head)
    for rec in raw.split(b"\x1e"):
        if not rec.strip():
            continue
        parts = rec.split(b"\x1f")
        if len(parts) < 4:
            continue
        sha = parts[0].decode().strip()
        parents = parts[1].decode().split()
        msg = parts[2].decode("utf-8", errors="replace")
        files = []
        for ln in parts[3].decode("utf-8", errors="replace").split("\n"):
            if not ln.startswith(":"):
                continue
            meta, _, path = ln.partition("\t")
            status = meta.split()[-1][:1]
            files.append((status, path))
        if len(parents) != 1:
            continue
        yield sha, parents[0], msg, files


def numstat(gitdir, parent, sha, paths):
    out = git(gitdir, "diff", "--numstat", "--no-renames", parent, sha, "--",
              *paths, check=False)
    res = {}
    if out is None:
        return None
    for ln in out.decode("utf-8", errors="replace").split("\n"):
        f = ln.split("\t")
        if len(f) != 3:
            continue
        if f[0] == "-" or f[1] == "-":
            return None  # binary
        res[f[2]] = int(f[0]) + int(f[1])
    return res


def looks_generated(text):
    head = "\n".join(text.split("\n", 8)[:8])
    return ("DO NOT EDIT" in head or "@generated" in head or
            "auto-generated" in head.lower() or "autogenerated" in head.lower())


def longest_line_ok(text):
    # Minified / data blobs: reject very long lines.
    return max((len(l) for l in text.split("\n")), default=0) <= 1000


def make_case(gitdir, repo, sha, parent, path, query, source_type, language,
              min_lines, max_lines):
    blob = git(gitdir, "show", "%s:%s" % (parent, path), check=False)
    if blob is None:
        return None, "missing_in_parent"
    if len(blob) >= MAX_BYTES:
        return None, "too_big"
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not_utf8"
    if "\x00" in text:
        return None, "binary"
    n = count_lines(text)
    if not (min_lines <= n <= max_lines):
        return None, "line_count"
    if source_type == "code" and (looks_generated(text) or not longest_line_ok(text)):
        return None, "generated"
    diff = git(gitdir, "diff", "-U0", "--no-color", "--no-ext-diff",
               "--no-renames", parent, sha, "--", path, check=False)
    if not diff:
        return None, "no_diff"
    gold, hunks = gold_from_diff(diff, n)
    if not gold:
        return None, "empty_gold"
    if len(gold) > MAX_GOLD_FRACTION * n:
        return None, "gold_too_large"
    return {
        "query": query,
        "text": text,
        "source_type": source_type,
        "gold_lines": gold,
        "origin": "%s@%s:%s" % (repo, sha[:12], path),
        "language": language,
        "repo": repo,
        "commit": sha,
    }, "ok"


def spread_pick(items, cap):
    """Deterministically pick `cap` items spread over a newest-first list."""
    n = len(items)
    if n <= cap:
        return list(items)
    idx = sorted({(i * n) // cap for i in range(cap)})
    return [items[i] for i in idx]


def repo_cases(gitdir, repo, head, stats):
    group = REPO_GROUP[repo]
    exts = GROUP_EXT[group]
    code_cases, doc_cases = [], []
    seen_queries = set()
    for sha, parent, msg, files in iter_commits(gitdir, head):
        subject = clean_subject(msg)
        is_code_subject = (bool(FIX_RE.search(subject))
                           and not NOISE_SUBJECT_RE.search(subject)
                           and not CODE_NOISE_SUBJECT_RE.search(subject))
        is_doc_subject = bool(DOC_FIX_RE.search(subject)) and not DOC_NOISE_SUBJECT_RE.search(subject)
        if not (is_code_subject or is_doc_subject):
            continue
        src = [p for st, p in files
               if os.path.splitext(p)[1].lower() in exts and not is_excluded_path(p)]
        if is_code_subject and 1 <= len(src) <= 3 and all(
                st == "M" for st, p in files if p in src):
            ns = numstat(gitdir, parent, sha, src)
            total = sum(ns.values()) if ns else 0
            if ns and 1 <= total <= MAX_CHANGED_LINES:
                q = clean_message(msg)
                if q is None:
                    stats["code_bad_message"] += 1
                elif q in seen_queries:
                    stats["code_dup_message"] += 1
                else:
                    made = []
                    for p in src:
                        lang = exts[os.path.splitext(p)[1].lower()]
                        case, why = make_case(gitdir, repo, sha, parent, p, q,
                                              "code", lang, CODE_MIN_LINES,
                                              CODE_MAX_LINES)
                        stats["code_" + why] += 1
                        if case:
                            made.append(case)
                    if made:
                        seen_queries.add(q)
                        code_cases.append(made)
        if (is_doc_subject and len(files) == 1 and files[0][0] == "M"
                and is_doc_path(files[0][1])):
            p = files[0][1]
            ns = numstat(gitdir, parent, sha, [p])
            if ns and 1 <= sum(ns.values()) <= MAX_CHANGED_LINES:
                q = clean_message(msg)
                if q is None:
                    stats["docs_bad_message"] += 1
                    continue
                nwords = len(re.findall(r"[A-Za-z]\w*", q))
                # "Fix typo in README" carries no information about where.
                if nwords < 6:
                    stats["docs_short_message"] += 1
                    continue
                if q in seen_queries:
                    stats["docs_dup_message"] += 1
                    continue
                case, why = make_case(gitdir, repo, sha, parent, p, q, "docs",
                                      "markdown", DOC_MIN_LINES, DOC_MAX_LINES)
                stats["docs_" + why] += 1
                if case:
                    seen_queries.add(q)
                    doc_cases.append([case])
    # code_cases/doc_cases are lists of per-commit case groups, newest first.
    flat_code = [c for grp in code_cases for c in grp]
    picked_code = spread_pick(flat_code, CODE_CAP_PER_REPO)
    picked_docs = [g[0] for g in spread_pick(doc_cases, DOCS_CAP_PER_REPO)]
    return picked_code, picked_docs, len(flat_code), len(doc_cases)


def assign_splits(repos):
    """Per language group: sort repos by sha256(name); first half dev, rest test."""
    by_group = defaultdict(list)
    for r in repos:
        by_group[REPO_GROUP[r]].append(r)
    split = {}
    for g, rs in by_group.items():
        rs = sorted(rs, key=lambda r: hashlib.sha256(r.encode()).hexdigest())
        half = (len(rs) + 1) // 2
        for i, r in enumerate(rs):
            split[r] = "dev" if i < half else "test"
    return split


def read_repo_list(path):
    """`owner/name [sha [group]]` per line; a group (rust, python, tsjs, go) given here adds the
    repository to REPO_GROUP, so a fresh set needs no edit of this script."""
    repos = []
    with open(path) as f:
        for ln in f:
            ln = ln.split("#", 1)[0].strip()
            if not ln:
                continue
            parts = ln.split()
            if len(parts) > 2:
                if parts[2] not in GROUP_EXT:
                    sys.exit("%s: unknown group %r (one of %s)" % (path, parts[2], ", ".join(GROUP_EXT)))
                REPO_GROUP[parts[0]] = parts[2]
            repos.append((parts[0], parts[1] if len(parts) > 1 else None))
    return repos


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--out", default=os.path.join(HERE, "realistic.jsonl"))
    ap.add_argument("--repos", default=os.path.join(HERE, "realistic_repos.txt"))
    ap.add_argument("--logs", default=os.path.join(HERE, "realistic_logs.jsonl"),
                    help="pre-captured log cases (capture_realistic_logs.py) to append; "
                         "skipped if missing")
    ap.add_argument("--split", default=None,
                    help="label every case with this split (e.g. fresh) instead of dev/test by repository")
    ap.add_argument("--allow-sha-mismatch", action="store_true",
                    help="use the listed sha if present, else mirror HEAD, with a warning")
    args = ap.parse_args()

    repos = read_repo_list(args.repos)
    for r, _ in repos:
        if r not in REPO_GROUP:
            sys.exit("unknown repository (add it to REPO_GROUP): %s" % r)
        if r.split("/")[1].lower() in FORBIDDEN:
            sys.exit("forbidden repository: %s" % r)
    split = assign_splits([r for r, _ in repos])

    all_cases = []
    summary = []
    for repo, want in repos:
        gitdir = find_gitdir(args.mirrors, repo)
        if gitdir is None:
            sys.exit("missing mirror for %s under %s (fetch it first)" % (repo, args.mirrors))
        head = want
        if want is None:
            head = git(gitdir, "rev-parse", "HEAD").decode().strip()
        elif git(gitdir, "cat-file", "-e", want + "^{commit}", check=False) is None:
            if not args.allow_sha_mismatch:
                sys.exit("%s: listed sha %s not present in mirror %s" % (repo, want, gitdir))
            head = git(gitdir, "rev-parse", "HEAD").decode().strip()
            print("WARNING: %s: %s missing, using HEAD %s" % (repo, want, head), file=sys.stderr)
        stats = Counter()
        code, docs, ncode, ndocs = repo_cases(gitdir, repo, head, stats)
        for c in code + docs:
            c["split"] = args.split or split[repo]
            all_cases.append(c)
        label = args.split or split[repo]
        summary.append((repo, label, len(code), ncode, len(docs), ndocs))
        print("%-24s %-4s code %3d/%4d docs %2d/%3d  %s" % (
            repo, label, len(code), ncode, len(docs), ndocs,
            dict(sorted(stats.items()))), file=sys.stderr)

    if args.logs and os.path.exists(args.logs):
        with open(args.logs, encoding="utf-8") as f:
            for ln in f:
                if ln.strip():
                    c = json.loads(ln)
                    if c["repo"] in split:
                        c["split"] = args.split or split[c["repo"]]
                        all_cases.append(c)

    keys = ["query", "text", "source_type", "gold_lines", "origin", "language",
            "repo", "commit", "split"]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        for c in all_cases:
            f.write(json.dumps({k: c[k] for k in keys}, ensure_ascii=False) + "\n")

    cnt = Counter((c["source_type"], c["language"], c["split"]) for c in all_cases)
    print("\nTotal cases: %d -> %s (%d bytes)" % (len(all_cases), args.out,
                                                 os.path.getsize(args.out)), file=sys.stderr)
    for k in sorted(cnt):
        print("  %-5s %-11s %-5s %d" % (k + (cnt[k],)), file=sys.stderr)


if __name__ == "__main__":
    main()
