#!/usr/bin/env python3
"""Issue-report cases, second batch: C#, TypeScript/JavaScript, Python, C++,
Go, Java and Rust projects, from SWE-bench-format task records.

Same case rules and output format as bench-data/build_issue_reports.py (whose
functions ``issue_query``, ``split_patch`` and ``make_case`` are imported): the
question is the issue text (title + body as the reporter wrote it, cut to 600
characters), the text is one non-test source file the fix modifies, taken at
the fix's base commit, the gold is the base-file lines the fix touches
(removed/modified lines; for a pure insertion the line before and after).  One
case per modified source file (only the most-changed one when a fix modifies
more than 3); files the fix adds, deletes or renames are skipped; a case whose
patch's removed/context lines do not match the base file is dropped.

Inputs (pinned):

  * SWE-bench-Live/RepoLaunch-trajectory-archive@ARCHIVE_COMMIT --
    ``<lang>/playground/<instance>/instance.json`` (repo, base_commit, patch,
    problem_statement = issue title + newline + body, issue_numbers).
  * chengli200214-beep/swe-gym-plus@41b7f4c8a05f:data/manifests/
    swegym-moto-candidates.json and @e5a0e099f606:data/expanded/moto-v2/
    manifest.json (SWE-Gym getmoto/moto tasks).  No git snapshot of that
    repository can be fetched here, so --swegym reads a local extract
    (issue_reports2_inputs/swegym_moto_extract.json, written by issue_reports2_inputs/make_swegym_extract.py:
    instance_id, base_commit and the head of the ``issue`` text, copied from
    the files as read through the code-search store).  The fix
    is the moto commit whose subject ends in "(#<PR number>)" (the one whose
    first parent is base_commit when there are several); its diff against its
    first parent gives the patch, which must match the base file as usual.

Only the project repositories of PROJECTS are used; each must be a bare git
dir at <mirrors>/<owner>+<name>/repo.  Repositories of the forbidden list
(build_multilang), of every bench-data/*_repos.txt / langs*_{dev,test}.txt,
of the ``repo`` field or origin prefix of every bench-data/*.jsonl line, and of
--also-exclude JSONL files are skipped.  Split, per language group (tsjs =
TypeScript + JavaScript): repositories in sha256 order go to the side with
fewer repositories of the group so far; on a tie, to the side with fewer
repositories over all groups so far (then dev).  Python 3 stdlib
+ git only; output is deterministic.

Usage:
    python3 bench-data/build_issue_reports2.py --mirrors /work/.mirror \\
        --swegym bench-data/issue_reports2_inputs/swegym_moto_extract.json \\
        --out bench-data/issue_reports2.jsonl
"""
import argparse
import glob
import hashlib
import json
import os
import re
import sys
from collections import Counter, defaultdict

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
import build_issue_reports as bi  # noqa: E402  (imports build_realistic, build_multilang)
br, ml = bi.br, bi.ml

ARCHIVE = {
    "repo": "SWE-bench-Live/RepoLaunch-trajectory-archive",
    "commit": "e068854f5e74252b1f312036aade64e5eda1ebdf",
}

# Project repository -> language group (decides source extensions and splits).
PROJECTS = {
    "JasperFx/wolverine": "csharp", "JasperFx/marten": "csharp",
    "quartznet/quartznet": "csharp", "dotnet/efcore": "csharp",
    "gui-cs/Terminal.Gui": "csharp",
    "gsd-build/get-shit-done": "tsjs", "gsd-build/gsd-2": "tsjs",
    "getmoto/moto": "python",
    "shader-slang/slang": "cpp",
    "influxdata/telegraf": "go",
    "floci-io/floci": "java",
    "biomejs/biome": "rust",
}
KEYS = ["query", "text", "source_type", "gold_lines", "origin", "language", "repo",
        "commit", "base_commit", "issue", "dataset", "split", "style"]


def git(gitdir, *args):
    return bi.git(gitdir, *args)


def used_repos(out, extra_files, own_name="issue_reports2.jsonl"):
    """Lower-cased owner/name of every repository some other bench set uses: the set's own
    file (bench-data/<own_name>) is never one of them, whatever --out names."""
    used = set(ml.other_repo_lists(own=out))
    files = sorted(glob.glob(os.path.join(BENCH, "*.jsonl"))) + list(extra_files)
    own = {os.path.abspath(out), os.path.join(BENCH, own_name)}
    for p in files:
        if os.path.abspath(p) in own:
            continue
        with open(p, encoding="utf-8") as f:
            for ln in f:
                if not ln.strip():
                    continue
                d = json.loads(ln)
                if d.get("repo"):
                    used.add(d["repo"].lower())
                m = re.match(r"^([\w.-]+/[\w.-]+)@", d.get("origin") or "")
                if m:
                    used.add(m.group(1).lower())
    return used


def cases_of_fix(gitdir, repo, base, files, query, exts, st, issue, ref, fields):
    """The cases one fix gives: each source file (extension in `exts`, outside tests) that its
    patch `files` (bi.split_patch) modifies, or only the most-changed one past
    bi.MAX_FILES_PER_FIX, taken at `base` with `query` (bi.make_case).  Each case names the
    `issue` and `ref` (the task's id) in its origin and gets `fields` (commit, dataset, _num);
    `st` counts why a fix or a file gave none."""
    src = [(p, f) for p, f in sorted(files.items()) if f["status"] == "M"
           and os.path.splitext(p)[1].lower() in exts and not br.is_excluded_path(p)]
    if not src:
        st["no_source_file"] += 1
        return []
    if len(src) > bi.MAX_FILES_PER_FIX:
        src = [max(src, key=lambda pf: (pf[1]["changed"], pf[0]))]
    made = []
    for p, f in src:
        lang = exts[os.path.splitext(p)[1].lower()]
        case, why = bi.make_case(gitdir, repo, base, p, f["hunks"], query, lang)
        st["file_" + why] += 1
        if case:
            case.update({
                "query": query, "source_type": "code",
                "origin": "%s@%s:%s (issue %s; %s)" % (repo, base[:12], p, issue, ref),
                "language": lang, "repo": repo, "base_commit": base, "issue": issue,
                "style": "issue", **fields})
            made.append(case)
    return made


def archive_records(mirrors):
    g = br.find_gitdir(mirrors, ARCHIVE["repo"])
    if g is None:
        sys.exit("missing mirror for %s" % ARCHIVE["repo"])
    names = git(g, "ls-tree", "-r", "--name-only", ARCHIVE["commit"]).decode().split("\n")
    for n in sorted(x for x in names if x.endswith("/instance.json")):
        raw = bi.show(g, ARCHIVE["commit"], n)
        if not raw or not raw.strip():
            continue  # a few instance.json files are empty
        d = json.loads(raw)
        if d.get("repo") not in PROJECTS:
            continue
        ps = (d.get("problem_statement") or "").replace("\r\n", "\n")
        title, _, body = ps.partition("\n")
        nums = d.get("issue_numbers") or []
        if isinstance(nums, str):
            nums = re.findall(r"\d+", nums)
        num = re.search(r"-(\d+)$", d["instance_id"])
        issue = ("https://github.com/%s/issues/%s" % (d["repo"], nums[0]) if nums else
                 "https://github.com/%s/pull/%s" % (d["repo"], num.group(1)))
        yield {"dataset": "%s@%s:%s" % (ARCHIVE["repo"], ARCHIVE["commit"][:12], n),
               "repo": d["repo"], "id": d["instance_id"],
               "num": int(num.group(1)) if num else 0, "base": d["base_commit"],
               "fix": None, "patch": d["patch"], "title": title, "body": body,
               "issue": issue}


def swegym_records(mirrors, extract):
    with open(extract, encoding="utf-8") as f:
        rows = json.load(f)["tasks"]
    for d in rows:
        repo = d["repo"]
        g = br.find_gitdir(mirrors, repo)
        num = int(re.search(r"-(\d+)$", d["instance_id"]).group(1))
        fix = None
        if g is not None:
            log = git(g, "log", "--all", "--format=%H %P%x09%s", "--grep", "(#%d)" % num,
                      "--fixed-strings")
            for ln in (log or b"").decode("utf-8", "replace").split("\n"):
                head, _, subj = ln.partition("\t")
                hp = head.split()
                if len(hp) >= 2 and subj.rstrip().endswith("(#%d)" % num):
                    fix, parent = hp[0], hp[1]
                    if parent == d["base_commit"]:
                        break
        patch = None
        if fix:
            # The squash commit's own change (its first parent may be a later
            # master than the task's base; make_case checks it against the base).
            out = git(g, "diff", "-U3", "--no-color", "--no-ext-diff", "--no-renames",
                      fix + "^1", fix)
            patch = out.decode("utf-8", "replace") if out is not None else None
        ps = d["issue"].replace("\r\n", "\n")
        title, _, body = ps.partition("\n")
        if not d.get("issue_complete"):
            # A cut copy must reach past the 600 characters issue_query keeps.
            norm = re.sub(r"\n{3,}", "\n\n", "\n".join(
                l.rstrip() for l in bi.HTML_COMMENT_RE.sub("", body).split("\n"))).strip()
            if len(title.strip()) + 2 + len(norm) <= bi.MAX_QUERY_CHARS + 1:
                sys.exit("extract of %s is too short" % d["instance_id"])
        src, _, path = d["source"].partition(":")
        srepo, _, scommit = src.partition("@")
        yield {"dataset": "%s@%s:%s" % (srepo, scommit[:12], path),
               "repo": repo, "id": d["instance_id"], "num": num, "base": d["base_commit"],
               "fix": fix, "patch": patch, "title": title, "body": body,
               "issue": "https://github.com/%s/pull/%d" % (repo, num)}


def mirror_of(repo, used, mirrors, st):
    """The bare git dir of `repo`'s mirror, or None (counted in `st`) when the repository is
    forbidden or held by another set (`used`), or has no mirror under `mirrors`."""
    if ml.is_forbidden(repo) or repo.lower() in used:
        st["excluded_repo"] += 1
        return None
    g = br.find_gitdir(mirrors, repo)
    if g is None:
        st["no_mirror"] += 1
    return g


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--swegym", help="local extract of the SWE-Gym moto manifest")
    ap.add_argument("--also-exclude", action="append", default=[],
                    help="JSONL bench file whose repositories are skipped too")
    ap.add_argument("--out", default=os.path.join(BENCH, "issue_reports2.jsonl"))
    args = ap.parse_args()

    used = used_repos(args.out, args.also_exclude)
    recs = list(archive_records(args.mirrors))
    if args.swegym:
        recs += list(swegym_records(args.mirrors, args.swegym))
    stats, per_repo, seen_q = defaultdict(Counter), defaultdict(list), set()
    for rec in sorted(recs, key=lambda r: (r["repo"].lower(), r["num"], r["id"])):
        repo, st = rec["repo"], stats[rec["repo"]]
        g = mirror_of(repo, used, args.mirrors, st)
        if g is None:
            continue
        if git(g, "cat-file", "-e", rec["base"] + "^{commit}") is None:
            st["base_missing"] += 1
            continue
        if not rec["patch"]:
            st["no_patch"] += 1
            continue
        q = bi.issue_query(rec["title"], rec["body"])
        if q is None or q in seen_q:
            st["bad_issue"] += 1
            continue
        made = cases_of_fix(g, repo, rec["base"], bi.split_patch(rec["patch"]), q,
                            bi.GROUP_EXT[PROJECTS[repo]], st, rec["issue"], rec["id"], {
                                "commit": rec["fix"] or rec["base"],
                                "dataset": rec["dataset"], "_num": rec["num"]})
        if made:
            seen_q.add(q)
            per_repo[repo].append(made)

    by_group = defaultdict(list)
    for r in per_repo:
        by_group[PROJECTS[r]].append(r)
    split, total = {}, Counter()
    for grp, rs in sorted(by_group.items()):
        count = Counter()
        for r in sorted(rs, key=lambda r: hashlib.sha256(r.encode()).hexdigest()):
            side = min(("dev", "test"), key=lambda s: (count[s], total[s], s))
            split[r] = side
            count[side] += 1
            total[side] += 1
    cases = bi.pick_cases(per_repo, split, PROJECTS, stats, 28)
    ml.write_cases(args.out, cases, KEYS, width=11)


if __name__ == "__main__":
    main()
