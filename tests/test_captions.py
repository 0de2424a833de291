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
    import sys

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
