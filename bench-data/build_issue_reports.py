#!/usr/bin/env python3
"""Issue-report cases: the question is a real GitHub issue (title + body as the
reporter wrote it), the text is a source file the linked fix changed, taken at
the fix's parent (base) commit, and the gold is the set of base-file lines the
fix touches (same rule as build_realistic.py: removed/modified lines; for a
pure insertion, the line before and the line after the insertion point).

Inputs are public datasets kept in GitHub repositories, pinned by commit:

  * Multi-SWE-bench (ByteDance-Seed) -- per-repo ``*_dataset.jsonl`` files
    copied into kuppireddypravalika/MSWE-validation-dataset (issue title/body
    in ``resolved_issues``, ``base.sha``, the PR's ``fix_patch``).  Only the
    files stored as text (not as Git LFS pointers) can be read.
  * GHRB, GitHub Recent Bugs (coinse/GHRB) -- ``bug_reports/<id>.json`` (issue
    title + description) and ``verified_bug/*.json`` (``buggy_commit`` and the
    fix's ``merge_commit``); the fix diff is ``git diff buggy merge``.
  * kotlin-swe-bench (ifabrish/kotlin-swe-bench) -- ``tasks/<id>/instruction.md``
    (the issue text under a "## Issue #N <url>: <title>" header),
    ``environment/prepare.sh`` (``git checkout <base>``) and
    ``solution/fix.patch``.

One case per modified non-test source file of a fix (files added, deleted or
renamed by the fix are skipped); when a fix modifies more than
MAX_FILES_PER_FIX source files, only the most-changed one.  A case is dropped if
the patch's removed/context lines do not match the base file.  Splits are by
repository within a language group; a repository that is also in
multilang_repos.txt keeps the split it has there.

Usage:
    python3 bench-data/build_issue_reports.py --mirrors /work/.mirror \
        --out bench-data/issue_reports.jsonl

Every repository (datasets and projects) must be a bare git dir at
<mirrors>/<owner>+<name>/repo, as the snapshot fetcher leaves it.  Python 3
stdlib + git only; output is deterministic.
"""

import argparse
import ast
import hashlib
import json
import os
import re
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import build_realistic as br  # noqa: E402
import build_multilang as ml  # noqa: E402  (language groups, test exclusions, forbidden list)

# ------------------------------------------------------------ pinned inputs --
MSWE = {
    "repo": "kuppireddypravalika/MSWE-validation-dataset",
    "commit": "f3788671b1be72292be1b3dfc61063f97dd474a0",
    "dir": "MSWE-agent/data",
}
GHRB = {
    "repo": "coinse/GHRB",
    # The last commit that still has bug_reports/ (issue texts); later ones moved them out.
    "commit": "034894549000db4afb27550e6235292e23276299",
}
KSB = {
    "repo": "ifabrish/kotlin-swe-bench",
    "commit": "272254fd34da2fd9023a9c798f6614994eb2be06",
}

# Language group of every project repository used (decides the split groups
# and which extensions count as source).  Repositories of the forbidden list,
# of realistic/fresh/fresh2 (axios, express, ripgrep, serde, fd, bytes, ...)
# and FasterXML/jackson-* are left out.
PROJECT_GROUP = {
    # Multi-SWE-bench
    "catchorg/Catch2": "cpp", "fmtlib/fmt": "cpp", "nlohmann/json": "cpp",
    "simdjson/simdjson": "cpp", "yhirose/cpp-httplib": "cpp",
    "grpc/grpc-go": "go", "zeromicro/go-zero": "go",
    "alibaba/fastjson2": "java", "apache/dubbo": "java", "google/gson": "java",
    "googlecontainertools/jib": "java", "mockito/mockito": "java",
    "anuraghazra/github-readme-stats": "tsjs", "Kong/insomnia": "tsjs",
    "darkreader/darkreader": "tsjs",
    "sharkdp/bat": "rust", "tokio-rs/tokio": "rust",
    # GHRB
    "apache/rocketmq": "java", "checkstyle/checkstyle": "java",
    "alibaba/nacos": "java", "Hakky54/sslcontext-kickstart": "java",
    "assertj/assertj": "java", "seata/seata": "java", "square/retrofit": "java",
    "iBotPeaches/Apktool": "java", "alibaba/fastjson": "java", "jhy/jsoup": "java",
    "OpenAPITools/openapi-generator": "java",
    # kotlin-swe-bench
    "pinterest/ktlint": "kotlin", "detekt/detekt": "kotlin",
    "oss-review-toolkit/ort": "kotlin", "Hannah-Sten/TeXiFy-IDEA": "kotlin",
    "ankidroid/Anki-Android": "kotlin", "Kotlin/dataframe": "kotlin",
    "square/okhttp": "kotlin", "GradleUp/shadow": "kotlin",
}
# Dataset spelling -> the GitHub repository the snapshot store has.
REPO_ALIASES = {
    "googlecontainertools/jib": "GoogleContainerTools/jib",
    "seata/seata": "apache/incubator-seata",
}
EXTRA_EXCLUDED = {"fasterxml/jackson-dataformat-xml"}

# Extensions per group: the ones of build_realistic + build_multilang.
GROUP_EXT = dict(br.GROUP_EXT)
# A Kotlin project's Java files are source too; a Java project's Kotlin ones as well.
GROUP_EXT["kotlin"] = {**GROUP_EXT["kotlin"], ".java": "java"}
GROUP_EXT["java"] = {**GROUP_EXT["java"], ".kt": "kotlin"}

MAX_FILES_PER_FIX = 3
CAP_PER_REPO = 30
MAX_QUERY_CHARS = 600


# --------------------------------------------------------------- utilities --
def git(gitdir, *args):
    return br.git(gitdir, *args, check=False)


def gitdir_of(mirrors, repo):
    return br.find_gitdir(mirrors, REPO_ALIASES.get(repo, repo))


def show(gitdir, commit, path):
    out = git(gitdir, "show", "%s:%s" % (commit, path))
    return out.decode("utf-8", errors="replace") if out is not None else None


def as_obj(v):
    """Multi-SWE-bench copies store some fields as Python reprs."""
    if isinstance(v, str):
        try:
            return ast.literal_eval(v)
        except (ValueError, SyntaxError):
            try:
                return json.loads(v)
            except ValueError:
                return None
    return v


HTML_COMMENT_RE = re.compile(r"<!--.*?-->", re.S)


def issue_query(title, body):
    """Title + body as written (code blocks and tracebacks kept): only CRLF,
    invisible HTML comments (issue-template hints) and runs of blank lines are
    normalised; cut to MAX_QUERY_CHARS at a whitespace."""
    title = (title or "").strip()
    body = HTML_COMMENT_RE.sub("", (body or "").replace("\r\n", "\n").replace("\r", "\n"))
    body = "\n".join(l.rstrip() for l in body.split("\n"))
    body = re.sub(r"\n{3,}", "\n\n", body).strip()
    if not title or not body:
        return None
    text = title + "\n\n" + body
    if len(text) > MAX_QUERY_CHARS:
        cut = text[:MAX_QUERY_CHARS + 1]
        sp = max(cut.rfind(" "), cut.rfind("\n"))
        text = cut[:sp if sp > 0 else MAX_QUERY_CHARS].rstrip()
    if len(re.findall(r"[A-Za-z]\w*", text)) < 6:
        return None
    return text


# ------------------------------------------------------------------ patches --
DIFF_HEADER_RE = re.compile(r"^diff --git a/(.*?) b/(.*)$")
HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def split_patch(patch):
    """-> {old path: {"status": M/A/D/R/B, "hunks": [(old_start, [lines])], "changed": n}}.
    Hunk bodies are bounded by the counts of their @@ header."""
    files = {}
    cur = None
    left_old = left_new = 0
    for ln in patch.split("\n"):
        if cur is not None and (left_old > 0 or left_new > 0):
            tag = ln[:1]
            if tag == "\\":
                continue
            if tag not in (" ", "-", "+", ""):
                left_old = left_new = 0  # malformed: stop this hunk
            else:
                cur["hunks"][-1][1].append(ln if ln else " ")  # bare "" = blank context line
                if tag in (" ", ""):
                    left_old -= 1
                    left_new -= 1
                elif tag == "-":
                    left_old -= 1
                    cur["changed"] += 1
                else:
                    left_new -= 1
                    cur["changed"] += 1
                continue
        m = DIFF_HEADER_RE.match(ln)
        if m:
            a, b = m.group(1), m.group(2)
            cur = {"status": "M" if a == b else "R", "hunks": [], "changed": 0}
            files[a] = cur
            continue
        if cur is None:
            continue
        if ln.startswith("new file mode"):
            cur["status"] = "A"
        elif ln.startswith("deleted file mode"):
            cur["status"] = "D"
        elif ln.startswith("rename from"):
            cur["status"] = "R"
        elif ln.startswith("Binary files") or ln.startswith("GIT binary patch"):
            cur["status"] = "B"
        m = HUNK_RE.match(ln)
        if m:
            cur["hunks"].append((int(m.group(1)), []))
            left_old = int(m.group(2)) if m.group(2) is not None else 1
            left_new = int(m.group(4)) if m.group(4) is not None else 1
    return files


def gold_from_hunks(hunks, lines):
    """Gold lines of the old file from unified-diff hunks with any context,
    matching build_realistic's -U0 rule.  Returns None if a removed or context
    line does not match the old file (the patch is not for this text)."""
    n = len(lines)
    gold = set()
    for start, body in hunks:
        old = start
        in_block, has_minus = False, False

        def close():
            if in_block and not has_minus:
                for x in (old - 1, old):  # insertion between old-1 and old
                    if 1 <= x <= n:
                        gold.add(x)

        for ln in body:
            tag, content = ln[:1], ln[1:]
            if tag == "\\":
                continue
            if tag == " ":
                close()
                in_block, has_minus = False, False
                if old > n or lines[old - 1].rstrip("\r") != content.rstrip("\r"):
                    return None
                old += 1
            elif tag == "-":
                if old > n or lines[old - 1].rstrip("\r") != content.rstrip("\r"):
                    return None
                gold.add(old)
                in_block, has_minus = True, True
                old += 1
            elif tag == "+":
                in_block = True
        close()
    return sorted(gold)


def make_case(gitdir, repo, base, path, hunks, query, language):
    blob = git(gitdir, "show", "%s:%s" % (base, path))
    if blob is None:
        return None, "missing_in_base"
    if len(blob) >= br.MAX_BYTES:
        return None, "too_big"
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not_utf8"
    if "\x00" in text:
        return None, "binary"
    nl = br.count_lines(text)
    if not (br.CODE_MIN_LINES <= nl <= br.CODE_MAX_LINES):
        return None, "line_count"
    if br.looks_generated(text) or not br.longest_line_ok(text):
        return None, "generated"
    gold = gold_from_hunks(hunks, text.split("\n"))
    if gold is None:
        return None, "patch_mismatch"
    gold = [g for g in gold if g <= nl]
    if not gold:
        return None, "empty_gold"
    if len(gold) > br.MAX_GOLD_FRACTION * nl:
        return None, "gold_too_large"
    return {"text": text, "gold_lines": gold}, "ok"


# ------------------------------------------------------------------ sources --
def mswe_records(mirrors):
    g = br.find_gitdir(mirrors, MSWE["repo"])
    if g is None:
        sys.exit("missing mirror for %s" % MSWE["repo"])
    names = git(g, "ls-tree", "-r", "--name-only", MSWE["commit"], MSWE["dir"]).decode().split()
    for name in sorted(names):
        # Per-repository files only (the language-level ones repeat them).
        if not name.endswith("_dataset.jsonl"):
            continue
        raw = git(g, "show", "%s:%s" % (MSWE["commit"], name))
        if raw is None or raw.startswith(b"version https://git-lfs"):
            continue
        for ln in raw.decode("utf-8", errors="replace").split("\n"):
            if not ln.strip():
                continue
            d = json.loads(ln)
            issues = as_obj(d.get("resolved_issues")) or []
            issue = next((i for i in issues if isinstance(i, dict)
                          and int(i.get("number") or -1) > 0 and (i.get("body") or "").strip()), None)
            base = as_obj(d.get("base")) or {}
            if issue is None or not base.get("sha"):
                continue
            repo = "%s/%s" % (d["org"], d["repo"])
            yield {
                "dataset": "%s@%s:%s" % (MSWE["repo"], MSWE["commit"][:12], name),
                "repo": repo, "id": d.get("instance_id") or "%s-%s" % (repo, d["number"]),
                "num": int(d["number"]), "base": base["sha"], "fix": None,
                "patch": d["fix_patch"], "title": issue.get("title"), "body": issue.get("body"),
                "issue": "https://github.com/%s/issues/%s" % (repo, issue["number"]),
            }


def ghrb_records(mirrors):
    g = br.find_gitdir(mirrors, GHRB["repo"])
    if g is None:
        sys.exit("missing mirror for %s" % GHRB["repo"])
    names = git(g, "ls-tree", "-r", "--name-only", GHRB["commit"]).decode().split()
    verified = {}
    for n in sorted(names):
        if n.startswith("verified_bug/") and n.endswith(".json"):
            verified.update(json.loads(show(g, GHRB["commit"], n)))
    for n in sorted(names):
        if not (n.startswith("bug_reports/") and n.endswith(".json")):
            continue
        bug_id = n[len("bug_reports/"):-5]
        rep = json.loads(show(g, GHRB["commit"], n))
        v = verified.get(bug_id)
        if not v:
            continue
        repo = re.sub(r"^https://github.com/([^/]+/[^/]+)/.*$", r"\1", v["PR_url"])
        yield {
            "dataset": "%s@%s:%s" % (GHRB["repo"], GHRB["commit"][:12], n),
            "repo": repo, "id": bug_id, "num": int(v["PR_number"]),
            "base": v["buggy_commit"], "fix": v["merge_commit"], "patch": None,
            "title": rep.get("title"), "body": rep.get("description_text"),
            "issue": rep.get("issue_url") or v.get("issue", {}).get("url"),
        }


ISSUE_HDR_RE = re.compile(r"^## Issue #(\d+) (\S+?): (.*)$", re.M)


def ksb_records(mirrors):
    g = br.find_gitdir(mirrors, KSB["repo"])
    if g is None:
        sys.exit("missing mirror for %s" % KSB["repo"])
    tasks = git(g, "ls-tree", "-d", "--name-only", KSB["commit"], "tasks/").decode().split()
    for t in sorted(tasks):
        instr = show(g, KSB["commit"], t + "/instruction.md")
        prep = show(g, KSB["commit"], t + "/environment/prepare.sh")
        patch = show(g, KSB["commit"], t + "/solution/fix.patch")
        toml = show(g, KSB["commit"], t + "/task.toml") or ""
        if not (instr and prep and patch):
            continue
        m = re.search(r"git checkout ([0-9a-f]{40})", prep)
        owner = re.search(r'repository_owner = "([^"]+)"', toml)
        name = re.search(r'repository_name = "([^"]+)"', toml)
        hdrs = list(ISSUE_HDR_RE.finditer(instr))
        if not (m and owner and name and hdrs):
            continue
        h = hdrs[0]
        end = hdrs[1].start() if len(hdrs) > 1 else len(instr)
        repo = "%s/%s" % (owner.group(1), name.group(1))
        tid = t.split("/")[-1]
        yield {
            "dataset": "%s@%s:%s" % (KSB["repo"], KSB["commit"][:12], t),
            "repo": repo, "id": tid, "num": int(tid.rsplit("-", 1)[1]),
            "base": m.group(1), "fix": None, "patch": patch,
            "title": h.group(3), "body": instr[h.end():end],
            "issue": h.group(2),
        }


# ---------------------------------------------------------------- assembly --
def canon(repo):
    """Case-insensitive key -> the spelling used in PROJECT_GROUP."""
    for r in PROJECT_GROUP:
        if r.lower() == repo.lower():
            return r
    return repo


def assign_splits(repos):
    """Per language group.  Repositories of multilang_repos.txt keep their split
    there; the others, in sha256 order, go to whichever side has fewer
    repositories of the group so far (ties: dev)."""
    fixed = {}
    ml_list = os.path.join(HERE, "multilang_repos.txt")
    if os.path.exists(ml_list):
        ml_repos = br.read_repo_list(ml_list)
        fixed = {r.lower(): s for r, s in br.assign_splits([r for r, _ in ml_repos]).items()}
    by_group = defaultdict(list)
    for r in repos:
        by_group[PROJECT_GROUP[r]].append(r)
    split = {}
    for grp, rs in sorted(by_group.items()):
        count = Counter()
        for r in rs:
            if r.lower() in fixed:
                split[r] = fixed[r.lower()]
                count[split[r]] += 1
        for r in sorted((r for r in rs if r not in split),
                        key=lambda r: hashlib.sha256(r.encode()).hexdigest()):
            split[r] = "dev" if count["dev"] <= count["test"] else "test"
            count[split[r]] += 1
    return split


def pick_cases(per_repo, split, group_of, stats, width):
    """Each repository's cases (its fixes in issue order, at most CAP_PER_REPO spread over
    them), labelled with the repository's split; one stderr line per repository, with why its
    candidates were dropped."""
    cases = []
    for repo in sorted(per_repo):
        groups = sorted(per_repo[repo], key=lambda g: (g[0]["_num"], g[0]["origin"]))
        flat = [c for g in groups for c in g]
        picked = br.spread_pick(flat, CAP_PER_REPO)
        for c in picked:
            c["split"] = split[repo]
            cases.append(c)
        print("%-*s %-6s %-4s %3d/%3d  %s" % (width, repo, group_of[repo], split[repo],
              len(picked), len(flat), dict(sorted(stats[repo].items()))), file=sys.stderr)
    for repo in sorted(set(stats) - set(per_repo)):
        print("%-*s none  %s" % (width, repo, dict(sorted(stats[repo].items()))), file=sys.stderr)
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--out", default=os.path.join(HERE, "issue_reports.jsonl"))
    args = ap.parse_args()

    used = ml.other_repo_lists()
    stats = defaultdict(Counter)
    per_repo = defaultdict(list)
    seen_q = set()
    records = list(mswe_records(args.mirrors)) + list(ghrb_records(args.mirrors)) + \
        list(ksb_records(args.mirrors))
    for rec in records:
        repo = canon(rec["repo"])
        st = stats[repo]
        if ml.is_forbidden(repo) or repo.lower() in used or repo.lower() in EXTRA_EXCLUDED \
                or repo.lower().startswith("fasterxml/"):
            st["excluded_repo"] += 1
            continue
        if repo not in PROJECT_GROUP:
            st["unknown_repo"] += 1
            continue
        gitdir = gitdir_of(args.mirrors, repo)
        if gitdir is None:
            st["no_mirror"] += 1
            continue
        if git(gitdir, "cat-file", "-e", rec["base"] + "^{commit}") is None:
            st["base_missing"] += 1
            continue
        query = issue_query(rec["title"], rec["body"])
        if query is None or query in seen_q:
            st["bad_issue"] += 1
            continue
        if rec["patch"] is not None:
            files = split_patch(rec["patch"])
        else:
            if git(gitdir, "cat-file", "-e", rec["fix"] + "^{commit}") is None:
                st["fix_missing"] += 1
                continue
            d = git(gitdir, "diff", "-U0", "--no-color", "--no-ext-diff", "--no-renames",
                    rec["base"], rec["fix"])
            files = split_patch(d.decode("utf-8", errors="replace"))
        exts = GROUP_EXT[PROJECT_GROUP[repo]]
        src = [(p, f) for p, f in sorted(files.items())
               if f["status"] == "M" and os.path.splitext(p)[1].lower() in exts
               and not br.is_excluded_path(p)]
        if not src:
            st["no_source_file"] += 1
            continue
        if len(src) > MAX_FILES_PER_FIX:
            src = [max(src, key=lambda pf: (pf[1]["changed"], pf[0]))]
        made = []
        for p, f in src:
            case, why = make_case(gitdir, repo, rec["base"], p, f["hunks"], query,
                                  exts[os.path.splitext(p)[1].lower()])
            st["file_" + why] += 1
            if case:
                case.update({
                    "query": query, "source_type": "code",
                    "origin": "%s@%s:%s (issue %s; %s)" % (
                        repo, rec["base"][:12], p, rec["issue"], rec["id"]),
                    "language": exts[os.path.splitext(p)[1].lower()],
                    "repo": repo, "commit": rec["fix"] or rec["base"],
                    "base_commit": rec["base"], "issue": rec["issue"],
                    "dataset": rec["dataset"], "style": "issue", "_num": rec["num"],
                })
                made.append(case)
        if made:
            seen_q.add(query)
            per_repo[repo].append(made)

    split = assign_splits(sorted(per_repo))
    cases = pick_cases(per_repo, split, PROJECT_GROUP, stats, 34)

    ml.write_cases(args.out, cases, ["query", "text", "source_type", "gold_lines", "origin",
                                     "language", "repo", "commit", "base_commit", "issue",
                                     "dataset", "split", "style"], width=11)


if __name__ == "__main__":
    main()
