"""How the procedural generator draws a concept from its objects' looks (scene tasks, and
attribute tasks over anything but colors): each object in its color (else a palette
color), at its size word's scale (`scale` entries: the longer side relative to an
unmarked object's, UNMARKED_SIDE of the canvas), with every other look field painted by
its kind (textures, materials, a plugin's own: synth/looks.py), spatial relations by the
GenEval rule over a forest layout. The truth records each object's painted look fields and
says when the image cannot show what was asked (a scene shrunk to fit whose size words no
longer read, a painted value with no room: `unshown`), with the readers the pixels
answerer uses.

Attribute tasks draw their value faults before the layout (`values_first`): a wrong or
swapped size word changes the boxes, so the layout is made for the sizes drawable.
"""

from __future__ import annotations

from autocomp.concepts import drawable
from autocomp.language.grammar import join
from autocomp.synth.base import GeneratedImage, ImageRequest
from autocomp.synth.faults import PALETTE, expected_outcomes, value_faults
from autocomp.synth.layout import UNMARKED_SIDE, LayoutError, layout
from autocomp.synth.looks import painted, scene_look, undrawable
from autocomp.synth.shapes import SHAPES


def draw_scene(gen, req: ImageRequest, shapes, relations, rng,
               values_first: bool = False) -> GeneratedImage:
    """A concept drawn from its objects' looks: each object in its color (else a palette
    color), at its size word's scale, with its texture or material; spatial relations by
    the GenEval rule."""
    task, graph, size = req.task, req.graph, gen.size
    geometry = task.relation_geometry()
    looks = [scene_look(task, o) for o in graph.objects]
    faults = value_faults(req, looks, task, gen.faults) if values_first else []
    start = rng.randrange(len(PALETTE))
    rgbs = [look["rgb"] or PALETTE[(start + i) % len(PALETTE)]
            for i, look in enumerate(looks)]
    heights = [UNMARKED_SIDE * size * look["scale"] * rng.uniform(0.94, 1.06)
               / max(SHAPES[n].aspect, 1.0) for n, look in zip(shapes, looks, strict=True)]
    shrunk = False
    try:
        boxes = layout(shapes, relations, geometry, size, rng, tries=600, heights=heights,
                       shrink=False)
    except LayoutError:  # too big to fit as asked: smaller, so sizes may not read
        boxes = layout(shapes, relations, geometry, size, rng, heights=heights)
        shrunk = True
    scene = {"boxes": boxes, "colors": [look["color"] for look in looks], "rgbs": rgbs,
             "looks": looks, "drawn": [True] * len(shapes),
             "background": "white" if req.track == "minimal" else "room"}
    faults += gen.inject_faults(req, scene, shapes, relations, geometry,
                                values=not values_first)
    img = gen.draw(scene, shapes, rng)
    truth = {"background": scene["background"], "objects": [
        {"slot": i, "name": o.name, "box": list(b), "attributes": list(o.attributes),
         "color": c, "rgb": list(rgb), **painted(look), "scale": look["scale"], "drawn": d}
        for i, (o, b, c, rgb, look, d) in enumerate(zip(
            graph.objects, scene["boxes"], scene["colors"], scene["rgbs"], looks,
            scene["drawn"], strict=True))]}
    truth["expect"] = expected_outcomes(faults, req.track)
    if scene["unshown"]:  # a painted value with no room to show (a texture too small)
        truth["expect"]["attributes"] = False
        truth["unshown"] = scene["unshown"]
    if shrunk:  # drawn smaller than asked: do the values (size words) still read right?
        truth["shrunk"] = True
        for obj, box in zip(graph.objects, scene["boxes"], strict=True):
            for value in obj.attributes:
                vocab = task.vocab_of(value)
                entry = vocab[value]
                kind = drawable.kind_of(entry)
                same = {e.name: e.value for e in vocab.entries if e.drawn_by == entry.drawn_by}
                if kind is not None and not kind.reads_after_shrink(value, same, box, size):
                    truth["expect"]["attributes"] = False
    if list(shapes) != list(graph.names):
        truth["stand_ins"] = dict(zip(graph.names, shapes, strict=True))
    return GeneratedImage(img, truth, faults)


def scene_cannot_draw(task) -> str | None:
    for vocab in task.attributes:
        problem = undrawable(vocab)
        if problem:
            return problem
    scenes = [k for k in drawable.kinds("relations") if k.in_scenes]
    for entry in task.relations.entries:
        if entry.drawn_by not in {k.name for k in scenes}:
            return (f"relation '{entry.name}' of vocabulary '{task.relations.name}' has no "
                    f"{join(('/'.join(k.keys) for k in scenes), 'or')} geometry; scene "
                    f"tasks draw {join(k.noun for k in scenes)} relations only")
    return None
