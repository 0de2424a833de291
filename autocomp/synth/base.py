"""What every image generator takes and gives back."""

from __future__ import annotations

from dataclasses import dataclass, field

from autocomp.concepts.task import Task
from autocomp.core.scene import SceneGraph


@dataclass(frozen=True)
class ImageRequest:
    id: str
    graph: SceneGraph
    task: Task
    track: str  # "minimal" | "contextual"
    seed: int  # the concept's seed, shared by its two tracks
    prompt: str  # the caption of the track


@dataclass
class GeneratedImage:
    image: object  # a PIL image
    truth: dict = field(default_factory=dict)  # what was drawn, when the generator knows
    faults: list[dict] = field(default_factory=list)  # injected faults (ground truth)
    meta: dict = field(default_factory=dict)  # how it was made: model, revision, settings
