"""Pseudo-relevance feedback inside one file: the goal expanded with the rarer identifier parts of
its best definitions (by the engine's score), every definition re-scored with the expansion.

Usage: python3 feedback.py REALISTIC_FEATURES.tsv FRESH_FEATURES.tsv (what `dump_unit_features`
wrote, see README.md). Prints, per weight of the expansion (a share of the best score), the share
of the gold in the top 1/3/5/10 definitions on the `dev` and `test` splits and on `fresh.jsonl`.
"""
import collections
import math
import os
import re
import sys

import numpy as np

from units import load, topk

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# Keywords and words every file has: never an expansion.
COMMON = set("""self this def fn func function return let var const mut pub use import from class
struct impl if else elif for while in not and or none null nil true false int str bool string err
error new type async await match case break continue try except catch raise throw with as static
void public private package go defer range map len make append interface args kwargs super crate
mod where trait enum the value result ok some option vec box get set""".split())
TOP = 3          # best definitions the expansion comes from
TERMS = 20       # expansion terms at most
MAX_DF = 0.2     # a part in more than this share of the definitions does not expand


def parts(line):
    out = []
    for ident in IDENT.findall(line):
        for piece in ident.split("_"):
            for p in CAMEL.findall(piece):
                p = p.lower()
                if len(p) >= 3 and p not in COMMON:
                    out.append(p)
    return out


def prepare(c):
    c["uterms"] = [set(t for line in c["lines"][u["sig"]:u["end"]] for t in parts(line))
                   for u in c["units"]]
    c["qterms"] = set(parts(c["row"]["query"]))


def expanded(c, weight):
    us = c["units"]
    s = np.array([u["score"] for u in us], float)
    if len(us) < 4 or s.max() <= 0 or weight == 0:
        return s
    n = len(us)
    df = collections.Counter(t for ts in c["uterms"] for t in ts)
    cand = collections.Counter()
    for k in np.argsort(-s, kind="stable")[:TOP]:
        if s[k] <= 0:
            continue
        for t in c["uterms"][k]:
            if t in c["qterms"] or df[t] > MAX_DF * n or df[t] < 2:
                continue
            cand[t] += s[k] / s.max() * math.log(n / df[t])
    exp = dict(cand.most_common(TERMS))
    e = np.array([sum(math.log(n / df[t]) for t in ts if t in exp) for ts in c["uterms"]])
    if e.max() <= 0:
        return s
    return s + weight * s.max() * e / e.max()


def main():
    real = load(os.path.join(DATA, "realistic.jsonl"), sys.argv[1])
    fresh = load(os.path.join(DATA, "fresh.jsonl"), sys.argv[2])
    for c in real + fresh:
        if c["units"]:
            prepare(c)
    sets = [("dev", [c for c in real if c["split"] == "dev" and c["units"]]),
            ("test", [c for c in real if c["split"] == "test" and c["units"]]),
            ("fresh", [c for c in fresh if c["units"]])]
    print("weight  " + "  ".join(f"{name + ' top 1/3/5/10':>26}" for name, _ in sets))
    for w in [0, 0.1, 0.2, 0.3, 0.5]:
        print(f"{w:<6}  " + "  ".join(
            " ".join(f"{100 * v:6.1f}" for v in topk(cs, lambda c: expanded(c, w)))
            for _, cs in sets))


if __name__ == "__main__":
    main()
