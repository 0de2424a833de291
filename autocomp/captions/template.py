"""`template`: the embedded contextual caption writer. Deterministic (a concept's seed and
the attempt number choose every word), varied, and written so the semantic-preservation
check passes: "In a sunlit kitchen, a small red cube rests beside a blue sphere."

`slip_rate` makes it behave like an imperfect LLM: with that probability an attempt leaves
one binding out (a color unsaid, a relation softened to "near"), so the retry and drop
rules run exactly as they do for a real writer.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from autocomp.captions.writers import CaptionRequest
from autocomp.core.backend import Backend
from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.language.grammar import article_for, join

SETTINGS = (
    "a sunlit kitchen", "a quiet attic", "a cluttered workshop", "a bright classroom",
    "a cozy living room", "a dim garage", "a busy office", "a small studio",
    "a hotel lobby", "a children's playroom", "a museum hall", "a sunny patio",
    "a modern loft", "a rustic cabin", "a hospital waiting room", "a school library",
    "a toy store", "a basement storeroom", "a glass greenhouse", "an empty warehouse",
    "an art gallery", "an old farmhouse", "a science lab", "a train station",
)
PLACES = ("on a wooden table", "on the floor", "on a shelf", "on a windowsill",
          "on a low bench", "on a tiled counter", "on a rug", "on a desk")
MODIFIERS = ("small", "shiny", "matte", "glossy", "plastic", "large", "smooth", "tiny",
             "painted", "polished")
SIZE_WORDS = {"small", "large", "tiny"}  # left out where the concept is about size (or depth)
CLASHES = {"size": SIZE_WORDS, "relative size": SIZE_WORDS, "depth": SIZE_WORDS,
           "material": {"plastic"}}  # modifiers that would contradict a task's values
VERBS = ("sits", "rests", "stands", "lies")
NEAR = ("beside", "next to", "near", "close to")


@contract_example()
class TemplateWriter(Backend):
    gpu_cost = "none"  # runs on the CPU (core/backend.Backend.gpu_cost)

    def __init__(self, slip_rate: float = 0.0):
        self.slip_rate = float(slip_rate)

    @classmethod
    def validate_options(cls, out: dict, *, file=None, field="options") -> None:
        if not 0 <= out.get("slip_rate", 0) <= 1:
            raise AutocompError(f"expected a rate in [0, 1], got {out['slip_rate']!r}",
                                file=file, field=f"{field}.slip_rate")

    def write(self, requests: Sequence[CaptionRequest]) -> list[str]:
        return [self.write_one(r) for r in requests]

    def write_one(self, req: CaptionRequest) -> str:
        rng = random.Random(f"template:{req.seed}:{req.id}:{req.attempt}")
        slip = rng.random() < self.slip_rate
        return req.task.visit(FORMS, req, rng, slip)


def modifiers_for(task) -> tuple[str, ...]:
    """The modifiers a caption may add: none that is one of the task's values or that
    speaks of what its values describe ("tiny" in a size task, "plastic" in a material
    task)."""
    out = set()
    for _, vocab in task.primitive_vocabularies():
        out |= CLASHES.get(vocab.aspect.name, set()) | set(vocab.names)
    return tuple(m for m in MODIFIERS if m not in out)


def _phrase(noun, words: list[str], rng, capital=False, modifiers=MODIFIERS) -> str:
    if rng.random() < 0.5:  # a counted noun's numeral comes first: "two shiny cubes"
        words = ([*words, rng.choice(modifiers)] if noun.counted
                 else [rng.choice(modifiers), *words])
    text = " ".join([*words, noun.form])
    out = f"{article_for(noun, text)} {text}".lstrip()
    return out[:1].upper() + out[1:] if capital else out


def _attribute(req: CaptionRequest, rng: random.Random, slip: bool) -> str:
    objs = list(req.graph.objects)
    dropped = rng.randrange(len(objs)) if slip else -1
    phrases = []
    mods = modifiers_for(req.task)
    for i, o in enumerate(objs):
        values = [] if i == dropped else list(o.attributes)
        phrases.append(lambda cap, o=o, v=values: _phrase(req.task.noun(o.name), v, rng, cap,
                                                          modifiers=mods))
    setting, place = rng.choice(SETTINGS), rng.choice(PLACES)
    noun0 = req.task.noun(objs[0].name)
    verb = rng.choice(VERBS)
    if noun0.plural_verb:
        verb = verb[:-1]
    form = rng.randrange(3) if len(objs) > 1 else 3 + rng.randrange(2)
    if form == 0:
        rest = join([p(False) for p in phrases[1:]])
        return f"In {setting}, {phrases[0](False)} {verb} {rng.choice(NEAR)} {rest}."
    if form == 1:
        all_ = join([phrases[0](True), *[p(False) for p in phrases[1:]]])
        return f"{all_} are arranged {place} in {setting}."
    if form == 2:
        rest = join([p(False) for p in phrases[1:]])
        return f"{phrases[0](True)} {verb} {place}, {rng.choice(NEAR)} {rest}, in {setting}."
    if form == 3:
        return f"In {setting}, {phrases[0](False)} {verb} {place}."
    return f"{phrases[0](True)} {verb} {place} in {setting}."


def _relation(req: CaptionRequest, rng: random.Random, slip: bool) -> str:
    g = req.graph
    softened = rng.randrange(len(g.relations)) if slip else -1
    mods = modifiers_for(req.task)
    phrase = [_phrase(req.task.noun(o.name), [], rng, modifiers=mods) for o in g.objects]
    rels = [rng.choice(NEAR) if k == softened else r.predicate
            for k, r in enumerate(g.relations)]
    noun0 = req.task.noun(g.objects[0].name)
    be = "are" if noun0.plural_verb else "is"
    if rng.random() < 0.5:  # "a cube is under a sphere"
        body = f"{phrase[0]} {be} {rels[0]} {phrase[1]}"
    else:  # "there is a cube under a sphere"
        body = f"there {be} {phrase[0]} {rels[0]} {phrase[1]}"
    for k, r in enumerate(g.relations[1:], start=1):
        verb = "are" if req.task.noun(g.objects[r.subject].name).plural_verb else "is"
        body += f", which {verb} {rels[k]} {phrase[r.object]}"
    setting = rng.choice(SETTINGS)
    form = rng.randrange(3)
    if form == 0:
        return f"In {setting}, {body}."
    if form == 1:
        tail = "," if len(g.relations) > 1 else ""
        return f"{body[:1].upper()}{body[1:]}{tail} {rng.choice(PLACES)} in {setting}."
    return f"The photo shows {setting} where {body}."


def _scene(req: CaptionRequest, rng: random.Random, slip: bool) -> str:
    """The scene's own sentences with modifiers and a setting; a slip leaves out one
    attribute or softens one relation to "near"."""
    from autocomp.core.scene import Object, Relation, SceneGraph
    from autocomp.language.scene import render_scene

    g = req.graph
    if slip:
        slots = [(i, k) for i, o in enumerate(g.objects) for k in range(len(o.attributes))]
        slots += [(-1, j) for j in range(len(g.relations))]
        if slots:
            i, k = rng.choice(slots)
            if i >= 0:
                attrs = g.objects[i].attributes[:k] + g.objects[i].attributes[k + 1:]
                objects = list(g.objects)
                objects[i] = Object(objects[i].name, attrs)
                g = SceneGraph(tuple(objects), g.relations)
            else:
                rels = list(g.relations)
                rels[k] = Relation(rels[k].subject, rng.choice(NEAR), rels[k].object)
                g = SceneGraph(g.objects, tuple(rels))
    mods = modifiers_for(req.task)
    body = render_scene(g, req.task.noun, background=None, phrase=lambda i: _phrase(
        req.task.noun(g.objects[i].name), list(g.objects[i].attributes), rng,
        modifiers=mods))
    return f"In {rng.choice(SETTINGS)}, {body[:1].lower()}{body[1:]}"


def _other(req: CaptionRequest, rng: random.Random, slip: bool) -> str:
    """Any other task type: its binding phrases in a setting; a slip leaves one out."""
    phrases = req.task.binding_phrases(req.graph)
    if slip and len(phrases) > 1:
        phrases.pop(rng.randrange(len(phrases)))
    return f"In {rng.choice(SETTINGS)}, there is {join(phrases)}."


class FORMS:
    """The caption form of each task type (the task picks its own: Task.visit)."""

    other = staticmethod(_other)

    attribute = staticmethod(_attribute)
    count = staticmethod(_attribute)
    relation = staticmethod(_relation)
    scene = staticmethod(_scene)
