"""Hostile text in numbers (issue 23): seconds of the caption check against a caption of
repeated attribute words, and of `autocomp vocab check` on a very long entry name.

    python scripts/bench_check.py [--words 16,20,24,28,38] [--cap 60]

Each case runs in its own process, stopped after --cap seconds (printed as "> CAP"), so
an exponential matcher does not stop the bench. The graph is one whose object has
attributes that overlap ("big" and "big big"), the audit's worst case: a cube on a ball,
caption "a big big ... big x" (no noun, so every split of the words is tried).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

CHECK = """
from autocomp.core.scene import Object, Relation, SceneGraph
from autocomp.language.check import check_caption
from autocomp.language.grammar import Noun
graph = SceneGraph((Object("cube", ("red", "big", "big big")), Object("ball")),
                   (Relation(0, "on", 1),))
check_caption("a " + "big " * {words} + "x", graph, lambda n: Noun(n, "a", n + "s"))
"""

VOCAB = """
from autocomp.concepts.vocab import parse_vocabulary
try:
    parse_vocabulary({{"name": "x", "kind": "objects", "entries": ["a" * {chars}, "cup"]}},
                     "v.yaml")
except Exception as exc:
    print(type(exc).__name__, str(exc)[:100])
"""


def timed(code: str, cap: float) -> str:
    start = time.perf_counter()
    try:
        subprocess.run([sys.executable, "-c", code], timeout=cap, check=True,
                       capture_output=True)
    except subprocess.TimeoutExpired:
        return f"> {cap:.0f}"
    return f"{time.perf_counter() - start:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--words", default="16,20,24,28,38")
    parser.add_argument("--chars", default="1000,100000")
    parser.add_argument("--cap", type=float, default=60.0)
    args = parser.parse_args()
    base = timed("import autocomp.language.check, autocomp.concepts.vocab", args.cap)
    print(f"start-up and imports: {base} s (included in every line below)")
    print("caption check, repeated words -> seconds")
    for words in map(int, args.words.split(",")):
        print(f"  {words:>4} words: {timed(CHECK.format(words=words), args.cap)}", flush=True)
    print("vocabulary check, entry name length -> seconds")
    for chars in map(int, args.chars.split(",")):
        print(f"  {chars:>7} characters: {timed(VOCAB.format(chars=chars), args.cap)}",
              flush=True)


if __name__ == "__main__":
    main()
