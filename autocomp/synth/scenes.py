"""How the procedural generator draws a scene concept (scene tasks): each object in its
color (else a palette color), at its size word's scale (`scale` entries: the longer side
relative to an unmarked object's, UNMARKED_SIDE of the canvas), with its texture
(`pattern` entries), spatial relations by the GenEval rule over a forest layout. The truth
says when the image cannot show what was asked (a scene shrunk to fit whose size words no
longer read, a texture with no room), with the readers the pixels answerer uses.
"""

from __future__ import annotations

from autocomp.synth.base import GeneratedImage, ImageRequest
from autocomp.synth.faults import PALETTE, expected_outcomes
from autocomp.synth.layout import UNMARKED_SIDE, drawn_scale, layout, nearest_scale
from autocomp.synth.shapes import MIN_PATTERN_SHARE, SHAPES


def draw_scene(gen, req: ImageRequest, shapes, relations, rng) -> GeneratedImage:
    """A scene concept: each object in its color (else a palette color), at its size
    word's scale, with its texture; spatial relations by the GenEval rule."""
    task, graph, size = req.task, req.graph, gen.size
    geometry = {e.name: e.geometry for e in task.relations.entries}
    looks = [scene_look(task, o) for o in graph.objects]
    start = rng.randrange(len(PALETTE))
    rgbs = [look["rgb"] or PALETTE[(start + i) % len(PALETTE)]
            for i, look in enumerate(looks)]
    heights = [UNMARKED_SIDE * size * look["scale"] * rng.uniform(0.94, 1.06)
               / max(SHAPES[n].aspect, 1.0) for n, look in zip(shapes, looks, strict=True)]
    shrunk = False
    try:
        boxes = layout(shapes, relations, geometry, size, rng, tries=600, heights=heights,
                       shrink=False)
    except RuntimeError:  # too big to fit as asked: smaller, so sizes may not read
        boxes = layout(shapes, relations, geometry, size, rng, heights=heights)
        shrunk = True
    scene = {"boxes": boxes, "colors": [look["color"] for look in looks], "rgbs": rgbs,
             "patterns": [look["pattern"] for look in looks],
             "drawn": [True] * len(shapes),
             "background": "white" if req.track == "minimal" else "room"}
    faults = gen.inject_faults(req, scene, shapes, relations, geometry)
    img = gen.draw(scene, shapes, rng)
    truth = {"background": scene["background"], "objects": [
        {"slot": i, "name": o.name, "box": list(b), "attributes": list(o.attributes),
         "color": c, "rgb": list(rgb), "pattern": p, "scale": look["scale"], "drawn": d}
        for i, (o, b, c, rgb, p, look, d) in enumerate(zip(
            graph.objects, scene["boxes"], scene["colors"], scene["rgbs"],
            scene["patterns"], looks, scene["drawn"], strict=True))]}
    truth["expect"] = expected_outcomes(faults, req.track)
    if any(p is not None and p < MIN_PATTERN_SHARE for p in scene["pattern_share"]):
        truth["expect"]["attributes"] = False  # a texture with no room to show
        truth["pattern_share"] = scene["pattern_share"]
    if shrunk:  # drawn smaller than asked: do the size words still read right?
        truth["shrunk"] = True
        for obj, box in zip(graph.objects, scene["boxes"], strict=True):
            for value in obj.attributes:
                vocab = task.vocab_of_value[value]
                scales = {e.name: e.scale for e in vocab.entries if e.scale is not None}
                if value in scales and nearest_scale(drawn_scale(box, size),
                                                     scales) != value:
                    truth["expect"]["attributes"] = False
    if list(shapes) != list(graph.names):
        truth["stand_ins"] = dict(zip(graph.names, shapes, strict=True))
    return GeneratedImage(img, truth, faults)


def scene_look(task, obj) -> dict:
    """How a scene object is drawn: color (rgb), scale and pattern from its attributes."""
    look = {"color": None, "rgb": None, "scale": 1.0, "pattern": None}
    for value in obj.attributes:
        entry = task.vocab_of_value[value][value]
        if entry.rgb is not None:
            look["color"], look["rgb"] = value, entry.rgb
        elif entry.scale is not None:
            look["scale"] = entry.scale
        elif entry.pattern is not None:
            look["pattern"] = entry.pattern
    return look


def scene_cannot_draw(task) -> str | None:
    for vocab in task.attributes:
        for entry in vocab.entries:
            if entry.rgb is None and entry.scale is None and entry.pattern is None:
                return (f"value '{entry.name}' of vocabulary '{vocab.name}' has no rgb, scale "
                        "or pattern; the procedural generator draws colors, size words and "
                        "textures")
    for entry in task.relations.entries:
        if not {"dx", "dy"} <= set(entry.geometry or {}):
            return (f"relation '{entry.name}' of vocabulary '{task.relations.name}' has no "
                    "dx/dy geometry; scene tasks draw spatial relations only")
    return None
