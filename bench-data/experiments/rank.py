#!/usr/bin/env python3
"""How well other signals rank definitions than the engine's score (benches/README.md, "Signals
measured and not shipped").

Usage: python3 rank.py REALISTIC_TSV FRESH_TSV [--embeddings DIR] [--recency DIR]

REALISTIC_TSV / FRESH_TSV: `dump_unit_features` output for bench-data/realistic.jsonl and
fresh.jsonl. --embeddings DIR: minilm.py's realistic.npz and fresh.npz. --recency DIR:
recency.py's realistic.json and fresh.json. Every model is fitted on the realistic `dev` split and
read on its `test` split and on the fresh set. Prints top-1/3/5/10 gold shares per ranking, then the
frontier check: definitions chosen by the logistic model's probability per byte, the engine's other
decisions kept, against the engine's own plan.
"""
import argparse
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from units import features, load, measure, topk  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..")


def attach_embeddings(cases, path):
    d = np.load(path, allow_pickle=True)
    q = {int(k): v for k, v in zip(d["case"], d["query"])}
    u = {(int(a), int(b)): v for (a, b), v in zip(d["unit_key"], d["unit"])}
    for c in cases:
        sims = [float(u[(c["case"], x["k"])] @ q[c["case"]]) for x in c["units"]]
        best = max(sims + [1e-9])
        order = np.argsort(-np.array(sims)) if sims else []
        for r, k in enumerate(order):
            c["units"][k]["sim_rank"] = r
        for x, s in zip(c["units"], sims):
            x["sim"], x["sim_rel"] = s, s / best if best > 0 else 0.0


def attach_recency(cases, path):
    ranks = json.load(open(path))
    for c in cases:
        rk = ranks[str(c["case"])]["rank"][:c["n"]]
        rk = np.array(rk + [999] * (c["n"] - len(rk)))
        for u in c["units"]:
            seg = rk[u["pre"]:u["end"]]
            u["last0"] = float((seg == 0).mean()) if len(seg) else 0.0
            u["last3"] = float((seg <= 2).mean()) if len(seg) else 0.0
            u["any0"] = float((seg == 0).any())
            u["any3"] = float((seg <= 2).any())
            u["newest"] = math.log1p(min(int(seg.min()), 50)) if len(seg) else math.log1p(50)


def with_embedding(c, u):
    return features(c, u) + [u["sim"], u["sim_rel"], math.log1p(u["sim_rank"])]


def with_recency(c, u):
    return features(c, u) + [u["last0"], u["last3"], u["any0"], u["any3"], u["newest"]]


def fit(cases, feats):
    from sklearn.linear_model import LogisticRegression
    x = np.array([feats(c, u) for c in cases for u in c["units"]])
    y = np.array([u["y"] > 0 for c in cases for u in c["units"]])
    mu, sd = x.mean(0), x.std(0) + 1e-9
    model = LogisticRegression(C=1.0, max_iter=3000).fit((x - mu) / sd, y)
    return lambda c: model.decision_function((np.array([feats(c, u) for u in c["units"]]) - mu) / sd), \
        lambda c: model.predict_proba((np.array([feats(c, u) for u in c["units"]]) - mu) / sd)[:, 1]


def fit_trees(cases, feats):
    import lightgbm as lgb
    x = np.array([feats(c, u) for c in cases for u in c["units"]])
    y = np.array([int(u["y"] > 0) for c in cases for u in c["units"]])
    model = lgb.LGBMRanker(objective="lambdarank", n_estimators=200, learning_rate=0.05,
                           num_leaves=8, min_child_samples=20, verbose=-1)
    model.fit(x, y, group=[len(c["units"]) for c in cases])
    return lambda c: model.predict(np.array([feats(c, u) for u in c["units"]]))


def frontier(cases, prob, lambdas=(0.3, 0.5, 0.7, 1.0, 1.3, 1.6, 2.0)):
    """Mean (reduction, recall) when definitions are kept whole iff their normalised probability
    is at least `lambda` times their share of the bytes, every other engine decision kept."""
    points = []
    for lam in lambdas:
        res = []
        for c in cases:
            keep = c["keep"].copy()
            if c["units"]:
                p = prob(c)
                p = p / p.sum()
                for u, pu in zip(c["units"], p):
                    if pu >= lam * u["cost"]:
                        if not u["selected"]:
                            keep[u["pre"]:u["end"]] = True
                    else:
                        keep[u["pre"]:u["end"]] = False
            res.append(measure(c, keep))
        points.append((lam, np.mean([r[0] for r in res]), np.mean([r[1] for r in res])))
    return points


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("realistic")
    ap.add_argument("fresh")
    ap.add_argument("--embeddings")
    ap.add_argument("--recency")
    a = ap.parse_args()
    real = load(os.path.join(DATA, "realistic.jsonl"), a.realistic)
    fresh = load(os.path.join(DATA, "fresh.jsonl"), a.fresh)
    if a.embeddings:
        attach_embeddings(real, os.path.join(a.embeddings, "realistic.npz"))
        attach_embeddings(fresh, os.path.join(a.embeddings, "fresh.npz"))
    if a.recency:
        attach_recency(real, os.path.join(a.recency, "realistic.json"))
        attach_recency(fresh, os.path.join(a.recency, "fresh.json"))
    dev = [c for c in real if c["split"] == "dev" and c["units"]]
    test = [c for c in real if c["split"] == "test" and c["units"]]
    fr = [c for c in fresh if c["units"]]
    rankings = [("the engine's score", lambda c: [u["score"] for u in c["units"]])]
    lr_score, lr_prob = fit(dev, features)
    rankings.append(("logistic regression, 26 features", lr_score))
    rankings.append(("gradient-boosted trees (lambdarank)", fit_trees(dev, features)))
    if a.embeddings:
        rankings.append(("logistic regression + MiniLM similarity", fit(dev, with_embedding)[0]))
        rankings.append(("MiniLM similarity alone", lambda c: [u["sim"] for u in c["units"]]))
    if a.recency:
        rankings.append(("logistic regression + git recency", fit(dev, with_recency)[0]))
    print(f"{'ranking':<42} {'test top 1/3/5/10':>28} {'fresh top 1/3/5/10':>28}")
    for name, score in rankings:
        t = topk(test, score)
        f = topk(fr, score)
        print(f"{name:<42} " + " ".join(f"{100 * v:6.1f}" for v in t) + "  "
              + " ".join(f"{100 * v:6.1f}" for v in f))
    print("\nfrontier: definitions by the logistic model's probability per byte (reduction/recall)")
    for name, cs in [("dev", dev), ("test", test), ("fresh", fr)]:
        own = [measure(c, c["keep"]) for c in cs]
        print(f"{name:<6} engine {100 * np.mean([r[0] for r in own]):.1f}/"
              f"{100 * np.mean([r[1] for r in own]):.1f}  model "
              + "  ".join(f"{100 * r:.1f}/{100 * k:.1f}" for _, r, k in frontier(cs, lr_prob)))


if __name__ == "__main__":
    main()
