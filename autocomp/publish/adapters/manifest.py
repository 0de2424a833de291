"""What an export adapter is handed and gives back, typed (docs/extending.md tables them
with the other types at the plugin boundary): `write(folder, manifest, dataset_path) ->
Written`. The manifest is the export's autocomp_export.json as it stands when adapters run
(`adapters` is added after them)."""

from __future__ import annotations

from typing import TypedDict


class Config(TypedDict):
    """One dataset config of the export (a benchmark)."""

    task: str
    n: int
    track: str  # minimal or contextual
    kind: str  # the benchmark kind (swap, confusion, ...)
    rows: int
    files: list[str]  # its parquet files, relative to the export folder
    bytes: int
    uncompressed_bytes: int
    negatives_shown: int
    negatives_total: int
    chance: float | None  # in percent


class Manifest(TypedDict):
    autocomp_version: str
    run: str
    seed: int
    split: str
    max_negatives: int | None
    negatives_seed: int | None
    hub_id: str | None
    configs: dict[str, Config]
    images: dict  # {"count", "bytes"}
    bytes: int


class Written(TypedDict):
    """What write() returns: the adapter contract holds it to this (contracts.py)."""

    title: str
    files: list[str]  # every file it wrote, relative to its folder; only these are kept
    usage: str  # Markdown, shown on the dataset card under the title
