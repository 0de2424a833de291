"""The procedural generator's `recolor` option: values it draws in another RGB, as a
generator that cannot draw them would (a measured factor beside the run's own generator,
docs/generators.md). Each recolored object is a `recolor` fault of the image, and the
attributes check is expected to fail where the new RGB reads as another value, so the
validators' agreement with the truth stays exact."""

from __future__ import annotations

from autocomp.synth.base import GeneratedImage
from autocomp.synth.looks import value_look


def recolored(got: GeneratedImage, task, recolor: dict) -> GeneratedImage:
    """The image with each object of a recolored value filled with its replacement RGB
    (the flat fill's pixels inside the object's box), a `recolor` fault per object, and
    the attributes check expected to fail where the new RGB is nearer another value of
    the vocabulary (how the pixels answerer names a color)."""
    import numpy as np
    from PIL import Image

    hit = [o for o in got.truth.get("objects", [])
           if o.get("drawn", True) and o.get("color") in recolor and o.get("rgb")]
    if not hit:
        return got
    arr = np.array(got.image)
    faults = list(got.faults)
    for o in hit:
        x0, y0, x1, y1 = (int(v) for v in o["box"])
        tile = arr[y0:y1, x0:x1]
        tile[(tile == np.array(o["rgb"], dtype=tile.dtype)).all(-1)] = recolor[o["color"]]
        vocab = task.vocab_of(o["color"])
        named = {n: value_look(n, vocab[n]).get("rgb") for n in vocab.names}
        rgb = recolor[o["color"]]
        read_as = min((n for n, v in named.items() if v is not None),
                      key=lambda n: sum((a - b) ** 2 for a, b in zip(named[n], rgb,
                                                                     strict=True)))
        faults.append({"kind": "recolor", "slot": o["slot"], "value": o["color"],
                       "rgb": list(rgb), "reads_as": read_as})
        o["rgb"] = list(rgb)
        if read_as != o["color"]:
            got.truth["expect"]["attributes"] = False
    return GeneratedImage(Image.fromarray(arr), got.truth, faults, got.meta)
