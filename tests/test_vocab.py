import json
from pathlib import Path

import pytest
from conftest import assert_file_error

from autocomp.concepts.vocab import builtin_vocabularies, load_vocabulary
from autocomp.core.errors import AutocompError

DATA = Path(__file__).resolve().parent.parent / "data" / "autocomp_cp_vocabulary.json"


@pytest.fixture(scope="module")
def authors():
    return json.loads(DATA.read_text())


def test_builtin_objects_are_the_authors_235(authors):
    objects = load_vocabulary("objects")
    assert objects.kind == "objects"
    assert len(objects) == 235
    assert list(objects.names) == [o.lower() for o in authors["objects"]]
    pairs = {e.name for e in objects.entries if e.pair}
    assert len(pairs) == 14
    assert pairs == {p.lower() for p in authors["pair_nouns"]}
    assert all(e.article == "a pair of" for e in objects.entries if e.name in pairs)


def test_builtin_object_grammar():
    objects = load_vocabulary("objects")
    assert objects["umbrella"].article == "an"
    assert objects["suv"].article == "an"
    assert objects["chair"].article == "a"
    assert objects["knife"].plural == "knives"
    assert objects["earphone"].plural == "earphones"  # pair noun written in plural
    assert objects["cookies"].article == "some"
    assert all(e.name == e.name.lower().strip() for e in objects.entries)


def test_builtin_colors_relations_shapes_sizes(authors):
    colors = load_vocabulary("colors")
    assert list(colors.names) == authors["colors"]
    assert len(colors) == 20 and all(e.drawn_by == "rgb" for e in colors.entries)
    assert colors["white"].value == (255, 255, 255) and colors["red"].value == (255, 0, 0)
    rel = load_vocabulary("relations")
    assert list(rel.names) == authors["relations"]
    assert rel.inverses == {"under": "above", "above": "under", "to the left of":
                            "to the right of", "to the right of": "to the left of"}
    assert len(load_vocabulary("shapes")) >= 6
    assert load_vocabulary("sizes").inverses == {"larger than": "smaller than",
                                                 "smaller than": "larger than"}
    assert set(builtin_vocabularies()) == {"objects", "colors", "relations", "shapes", "sizes",
                                           "size_words", "textures", "size_grades",
                                           "materials", "numbers", "depth"}


def test_user_vocabulary_loads_like_a_builtin(tmp_path):
    path = tmp_path / "fruit.yaml"
    path.write_text("name: fruit\nkind: objects\nentries:\n  - apple\n  - Banana \n"
                    "  - {name: scissors, pair: true}\n")
    v = load_vocabulary(str(path))
    assert v.names == ("apple", "banana", "scissors")
    assert v["apple"].article == "an" and v["apple"].plural == "apples"
    assert v["scissors"].article == "a pair of"


@pytest.mark.parametrize("body, needle", [
    ("name: x\nkind: colours\nentries: [red]\n", "field 'kind' must be one of"),
    ("name: x\nkind: attributes\nentries: []\n", "field 'entries' must be a non-empty list"),
    ("name: x\nkind: attributes\nentries: [red, blue, red]\n",
     "entry 3 ('red'): duplicate name 'red' (also entry 1)"),
    ("name: x\nkind: attributes\nentries:\n  - {name: red, rgb: [300, 0, 0]}\n",
     "entry 1 ('red'): field 'rgb' must be three integers 0-255, got [300, 0, 0]"),
    ("name: x\nkind: objects\nentries:\n  - {name: glove, pair: maybe}\n",
     "entry 1 ('glove'): field 'pair' must be true or false, got 'maybe'"),
    ("name: x\nkind: objects\nentries:\n  - {name: chair, plurl: chairs}\n",
     "entry 1 ('chair'): unknown field 'plurl'"),
    ("name: x\nkind: objects\nentries:\n  - {name: chair, article: the}\n",
     "field 'article' must be one of a, an, some, a pair of, got 'the'"),
    ("name: x\nkind: relations\nentries:\n  - {name: under, inverse: over}\n",
     "entry 1 ('under'): field 'inverse' names 'over', which is not in this vocabulary"),
    ("name: x\nkind: objects\nentries:\n  - {name: 3}\n",
     "entry 1: field 'name' must be a non-empty string, got 3"),
    ("name: x\nkind: objects\nentries: [a\n", "not valid YAML at the end of the file (while "
     "parsing a flow sequence from line 3: expected ',' or ']'"),  # a 3-line file: not line 4
    ("name: x\n  kind: objects\nentries: [a]\n", "not valid YAML at line 2 (mapping values "
     "are not allowed here)"),
])
def test_malformed_vocabularies_name_file_entry_problem(tmp_path, body, needle):
    assert_file_error(load_vocabulary, tmp_path, body, needle)


def test_unknown_vocabulary_lists_builtins():
    with pytest.raises(AutocompError, match="built-in ones: .*colors"):
        load_vocabulary("no-such-vocab")
