"""`procedural`: the embedded generator. It draws a concept on a canvas with exact ground
truth: the built-in 3D shapes in the concept's colors, placed so its relations hold, on
white (minimal track) or in a cluttered room (contextual track).

Fault injection (off by default) gives validators real failures to catch. Each fault is
drawn independently per image with its rate, from a generator seeded by the concept seed
and the track, and recorded with what it changed:
  drop_object      one object is not drawn                    -> the object check must fail
  wrong_color      one object gets another value of its vocabulary (a color; in attribute
  (or wrong_value) tasks over sizes, patterns or materials, one of those)
                                                              -> the attribute check must fail
  swap             attribute tasks: two objects trade values (colors, sizes, ...);
                   relation tasks: the two objects of one relation trade places (or
                   sizes, or depths)                          -> the attribute check must fail
  grey_background  minimal track: a grey background           -> the background check must fail
The layout depends on the concept seed only, so both tracks of a concept share it.

`stand_ins: true` draws an object it has no drawing of ("chair") as a fixed stand-in shape,
recorded in the truth; the color-blobs detector cannot name those, so such runs are for
exercising scale and evaluation speed (scripts/bench_eval.py), not for faithful images.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from autocomp.concepts import drawable
from autocomp.concepts.task import Task
from autocomp.core.backend import Backend
from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.language.grammar import join
from autocomp.synth import background
from autocomp.synth.base import GeneratedImage, ImageRequest
from autocomp.synth.counts import draw_counts
from autocomp.synth.faults import FAULTS, PALETTE, expected_outcomes, fault_draws
from autocomp.synth.layout import LayoutError, layout, overlaps
from autocomp.synth.looks import render_look, undrawable, value_look
from autocomp.synth.recolor import recolored
from autocomp.synth.scenes import draw_scene, scene_cannot_draw
from autocomp.synth.shapes import SHAPES, pattern_pitch

LOOKS = ("flat", "outdoor")


@contract_example()
class ProceduralGenerator(Backend):
    gpu_cost = "none"  # runs on the CPU (core/backend.Backend.gpu_cost)
    # PNG bytes per pixel, measured: configs/demo.yaml at 256 px, 792 images: flat minimal
    # images 0.026, textured contextual rooms 1.05 (both tracks of every concept: 0.54)
    png_bytes_per_pixel = 0.54

    def __init__(self, size: int = 256, faults: dict | None = None, outline: int = 2,
                 stand_ins: bool = False, look: str = "flat", recolor: dict | None = None):
        self.size = size
        self.faults = dict(faults or {})
        self.outline = outline
        self.stand_ins = stand_ins  # draw objects it has no shape for as a stand-in shape
        # "flat": contextual images in a room; "outdoor": in a landscape (another look of
        # the same concepts, to compare generators: docs/generators.md)
        self.look = look
        # value -> the RGB it is drawn in instead: a generator that cannot draw that value
        # (recorded as a `recolor` fault, so the truth stays exact)
        self.recolor = {k: tuple(v) for k, v in (recolor or {}).items()}

    @classmethod
    def validate_options(cls, out: dict, *, file=None, field="options") -> None:
        if "size" in out and not 64 <= out["size"] <= 2048:
            raise AutocompError(f"expected an image size in [64, 2048], got {out['size']}",
                                file=file, field=f"{field}.size")
        if "outline" in out and not 1 <= out["outline"] <= 8:
            raise AutocompError(f"expected an outline width in [1, 8], got {out['outline']}",
                                file=file, field=f"{field}.outline")
        if "look" in out and out["look"] not in LOOKS:
            raise AutocompError(f"expected one of {', '.join(LOOKS)}, got {out['look']!r}",
                                file=file, field=f"{field}.look")
        for value, rgb in (out.get("recolor") or {}).items():
            if not (isinstance(rgb, list) and len(rgb) == 3 and all(
                    isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 255
                    for c in rgb)):
                raise AutocompError(f"expected three integers 0-255, got {rgb!r}", file=file,
                                    field=f"{field}.recolor.{value}")
        faults = out.get("faults", {})
        if "wrong_value" in faults:  # the general name of wrong_color
            if "wrong_color" in faults:
                raise AutocompError("give wrong_value or wrong_color (the same fault), not "
                                    "both", file=file, field=f"{field}.faults")
            faults["wrong_color"] = faults.pop("wrong_value")
        for key, rate in faults.items():
            if key not in FAULTS:
                raise AutocompError(f"unknown fault (known: {', '.join(FAULTS)})", file=file,
                                    field=f"{field}.faults.{key}")
            if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
                raise AutocompError(f"expected a rate in [0, 1], got {rate!r}", file=file,
                                    field=f"{field}.faults.{key}")

    @classmethod
    def cannot_handle(cls, task: Task, options: dict | None = None) -> str | None:
        """Why this generator cannot draw the task's concepts, or None."""
        missing = [n for n in task.objects.names if n not in SHAPES]
        if (options or {}).get("stand_ins"):
            missing = []
        if missing:
            return (f"it draws only the shapes {', '.join(SHAPES)}; vocabulary "
                    f"'{task.objects.name}' has {', '.join(repr(m) for m in missing[:5])}"
                    f"{' ...' if len(missing) > 5 else ''} (use the diffusers generator)")
        return task.visit(_Drawable, task)

    def generate(self, requests: Sequence[ImageRequest]) -> list[GeneratedImage]:
        return [self.generate_one(r) for r in requests]

    def generate_one(self, req: ImageRequest) -> GeneratedImage:
        task, graph = req.task, req.graph
        names = list(graph.names)
        relations = [(r.subject, r.predicate, r.object) for r in graph.relations]
        rng = random.Random(f"procedural:{req.seed}")
        shapes = [n if n in SHAPES else stand_in(n) for n in names] if self.stand_ins else names
        try:
            got = task.visit(_Draw, self, req, shapes, relations, rng)
            return recolored(got, req.task, self.recolor) if self.recolor else got
        except LayoutError as exc:  # one line: the task, the concept, what did not fit
            raise AutocompError(f"task {task.name}, concept {req.id}: {exc.problem}") from None

    def draw_binding(self, req: ImageRequest, shapes, relations, geometry, rng,
                     colors) -> GeneratedImage:
        """An attribute or relation concept: laid out (relations hold), each object in its
        color (`colors`: one value per object, or None for a palette color)."""
        task, graph, size = req.task, req.graph, self.size
        names = list(graph.names)
        boxes = layout(shapes, relations, geometry, size, rng)
        if None in colors:
            start = rng.randrange(len(PALETTE))
            rgbs = [PALETTE[(start + i) % len(PALETTE)] for i in range(len(names))]
        else:
            rgbs = [value_look(c, task.values[c])["rgb"] for c in colors]
        scene = {"boxes": boxes, "colors": colors, "rgbs": rgbs, "drawn": [True] * len(names),
                 "background": "white" if req.track == "minimal" else "room"}
        faults = self.inject_faults(req, scene, shapes, relations, geometry)
        img = self.draw(scene, shapes, rng)
        truth = {"background": scene["background"], "objects": [
            {"slot": i, "name": n, "box": list(b), "color": c, "rgb": list(rgb), "drawn": d}
            for i, (n, b, c, rgb, d) in enumerate(zip(names, scene["boxes"], scene["colors"],
                                                      scene["rgbs"], scene["drawn"],
                                                      strict=True))]}
        truth["expect"] = expected_outcomes(faults, req.track)
        if shapes != names:
            truth["stand_ins"] = dict(zip(names, shapes, strict=True))
        return GeneratedImage(img, truth, faults)

    def draw(self, scene: dict, shapes, rng):
        """The image of a laid-out scene (boxes, rgbs, drawn, background; looks: each
        object's look, whose painted fields its kinds draw); records in scene["unshown"]
        each object whose painted value has no room to show ({"slot", "why"})."""
        size = self.size
        if scene["background"] == "room" and self.look == "outdoor":
            scene["background"] = "outdoor"
        img = (background.room(size, rng) if scene["background"] == "room" else
               background.outdoor(size, rng) if scene["background"] == "outdoor" else
               background.plain(size, background.GREY if scene["background"] == "grey"
                                else (255, 255, 255)))
        looks = scene.get("looks") or [{}] * len(shapes)
        scene["unshown"] = []
        for i, (name, box, rgb, shown, look) in enumerate(zip(
                shapes, scene["boxes"], scene["rgbs"], scene["drawn"], looks, strict=True)):
            if shown:
                tile, why = render_look(name, box, rgb, look, self.outline, pattern_pitch(size))
                img.paste(tile, tuple(box[:2]), tile)
                if why:
                    scene["unshown"].append({"slot": i, "why": "; ".join(why)})
        return img

    def inject_faults(self, req, scene, names, relations, geometry,
                      values: bool = True) -> list[dict]:
        """The faults drawn for this image, applied to its laid-out scene; `values`: the
        swap and wrong-color faults too (else `value_faults` has applied them)."""
        draws, picks = fault_draws(req)
        faults = []
        n = len(names)
        if values and draws["swap"] < self.faults.get("swap", 0) and n >= 2:
            done = req.task.visit(_Swap, self, scene, names, relations, geometry, picks)
            if done:
                faults.append(done)
        colored = [i for i in range(n) if scene["colors"][i] is not None]
        if values and draws["wrong_color"] < self.faults.get("wrong_color", 0) and colored:
            slot = picks.choice(colored)
            vocab = req.task.vocab_of(scene["colors"][slot])
            own = next(a for a in req.graph.objects[slot].attributes if a in vocab.names)
            taken = {scene["colors"][slot], own}
            other = picks.choice([v for v in vocab.names if v not in taken])
            faults.append({"kind": "wrong_color", "slot": slot, "from": scene["colors"][slot],
                           "to": other})
            scene["colors"][slot] = other
            scene["rgbs"][slot] = value_look(other, vocab[other])["rgb"]
        if draws["drop_object"] < self.faults.get("drop_object", 0):
            slot = picks.randrange(n)
            scene["drawn"][slot] = False
            faults.append({"kind": "drop_object", "slot": slot, "name": names[slot]})
        if (draws["grey_background"] < self.faults.get("grey_background", 0)
                and req.track == "minimal"):
            scene["background"] = "grey"
            faults.append({"kind": "grey_background"})
        return faults



class _Drawable:
    """Why the values of a task cannot be drawn, or None, per task type."""

    attribute = staticmethod(lambda task: undrawable(task.values))

    @staticmethod
    def relation(task) -> str | None:
        for entry in task.values.entries:
            if entry.drawn_by is None:
                keys = ("/".join(k.keys) for k in drawable.kinds("relations"))
                return (f"relation '{entry.name}' of vocabulary '{task.values.name}' has "
                        f"no geometry ({join(keys, 'or')}) to draw")
        used = {drawable.kind_of(e) for e in task.values.entries}
        own = [k for k in used if k.own_layout]
        if own and len(used) > 1:
            return (f"vocabulary '{task.values.name}' mixes {own[0].noun} relations with "
                    f"others; the procedural generator draws {own[0].noun} on its own "
                    "ground plane")
        return None

    scene = staticmethod(scene_cannot_draw)
    count = staticmethod(lambda task: None)  # numerals: checked when the task is read

    @staticmethod
    def other(task) -> str:
        return f"it has no drawing for tasks of kind '{task.kind}'"


class _Draw:
    """How a concept of each task type is laid out and colored."""

    @staticmethod
    def attribute(gen, req, shapes, relations, rng) -> GeneratedImage:
        """Colors as the paper's color task; other values (sizes, textures, materials)
        from the objects' looks."""
        kinds = [drawable.kind_of(e) for e in req.task.values.entries]
        if not all(k is not None and k.colors for k in kinds):
            return draw_scene(gen, req, shapes, relations, rng, values_first=True)
        colors = [o.attributes[0] for o in req.graph.objects]
        return gen.draw_binding(req, shapes, relations, {}, rng, colors)

    @staticmethod
    def relation(gen, req, shapes, relations, rng) -> GeneratedImage:
        geometry = req.task.relation_geometry()
        return gen.draw_binding(req, shapes, relations, geometry, rng,
                                [None] * req.graph.n_objects)

    scene = staticmethod(draw_scene)
    count = staticmethod(draw_counts)


def _trade_colors(scene: dict, a: int, b: int) -> dict:
    for key in ("colors", "rgbs"):
        scene[key][a], scene[key][b] = scene[key][b], scene[key][a]
    return {"kind": "swap", "slots": [a, b], "what": "colors"}


class _Swap:
    """The `swap` fault per task type: two objects trade colors (attribute and scene
    tasks; in a scene, two of different colors), or the two objects of one relation
    trade places or sizes."""

    @staticmethod
    def attribute(gen, scene, names, relations, geometry, rng) -> dict | None:
        a, b = rng.sample(range(len(names)), 2)
        return _trade_colors(scene, a, b)

    @staticmethod
    def scene(gen, scene, names, relations, geometry, rng) -> dict | None:
        pairs = [(a, b) for a in range(len(names)) for b in range(a + 1, len(names))
                 if None not in (scene["colors"][a], scene["colors"][b])
                 and scene["colors"][a] != scene["colors"][b]]
        if not pairs:
            return None
        return _trade_colors(scene, *rng.choice(pairs))

    @staticmethod
    def relation(gen, scene, names, relations, geometry, rng) -> dict | None:
        order = list(range(len(relations)))
        rng.shuffle(order)
        for k in order:
            s, pred, o = relations[k]
            boxes = list(scene["boxes"])
            kind = drawable.geometry_kind(geometry[pred])
            what, traded = kind.traded, kind.trade(boxes[s], boxes[o], names[s], names[o])
            if traded is None:  # a symmetric relation: trading keeps it true
                continue
            boxes[s], boxes[o] = traded
            inside = all(b[0] >= 0 and b[1] >= 0 and b[2] <= gen.size and b[3] <= gen.size
                         for b in boxes)
            apart = not any(overlaps(p, q, 2) for i, p in enumerate(boxes)
                            for q in boxes[i + 1:])
            if inside and apart:
                scene["boxes"] = boxes
                return {"kind": "swap", "slots": [s, o], "relation": k, "what": what}
        return None


def stand_in(name: str) -> str:
    """The shape drawn for an object the generator has no drawing of (same name, same shape)."""
    import hashlib

    keys = sorted(SHAPES)
    return keys[int(hashlib.sha256(name.encode()).hexdigest(), 16) % len(keys)]
