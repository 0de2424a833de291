import math
from collections import Counter

import pytest
from click.testing import CliRunner

from autocomp.cli import main
from autocomp.concepts.load import load_task
from autocomp.concepts.sampling import sample_concepts
from autocomp.core.errors import AutocompError
from autocomp.core.scene import attribute_graph, chain_graph
from autocomp.language.check import check_caption
from autocomp.language.minimal import render_minimal
from autocomp.negatives import generate
from autocomp.negatives.contextual import substitute
from autocomp.negatives.generate import expected_count, make_negatives


def minimal(task):
    return lambda g: render_minimal(g, task.noun)


@pytest.mark.parametrize("name", ["color", "position", "shape_color", "relative_size"])
@pytest.mark.parametrize("n", [2, 3, pytest.param(4, marks=pytest.mark.slow)])
def test_counts_equal_formulas(tasks, name, n):
    task = tasks[name]
    if task.capacity_problem(n):
        pytest.skip(task.capacity_problem(n))
    # N = 4: one concept (65,535 confusion negatives each; every one checked)
    for concept in sample_concepts(task, n, 3 if n < 4 else 1, seed=n):
        for kind in ("swap", "confusion"):
            ns = make_negatives(concept.graph, task, kind, minimal(task))
            want = (math.factorial(n) - 1 if kind == "swap" else
                    n**n * (n - 1) ** (n - 1) - 1 if task.is_relation else n ** (2 * n) - 1)
            assert len(ns.negatives) == want == expected_count(task, n, kind)
            captions = [x.caption for x in ns.negatives]
            assert ns.positive not in captions
            assert len(set(captions)) == len(captions)
            assert ns.duplicates == 0
            assert all(x.graph != concept.graph for x in ns.negatives)


def test_vary_value_and_object_cover_the_vocabulary(tasks):
    task = tasks["color"]
    g = attribute_graph(["chair"], ["red"])
    vv = make_negatives(g, task, "vary_value", minimal(task))
    assert len(vv.negatives) == 19
    assert {x.graph.objects[0].attributes[0] for x in vv.negatives} == set(task.values.names) - {
        "red"}
    assert vv.negatives[0].edit["from"] == "red" and vv.negatives[0].edit["field"] == "value"
    vo = make_negatives(g, task, "vary_object", minimal(task))
    assert len(vo.negatives) == 234
    assert "a pair of red gloves on a white background" in {x.caption for x in vo.negatives}
    with pytest.raises(ValueError, match="N = 1"):
        make_negatives(attribute_graph(["chair", "lamp"], ["red", "blue"]), task, "vary_value",
                       minimal(task))


def test_color_confusion_categories_n2(tasks):
    task = tasks["color"]
    ns = make_negatives(attribute_graph(["chair", "lamp"], ["red", "blue"]), task, "confusion",
                        minimal(task))
    assert Counter(x.category for x in ns.negatives) == {
        "swapped values": 3, "same value / different objects": 4,
        "same value / same object": 4, "same object / different values": 4}
    by_caption = {x.caption: x for x in ns.negatives}
    same = by_caption["a blue lamp and a red chair on a white background"]
    assert same.same_meaning and same.category == "swapped values"
    assert same.edit["objects"] == [1, 0] and same.edit["values"] == [1, 0]
    assert same.edit["changed_objects"] == [0, 1] and same.edit["changed_values"] == [0, 1]
    one = by_caption["a red chair and a red lamp on a white background"]
    assert one.edit["changed_objects"] == [] and one.edit["changed_values"] == [1]
    assert sum(x.same_meaning for x in ns.negatives) == 1
    assert ns.chance == 1 / 16 and ns.chance_distinct_meaning == 1 / 15
    rr = by_caption["a red chair and a red chair on a white background"]
    assert rr.category == "same value / same object"


def test_color_confusion_categories_n3(tasks):
    task = tasks["color"]
    g = attribute_graph(["chair", "lamp", "cup"], ["red", "blue", "green"])
    ns = make_negatives(g, task, "confusion", minimal(task))
    counts = Counter(x.category for x in ns.negatives)
    # objects: 27 arrangements, 6 of them permutations; values likewise
    assert counts == {"swapped values": 6 * 6 - 1, "same value / different objects": 6 * 21,
                      "same value / same object": 21 * 21, "same object / different values": 21 * 6}
    assert sum(x.same_meaning for x in ns.negatives) == 5  # the positive's bindings reordered
    swap = make_negatives(g, task, "swap", minimal(task))
    assert {x.category for x in swap.negatives} == {"swapped values"}
    assert not any(x.same_meaning for x in swap.negatives)


def test_relation_swap_flags_the_chain_read_backwards(tasks):
    task = tasks["position"]
    g = chain_graph(["chair", "lamp", "cup"], ["under", "above"])
    ns = make_negatives(g, task, "swap", minimal(task))
    same = [x for x in ns.negatives if x.same_meaning]
    assert [x.caption for x in same] == [
        "a cup under a lamp, which is above a chair, on a white background"]
    g2 = chain_graph(["chair", "lamp", "cup"], ["under", "to the left of"])
    assert not any(x.same_meaning for x in make_negatives(g2, task, "swap", minimal(task))
                   .negatives)


def test_repeated_relation_duplicates_are_removed_and_counted(tmp_path):
    path = tmp_path / "stack.yaml"
    path.write_text("name: stack\nkind: relation\nobjects: objects\nvalues: relations\n"
                    "n: [3]\ndistinct_values: false\n")
    task = load_task(str(path))
    g = chain_graph(["chair", "lamp", "cup"], ["under", "under"])
    ns = make_negatives(g, task, "confusion", minimal(task))
    # 27 object arrangements x 4 relation arrangements, all 4 the same words
    assert len(ns.negatives) == 26
    assert ns.duplicates == 27 * 4 - 1 - 26
    assert len({x.caption for x in ns.negatives}) == 26


def test_no_chained_substitution_and_articles_rerendered(tasks):
    task = tasks["color"]
    g = attribute_graph(["umbrella", "chair"], ["red", "orange"])
    swap = make_negatives(g, task, "swap", minimal(task)).negatives
    assert [x.caption for x in swap] == [
        "an orange umbrella and a red chair on a white background"]
    task = tasks["position"]
    g = chain_graph(["chair", "lamp", "umbrella"], ["under", "to the left of"])
    captions = {x.caption for x in make_negatives(g, task, "swap", minimal(task)).negatives}
    assert "a lamp under a chair, which is to the left of an umbrella, on a white background" \
        in captions
    assert "an umbrella under a lamp, which is to the left of a chair, on a white background" \
        in captions


# ---- contextual negatives --------------------------------------------------------------
def contextual(task, caption, graph, kind):
    chk = check_caption(caption, graph, task.noun, task.object_forms)
    assert chk.passed, chk.failed
    return make_negatives(graph, task, kind, lambda g: substitute(caption, chk, g, task.noun))


def test_contextual_negatives_differ_only_inside_spans(tasks):
    task = tasks["color"]
    caption = "In a sunlit kitchen, an elegant red chair rests beside a blue umbrella today."
    g = attribute_graph(["chair", "umbrella"], ["red", "blue"])
    swap = contextual(task, caption, g, "swap").negatives
    assert [x.caption for x in swap] == [
        "In a sunlit kitchen, an elegant blue chair rests beside a red umbrella today."]
    conf = {x.caption for x in contextual(task, caption, g, "confusion").negatives}
    assert len(conf) == 15
    assert "In a sunlit kitchen, an elegant red umbrella rests beside an blue umbrella today." \
        not in conf
    assert "In a sunlit kitchen, an elegant red umbrella rests beside a blue umbrella today." \
        in conf
    assert "In a sunlit kitchen, an elegant blue chair rests beside a blue chair today." in conf
    for c in conf:
        assert c.startswith("In a sunlit kitchen, an elegant ") and c.endswith(" today.")


def test_contextual_articles_for_pairs_and_capitals(tasks):
    task = tasks["color"]
    caption = "A pair of red gloves lies next to an orange chair."
    g = attribute_graph(["gloves", "chair"], ["red", "orange"])
    conf = {x.caption for x in contextual(task, caption, g, "confusion").negatives}
    assert "An orange chair lies next to a red chair." in conf
    assert "A pair of orange gloves lies next to a pair of red gloves." in conf


def test_contextual_relation_chain(tasks):
    task = tasks["position"]
    caption = "Upstairs, a chair under a dusty lamp, which is above an old cup, sits quietly."
    g = chain_graph(["chair", "lamp", "cup"], ["under", "above"])
    swap = [x.caption for x in contextual(task, caption, g, "swap").negatives]
    assert "Upstairs, a lamp under a dusty chair, which is above an old cup, sits quietly." in swap
    conf = contextual(task, caption, g, "confusion")
    assert len(conf.negatives) == 107
    assert ("Upstairs, a cup above a dusty cup, which is above an old cup, sits quietly."
            in {x.caption for x in conf.negatives})


def test_contextual_of_minimal_caption_equals_minimal_negatives(tasks):
    for name in ("color", "position"):
        task = tasks[name]
        for concept in sample_concepts(task, 3, 5, seed=11):
            caption = render_minimal(concept.graph, task.noun)
            for kind in ("swap", "confusion"):
                ctx = contextual(task, caption, concept.graph, kind)
                mini = make_negatives(concept.graph, task, kind, minimal(task))
                assert [x.caption for x in ctx.negatives] == [x.caption for x in mini.negatives]


def test_enumeration_past_the_limit_is_refused_before_it_starts(tasks, monkeypatch):
    """color N=9 confusion is 9^18 negatives: preview, build and chance refuse it in one
    line without enumerating a single arrangement."""
    from autocomp.preview import preview

    def never(*a, **k):
        raise AssertionError("enumeration started")

    monkeypatch.setattr(generate, "_arrangements", never)
    task = load_task("color")
    with pytest.raises(AutocompError, match=r"task 'color' N=9: swap would enumerate "
                                            r"362,879 negatives per concept, above the limit"):
        preview(task, 9)
    graph = sample_concepts(task, 4, 1, seed=0)[0].graph
    with pytest.raises(AutocompError, match="confusion would enumerate 65,535"):
        make_negatives(graph, task, "confusion", lambda g: render_minimal(g, task.noun), 1000)
    monkeypatch.setenv("AUTOCOMP_MAX_NEGATIVES", "10")
    with pytest.raises(AutocompError, match="swap would enumerate 23 .* limit of 10 "):
        make_negatives(graph, task, "swap", lambda g: render_minimal(g, task.noun))
    monkeypatch.setenv("AUTOCOMP_MAX_NEGATIVES", "lots")
    with pytest.raises(AutocompError, match="AUTOCOMP_MAX_NEGATIVES: expected an integer"):
        make_negatives(graph, task, "swap", lambda g: render_minimal(g, task.noun))


def test_preview_cli_refuses_in_one_line():


    result = CliRunner().invoke(main, ["preview", "--task", "color", "--n", "9"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert result.output.strip().splitlines() == [
        "Error: task 'color' N=9: swap would enumerate 362,879 negatives per concept, above "
        "the limit of 100,000 (raise it with build.max_negatives, --max-negatives or "
        "AUTOCOMP_MAX_NEGATIVES, or use a smaller N)"]


def test_an_enumeration_no_limit_could_allow_is_not_told_to_raise_the_limit():
    from autocomp.concepts.load import load_task
    from autocomp.negatives.generate import FEASIBLE, count_problem, expected_count

    task = load_task("color")
    n = next(k for k in range(2, 12) if expected_count(task, k, "confusion") > FEASIBLE)
    problem = count_problem(task, n, "confusion")
    assert "far more than can be enumerated" in problem and "raise it" not in problem
    small = next(k for k in range(2, 12) if 100_000 < expected_count(task, k, "confusion")
                 <= FEASIBLE)
    assert "raise it with build.max_negatives" in count_problem(task, small, "confusion")
