"""How much the engine hedges, by the shape of the file: the analysis behind the few-definitions
and long-best-definition rules of `select` (src/prune/engine/code/mod.rs, stop 30).

`python3 hedge.py ratios JSONL TSV` prints, for the definitions the engine keeps past each file's best
three, the gold recall they hold per point of the bytes they cost (mean per case, as points), with the
cases split into quartiles of a per-case feature: the number of definitions (`units`), the share of
the file's bytes the best definition takes (`best_share`), and more. A ratio well under the curve's
own rate (about 1) in some quartile on every set is a hedge that does not pay there.

`python3 hedge.py simulate` replays the engine's keep masks with the definitions past a file's best
half (at least 4) kept only if they score 0.3 of the best or fit the line budget, and with the weak
ones past the best two left out when the best definition is a tenth of the file, on the realistic,
fresh and failure_code dumps (`/tmp/x/{real,fresh,fc}.tsv`), and prints the change in reduction and
recall (bytes standing in for tokens). Run it on a dump of the engine *before* the rules (535fc21);
on a dump of the engine with them it changes only 4 of 441 realistic and 2 of 44 failure_code cases:
the replay approximates `select` from the dump's definitions and final scores.

The dumps come from `dump_unit_features` (see README.md, step 1).
"""
import collections
import math
import sys

import numpy as np

from units import load, measure

SETS = {"real": ("../realistic.jsonl", "/tmp/x/real.tsv"),
        "fresh": ("../fresh.jsonl", "/tmp/x/fresh.tsv"),
        "fc": ("../failure_code.jsonl", "/tmp/x/fc.tsv")}


def case_features(c):
    us = c["units"]
    top = min(us, key=lambda u: u["rank"])
    return dict(units=len(us), best_share=top["cost"],
                kept_share=c["bytes"][c["keep"]].sum() / c["bytes"].sum(),
                question=len(c["row"]["query"]))


def ratios(jsonl, tsv):
    cases = [c for c in load(jsonl, tsv) if len(c["units"]) >= 2]
    n = len(cases)
    feats = {c["case"]: case_features(c) for c in cases}
    for f in ["units", "best_share", "kept_share", "question"]:
        vals = np.array([feats[c["case"]][f] for c in cases])
        qs = np.quantile(vals, [0.25, 0.5, 0.75])
        acc = collections.defaultdict(lambda: [0.0, 0.0])
        for c in cases:
            b = int(np.searchsorted(qs, feats[c["case"]][f], side="right"))
            tot, gold = c["bytes"].sum(), c["gold"].sum()
            for u in c["units"]:
                if u["rank"] < 3:
                    continue
                s = slice(u["pre"], u["end"])
                acc[b][0] += c["bytes"][s][c["keep"][s]].sum() / tot
                acc[b][1] += (c["gold"][s] & c["keep"][s]).sum() / gold
        cells = []
        for b in sorted(acc):
            cost, held = acc[b]
            bound = f"<={qs[b]:.3g}" if b < 3 else f">{qs[2]:.3g}"
            cells.append(f"q{b}[{bound}] {held / max(cost, 1e-9):.2f} ({100 * cost / n:.1f} pts of bytes)")
        print(f"{f:11} " + "  ".join(cells))


def reselect(c, keep):
    """The two rules applied to the engine's selection of `c` (definitions only)."""
    us = c["units"]
    if not us:
        return keep
    best = max(u["score"] for u in us)
    order = sorted([u for u in us if u["score"] > 0 and u["score"] >= 0.15 * best],
                   key=lambda u: (-u["score"], u["k"]))
    budget, used, chosen = int(0.3 * c["n"]), 0, set()
    share = max(4, math.ceil(0.5 * len(us)))
    big_best = bool(order) and (order[0]["end"] - order[0]["pre"]) >= 0.1 * c["n"]
    for rank, u in enumerate(order):
        size = u["end"] - u["pre"]
        weak = u["score"] < 0.3 * best
        if big_best and rank >= 2 and weak:
            continue
        if not (rank < 12 and (rank < share or not weak)) and used + size > budget:
            continue
        used += size
        chosen.add(u["k"])
    for u in us:
        if u["selected"] and u["k"] not in chosen:
            keep[u["pre"]:u["end"]] = False
    return keep


def simulate():
    for name, (jsonl, tsv) in SETS.items():
        before, after = [], []
        for c in load(jsonl, tsv):
            before.append(measure(c, c["keep"]))
            after.append(measure(c, reselect(c, c["keep"].copy())))
        a, b = np.array(before), np.array(after)
        print(f"{name:6} {100 * a[:, 0].mean():.1f}%/{100 * a[:, 1].mean():.1f}% -> "
              f"{100 * b[:, 0].mean():.1f}%/{100 * b[:, 1].mean():.1f}% (reduction/recall)")


if __name__ == "__main__":
    if sys.argv[1:2] == ["ratios"]:
        ratios(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["simulate"]:
        simulate()
    else:
        sys.exit(__doc__)
