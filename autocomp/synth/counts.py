"""How the procedural generator draws a count concept ("two cubes and three spheres"):
as many instances of each object as its numeral says, each object in its own palette color,
placed in distinct cells of a grid (so instances never touch and each is its own blob).

Faults: `swap` makes two kinds trade their counts, `wrong_color`/`wrong_value` draws one
kind with another numeral's count, `drop_object` leaves out one instance; each of these
changes a count, so the objects check (classes and counts) must reject the image.
"""

from __future__ import annotations

import math

from autocomp.synth.base import GeneratedImage, ImageRequest
from autocomp.synth.faults import PALETTE, expected_outcomes, value_faults
from autocomp.synth.looks import scene_look
from autocomp.synth.shapes import SHAPES


def draw_counts(gen, req: ImageRequest, shapes, relations, rng) -> GeneratedImage:
    task, graph, size = req.task, req.graph, gen.size
    looks = [scene_look(task, o) for o in graph.objects]
    faults = value_faults(req, looks, task, gen.faults)
    kinds = [k for k, look in enumerate(looks) for _ in range(look["count"])]
    drawn_shapes = [shapes[k] for k in kinds]
    start = rng.randrange(len(PALETTE))
    boxes = grid_layout(drawn_shapes, size, rng)
    scene = {"boxes": boxes, "colors": [None] * len(kinds),
             "rgbs": [PALETTE[(start + k) % len(PALETTE)] for k in kinds],
             "drawn": [True] * len(kinds),
             "background": "white" if req.track == "minimal" else "room"}
    faults += gen.inject_faults(req, scene, drawn_shapes, [], {}, values=False)
    img = gen.draw(scene, drawn_shapes, rng)
    truth = {"background": scene["background"], "objects": [
        {"slot": k, "name": graph.objects[k].name, "box": list(b), "rgb": list(rgb),
         "drawn": d} for k, b, rgb, d in zip(kinds, scene["boxes"], scene["rgbs"],
                                              scene["drawn"], strict=True)]}
    truth["counts"] = {o.name: sum(d for k, d in zip(kinds, scene["drawn"], strict=True)
                                   if k == slot) for slot, o in enumerate(graph.objects)}
    truth["expect"] = expected_outcomes(faults, req.track)
    if faults and {f["kind"] for f in faults} - {"grey_background"}:
        truth["expect"]["objects"] = False  # every other fault changes a count
    if list(shapes) != list(graph.names):
        truth["stand_ins"] = dict(zip(graph.names, shapes, strict=True))
    return GeneratedImage(img, truth, faults)


def grid_layout(names, size: int, rng) -> list[tuple[int, int, int, int]]:
    """One box per object, each in its own cell of a g x g grid (g the smallest with
    g^2 >= 1.6 x the objects), its longer side 50-70% of the cell, anywhere inside it."""
    g = max(2, math.ceil(math.sqrt(1.6 * len(names))))
    cell = size / g
    cells = rng.sample(range(g * g), len(names))
    boxes = []
    for name, c in zip(names, cells, strict=True):
        side = cell * rng.uniform(0.5, 0.7)
        a = SHAPES[name].aspect
        w, h = (side, side / a) if a >= 1 else (side * a, side)
        x0 = (c % g) * cell + rng.uniform(0.05 * cell, 0.95 * cell - w)
        y0 = (c // g) * cell + rng.uniform(0.05 * cell, 0.95 * cell - h)
        boxes.append((round(x0), round(y0), round(x0 + w), round(y0 + h)))
    return boxes
