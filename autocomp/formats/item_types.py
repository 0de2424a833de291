"""The benchmark item, typed: what a format's opener yields and the harness reads (one of
three shapes), so a plugin's author and a type checker see the same fields the format
contract (eval/suite_contract.py) checks at run time. docs/extending.md tables them with
the other types at the plugin boundary (the adapter manifest, t2i's Scored, a check's
Sample). Each type's first class holds its required keys, the second the optional ones."""

from __future__ import annotations

from typing import TypedDict


class _Negative(TypedDict):
    caption: str


class Negative(_Negative, total=False):
    category: str  # what the edit changed (swapped values, replaced object, ...)
    same_meaning: bool  # true of the image too: never counted as a negative
    edit: dict  # the graph edit that made it (run benchmarks)


class _Item(TypedDict):
    id: str  # unique within its benchmark
    image: str  # a path under the suite's root (or absolute inside it); "#crop=x,y,w,h"
    positive: str
    negatives: list[Negative]


class Item(_Item, total=False):
    """One image, its positive caption and its negatives (Swap, Confusion, SugarCrepe...)."""

    task: str
    n: int
    kind: str  # the benchmark kind (swap, confusion, ...)
    graph: dict  # the positive's scene graph (run benchmarks)
    concept: str  # the concept it was drawn from (paired across tracks)
    flags: list[str]  # what its reader noticed (a negative equal to the positive)


class _MatrixItem(TypedDict):
    id: str
    images: list[str]
    captions: list[str]
    truth: list[list[bool]]  # images x captions


class MatrixItem(_MatrixItem, total=False):
    """Several images and captions with the truth of each pair (Winoground, ColorSwap)."""

    task: str
    n: int


class TextOnlyItem(TypedDict):
    """Texts scored by their similarity to each other, no image (SugarCrepe++'s TOT)."""

    id: str
    texts: list[str]
    text_pairs: list[list[int]]  # [[a, b], ...]: the positive pair first
    positive: str
    negatives: list[Negative]


AnyItem = Item | MatrixItem | TextOnlyItem
