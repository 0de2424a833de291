"""What an export holds: one config per benchmark file of the run (task, N, track, kind),
named as the benchmark's slug (`shape_color-n2-minimal-swap`), split `test`.

Single-image configs (swap, confusion, vary_value, vary_object), one row per item:
  id, concept, task, n, track, kind, paired, graph (JSON)
  image                       the image's PNG bytes (datasets Image)
  positive                    the true caption
  negatives                   every negative caption, in the order the run built them (or
                              a recorded seeded subset, below)
  negative_edits              each negative's graph edit (JSON), negative_categories its
                              Table 6 category, negative_same_meaning whether it states the
                              positive's facts in another order (true of the image: no
                              binding error when chosen)
  negatives_total             how many negatives the item has in full
  chance, chance_distinct_meaning   1 / (1 + negatives shown), and counting only those of
                              another meaning
Synthetic Winoground configs (2 images x 2 captions, caption k states image k):
  id, concept, partner, task, n, track, kind, paired, image_0, image_1, caption_0,
  caption_1, graph_0, graph_1, chance_text 0.25, chance_image 0.25, chance_group 1/6

--max-negatives K --seed S keeps, of an item with more than K negatives, the K whose
sha256("S:<item id>:<caption>") is smallest, in the run's order: a pure function of the
seed, the item and the caption (no library's random stream), so anyone can redraw it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.eval.matrix import matrix_chance
from autocomp.formats.runs import Benchmark, find_benchmarks

SPLIT = "test"
WINOGROUND = "winoground"


def features(kind: str):
    """The datasets Features of a config's rows."""
    from datasets import Features, Image, Sequence, Value

    text, whole = Value("string"), Value("int32")
    common = {"id": text, "concept": text, "task": text, "n": whole, "track": text,
              "kind": text, "paired": Value("bool")}
    if kind == WINOGROUND:
        return Features({**common, "partner": text, "image_0": Image(), "image_1": Image(),
                         "caption_0": text, "caption_1": text, "graph_0": text,
                         "graph_1": text, "chance_text": Value("float64"),
                         "chance_image": Value("float64"),
                         "chance_group": Value("float64")})
    return Features({**common, "graph": text, "image": Image(), "positive": text,
                     "negatives": Sequence(text), "negative_edits": Sequence(text),
                     "negative_categories": Sequence(text),
                     "negative_same_meaning": Sequence(Value("bool")),
                     "negatives_total": whole, "chance": Value("float64"),
                     "chance_distinct_meaning": Value("float64")})


@dataclass(frozen=True)
class Config:
    """One benchmark of the run, exported as one dataset config."""

    bench: Benchmark

    @property
    def name(self) -> str:
        return self.bench.slug

    @property
    def kind(self) -> str:
        return self.bench.kind

    @property
    def matrix(self) -> bool:
        return self.bench.kind == WINOGROUND


def configs(run_dir: Path) -> list[Config]:
    """Every benchmark the run built, as configs, sorted by name (a run with splits: its
    test items; the train split is exported as training data)."""
    return [Config(b) for b in find_benchmarks(Path(run_dir), split="test")]


def kept(item_id: str, captions: list[str], k: int | None, seed: int) -> list[int]:
    """Indices of the negatives an export keeps (all, or the seeded K), in the run's order."""
    if k is None or len(captions) <= k:
        return list(range(len(captions)))

    def key(i: int) -> bytes:
        return hashlib.sha256(f"{seed}:{item_id}:{captions[i]}".encode()).digest()

    return sorted(sorted(range(len(captions)), key=key)[:k])


def _image(run_dir: Path, rel: str, where: str) -> dict:
    path = Path(run_dir) / rel
    try:
        return {"bytes": path.read_bytes(), "path": path.name}
    except OSError as exc:
        raise AutocompError(f"{where}: image '{rel}' cannot be read ({exc.strerror})",
                            file=path) from None


def _graph(graph) -> str:
    return json.dumps(graph, sort_keys=True, separators=(",", ":"))


def single_row(item: dict, run_dir: Path, k: int | None = None, seed: int = 0) -> dict:
    negs = item["negatives"]
    keep = [negs[i] for i in kept(item["id"], [n["caption"] for n in negs], k, seed)]
    same = [bool(n.get("same_meaning")) for n in keep]
    return {"id": item["id"], "concept": item["concept"], "task": item["task"],
            "n": item["n"], "track": item["track"], "kind": item["kind"],
            "paired": bool(item.get("paired")), "graph": _graph(item["graph"]),
            "image": _image(run_dir, item["image"], item["id"]),
            "positive": item["positive"], "negatives": [n["caption"] for n in keep],
            "negative_edits": [_graph(n.get("edit")) for n in keep],
            "negative_categories": [n.get("category") for n in keep],
            "negative_same_meaning": same, "negatives_total": len(negs),
            "chance": 1.0 / (1 + len(keep)),
            "chance_distinct_meaning": 1.0 / (1 + same.count(False))}


def matrix_row(item: dict, run_dir: Path) -> dict:
    if item["truth"] != [[1, 0], [0, 1]]:
        raise AutocompError(f"{item['id']}: a synthetic Winoground item's truth must be "
                            f"[[1, 0], [0, 1]], got {item['truth']}")
    chance = matrix_chance([[True, False], [False, True]])
    images = [_image(run_dir, rel, item["id"]) for rel in item["images"]]
    return {"id": item["id"], "concept": item["concept"], "partner": item["partner"],
            "task": item["task"], "n": item["n"], "track": item["track"],
            "kind": item["kind"], "paired": bool(item.get("paired")),
            "image_0": images[0], "image_1": images[1],
            "caption_0": item["captions"][0], "caption_1": item["captions"][1],
            "graph_0": _graph(item["graphs"][0]), "graph_1": _graph(item["graphs"][1]),
            "chance_text": chance["text"], "chance_image": chance["image"],
            "chance_group": chance["group"]}


def rows(config: Config, run_dir: Path, k: int | None = None,
         seed: int = 0) -> Iterator[dict]:
    """The config's rows, one item at a time (negatives enumerated as each is read)."""
    for item in config.bench.items():
        yield (matrix_row(item, run_dir) if config.matrix
               else single_row(item, run_dir, k, seed))

