#!/usr/bin/env python3
"""Git recency of every line of every code case, for rank.py --recency: at the fix's parent, the
rank of the commit that last touched the line among the commits that touched the file, newest
first (0 = the file's last commit before the fix; 999 = older than the 200 newest).

Usage: python3 recency.py BENCH.jsonl OUT.json [--mirrors DIR]

Needs the repositories as bare git directories at DIR/<owner>+<name>/repo (what `fetch` brings;
default /work/.mirror), the same layout build_realistic.py reads.
"""
import argparse
import concurrent.futures
import json
import subprocess


def ranks(mirrors, origin):
    repo, rest = origin.split("@", 1)
    sha, path = rest.split(":", 1)
    git = ["git", "--git-dir", f"{mirrors}/{repo.replace('/', '+')}/repo"]
    fix = subprocess.check_output(git + ["rev-parse", sha + "^{commit}"], text=True).strip()
    parent = subprocess.check_output(git + ["rev-parse", fix + "^"], text=True).strip()
    log = subprocess.check_output(git + ["log", "--format=%H", "-n", "200", parent, "--", path],
                                  text=True).split()
    order = {h: i for i, h in enumerate(log)}
    blame = subprocess.check_output(git + ["blame", "--porcelain", parent, "--", path],
                                    text=True, errors="replace")
    out = []
    for line in blame.split("\n"):
        head = line.split(" ")
        if len(head) >= 3 and len(head[0]) == 40 and all(ch in "0123456789abcdef" for ch in head[0]):
            out.append(order.get(head[0], 999))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench")
    ap.add_argument("out")
    ap.add_argument("--mirrors", default="/work/.mirror")
    a = ap.parse_args()
    rows = [json.loads(line) for line in open(a.bench)]
    code = [k for k, r in enumerate(rows) if r["source_type"] == "code"]
    with concurrent.futures.ThreadPoolExecutor(3) as ex:
        got = list(ex.map(lambda k: ranks(a.mirrors, rows[k]["origin"]), code))
    json.dump({str(k): {"origin": rows[k]["origin"], "rank": r} for k, r in zip(code, got)},
              open(a.out, "w"))


if __name__ == "__main__":
    main()
