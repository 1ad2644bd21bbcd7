#!/usr/bin/env python3
"""Does a better definition ranking keep more of a fix once `select` uses it? (stop 46)

Usage: python3 lr_select.py DIR   (DIR holds realistic.tsv, multilang.tsv, issue_reports.tsv:
`dump_unit_features` output for the three benchmark files, see README.md)

A logistic regression over units.py's 26 features is fitted on the `dev` cases of the three sets
pooled, five folds grouped by repository, and each case is scored by the fold that did not see its
repository. Prints the share of the gold in the top 1/3/5/10 definitions (engine score against the
model), then replays the engine's `select` (src/prune/engine/code/mod.rs: the floor, the guaranteed
best, the size rules and the 30% budget) with the definitions in the engine's order and in the
model's, everything else as the engine decided (a definition newly selected is kept whole, one no
longer selected keeps its signature), and prints reduction and recall in bytes (units.measure).
Env: DROP=i,j (feature indices left out), ALPHA=a (order by log(score) + a * the model's logit).
"""
import math
import os
import sys

import numpy as np
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from units import features as all_features, load, measure, topk  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DROP = [int(x) for x in os.environ.get("DROP", "").split(",") if x]
ALPHA = float(os.environ.get("ALPHA", "-1"))


def features(c, u):
    return [v for i, v in enumerate(all_features(c, u)) if i not in DROP]


def select(c, key):
    """The engine's `select` with the candidates in the order of `key` (higher first)."""
    us, n = c["units"], c["n"]
    sc = [u["score"] for u in us]
    best = max(sc + [0.0])
    if best <= 0:
        return [u["selected"] for u in us]
    order = [k for k in range(len(us)) if sc[k] > 0 and sc[k] >= 0.15 * best]
    order.sort(key=lambda k: (-key[k], k))
    budget = int(0.3 * n)
    share = max(math.ceil(0.5 * len(us)), 4)
    size = lambda k: us[k]["end"] - us[k]["pre"]
    big_best = bool(order) and size(order[0]) >= 0.1 * n
    keep, used = [0] * len(us), 0
    for rank, k in enumerate(order):
        weak = sc[k] < 0.3 * best
        if big_best and rank >= 2 and weak:
            continue
        if not (rank < 12 and (rank < share or not weak)) and used + size(k) > budget:
            continue
        used += size(k)
        keep[k] = 1
    return keep


def replay(c, sel):
    keep = c["keep"].copy()
    for u, s in zip(c["units"], sel):
        if s and not u["selected"]:
            keep[u["pre"]:u["end"]] = True
        elif u["selected"] and not s:
            keep[u["pre"]:u["sig"]] = False
            keep[u["sig_end"]:u["end"]] = False
    return keep


def main(tsv_dir):
    sets = {}
    for s in ["realistic", "multilang", "issue_reports"]:
        cases = load(os.path.join(DATA, f"{s}.jsonl"), os.path.join(tsv_dir, f"{s}.tsv"))
        for c in cases:
            c["repo"] = c["row"].get("repo") or c["row"]["origin"].split("@")[0]
        sets[s] = [c for c in cases if c["split"] == "dev" and c["units"]]
    dev = [c for cases in sets.values() for c in cases]
    repos = sorted({c["repo"] for c in dev})
    np.random.RandomState(0).shuffle(repos)
    fold = {r: i % 5 for i, r in enumerate(repos)}
    logit = {}
    for f in range(5):
        train = [c for c in dev if fold[c["repo"]] != f]
        x = np.array([features(c, u) for c in train for u in c["units"]])
        y = np.array([u["y"] > 0 for c in train for u in c["units"]])
        mu, sd = x.mean(0), x.std(0) + 1e-9
        model = LogisticRegression(C=1.0, max_iter=3000).fit((x - mu) / sd, y)
        for c in dev:
            if fold[c["repo"]] == f:
                xs = np.array([features(c, u) for u in c["units"]])
                logit[id(c)] = model.decision_function((xs - mu) / sd)
    pct = lambda v: " ".join(f"{100 * x:.1f}" for x in v)
    for s, cases in sets.items():
        engine = topk(cases, lambda c: [u["score"] for u in c["units"]])
        model = topk(cases, lambda c: logit[id(c)])
        print(f"{s} ({len(cases)} dev cases) top 1/3/5/10: engine {pct(engine)} | model {pct(model)}")
        ours, theirs = [], []
        for c in cases:
            p = logit[id(c)]
            key = list(p) if ALPHA < 0 else [
                math.log(max(u["score"], 1e-9)) + ALPHA * v for u, v in zip(c["units"], p)]
            ours.append(measure(c, replay(c, select(c, [u["score"] for u in c["units"]]))))
            theirs.append(measure(c, replay(c, select(c, key))))
        a, b = 100 * np.array(ours).mean(0), 100 * np.array(theirs).mean(0)
        print(f"  select in the engine's order: {a[0]:.1f}% reduction, {a[1]:.1f}% recall; "
              f"in the model's: {b[0]:.1f}%, {b[1]:.1f}%")


if __name__ == "__main__":
    main(sys.argv[1])
