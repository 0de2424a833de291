import sys

import pytest

from autocomp.core.scene import SceneGraph, attribute_graph, chain_graph
from autocomp.language.grammar import Noun, join, noun_phrase
from autocomp.language.minimal import render_minimal


@pytest.fixture
def noun(tasks):
    return tasks["color"].noun


@pytest.mark.parametrize("names, values, expected", [
    (["chair", "lamp"], ["red", "blue"], "a red chair and a blue lamp on a white background"),
    (["chair", "lamp", "cup"], ["red", "orange", "blue"],
     "a red chair, an orange lamp and a blue cup on a white background"),
    (["gloves"], ["white"], "a pair of white gloves on a white background"),
    (["earphone", "umbrella"], ["olive", "navy"],
     "a pair of olive earphones and a navy umbrella on a white background"),
    (["cookies"], ["orange"], "some orange cookies on a white background"),
    (["suv"], ["gold"], "a gold suv on a white background"),
])
def test_attribute_captions(noun, names, values, expected):
    assert render_minimal(attribute_graph(names, values), noun) == expected


@pytest.mark.parametrize("names, rels, expected", [
    (["chair", "lamp", "cup"], ["under", "above"],
     "a chair under a lamp, which is above a cup, on a white background"),
    (["monitor", "bicycle"], ["to the left of"],
     "a monitor to the left of a bicycle on a white background"),
    (["suv", "umbrella"], ["above"], "an suv above an umbrella on a white background"),
    (["sneakers", "cookies", "oven"], ["under", "to the right of"],
     "a pair of sneakers under some cookies, which are to the right of an oven, "
     "on a white background"),
])
def test_relation_captions(noun, names, rels, expected):
    assert render_minimal(chain_graph(names, rels), noun) == expected


def test_suffix_can_be_dropped(noun):
    assert render_minimal(attribute_graph(["chair"], ["red"]), noun, suffix="") == "a red chair"


def test_non_chain_graph_is_refused(noun):
    g = SceneGraph.from_dict({"objects": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
                              "relations": [[0, "on", 2], [1, "on", 2]]})
    with pytest.raises(ValueError, match="attribute lists and relation chains"):
        render_minimal(g, noun)


def test_grammar_helpers():
    assert join(["a", "b", "c"]) == "a, b and c"
    assert noun_phrase(Noun.guess("apple")) == "an apple"
    assert noun_phrase(Noun.guess("apple"), ["red"]) == "a red apple"
    assert noun_phrase(Noun.guess("hour")) == "an hour"
    assert Noun.guess("gloves", pair=True).form == "gloves"
    assert Noun.guess("earphone", pair=True).form == "earphones"


def test_inflect_is_used_without_typeguards_instrumentation():
    """inflect 7's @typechecked recompiled every method at import (~2.5 s of each autocomp
    process): the grammar imports it with the decorator as the identity, restores typeguard
    for everyone else, and the words come out as inflect writes them."""
    import subprocess

    code = (
        "import typeguard\n"
        "from autocomp.language import grammar\n"
        "print(grammar.plural('cube'), grammar.indefinite_article('hour'),\n"
        "      grammar.singular('materials'), grammar.base_verb('carries'))\n"
        "import inflect\n"
        "print('typeguard' in inflect.engine.plural_noun.__code__.co_names,\n"
        "      typeguard.typechecked is grammar._unchecked)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    assert out[0] == "cubes an material carry"
    assert out[1] == "False False"


def test_the_caption_check_is_not_exponential_in_repeated_words():
    """Attributes whose words overlap ("big", "big big"): 38 repeated words took 61-79 s
    (twice as long per word); now well under a second, so 400 words finish in this
    generous limit only when matching is linear (scripts/bench_check.py times it)."""
    import subprocess

    code = ("from autocomp.core.scene import Object, Relation, SceneGraph\n"
            "from autocomp.language.check import check_caption\n"
            "from autocomp.language.grammar import Noun\n"
            "g = SceneGraph((Object('cube', ('red', 'big', 'big big')), Object('ball')),"
            " (Relation(0, 'on', 1),))\n"
            "noun = lambda n: Noun(n, 'a', n + 's')\n"
            "for k in (38, 400):\n"
            "    assert not check_caption('a ' + 'big ' * k + 'x', g, noun).passed\n"
            "g = SceneGraph((Object('cube', ('red', 'big', 'shiny')), Object('ball')),"
            " (Relation(0, 'on', 1),))\n"
            "for c in ('a shiny big red cube on a ball', 'a big green red shiny cube'):\n"
            "    r = check_caption(c, g, noun)\n"
            "    print(r.passed, r.failed)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [  # other attributes in any order; no other words
        "True ()", "False ('red cube', 'big cube', 'shiny cube', 'cube on ball')"]


def test_object_names_ending_in_a_non_word_character_match(tmp_path):
    from autocomp.captions.template import TemplateWriter
    from autocomp.captions.writers import write_with_retries
    from autocomp.concepts.load import load_task
    from autocomp.concepts.sampling import sample_concepts
    from autocomp.language.check import check_caption

    (tmp_path / "odd.yaml").write_text(
        "name: odd\nkind: objects\nentries: ['c++', 'star*', '(box)', 'lamp', 'c']\n")
    (tmp_path / "task.yaml").write_text(
        "name: oddtask\nkind: attribute\nobjects: odd.yaml\nvalues: colors\nn: [1, 2, 3]\n")
    task = load_task(str(tmp_path / "task.yaml"))
    concepts = [c for n in (1, 2, 3) for c in sample_concepts(task, n, 10, seed=0)]
    for c in concepts:
        caption = task.minimal_caption(c.graph)
        assert check_caption(caption, c.graph, task.noun, task.object_forms).passed, caption
    written = write_with_retries(TemplateWriter(), [(c.id, c.graph, task, c.seed)
                                                    for c in concepts], 0)
    assert all(w["caption"] for w in written.values())
    # "c" does not match inside "c++": the longer name is written there
    from autocomp.core.scene import attribute_graph

    g = attribute_graph(["c"], ["red"])
    assert not check_caption("a red c++ on a white background", g, task.noun,
                             task.object_forms).passed
