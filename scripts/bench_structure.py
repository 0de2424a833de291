"""The package's structure in numbers (issue 20): modules per package, imports that go up
the layers of pyproject's import-linter contract, import cycles between siblings (module
and package level), task-kind branches outside concepts/, drawable-kind switches outside
autocomp/kinds/ (issue 39: code asking whether an entry is a color, a size word, ... or a
geometry is a direction, a size or a depth, instead of asking its kind), README and docs
lines.

    python scripts/bench_structure.py [--json]
    python scripts/bench_structure.py --switches-only --root OTHER_CHECKOUT   # before/after

Reads the import graph with grimp (import-linter's own graph builder, lazy imports
included), so it counts what the contract checks.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def layers() -> list[list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["type"] == "layers")
    return [[m.strip() for m in re.split(r"[|:]", line)] for line in contract["layers"]]


def level(module: str, table: list[list[str]]) -> int | None:
    for i, names in enumerate(table):  # the first line is the top layer
        if any(module == n or module.startswith(n + ".") for n in names):
            return len(table) - i
    return None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def parent(module: str) -> str:
    return module.rpartition(".")[0]


# what a switch on a drawable kind looks like outside the kind family
SWITCHES = re.compile("|".join([
    r"\b(e|entry|vocab\[[^\]]+\]|values\[[^\]]+\])\.(rgb|scale|pattern|material|count)\b",
    r'"(dx|dy|depth|size)" in (g|geo|geometry)\b',
    r'\b(g|geo)\["(dx|dy|depth|size)"\]',
    r"geometry\[[^\]]+\]\[\"(dx|dy|depth|size)\"\]",
    r'drawn_by == "',
    r'reads == "(rgb|color|scale|pattern|material|count)"',
    r"getattr\((e|entry), (key|f)\)",
]))


def kind_switches(root: Path) -> list[str]:
    """Lines of autocomp/ outside autocomp/kinds/ that switch on a drawable kind."""
    return [f"{p.relative_to(root)}:{i}" for p in sorted((root / "autocomp").rglob("*.py"))
            if "kinds" not in p.relative_to(root / "autocomp").parts[:1]
            for i, line in enumerate(p.read_text().splitlines(), 1)
            if SWITCHES.search(line.split("#")[0])]


def measure() -> dict:
    import grimp

    sys.path.insert(0, str(ROOT))
    graph = grimp.build_graph("autocomp")
    modules = sorted(m for m in graph.modules if m.startswith("autocomp"))
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in modules}
    table = layers()
    upward = [(a, b) for a, bs in edges.items() for b in bs
              if level(a, table) is not None and level(b, table) is not None
              and level(b, table) > level(a, table)]
    siblings: dict[str, set[str]] = defaultdict(set)  # within each package, module level
    packages: dict[str, set[str]] = defaultdict(set)  # autocomp's packages, package level
    for a, bs in edges.items():
        for b in bs:
            if parent(a) == parent(b):
                siblings[a].add(b)
            pa, pb = ".".join(a.split(".")[:2]), ".".join(b.split(".")[:2])
            if pa != pb:
                packages[pa].add(pb)
    files = [p for p in (ROOT / "autocomp").rglob("*.py") if p.name != "__init__.py"]
    per_package = Counter(p.parent.relative_to(ROOT / "autocomp").as_posix() if
                          p.parent != ROOT / "autocomp" else "(top)" for p in files)
    branches = [f"{p.relative_to(ROOT)}:{i}" for p in (ROOT / "autocomp").rglob("*.py")
                if "concepts" not in p.parts
                for i, line in enumerate(p.read_text().splitlines(), 1)
                if re.search(r"kind == |is_relation", line)]
    lines = {p.name: len(p.read_text().splitlines())
             for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]}
    return {"modules": len(files), "modules_per_package": dict(sorted(per_package.items())),
            "upward_imports": [f"{a} -> {b}" for a, b in upward],
            "module_cycles": cycles(siblings), "package_cycles": cycles(packages),
            "kind_branches_outside_concepts": branches,
            "drawable_kind_switches_outside_kinds": kind_switches(ROOT), "doc_lines": lines}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--switches-only", action="store_true",
                        help="only count drawable-kind switches (of --root's checkout)")
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args()
    if args.switches_only:
        found = kind_switches(args.root.resolve())
        print(f"drawable kind switches outside autocomp/kinds/ in {args.root}: {len(found)}")
        for item in found:
            print(f"  {item}")
        return
    out = measure()
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"modules: {out['modules']} ("
          + ", ".join(f"{k} {v}" for k, v in out["modules_per_package"].items()) + ")")
    for key in ("upward_imports", "module_cycles", "package_cycles",
                "kind_branches_outside_concepts", "drawable_kind_switches_outside_kinds"):
        print(f"{key.replace('_', ' ')}: {len(out[key])}")
        for item in out[key][:10]:
            print(f"  {item}")
    print("doc lines: " + ", ".join(f"{k} {v}" for k, v in out["doc_lines"].items()))


if __name__ == "__main__":
    main()
