"""Scene tasks (issue 12, first part): independent counts, exact counts, grammar, check."""

from collections import Counter

import numpy as np
import pytest

from autocomp.captions.check import check_caption
from autocomp.captions.scene import render_scene
from autocomp.compass.analysis import vifs
from autocomp.concepts.scenes import load_scene_task, sample_scenes
from autocomp.errors import AutocompError
from autocomp.scene import Object, Relation, SceneGraph


@pytest.fixture(scope="module")
def scenes():
    return load_scene_task("scenes")


def _counts(concepts):
    return np.array([[c.graph.counts[k] for k in ("n_O", "n_A", "n_R")] for c in concepts])


def test_counts_are_exact_and_vary_independently(scenes):
    cells = scenes.cells()
    assert len(cells) == 54  # 3 x 6 x 4 cells, less those with n_R > n_O - 1 or n_A > 3 n_O
    assert all(r <= o - 1 and a <= 3 * o for o, a, r in cells)
    concepts = sample_scenes(scenes, 540, seed=0)
    assert Counter(c.cell for c in concepts) == dict.fromkeys(cells, 10)  # balanced
    for c in concepts:
        assert tuple(c.graph.counts[k] for k in ("n_O", "n_A", "n_R")) == c.cell
        names = [o.attributes for o in c.graph.objects]
        for attrs in names:  # at most one value of each vocabulary, in the written order
            kinds = [next(k for k, v in enumerate(scenes.attributes) if a in v.names)
                     for a in attrs]
            assert kinds == sorted(set(kinds))
        # relations form a forest: no cycle, no object related to itself
        parent = list(range(c.graph.n_objects))

        def root(i, parent=parent):
            while parent[i] != i:
                i = parent[i]
            return i
        for r in c.graph.relations:
            a, b = root(r.subject), root(r.object)
            assert a != b
            parent[a] = b
    v = vifs(_counts(concepts))
    assert max(v) < 5 and v[1] == pytest.approx(1.0, abs=0.01)
    # n_A = n_O and n_R = n_O - 1 (Auto-Comp concepts) are what the design avoids
    auto = np.array([[n, n, n - 1] for n in (2, 3) for _ in range(50)])
    assert vifs(auto)[0] == float("inf")
    assert sample_scenes(scenes, 30, seed=3) == sample_scenes(scenes, 30, seed=3)
    assert len({c.id for c in concepts}) == 540


def test_latin_hypercube_design(tmp_path):
    path = tmp_path / "lhs.yaml"
    path.write_text("name: lhs\nkind: scene\nobjects: shapes\nattributes: [colors]\n"
                    "relations: relations\ndesign: {kind: lhs, points: 12, n_O: 2-5, "
                    "n_A: 0-5, n_R: 0-4}\n")
    task = load_scene_task(str(path))
    cells = task.cells(seed=1)
    assert len(cells) == 12 and cells == task.cells(seed=1)
    assert all(r <= o - 1 and a <= o for o, a, r in cells)
    assert len({o for o, _, _ in cells}) >= 3  # spread over the strata


@pytest.mark.parametrize("body, needle", [
    ("kind: scene\nobjects: shapes\nattributes: []\nrelations: relations\n"
     "design: {n_O: 2, n_A: 0, n_R: 0}\n", "field attributes: expected a non-empty list"),
    ("kind: scene\nobjects: shapes\nattributes: [colors]\nrelations: relations\n"
     "design: {n_O: 2, n_A: 0, n_R: 5}\n", "field design: no feasible cell"),
    ("kind: scene\nobjects: shapes\nattributes: [relations]\nrelations: relations\n"
     "design: {n_O: 2, n_A: 0, n_R: 0}\n", r"field attributes\[0\]: vocabulary 'relations' is "
                                           "of kind relations"),
    ("kind: scene\nobjects: shapes\nattributes: [colors]\nrelations: relations\n"
     "design: {n_O: two, n_A: 0, n_R: 0}\n", "field design.n_O: expected a range"),
    ("kind: scene\nobjects: shapes\nattributes: [colors]\nrelations: relations\n"
     "design: {kind: lhs, n_O: 2, n_A: 0, n_R: 0}\n", "field design.points"),
])
def test_bad_scene_task_is_one_line(tmp_path, body, needle):
    path = tmp_path / "t.yaml"
    path.write_text(body)
    with pytest.raises(AutocompError, match=needle):
        load_scene_task(str(path))


def test_scene_caption_grammar_and_check(scenes):
    g = SceneGraph((Object("cube", ("large", "striped", "red")), Object("sphere"),
                    Object("cone", ("small",)), Object("torus", ("blue",))),
                   (Relation(0, "to the left of", 1), Relation(0, "above", 2)))
    caption = render_scene(g, scenes.noun)
    assert caption == ("There is a large striped red cube to the left of a sphere. The cube "
                       "is above a small cone. There is a blue torus. The background is white.")
    result = check_caption(caption, g, scenes.noun, scenes.object_forms)
    assert result.passed and len(result.matches) == 7
    for m in result.matches:  # each attribute's span holds its own value
        if m.binding.kind == "attribute":
            value = g.objects[m.binding.index].attributes[m.binding.attribute]
            assert caption[slice(*m.phrases[0].value)] == value
    # a caption that binds an attribute to the wrong object fails on that binding
    wrong = caption.replace("a small cone", "a cone").replace("a sphere", "a small sphere")
    failed = check_caption(wrong, g, scenes.noun, scenes.object_forms)
    assert failed.failed == ("small cone",)


def test_every_sampled_scene_caption_passes_the_check(scenes):
    for c in sample_scenes(scenes, 300, seed=1):
        caption = render_scene(c.graph, scenes.noun)
        result = check_caption(caption, c.graph, scenes.noun, scenes.object_forms)
        assert result.passed, (caption, result.failed)
        assert caption.endswith("The background is white.") and "  " not in caption
