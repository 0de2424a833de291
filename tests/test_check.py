import pytest

from autocomp.core.scene import attribute_graph, chain_graph
from autocomp.language.check import CheckResult, check_caption


@pytest.fixture
def check(tasks):
    task = tasks["color"]

    def run(caption, graph):
        return check_caption(caption, graph, task.noun, task.object_forms)
    return run


def spans(caption, result):
    return [caption[m.span[0]:m.span[1]] for m in result.matches]


@pytest.mark.parametrize("caption, expected", [
    ("A green chair stands beside a yellow lamp in a brightly lit room.",
     ["A green chair", "a yellow lamp"]),
    ("In a cozy loft, an elegant green chair sits near the antique yellow lamp.",
     ["an elegant green chair", "the antique yellow lamp"]),
    ("The yellow lamp glows softly over a green chair.", ["a green chair", "The yellow lamp"]),
])
def test_color_captions_that_pass(check, caption, expected):
    g = attribute_graph(["chair", "lamp"], ["green", "yellow"])
    r = check(caption, g)
    assert r.passed and r.failed == ()
    assert spans(caption, r) == expected


@pytest.mark.parametrize("caption, failed", [
    # colors swapped
    ("A yellow chair stands beside a green lamp.", ("green chair", "yellow lamp")),
    # two modifier words between article and color
    ("A very old green chair stands beside a yellow lamp.", ("green chair",)),
    # a word between color and object
    ("A green wooden chair stands beside a yellow lamp.", ("green chair",)),
    # object missing
    ("A green sofa stands beside a yellow lamp.", ("green chair",)),
    # no article
    ("Green chair beside a yellow lamp.", ("green chair",)),
    # the plural states another count
    ("Some green chairs stand beside a yellow lamp.", ("green chair",)),
])
def test_color_captions_that_fail_name_the_binding(check, caption, failed):
    r = check(caption, attribute_graph(["chair", "lamp"], ["green", "yellow"]))
    assert not r.passed
    assert r.failed == failed


def test_pair_nouns_and_longer_names(check):
    g = attribute_graph(["gloves", "tape"], ["red", "blue"])
    ok = "On the workbench lie a pair of red gloves and a blue tape."
    r = check(ok, g)
    assert r.passed and spans(ok, r) == ["a pair of red gloves", "a blue tape"]
    # "tape" inside "tape measure" is another object of the vocabulary
    bad = "On the workbench lie a pair of red gloves and a blue tape measure."
    assert check(bad, g).failed == ("blue tape",)
    # the modifier slot cannot turn "pickup truck" (another object) into a "truck"
    g = chain_graph(["truck", "lamp"], ["under"])
    assert not check("A pickup truck under a lamp.", g).passed
    assert check("A rusty truck under a lamp.", g).passed


@pytest.mark.parametrize("caption, expected", [
    ("In a sunny studio, a monitor to the left of a bicycle catches the light.",
     ["a monitor to the left of a bicycle"]),
    ("A sleek monitor is to the left of an old bicycle.",
     ["A sleek monitor is to the left of an old bicycle"]),
])
def test_position_captions_that_pass(check, caption, expected):
    r = check(caption, chain_graph(["monitor", "bicycle"], ["to the left of"]))
    assert r.passed and spans(caption, r) == expected


def test_position_chain_with_relative_clause(check):
    g = chain_graph(["chair", "lamp", "cup"], ["under", "above"])
    caption = "In the attic, a chair under a dusty lamp, which is above a cup, waits."
    r = check(caption, g)
    assert r.passed
    assert spans(caption, r) == ["a chair under a dusty lamp", "a dusty lamp, which is above a cup"]
    m = r.matches[1]
    assert caption[slice(*m.predicate)] == "above"
    assert caption[slice(*m.verb)] == "is"
    assert [caption[slice(*p.noun)] for p in m.phrases] == ["lamp", "cup"]


@pytest.mark.parametrize("caption, failed", [
    ("A lamp under a chair, which is above a cup.", ("chair under lamp", "lamp above cup")),
    ("A chair sits under a lamp above a cup.", ("chair under lamp",)),
    ("A chair under a lamp, and a cup.", ("lamp above cup",)),
])
def test_position_captions_that_fail(check, caption, failed):
    r = check(caption, chain_graph(["chair", "lamp", "cup"], ["under", "above"]))
    assert r.failed == failed


def test_result_round_trips_through_json(check):
    caption = "A chair under a lamp, which is above a cup."
    r = check(caption, chain_graph(["chair", "lamp", "cup"], ["under", "above"]))
    assert CheckResult.from_dict(r.to_dict()) == r
