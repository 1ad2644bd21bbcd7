#!/usr/bin/env python3
"""Puts two runs of the prune_quality bench side by side as Markdown tables.

usage: python3 benches/compare_quality.py BEFORE.txt AFTER.txt [ROW_PREFIX ...]

Each file is what `cargo bench --bench prune_quality -- SET.jsonl` printed (run the two builds in
the same session: the machine is shared and noisy, and quality figures are deterministic anyway).
Rows are kept when they start with one of ROW_PREFIX (default `code`). Columns the BEFORE run
does not print (an older bench) show as `-`. One table per section (engine defaults, fitted to
10 KiB).
"""
import sys


# The columns each version of the bench prints, in order (the header's names hold spaces, and
# some touch: they are recognised whole, not split).
OLD_HEADER = ["cases", "ours reduction", "ours recall", "rec>=90%", "aggregate", "no-markers",
              "gold-only", "head reduction", "head recall", "bm25 reduction", "bm25 recall"]
NEW_HEADER = OLD_HEADER[:7] + ["visible", "names", "<head", "2-call rec", "2-call red"] \
    + OLD_HEADER[7:]


def parse(path):
    """{section title: {row name: {column: value}}} of one bench output."""
    sections, title, header = {}, None, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("== "):
            title, header = line[3:], None
            sections[title] = {}
            continue
        if title is None or "|" not in line:
            continue
        if line.startswith("source"):
            header = NEW_HEADER if "visible" in line else OLD_HEADER
            continue
        if header is None:
            continue
        words = line.replace("|", " ").split()
        sections[title][words[0]] = dict(zip(header, words[1:]))
    return sections


COLUMNS = [
    ("cases", "cases"),
    ("ours reduction", "reduction"),
    ("ours recall", "recall"),
    ("rec>=90%", "cases >= 90%"),
    ("visible", "visible"),
    ("names", "names' tokens"),
    ("<head", "below head"),
    ("2-call rec", "two calls recall"),
    ("2-call red", "two calls reduction"),
    ("head recall", "head"),
    ("bm25 recall", "BM25"),
]


def main():
    before, after = parse(sys.argv[1]), parse(sys.argv[2])
    prefixes = sys.argv[3:] or ["code"]
    for title, rows in after.items():
        print(f"\n{title}\n")
        print("| rows | " + " | ".join(label for _, label in COLUMNS) + " |")
        print("|---" * (len(COLUMNS) + 1) + "|")
        old_rows = before.get(title, {})
        for name, row in rows.items():
            if not any(name == p or name.startswith(p + ":") or name.startswith(p + "@")
                       or name.startswith(p + "~") for p in prefixes):
                continue
            old = old_rows.get(name, {})
            cells = []
            for key, _ in COLUMNS:
                new = row.get(key, "-").rstrip("%")
                was = old.get(key, "-").rstrip("%")
                if key == "cases" or was in ("-", new):
                    cells.append(new)
                else:
                    cells.append(f"{was} → {new}")
            print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
