"""What the harness reads off an item: its captions in column order, its images in row
order (a path, with "#crop=x,y,w,h" when it scores a region), a matrix item as one
single-image item per row for scorers that look at one image at a time, and the scene
graphs of an item's candidates for scorers that read them (built when first read)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from autocomp.core.scene import SceneGraph
from autocomp.eval.matrix import is_matrix, truth_of
from autocomp.formats.runs import negative_graph


def is_text_only(item: dict) -> bool:
    """An item scored by its texts' similarity to each other, no image (SugarCrepe++'s
    text-only task): `texts`, and `text_pairs` [[a, b], ...] whose similarities are its
    candidates' scores, the positive pair first."""
    return "text_pairs" in item


def captions_of(item: dict) -> list[str]:
    """The item's captions in column order: the positive first, or a matrix item's own
    (a text-only item: its texts)."""
    if is_matrix(item):
        return list(item["captions"])
    if is_text_only(item):
        return list(item["texts"])
    return [item["positive"], *[n["caption"] for n in item["negatives"]]]


def caption_count(item: dict) -> int:
    """How many captions the item carries (what bounds a chunk's memory and work)."""
    if is_matrix(item):
        return len(item["captions"])
    if is_text_only(item):
        return len(item["texts"])
    return 1 + len(item.get("negatives") or ())


def _ref(image: str, crop) -> str:
    if not crop:  # a name that holds "#crop=" itself ends with an empty crop
        return f"{image}#crop=" if "#crop=" in image else image
    return f"{image}#crop={','.join(str(int(round(v))) for v in crop)}"


def image_ref(item: dict) -> str:
    """The item's image, with its crop box when it has one (CREPE scores VG regions):
    "path" or "path#crop=x,y,w,h"."""
    return _ref(item["image"], item.get("crop"))


def image_refs(item: dict) -> list[str]:
    """The item's images in row order (one, or a matrix item's; none for a text-only
    item)."""
    if is_text_only(item):
        return []
    if not is_matrix(item):
        return [image_ref(item)]
    crops = item.get("crops") or [None] * len(item["images"])
    return [_ref(image, crop) for image, crop in zip(item["images"], crops, strict=True)]


def image_rows(item: dict) -> list[dict]:
    """A matrix item as one single-image item per image, its captions in column order, for
    scorers that see one image at a time (reference, vlm): their scores are the rows."""
    truth, captions = truth_of(item), item["captions"]
    graphs = item.get("graphs")
    crops = item.get("crops") or [None] * len(item["images"])
    rows = []
    for i, image in enumerate(item["images"]):
        row = {**{k: v for k, v in item.items() if k not in ("images", "captions", "truth",
                                                              "graphs", "crops")},
               "id": f"{item['id']}#image{i}", "image": image, "crop": crops[i],
               "positive": captions[0],
               "negatives": [{"caption": c, "category": None, "same_meaning": False}
                             for c in captions[1:]]}
        if graphs:
            row["graph"] = graphs[int(np.argmax(truth[i]))]  # the image's own scene
            row["candidate_graphs"] = graphs
        rows.append(row)
    return rows


def split_ref(ref: str) -> tuple[str, tuple[int, ...] | None]:
    """The image path and crop box of a reference made by image_ref."""
    path, sep, crop = ref.rpartition("#crop=")
    if not sep:
        return ref, None
    if not crop:
        return path, None
    return path, tuple(int(v) for v in crop.split(","))


class Candidates(Sequence):
    """The scene graphs of an item's [positive, *negatives], each rebuilt from the positive
    and its edit when first read, at most once: a scorer that only counts them
    (reference:random) builds none."""

    def __init__(self, graph: SceneGraph, task, negatives: list[dict]):
        self.graph, self.task, self.negatives = graph, task, negatives
        self.built: dict[int, SceneGraph] = {}
        self.parts = None  # the positive's (names, values), read once

    def __len__(self) -> int:
        return 1 + len(self.negatives)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        i %= len(self)
        if i == 0:
            return self.graph
        if i not in self.built:
            n = self.negatives[i - 1]
            if "graph" in n:
                self.built[i] = SceneGraph.from_dict(n["graph"])
            else:
                if self.parts is None:
                    self.parts = (list(self.graph.names), self.task.values_of(self.graph))
                self.built[i] = negative_graph(self.graph, self.task, n["edit"], self.parts)
        return self.built[i]
