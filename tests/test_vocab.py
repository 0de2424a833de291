import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import assert_file_error

from autocomp.cli import main
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


def test_a_huge_entry_name_is_refused_at_once_in_one_short_line(tmp_path):
    from autocomp.core.errors import AutocompError

    path = tmp_path / "v.yaml"
    path.write_text("name: x\nkind: objects\nentries: [" + "a" * 100_000 + ", cup]\n")
    out = CliRunner().invoke(main, ["vocab", "check", str(path)])
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert "field 'name' is 100,000 characters long (at most 64" in out.output
    assert len(out.output) < 400
    from autocomp.concepts.vocab import parse_vocabulary

    with pytest.raises(AutocompError, match="field 'inverse' is 5,000 characters"):
        parse_vocabulary({"name": "r", "kind": "relations",
                          "entries": [{"name": "on", "inverse": "u" * 5000}]}, "r.yaml")


@pytest.mark.parametrize("name, needle", [
    ("\u0430pple", "mixes letters of several alphabets that look alike: cyrillic 'а' "
                   "(U+0430), latin 'p'"),
    ("cu\u200bp", "contains the invisible character U+200B"),
    ("\uff43at", "compatibility characters (plain form 'cat')"),
])
def test_look_alike_letters_in_a_vocabulary_warn(name, needle):
    import warnings

    from autocomp.concepts.vocab import parse_vocabulary

    with pytest.warns(UserWarning, match=re.escape(needle)):
        parse_vocabulary({"name": "x", "kind": "objects", "entries": [name, "cup"]}, "v.yaml")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one alphabet, however unusual, is fine
        parse_vocabulary({"name": "x", "kind": "objects", "entries": ["кот", "τσάι", "cup"]},
                         "v.yaml")


def test_vocab_check_says_a_vocabulary_problem_once(tmp_path):
    """A task naming a broken vocabulary printed the vocabulary's error a second time."""
    (tmp_path / "hues.yaml").write_text("name: hues\nkind: colors\nentries: [red]\n")
    (tmp_path / "hue.yaml").write_text(
        "name: hue\nkind: attribute\nobjects: shapes\nvalues: hues.yaml\nn: [2]\n")
    got = CliRunner().invoke(main, ["vocab", "check", str(tmp_path / "hues.yaml"),
                                    str(tmp_path / "hue.yaml")])
    lines = got.output.splitlines()
    assert got.exit_code == 1 and len(lines) == 2, got.output
    assert "got 'colors'" in lines[0]
    assert lines[1].endswith("hue.yaml: names " + str(tmp_path / "hues.yaml")
                             + ", whose problem is above")


TASK = "name: {name}\nkind: attribute\nobjects: shapes\nvalues: colors\nn: [1]\n"


@pytest.mark.parametrize("name, shown", [
    ('"../../../escape"', "'../../../escape'"),
    ('"a/b"', "'a/b'"),
    ('"a\\nb"', "'a\\nb'"),
    ('"inj\\ndataset_path: attacker_repo"', "'inj\\ndataset_path: attacker_repo'"),
    ('".hidden"', "'.hidden'"),
    ("x" * 101, "'" + "x" * 101 + "'"),
])
def test_a_task_name_that_is_no_plain_name_is_one_line(tmp_path, name, shown):
    path = tmp_path / "t.yaml"
    path.write_text(TASK.format(name=name))
    out = CliRunner().invoke(main, ["vocab", "check", str(path)])
    assert out.exit_code != 0
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert len(lines) == 1, out.output
    assert lines[0].startswith(f"error: {path}: field name: task name {shown} is not a plain")
    # and `autocomp run` stops before writing anything anywhere
    (tmp_path / "cfg.yaml").write_text(f"name: r\nconcepts:\n  - {{task: {path}, n: [1], "
                                       "count: 2}\n")
    got = CliRunner().invoke(main, ["run", str(tmp_path / "cfg.yaml"), "-o",
                                    str(tmp_path / "deep" / "er" / "run")])
    assert got.exit_code != 0 and "is not a plain name" in got.output
    assert not (tmp_path / "deep").exists() and not (tmp_path / "escape-n1").exists()


def test_vocabulary_and_value_names_cannot_hold_paths_or_control_characters(tmp_path):
    from autocomp.concepts.vocab import parse_vocabulary

    with pytest.raises(AutocompError, match=r"v.yaml: field name: vocabulary name 'a/b' "
                                            r"must be 1-100 characters"):
        parse_vocabulary({"name": "a/b", "kind": "attributes", "entries": ["red"]},
                         tmp_path / "v.yaml")
    with pytest.raises(AutocompError, match=r"entry 2: field name: value name 're\\x1bd'"):
        parse_vocabulary({"name": "c", "kind": "attributes", "entries": ["blue", "re\x1bd"]},
                         tmp_path / "v.yaml")
    # spaces and punctuation inside a value stay allowed ("light blue", "polka-dot")
    vocab = parse_vocabulary({"name": "my colors", "kind": "attributes",
                              "entries": ["light blue", "polka-dot"]}, tmp_path / "v.yaml")
    assert vocab.names == ("light blue", "polka-dot")


def test_a_vocabulary_mixing_kinds_is_warned_about(tmp_path):
    """Issue 53: patterns with one `material: fabric` value passed vocab check and run with
    no warning, then "woven" was drawn plain and read as plain 35 of 35 times."""
    path = tmp_path / "mixed.yaml"
    path.write_text("name: mixed\nkind: attributes\nentries:\n"
                    "  - {name: striped, pattern: stripes}\n  - {name: dotted, pattern: dots}\n"
                    "  - {name: checkered, pattern: checks}\n  - {name: woven, material: fabric}\n")
    out = CliRunner().invoke(main, ["vocab", "check", str(path)])
    assert "entries are drawn by 2 kinds (pattern: 3, material: 1)" in out.output
    assert "'woven' (material) will be drawn plain" in out.output
    plain = tmp_path / "plain.yaml"
    plain.write_text("name: plain\nkind: attributes\nentries:\n"
                     "  - {name: striped, pattern: stripes}\n  - {name: dotted, pattern: dots}\n")
    assert "drawn by" not in CliRunner().invoke(main, ["vocab", "check", str(plain)]).output


@pytest.mark.parametrize("geometry, needle", [
    ("{dx: left, dy: 0}", "field 'geometry.dx' must be a number, got 'left'"),
    ("{dx: 1}", "needs dx and dy together"),
    ("{east: 1}", "field 'geometry.east' is not known"),
    ("{size: true}", "field 'geometry.size' must be a number, got True"),
])
def test_relation_geometry_is_type_checked(tmp_path, geometry, needle):
    from autocomp.concepts.vocab import load_vocabulary

    path = tmp_path / "rel.yaml"
    path.write_text(f"name: rel\nkind: relations\nentries:\n  - {{name: near, geometry: "
                    f"{geometry}}}\n")
    with pytest.raises(AutocompError, match=needle) as err:
        load_vocabulary(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("text, needle", [
    (b"name: x\nkind: objects\nentries: [caf\xe9]\n", "not UTF-8 text"),
    (b"name: x\nkind: objects\nentries: !!python/object/apply:os.system [ls]\n",
     "unsafe or unknown YAML tag at line 3"),
    (b"name: x\nkind: objects\nname: y\nentries: [cup]\n", "duplicate key 'name' at line 3"),
    (b"name: x\nkind: objects\n? [a, b]\n: c\nentries: [cup]\n",
     "a mapping key must be a plain value, got a list at line 3"),
    (b"name: x\nkind: objects\nentries: {{a: 1}: cup}\n",
     "a mapping key must be a plain value, got a dict at line 3"),
])
def test_yaml_problems_are_one_line(tmp_path, text, needle):
    from autocomp.concepts.vocab import load_vocabulary

    path = tmp_path / "v.yaml"
    path.write_bytes(text)
    with pytest.raises(AutocompError, match=needle) as err:
        load_vocabulary(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_vocab_check_refuses_symmetric_relations_and_warns_on_alike_values(tmp_path):
    files = {"beside.yaml": "name: b\nkind: relations\nentries:\n"
                            "  - {name: beside, inverse: beside}\n",
             "near.yaml": "name: n\nkind: relations\nentries:\n"
                          "  - {name: near, geometry: {dx: 0, dy: 0}}\n",
             "alike.yaml": "name: a\nkind: attributes\nentries:\n"
                           "  - {name: crimson, rgb: [220, 20, 60]}\n"
                           "  - {name: scarlet, rgb: [220, 20, 60]}\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    runner = CliRunner()
    for name, why in (("beside.yaml", "its inverse is itself"),
                      ("near.yaml", "its geometry has no direction")):
        got = runner.invoke(main, ["vocab", "check", str(tmp_path / name)])
        assert got.exit_code == 1
        lines = got.output.strip().splitlines()
        assert len(lines) == 1 and f"relation '{name[:-5]}' is symmetric ({why}" in lines[0]
    got = runner.invoke(main, ["vocab", "check", str(tmp_path / "alike.yaml")])
    assert got.exit_code == 0
    warning = [ln for ln in got.output.splitlines() if ln.startswith("warning:")]
    assert len(warning) == 1 and "'crimson', 'scarlet' are drawn alike (rgb: [220, 20, 60])" \
        in warning[0]
