"""Gold recall of the code cases counted on the gold lines that are not blank, beside the bench's
own recall (every gold line): how much of a change's recall is blank lines (stop 31 kept the blank
lines between kept code and a marker, which cost no token and are often where a fix inserts).

    rm -f /tmp/dump.tsv
    QUALITY_DUMP=/tmp/dump.tsv cargo bench --bench prune_quality -- bench-data/realistic.jsonl
    python3 bench-data/experiments/nonblank_recall.py bench-data/realistic.jsonl /tmp/dump.tsv

Reads the dump's rows at the defaults (budget 0); a raw return counts every line kept, as in the
bench. Standard library only.
"""
import json
import sys


def main(jsonl, dump):
    cases = {}
    with open(jsonl) as f:
        for line in f:
            row = json.loads(line)
            cases[row["origin"]] = row
    every, nonblank = [], []
    with open(dump) as f:
        for line in f:
            origin, budget, mask, _ = line.rstrip("\n").split("\t")
            row = cases[origin]
            if budget != "0" or row["source_type"] != "code":
                continue
            text = row["text"].split("\n")
            gold = [g for g in row["gold_lines"] if 1 <= g <= len(mask)]
            if not gold:
                continue
            every.append(sum(mask[g - 1] == "1" for g in gold) / len(gold))
            solid = [g for g in gold if text[g - 1].strip()]
            if solid:
                nonblank.append(sum(mask[g - 1] == "1" for g in solid) / len(solid))
    print(f"code cases: {len(every)}; recall {100 * sum(every) / len(every):.1f}%; "
          f"on non-blank gold lines {100 * sum(nonblank) / len(nonblank):.1f}% ({len(nonblank)} cases)")


if __name__ == "__main__":
    main(*sys.argv[1:3])
