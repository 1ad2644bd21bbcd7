"""Would tree-sitter grammars outline code better than the engine's scanners?

For each code case of a benchmark file (joined with the engine's feature dump, see README.md), the
file is parsed with its language's tree-sitter grammar, and two things are measured:

1. Boundaries: the share of the engine's definitions (by lines) whose first signature line and
   last line are exactly those of a tree-sitter definition node.
2. What a better outline could recover: the gold lines tree-sitter places inside a definition
   (function, method, type, constant, ...) that the engine's outline calls loose, split by whether
   the engine kept them, and the bytes of the loose lines the engine kept that tree-sitter would
   place in a definition (what ranking them as definitions could save at most).

    pip install numpy tree-sitter tree-sitter-rust tree-sitter-python tree-sitter-go \
        tree-sitter-javascript tree-sitter-typescript
    python3 bench-data/experiments/ts_outline.py bench-data/realistic.jsonl /tmp/x/real.tsv
"""
import collections
import os
import sys

import tree_sitter as ts
import tree_sitter_go
import tree_sitter_javascript
import tree_sitter_python
import tree_sitter_rust
import tree_sitter_typescript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from units import load  # noqa: E402

GRAMMARS = {
    "rust": tree_sitter_rust.language(),
    "python": tree_sitter_python.language(),
    "go": tree_sitter_go.language(),
    "javascript": tree_sitter_javascript.language(),
    "typescript": tree_sitter_typescript.language_typescript(),
}
# Node kinds that are definitions in at least one of the five grammars.
DEFINITIONS = {
    "function_item", "function_definition", "function_declaration", "method_declaration",
    "method_definition", "arrow_function", "function_expression", "function",
    "generator_function_declaration", "macro_definition", "struct_item", "enum_item",
    "type_declaration", "class_definition", "class_declaration", "interface_declaration",
    "type_alias_declaration", "enum_declaration", "trait_item", "impl_item", "mod_item",
    "const_item", "static_item", "lexical_declaration", "var_declaration", "const_declaration",
    "decorated_definition",
}
# Definitions that hold others: a line inside a method belongs to the method, not the class.
CONTAINERS = {"impl_item", "trait_item", "mod_item", "class_definition", "class_declaration",
              "class", "decorated_definition"}


def definitions(tree):
    """Every definition node's (first line, last line), and the innermost non-container one of
    each line."""
    spans, stack = [], [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in DEFINITIONS:
            spans.append((node.start_point[0], node.end_point[0], node.type in CONTAINERS))
        stack.extend(node.children)
    return spans


def main(jsonl, tsv):
    parsers = {k: ts.Parser(ts.Language(v)) for k, v in GRAMMARS.items()}
    bounds = collections.Counter()
    gold = collections.Counter()
    kept_bytes = collections.Counter()
    cases = [c for c in load(jsonl, tsv) if c["language"] in parsers]
    errors = 0
    for c in cases:
        tree = parsers[c["language"]].parse("\n".join(c["lines"]).encode())
        errors += tree.root_node.has_error
        spans = definitions(tree)
        exact = {(a, b) for a, b, _ in spans}
        inner = [None] * c["n"]
        for a, b, container in spans:
            if container:
                continue
            for i in range(a, min(b + 1, c["n"])):
                if inner[i] is None or inner[i][1] - inner[i][0] > b - a:
                    inner[i] = (a, b)
        for u in c["units"]:
            first, last, size = u["sig"], u["end"] - 1, u["end"] - u["pre"]
            if (first, last) in exact:
                kind = "same first and last line"
            elif any(a == first for a, _ in exact):
                kind = "same first line, other last"
            elif any(a <= first and b >= last for a, b in exact):
                kind = "inside a tree-sitter definition"
            else:
                kind = "no tree-sitter definition"
            bounds[kind] += size
        share = 1 / c["gold"].sum()
        total = c["bytes"].sum()
        for i, role in enumerate(c["roles"]):
            if role != "loose":
                continue
            where = "in a tree-sitter definition" if inner[i] else "outside definitions"
            if c["gold"][i]:
                gold[(where, "kept" if c["keep"][i] else "cut")] += share
            if c["keep"][i]:
                kept_bytes[where] += c["bytes"][i] / total
    n = len(cases)
    print(f"{jsonl}: {n} code cases, {errors} with a parse error")
    print("the engine's definitions, by lines, against tree-sitter's:")
    lines = sum(bounds.values())
    for kind, v in bounds.most_common():
        print(f"  {kind:<34} {100 * v / lines:5.1f}%")
    print("gold lines the engine's outline calls loose (mean share of a case's gold):")
    for (where, kept), v in sorted(gold.items()):
        print(f"  {where:<28} {kept:<5} {100 * v / n:5.2f}%")
    print("loose lines the engine kept (mean share of a case's bytes):")
    for where, v in sorted(kept_bytes.items()):
        print(f"  {where:<28} {100 * v / n:5.2f}%")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
