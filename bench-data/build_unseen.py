#!/usr/bin/env python3
"""A holdout of fix-commit cases in languages no other set holds (Swift, Elixir, Scala, Dart,
Lua, Haskell, Clojure, Erlang), to see whether the engine stays above head-of-file truncation where nothing was fitted.

The same mining as build_multilang.py (and through it build_realistic.py): commit messages as
questions, the parent file as the text, removed/modified lines as the gold. Every case is
marked split "holdout": no constant or rule is fitted on it; read it to check, not to tune.

Usage:
    python3 bench-data/build_unseen.py --mirrors /work/.mirror --out bench-data/unseen.jsonl

The same script builds margin.jsonl, fix commits of other repositories in the left-margin
languages (Haskell, Erlang, Clojure, OCaml), all "dev", to fit the margin outline on without
reading the holdout:
    python3 bench-data/build_unseen.py --repos bench-data/margin_repos.txt --split dev \
        --out bench-data/margin.jsonl

And langs2.jsonl, eight languages none of the other sets holds (R, Julia, Perl, Zig,
Objective-C, F#, Groovy, PowerShell), two repositories each, one dev and one test:
    python3 bench-data/build_unseen.py --repos bench-data/langs2_dev.txt --split dev \
        --out /tmp/langs2_dev.jsonl
    python3 bench-data/build_unseen.py --repos bench-data/langs2_test.txt --split test \
        --out /tmp/langs2_test.jsonl
    cat /tmp/langs2_dev.jsonl /tmp/langs2_test.jsonl > bench-data/langs2.jsonl

And langs3.jsonl, seven more (shell scripts, Vue single-file components, Solidity, Terraform,
Nim, Crystal, Fortran), the same way with langs3_dev.txt and langs3_test.txt; langs4.jsonl
(Emacs Lisp, Starlark, CMake, Svelte, Elm, Racket, CUDA) with langs4_dev.txt and langs4_test.txt;
langs5.jsonl (Pascal, SystemVerilog, CoffeeScript, Common Lisp, Tcl, GDScript) with langs5_dev.txt
and langs5_test.txt; langs6.jsonl (SCSS, Nix, D, Ada, Haxe, Gleam, SQL) with langs6_dev.txt and
langs6_test.txt.

Repositories and pinned shas: bench-data/unseen_repos.txt (``owner/name <sha> <group>``).
"""

import argparse
import os
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import build_multilang as bm  # noqa: E402

br = bm.br
UNSEEN_GROUP_EXT = {
    "swift": {".swift": "swift"},
    "elixir": {".ex": "elixir", ".exs": "elixir"},
    "scala": {".scala": "scala"},
    "dart": {".dart": "dart"},
    "lua": {".lua": "lua"},
    "haskell": {".hs": "haskell"},
    "clojure": {".clj": "clojure", ".cljc": "clojure", ".cljs": "clojure"},
    "erlang": {".erl": "erlang", ".hrl": "erlang"},
    "ocaml": {".ml": "ocaml", ".mli": "ocaml"},
    # langs2.jsonl: languages none of the other sets holds
    "r": {".R": "r", ".r": "r"},
    "julia": {".jl": "julia"},
    "perl": {".pm": "perl", ".pl": "perl"},
    "zig": {".zig": "zig"},
    "objc": {".m": "objc"},
    "fsharp": {".fs": "fsharp", ".fsi": "fsharp"},
    "groovy": {".groovy": "groovy"},
    "powershell": {".ps1": "powershell", ".psm1": "powershell"},
    # langs3.jsonl: file kinds agents read that no set holds
    "shell": {".sh": "shell", ".bash": "shell"},
    "vue": {".vue": "vue"},
    "solidity": {".sol": "solidity"},
    "hcl": {".tf": "hcl"},
    "nim": {".nim": "nim"},
    "crystal": {".cr": "crystal"},
    "fortran": {".f90": "fortran", ".F90": "fortran"},
    # langs4.jsonl
    "elisp": {".el": "elisp"},
    "starlark": {".bzl": "starlark"},
    "cmake": {".cmake": "cmake"},
    "svelte": {".svelte": "svelte"},
    "elm": {".elm": "elm"},
    "racket": {".rkt": "racket"},
    "cuda": {".cu": "cuda", ".cuh": "cuda"},
    # langs5.jsonl
    "pascal": {".pas": "pascal"},
    "systemverilog": {".sv": "systemverilog", ".v": "systemverilog"},
    "coffeescript": {".coffee": "coffeescript"},
    "commonlisp": {".lisp": "commonlisp"},
    "tcl": {".tcl": "tcl"},
    "gdscript": {".gd": "gdscript"},
    # langs6.jsonl
    "scss": {".scss": "scss"},
    "nix": {".nix": "nix"},
    "d": {".d": "d"},
    "ada": {".adb": "ada", ".ads": "ada"},
    "haxe": {".hx": "haxe"},
    "gleam": {".gleam": "gleam"},
    "sql": {".sql": "sql"},
}
br.GROUP_EXT.update(UNSEEN_GROUP_EXT)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--out", default=os.path.join(HERE, "unseen.jsonl"))
    ap.add_argument("--repos", default=os.path.join(HERE, "unseen_repos.txt"))
    ap.add_argument("--split", default="holdout",
                    help="the split every case gets (margin.jsonl: dev, for the left-margin outline)")
    args = ap.parse_args()
    repos = br.read_repo_list(args.repos)
    used = bm.other_repo_lists(args.repos)
    cases = []
    for repo, sha in repos:
        if bm.is_forbidden(repo) or repo.lower() in used:
            sys.exit("repository evaluated elsewhere or in another set: %s" % repo)
        if br.REPO_GROUP.get(repo) not in UNSEEN_GROUP_EXT:
            sys.exit("%s: needs a group, one of %s" % (repo, ", ".join(UNSEEN_GROUP_EXT)))
        gitdir = br.find_gitdir(args.mirrors, repo)
        if gitdir is None:
            sys.exit("missing mirror for %s under %s (fetch it first)" % (repo, args.mirrors))
        if os.path.isdir(os.path.join(gitdir, ".git")):
            gitdir = os.path.join(gitdir, ".git")  # a snapshot with a work tree
        stats = Counter()
        code, _docs, ncode, _ndocs = br.repo_cases(gitdir, repo, sha, stats)
        for c in code:
            c["split"] = args.split
            c["style"] = "commit"
            cases.append(c)
        print("%-34s %-6s code %3d/%4d" % (repo, br.REPO_GROUP[repo], len(code), ncode),
              file=sys.stderr)
    bm.write_cases(args.out, cases, ["query", "text", "source_type", "gold_lines", "origin",
                                     "language", "repo", "commit", "split", "style"], width=7)


if __name__ == "__main__":
    main()
