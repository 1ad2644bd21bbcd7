#!/usr/bin/env python3
"""Query expansion by commit-message/changed-code associations (benches/README.md, "Signals
measured and not shipped"): mine which code terms appear in the lines a commit changes when its
message has a word, over whole histories, then rank each code case's definitions by the engine's
score plus the expansion terms they hold.

Usage:
  python3 associations.py mine OUT.pkl [--mirrors DIR]
  python3 associations.py eval PMI.pkl REALISTIC_TSV FRESH_TSV

`mine` reads the history of the 16 repositories of realistic.jsonl's `dev` split (their bare git
directories at DIR/<owner>+<name>/repo, default /work/.mirror), skips merges, commits named by any
benchmark case and changes to test files, and counts, per commit, every pair (word of the message,
term of a changed source line), words and terms split and stemmed like the engine's (approximated
in Python). `eval` expands each question with the code terms of highest PMI for its words (support
at least 4 commits) and prints top-1/3/5/10 gold shares for 12 settings on dev, test and fresh.
"""
import argparse
import collections
import json
import math
import os
import pickle
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from units import load, topk  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..")
STOP = set("""a about after all also an and any are as at be been being but by can could did do does
doing each for from get gets had has have having he her here his how i if in into is it its just me
might more most must my need no not of on once only or other our please shall she should so some
such than that the their them then there these they this those to too us very want was we were what
when where which while who whom why will with would you your actually add added adds again already
always anymore bug bugs case cases caused causes causing change changed changes correct correctly
currently doesn don expected fix fixed fixes fixing happen happens incorrect incorrectly instead isn
issue issues like make makes use used using way work works wrong""".split())
WORD = re.compile(r"[A-Za-z0-9_\x80-\uffff]+(?:-[A-Za-z0-9_\x80-\uffff]+)*")
SOURCE = (".rs", ".py", ".go", ".js", ".ts", ".mjs", ".cjs", ".tsx", ".jsx")
URL = re.compile(r"https?://\S+")


def stem(w):
    if not w.isascii() or any(ch.isdigit() for ch in w):
        return w
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) >= 6 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) >= 5 and w.endswith("ed"):
        w = w[:-2]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def parts(token):
    for piece in re.split(r"[_-]", token):
        if not piece:
            continue
        cur = piece[0]
        for k in range(1, len(piece)):
            c, p = piece[k], piece[k - 1]
            nxt_lower = k + 1 < len(piece) and piece[k + 1].islower()
            if c.isupper() and (p.islower() or p.isdigit() or (p.isupper() and nxt_lower)):
                yield cur
                cur = c
            else:
                cur += c
        yield cur


def terms(text):
    out = []
    for token in WORD.findall(text):
        for p in parts(token):
            p = p.lower()
            if len(p) < 2 or p in STOP or (len(p) < 3 and p.isdigit()):
                continue
            out.append(stem(p))
    return out


def mine(a):
    rows = [json.loads(line) for f in ("realistic", "fresh", "failure_code")
            for line in open(os.path.join(DATA, f + ".jsonl"))]
    named = {r["origin"].split("@")[1].split(":")[0][:12] for r in rows}
    dev = sorted({r["repo"] for r in rows if r.get("split") == "dev"})
    words, code, pairs, n = collections.Counter(), collections.Counter(), collections.Counter(), 0
    for repo in dev:
        git = ["git", "--git-dir", f"{a.mirrors}/{repo.replace('/', '+')}/repo"]
        log = subprocess.run(git + ["log", "--no-merges", "-p", "-U0", "--no-renames",
                                    "--format=%x1eCOMMIT %H%n%B%x1f", "HEAD"],
                             capture_output=True).stdout.decode("utf-8", "replace")
        for rec in log.split("\x1e"):
            if not rec.startswith("COMMIT "):
                continue
            head, _, rest = rec.partition("\n")
            if head.split()[1][:12] in named:
                continue
            msg, _, diff = rest.partition("\x1f")
            msg = "\n".join(line for line in URL.sub(" ", msg).split("\n")
                            if not re.match(r"^\s*[\w-]+:\s", line)
                            or line.lower().startswith(("fix", "feat", "bug")))[:600]
            q = set(terms(msg))
            if not q or len(q) > 40:
                continue
            changed, source = set(), False
            for line in diff.split("\n"):
                if line.startswith("diff --git"):
                    path = line.split(" b/")[-1]
                    source = path.endswith(SOURCE) and "test" not in path.lower()
                elif source and line.startswith(("-", "+")) and not line.startswith(("---", "+++")):
                    changed.update(terms(line[1:]))
            if not changed or len(changed) > 300:
                continue
            n += 1
            words.update(q)
            code.update(changed)
            pairs.update((w, t) for w in q for t in changed)
        print(repo, n, file=sys.stderr)
    pickle.dump(dict(N=n, words=words, code=code, pairs=pairs), open(a.out, "wb"))


def evaluate(a):
    m = pickle.load(open(a.pmi, "rb"))
    by_word = collections.defaultdict(list)
    for (w, t), k in m["pairs"].items():
        if k >= 4 and w != t:
            by_word[w].append((math.log(k * m["N"] / (m["words"][w] * m["code"][t])), t))
    for w in by_word:
        by_word[w].sort(reverse=True)
    real = load(os.path.join(DATA, "realistic.jsonl"), a.realistic)
    fresh = load(os.path.join(DATA, "fresh.jsonl"), a.fresh)
    sets = [("dev", [c for c in real if c["split"] == "dev" and c["units"]]),
            ("test", [c for c in real if c["split"] == "test" and c["units"]]),
            ("fresh", [c for c in fresh if c["units"]])]
    for _, cases in sets:
        for c in cases:
            c["line_terms"] = [set(terms(line)) for line in c["lines"]]
            c["q"] = set(terms(c["row"]["query"]))
    print("setting" + "".join(f"{name + ' top 1/3/5/10':>30}" for name, _ in sets))
    print("engine score " + "".join(
        " ".join(f"{100 * v:6.1f}" for v in topk(cs, lambda c: [u["score"] for u in c["units"]]))
        for _, cs in sets))
    for tau in (1.0, 2.0):
        for top in (10, 30):
            for _, cases in sets:
                for c in cases:
                    weight = {}
                    for w in c["q"]:
                        for pmi, t in by_word.get(w, [])[:top]:
                            if pmi >= tau and t not in c["q"]:
                                weight[t] = max(weight.get(t, 0.0), pmi)
                    df = collections.Counter(t for s in c["line_terms"] for t in s if t in weight)
                    ex = []
                    for u in c["units"]:
                        held = set().union(*c["line_terms"][u["sig"]:u["end"]]) if u["end"] > u["sig"] else set()
                        ex.append(sum(weight[t] * math.log(1 + c["n"] / df[t]) for t in held if t in weight))
                    best = max(ex + [1e-9])
                    for u, e in zip(c["units"], ex):
                        u["expansion"] = e / best
            for beta in (0.1, 0.3, 0.6):
                print(f"tau {tau} top {top} beta {beta} " + "".join(
                    " ".join(f"{100 * v:6.1f}" for v in topk(
                        cs, lambda c: [u["rel"] + beta * u["expansion"] for u in c["units"]]))
                    for _, cs in sets))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("mine")
    m.add_argument("out")
    m.add_argument("--mirrors", default="/work/.mirror")
    e = sub.add_parser("eval")
    e.add_argument("pmi")
    e.add_argument("realistic")
    e.add_argument("fresh")
    a = ap.parse_args()
    mine(a) if a.cmd == "mine" else evaluate(a)


if __name__ == "__main__":
    main()
