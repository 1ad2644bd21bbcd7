"""Per-definition data of the code strategy, for ranking experiments.

`load(jsonl, tsv)` joins a benchmark file with the features the engine wrote for it
(`dump_unit_features`, see README.md) and returns one dict per code case that has gold lines:
its lines, per-line arrays, and its definitions with what the engine computed plus a few
text-derived features. `topk` measures a ranking by where the gold lands.
"""
import collections
import json
import math
import re

import numpy as np

BRANCH = re.compile(r"\b(if|else|elif|match|case|for|while|switch|catch|except|try)\b|&&|\|\||\?")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def load(jsonl, tsv):
    rows = [json.loads(line) for line in open(jsonl)]
    lines_of = collections.defaultdict(list)
    units_of = collections.defaultdict(list)
    for line in open(tsv):
        p = line.rstrip("\n").split("\t")
        case = int(p[1])
        if p[0] == "L":
            lines_of[case].append((p[3], int(p[4]), int(p[5]), int(p[6]), int(p[7]), float(p[8])))
        elif p[0] == "U":
            units_of[case].append(dict(
                k=int(p[2]), pre=int(p[3]), sig=int(p[4]), sig_end=int(p[5]), end=int(p[6]),
                raw=float(p[7]), score=float(p[8]), selected=int(p[9]), bm25=float(p[10]),
                sig_match=float(p[11]), header=float(p[12]), coverage=float(p[13]),
                terms=int(p[14]), depth=int(p[15]), evidence=int(p[16]), test=int(p[17]),
                data=int(p[18]), best_line=float(p[19]), name=p[20] if len(p) > 20 else ""))
    cases = []
    for case in sorted(lines_of):
        r = rows[case]
        ls = lines_of[case]
        gold = np.array([x[2] for x in ls], bool)
        if not gold.any():
            continue
        c = dict(case=case, row=r, lines=r["text"].split("\n")[:len(ls)], n=len(ls),
                 roles=[x[0] for x in ls], gold=gold, keep=np.array([x[3] for x in ls], bool),
                 bytes=np.array([x[4] + 1 for x in ls], float), units=units_of[case],
                 split=r.get("split", ""), language=r.get("language", ""))
        derive(c)
        cases.append(c)
    return cases


def derive(c):
    """Text-derived features and the gold share of each definition (`y`)."""
    idents = collections.Counter(IDENT.findall("\n".join(c["lines"])))
    total = c["bytes"].sum()
    best = max([u["score"] for u in c["units"]] + [1e-9])
    best_raw = max([u["raw"] for u in c["units"]] + [1e-9])
    order = sorted(range(len(c["units"])), key=lambda k: (-c["units"][k]["score"], k))
    rank = {k: r for r, k in enumerate(order)}
    for u in c["units"]:
        body = c["lines"][u["sig_end"]:u["end"]]
        branches = sum(len(BRANCH.findall(line)) for line in body)
        u["lines"] = u["end"] - u["pre"]
        u["cost"] = c["bytes"][u["pre"]:u["end"]].sum() / total
        u["branches"] = branches
        u["branch_density"] = branches / max(1, len(body))
        u["refs"] = max(0, idents.get(u["name"], 0) - 1) if u["name"] else 0
        u["pos"] = u["sig"] / max(1, c["n"])
        u["rel"] = u["score"] / best
        u["rel_raw"] = u["raw"] / best_raw
        u["rank"] = rank[u["k"]]
        u["y"] = c["gold"][u["pre"]:u["end"]].sum() / c["gold"].sum()


FEATURES = ["log score", "score/best", "score before evidence/best", "log rank", "log bm25",
            "log signature match", "log header", "coverage", "distinct terms", "evidence", "test",
            "data", "depth", "log lines", "byte share", "branch density", "log references",
            "position", "best line/best in file", "log definitions", "log bytes",
            "(score/best)^2", "rank 0", "rank < 3", "rank < 10", "log branches"]


def features(c, u):
    best_line = max([v["best_line"] for v in c["units"]] + [1e-9])
    return [math.log1p(u["score"]), u["rel"], u["rel_raw"], math.log1p(u["rank"]),
            math.log1p(u["bm25"]), math.log1p(u["sig_match"]), math.log1p(u["header"]),
            u["coverage"], u["terms"], u["evidence"], u["test"], u["data"], min(u["depth"], 2),
            math.log1p(u["lines"]), u["cost"], u["branch_density"], math.log1p(u["refs"]),
            u["pos"], u["best_line"] / best_line, math.log1p(len(c["units"])),
            math.log(c["bytes"].sum()), u["rel"] ** 2, float(u["rank"] == 0),
            float(u["rank"] < 3), float(u["rank"] < 10), math.log1p(u["branches"])]


def topk(cases, score, ks=(1, 3, 5, 10)):
    """Mean share of each case's gold in its `k` best definitions by `score(case) -> array`."""
    out = []
    for k in ks:
        shares = []
        for c in cases:
            if not c["units"]:
                continue
            order = np.argsort(-np.asarray(score(c)), kind="stable")
            y = np.array([u["y"] for u in c["units"]])
            shares.append(y[order[:k]].sum())
        out.append(float(np.mean(shares)))
    return out


def measure(c, keep, marker_bytes=30, note_bytes=120):
    """(reduction, recall) of keeping the lines flagged in `keep`, bytes as the cost, one marker
    per removed run and the note; no savings means the raw text (reduction 0, recall 1)."""
    runs = int(np.sum(~keep & np.concatenate(([True], keep[:-1]))))
    out = c["bytes"][keep].sum() + (runs * marker_bytes + note_bytes if runs else 0)
    reduction = 1 - out / c["bytes"].sum()
    if reduction <= 0:
        return 0.0, 1.0
    return reduction, (c["gold"] & keep).sum() / c["gold"].sum()
