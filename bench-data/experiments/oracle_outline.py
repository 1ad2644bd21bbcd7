"""What the engine's outline allows at full recall, per language: keep whole every definition that
holds a gold line and every line outside definitions, drop the other definitions, and measure the
share of the bytes dropped (the oracle reduction) and the share of lines outside definitions. Where
the oracle reduction is low, the outline leaves too much outside definitions for any ranking to
remove. Reads a benchmark file and its feature dump (`L` rows):

    FEATURES_DATA=bench-data/multilang.jsonl FEATURES_OUT=/tmp/feat.tsv \
      cargo test --release --lib dump_unit_features -- --ignored
    python3 bench-data/experiments/oracle_outline.py bench-data/multilang.jsonl /tmp/feat.tsv
"""

import collections
import json
import sys


def main(data, dump):
    cases = [json.loads(line) for line in open(data)]
    rows = collections.defaultdict(list)
    for line in open(dump):
        f = line.rstrip("\n").split("\t")
        if f[0] == "L":
            # kind, unit, gold, bytes
            rows[int(f[1])].append((f[3], int(f[4]), f[5] == "1", int(f[7])))
    by_language = collections.defaultdict(lambda: [0, 0.0, 0.0, 0])
    for case, lines in rows.items():
        language = cases[case]["language"]
        gold_units = {unit for _, unit, gold, _ in lines if gold and unit >= 0}
        total = sum(size + 1 for *_, size in lines)
        kept = sum(size + 1 for _, unit, _, size in lines if unit < 0 or unit in gold_units)
        loose = sum(size + 1 for kind, *_, size in lines if kind == "loose")
        acc = by_language[language]
        acc[0] += 1
        acc[1] += 1 - kept / total
        acc[2] += loose / total
        acc[3] += len({unit for _, unit, _, _ in lines if unit >= 0})
    print(f"{'language':<11} {'cases':>5} {'oracle reduction':>17} {'loose bytes':>12} {'definitions':>12}")
    for language, (n, oracle, loose, units) in sorted(by_language.items()):
        print(f"{language:<11} {n:>5} {100 * oracle / n:>16.1f}% {100 * loose / n:>11.1f}% {units / n:>12.1f}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
