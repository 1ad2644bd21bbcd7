#!/usr/bin/env python3
"""The serde_json `src/de.rs` case of the pruning issue, end to end over stdio.

Usage: python3 benches/serde_de_case.py BINARY DE_RS
  (DE_RS: serde-rs/json's src/de.rs, e.g. `git --git-dir=MIRROR show HEAD:src/de.rs > /tmp/de.rs`)

Runs `prune_text` and `read` with the question the issue used, at the default 10 KiB budget, and
prints: tokens before/after, whether the escape-handling lines (every line of de.rs that mentions
`escape`, and `fn deserialize_str`) are on the first page, and a `recover_text` round trip of the
first elision (the lines it cites must equal the raw file's lines). No dependencies.
"""
import json
import re
import shutil
import subprocess
import sys
import tempfile

GOAL = "how are escape sequences like \\u parsed in strings?"
MARKER = re.compile(r"⟦PRUNÉ: prune_id=(\S+) lignes (\d+)-(\d+) \((\d+)\) raison=(.*)⟧")
# The tools' compact markers, numbered in the prune id their one note names (the earlier forms,
# `[… lines a-b pruned]` and `... returns pruned lines by number]`, too: to measure older builds).
COMPACT = re.compile(r"^\[… lines? (\d+)(?:-(\d+))?(?: pruned)?\]$")
NOTE = re.compile(r"recover_text prune_id=([^\s\]]+)(?: returns pruned lines by number)?\]")


class Client:
    def __init__(self, binary, root):
        self.p = subprocess.Popen([binary, "stdio", "--root", root], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.n = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "de-case", "version": "1"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")

    def request(self, method, params):
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.n:
                return msg

    def call(self, name, args):
        return self.request("tools/call", {"name": name, "arguments": args})["result"]


def main():
    binary, path = sys.argv[1], sys.argv[2]
    raw = open(path, encoding="utf-8").read()
    raw_lines = raw.split("\n")
    wanted = [i + 1 for i, l in enumerate(raw_lines) if "escape" in l.lower() or "fn deserialize_str<" in l or "fn deserialize_string<" in l]
    root = tempfile.mkdtemp()
    shutil.copy(path, f"{root}/de.rs")
    c = Client(binary, root)
    try:
        for tool, args in [("prune_text", {"text": raw, "goal_hint": GOAL, "source_type": "code"}),
                           ("read", {"path": "de.rs", "context_focus_question": GOAL})]:
            r = c.call(tool, args)
            text = r["content"][0]["text"]
            if tool == "prune_text":
                res = json.loads(text)
                shown, st = res["pruned_text"], res["stats"]
                figures = (f"{st['original_lines']} lines, kept {st['kept_lines']}, tokens {st['tokens_est_before']} -> "
                           f"{st['tokens_est_after']} ({100 * (1 - st['tokens_est_after'] / st['tokens_est_before']):.1f}% fewer), "
                           f"warnings {res['warnings']}")
            else:
                shown = text
                # `_meta` since schemaVersion 2; `structuredContent` in earlier builds.
                p = (r.get("_meta", {}).get("mcp-pruner/result") or r.get("structuredContent"))["pruning"]
                figures = (f"tokens {p.get('tokens_before')} -> {p.get('tokens_after')} "
                           f"({100 * (1 - p['tokens_after'] / p['tokens_before']):.1f}% fewer), applied {p['applied']}, "
                           f"{len(text)} bytes read by the model")
            shown_set = set(shown.split("\n"))
            on_page = [n for n in wanted if raw_lines[n - 1] in shown_set]
            print(f"{tool}: {figures}")
            print(f"  escape-handling lines on the first page: {len(on_page)}/{len(wanted)} "
                  f"(missing: {[n for n in wanted if n not in on_page][:12]})")
            markers = [(m.group(1), int(m.group(2)), int(m.group(3)), m.group(5))
                       for m in (MARKER.search(l) for l in shown.split("\n")) if m]
            note = NOTE.search(shown)
            if note:
                markers += [(note.group(1), int(m.group(1)), int(m.group(2) or m.group(1)), "compact")
                            for m in (COMPACT.match(l) for l in shown.split("\n")) if m]
            if markers:
                pid, a, b, why = markers[len(markers) // 2]
                rec = c.call("recover_text", {"prune_id": pid, "ranges": [{"start_line": a, "end_line": b}],
                                              "include_line_numbers": False, "max_output_bytes": 1_000_000})
                got = json.loads(rec["content"][0]["text"])["raw_text"]
                want = "\n".join(raw_lines[a - 1:b]) + "\n"
                print(f"  recover_text {pid} lines {a}-{b} ({why}): "
                      f"{'identical to the raw lines' if got == want else 'DIFFERS from the raw lines'}; "
                      f"{len(markers)} markers on the page")
    finally:
        c.p.stdin.close()
        c.p.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
