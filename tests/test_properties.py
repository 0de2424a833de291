"""Property-based tests over random vocabularies: renderer, check, negatives."""

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autocomp.concepts.parse import TASK_TYPES
from autocomp.concepts.sampling import sample_concepts
from autocomp.concepts.vocab import parse_vocabulary
from autocomp.language.check import DETERMINERS, check_caption
from autocomp.language.minimal import render_minimal
from autocomp.negatives.contextual import substitute
from autocomp.negatives.generate import make_negatives

RESERVED = {w for d in DETERMINERS for w in d.split()} | {
    "is", "are", "which", "and", "on", "white", "background", "pair", "of"}
WORD = st.text("abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=7).filter(
    lambda w: w not in RESERVED)


@st.composite
def vocab_task(draw, kind):
    words = draw(st.lists(WORD, min_size=16, max_size=18, unique=True))
    n_obj = draw(st.integers(4, 6))
    obj_words, val_words = words[:n_obj], words[n_obj:]
    objects = []
    for i, w in enumerate(obj_words):
        entry = {"name": w}
        if draw(st.booleans()) and i + 1 < len(obj_words) and draw(st.booleans()):
            entry["name"] = f"{w} {obj_words[i + 1]}"  # two-word names; may contain another
        if draw(st.integers(0, 5)) == 0:
            entry["pair"] = True
        objects.append(entry)
    names = [o["name"] for o in objects]
    objects = [o for i, o in enumerate(objects) if o["name"] not in names[:i]]
    if kind == "attribute":
        values = parse_vocabulary({"name": "v", "kind": "attributes",
                                   "entries": val_words[:5]})
    else:
        preds = [f"{a} {b}" if draw(st.booleans()) else a
                 for a, b in zip(val_words[:4], val_words[4:8], strict=False)]
        entries = [{"name": preds[0], "inverse": preds[1]}, {"name": preds[1],
                   "inverse": preds[0]}, {"name": preds[2]}, {"name": preds[3]}]
        values = parse_vocabulary({"name": "r", "kind": "relations", "entries": entries})
    vocab = parse_vocabulary({"name": "o", "kind": "objects", "entries": objects})
    n = draw(st.integers(1 if kind == "attribute" else 2, 3))
    task = TASK_TYPES[kind]("prop", vocab, values, (n,), True)
    return task, n, draw(st.integers(0, 10**6))


def assert_properties(task, n, seed):
    concept = sample_concepts(task, n, 1, seed)[0]
    caption = render_minimal(concept.graph, task.noun)
    assert caption.endswith(" on a white background")
    for obj in concept.graph.objects:
        assert task.noun(obj.name).form in caption
    check = check_caption(caption, concept.graph, task.noun, task.object_forms)
    assert check.passed, (caption, check.failed)
    for m in check.matches:
        text = caption[m.span[0]:m.span[1]]
        for ph in m.phrases:
            assert caption[slice(*ph.noun)] == task.noun(concept.graph.objects[ph.slot].name).form
        if m.binding.kind == "attribute":
            assert concept.graph.objects[m.binding.index].attributes[0] in text
    kinds = ("swap", "confusion") if n >= 2 else ("vary_value", "vary_object")
    for kind in kinds:
        ns = make_negatives(concept.graph, task, kind, lambda g: render_minimal(g, task.noun))
        captions = [x.caption for x in ns.negatives]
        assert caption not in captions and len(set(captions)) == len(captions)
        if kind == "swap":
            assert len(captions) == math.factorial(n) - 1
        elif kind == "confusion":
            k = n - 1 if task.is_relation else n
            assert len(captions) == n**n * k**k - 1
        else:
            vocab = task.values if kind == "vary_value" else task.objects
            assert len(captions) == len(vocab) - 1
        for neg in ns.negatives:  # the check rejects every negative that changes the meaning
            if not neg.same_meaning:
                assert not check_caption(neg.caption, concept.graph, task.noun,
                                         task.object_forms).passed, neg.caption
        if n >= 2:  # contextual substitution in the minimal caption = minimal negatives
            ctx = make_negatives(concept.graph, task, kind,
                                 lambda g: substitute(caption, check, g, task.noun))
            assert [x.caption for x in ctx.negatives] == captions


SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@SETTINGS
@given(vocab_task("attribute"))
def test_attribute_tasks_on_random_vocabularies(case):
    assert_properties(*case)


@SETTINGS
@given(vocab_task("relation"))
def test_relation_tasks_on_random_vocabularies(case):
    assert_properties(*case)
