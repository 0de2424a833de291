"""Contextual caption writers: the template writer and the write-check-retry-drop loop."""

import pytest

from autocomp.captions.prompts import contextual_prompt
from autocomp.captions.template import TemplateWriter
from autocomp.captions.writers import CaptionRequest, write_with_retries
from autocomp.concepts.load import load_task
from autocomp.concepts.sampling import sample_concepts
from autocomp.language.check import check_caption


def _concepts(task, n, count, seed=0):
    return [(c.id, c.graph, task, c.seed) for c in sample_concepts(task, n, count, seed)]


@pytest.mark.parametrize("name", ["color", "position", "shape_color", "shape_position",
                                  "relative_size", "shape_size"])
def test_template_captions_pass_the_check_and_vary(name):
    task = load_task(name)
    writer = TemplateWriter()
    captions = set()
    for n in task.n:
        out = write_with_retries(writer, _concepts(task, n, 40), retries=0)
        assert all(v["caption"] is not None for v in out.values()), [
            v["tried"] for v in out.values() if v["caption"] is None][:2]
        captions |= {v["caption"] for v in out.values()}
    assert len(captions) == sum(40 for _ in task.n)  # no two alike
    openings = {c.split()[0] for c in captions}
    assert len(openings) >= 3


def test_template_is_deterministic_per_seed_and_attempt():
    task = load_task("shape_color")
    graph_id, graph, _, seed = _concepts(task, 2, 1)[0]
    w = TemplateWriter()

    def req(attempt):
        return CaptionRequest(graph_id, graph, task, seed, attempt, "", "")

    assert w.write_one(req(0)) == w.write_one(req(0))
    assert len({w.write_one(req(a)) for a in range(6)}) > 1


class _Scripted:
    """A writer that fails the first `bad` attempts of every concept, then writes well."""

    def __init__(self, bad):
        self.bad, self.calls, self.users = bad, [], []
        self.good = TemplateWriter()

    def write(self, requests):
        self.calls.append(len(requests))
        self.users += [r.user for r in requests]
        return [("a thing in a room" if r.attempt < self.bad else self.good.write_one(r))
                for r in requests]


def test_retries_then_success_with_the_insistent_prompt():
    task = load_task("shape_color")
    writer = _Scripted(bad=2)
    out = write_with_retries(writer, _concepts(task, 2, 4), retries=3)
    assert writer.calls == [4, 4, 4]  # only failing concepts are asked again
    assert all(v["attempts"] == 3 and v["caption"] for v in out.values())
    assert all(len(v["tried"]) == 2 for v in out.values())
    assert not writer.users[0].startswith("IMPORTANT")
    assert all(u.startswith("IMPORTANT") for u in writer.users[4:])


def test_drop_after_the_last_retry():
    task = load_task("shape_color")
    out = write_with_retries(_Scripted(bad=9), _concepts(task, 2, 3), retries=2)
    assert all(v["caption"] is None and v["attempts"] == 3 for v in out.values())


def test_slip_rate_makes_failures_that_retries_repair():
    task = load_task("shape_position")
    out = write_with_retries(TemplateWriter(slip_rate=0.5), _concepts(task, 3, 60), retries=3)
    retried = sum(v["attempts"] > 1 for v in out.values())
    assert 15 <= retried <= 45
    for v in out.values():
        for tried in v["tried"]:
            assert tried["failed"]


def test_prompt_is_the_papers():
    task = load_task("color")
    graph = _concepts(task, 2, 1)[0][1]
    system, user = contextual_prompt(graph, task)
    assert system.startswith("You are an expert image caption writer.")
    from autocomp.language.grammar import noun_phrase

    phrases = [f"'{noun_phrase(task.noun(o.name), o.attributes)}'" for o in graph.objects]
    assert f"Objects and colors to include: {' and '.join(phrases)}" in user
    assert "focus on these 2 objects" in user
    assert "specific objects and their colors" in system


def test_relation_tasks_get_their_own_system_prompt():
    task = load_task("position")
    graph = _concepts(task, 3, 1)[0][1]
    system, user = contextual_prompt(graph, task)
    assert "color" not in system.lower() and "relation" in system
    assert system.startswith("You are an expert image caption writer.")
    for r in graph.relations:
        assert f" {r.predicate} " in user


def test_check_on_template_caption_spans_are_inside():
    task = load_task("position")
    cid, graph, _, seed = _concepts(task, 3, 1)[0]
    caption = TemplateWriter().write_one(CaptionRequest(cid, graph, task, seed, 0, "", ""))
    result = check_caption(caption, graph, task.noun, task.object_forms)
    assert result.passed
    for m in result.matches:
        assert caption[m.predicate[0]:m.predicate[1]] == graph.relations[m.binding.index].predicate
