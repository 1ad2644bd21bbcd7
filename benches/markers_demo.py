#!/usr/bin/env python3
"""What a miss looks like to the model, on real files: a `read` with a question, the markers it
shows (with the names they carry, and without them as they read before), what the names cost, and
a `recover_text` round trip by question, through the real binary over stdio.

usage: python3 benches/markers_demo.py BIN SET.jsonl ORIGIN_SUBSTRING [RECOVERY_QUESTION]

The case (file text, question, gold lines) is the first of SET.jsonl whose origin contains
ORIGIN_SUBSTRING. Tokens are o200k counts made by the server itself (`tokens_before` of a `bash`
`cat` with a question, which counts the raw stdout exactly). The recovery question defaults to the
read's own question (the benchmark's "two calls").
"""
import json
import os
import re
import subprocess
import sys
import tempfile

MARKER = re.compile(r"^\[… lines? (\d+)(?:-(\d+))?(?:: (.+))?\]$")


class Client:
    def __init__(self, binary, root):
        self.p = subprocess.Popen([binary, "stdio", "--root", root, "--no-ledger"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        self.n = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "markers_demo", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def request(self, method, params):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.n:
                return msg

    def call(self, tool, args):
        return self.request("tools/call", {"name": tool, "arguments": args})["result"]

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)



def located(text):
    """Line numbers of the rows of a result by question, read as the model reads them: a marker
    `[… lines a-b]` says the next row is line b+1, every other row follows the one above."""
    rows, nxt = [], 1
    for line in text.removesuffix("\n").split("\n"):
        m = re.match(r"^\[… lines? (\d+)(?:-(\d+))?(?::.*)?\]$", line)
        if m:
            nxt = int(m.group(2) or m.group(1)) + 1
        else:
            rows.append(nxt)
            nxt += 1
    return rows

def tokens(client, root, text):
    """o200k tokens of `text`, counted by the server (raw stdout of a pruned `bash`)."""
    with open(os.path.join(root, ".count.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    r = client.call("bash", {"cmd": "cat .count.txt", "context_focus_question": "count"})
    return r["_meta"]["mcp-pruner/result"]["pruning"]["tokens_before"]


def main():
    binary, set_path, origin = sys.argv[1:4]
    case = next(c for c in map(json.loads, open(set_path, encoding="utf-8"))
                if origin in c["origin"])
    question = case["query"]
    again = sys.argv[4] if len(sys.argv) > 4 else question
    name = os.path.basename(case["origin"].split(":")[-1].split(" ")[0])
    gold = set(case["gold_lines"])
    raw = case["text"].split("\n")
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, name), "w", encoding="utf-8") as f:
            f.write(case["text"])
        c = Client(binary, root)
        first = c.call("read", {"path": name, "context_focus_question": question})
        text = first["content"][0]["text"]
        meta = first["_meta"]["mcp-pruner/result"]
        prune_id = meta["pruning"]["prune_id"]
        markers = [m for m in map(MARKER.match, text.split("\n")) if m]
        bare = "\n".join(MARKER.sub(lambda m: f"[… lines {m.group(1)}-{m.group(2)}]"
                                    if m.group(2) else f"[… line {m.group(1)}]", line)
                         for line in text.split("\n"))
        with_names, without = tokens(c, root, text), tokens(c, root, bare)
        # Lines the read showed: everything but the marked runs.
        hidden = set()
        for m in markers:
            a = int(m.group(1))
            b = int(m.group(2) or a)
            hidden.update(range(a, b + 1))
        shown = set(range(1, len(raw) + 1)) - hidden
        second = c.call("recover_text", {"prune_id": prune_id, "context_focus_question": again})
        # The model reads the lines plain, closed by the summary in brackets; the rest of the
        # result is in `_meta` (recover_text schemaVersion 6).
        answer = second["content"][0]["text"]
        result = second["_meta"]["mcp-pruner/result"]
        lines = answer[:answer.rfind("\n") + 1]
        back = set(located(lines))
        second_tokens = tokens(c, root, answer)
        raw_tokens = meta["pruning"]["tokens_before"]
        c.close()
    print(f"## {case['origin']}\n")
    print(f"question: {question[:300]!r}\n")
    print(f"raw file: {len(raw)} lines, {raw_tokens} o200k tokens; the read shows "
          f"{len(shown)} lines in {with_names} tokens ({100 - 100 * with_names / raw_tokens:.0f}% "
          f"fewer); gold lines kept {len(gold & shown)}/{len(gold)}\n")
    print(f"markers the model reads ({len(markers)}), after / before:\n")
    for m in markers:
        plain = f"[… lines {m.group(1)}-{m.group(2)}]" if m.group(2) else f"[… line {m.group(1)}]"
        print(f"    {m.group(0)}\n      was {plain}")
    print(f"\nnames cost {with_names - without} tokens ({100 * (with_names - without) / with_names:.1f}% "
          f"of the read's {with_names})\n")
    print(f"recover_text prune_id={prune_id} context_focus_question={again[:80]!r}: "
          f"{result['metadata'].get('returned_lines')} lines in {second_tokens} tokens; "
          f"gold lines after both calls {len(gold & (shown | back))}/{len(gold)}; both calls "
          f"{with_names + second_tokens} tokens, {100 - 100 * (with_names + second_tokens) / raw_tokens:.0f}% "
          f"fewer than the raw file\n")
    print("recovered (first lines):\n")
    for line in lines.split("\n")[:12]:
        print(f"    {line[:120]}")


if __name__ == "__main__":
    main()
