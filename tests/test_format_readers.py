"""The peer format readers (formats/sugarcrepe.py, crepe.py, sugarcrepe_pp.py, valse.py,
vlchecklist.py; issues 23 and 53): a hostile file is refused at load, in one line naming
the file and where, before any model scores anything."""

import json

import pytest
from test_external import (  # noqa: F401 (fixtures)
    CREPE_HEADER,
    SYST_HEADER,
    coco,
    crepe,
    sugarcrepe,
)

from autocomp.core.errors import AutocompError
from autocomp.formats import open_suite

ENTRY = {"filename": "000000000000.jpg", "caption": "A bus.", "negative_caption": "A car."}


@pytest.mark.parametrize("text, needle", [
    (json.dumps({"²": ENTRY}), r"add_obj.json: expected string indices .*got key '²'"),
    (json.dumps({"9" * 5000: ENTRY}), r"got key '9{40}' \(cut\)"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"0": ' + json.dumps(ENTRY) + ', "0": ' + json.dumps(ENTRY) + "}",
     "key '0' appears more than once"),
    ('{"0": {"filename": "a.jpg", "caption": "x", "caption": "y", "negative_caption": "z"}}',
     "key 'caption' appears more than once"),
    (json.dumps({"0": {**ENTRY, "filename": "a\x00.jpg"}}),
     r"item add_obj-0: expected an image file name"),
    (json.dumps({"0": {**ENTRY, "filename": "x" * 5000}}), "cannot be looked up"),
    (b"\xff\xfe{}", "not valid JSON"),
])
def test_hostile_sugarcrepe_files_are_one_line(sugarcrepe, coco, text, needle):  # noqa: F811
    path = sugarcrepe / "add_obj.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(AutocompError, match=needle) as got:
        open_suite(sugarcrepe, images=coco)
    assert "\n" not in str(got.value)


ROW = '1,a man riding a horse,4,2,1,1,1,"[\'a horse riding a man\']",{box}\n'


@pytest.mark.parametrize("row, needle", [
    (ROW.format(box="nan,0,40,30"), r"row 2: field x, y, width, height: .*is not finite"),
    (ROW.format(box="0,0,inf,30"), "is not finite"),
    (ROW.format(box="0,0,-40,30"), r"is empty \(width and height must be > 0\)"),
    (ROW.format(box="500,0,40,30"), "is outside the 80x60 image"),
    (ROW.format(box="-50,0,40,30"), "is outside the 80x60 image"),
    (ROW.replace(",4,2,", ",nan,2,").format(box="0,0,40,30"),
     "field n: expected a whole number of atoms, got 'nan'"),
    ('1,"' + "a" * 140_000 + '",4,2,1,1,1,"[]",0,0,4,4\n', r"entry line 2: not a readable CSV"),
])
def test_hostile_crepe_rows_are_refused_at_load(crepe, row, needle):  # noqa: F811
    d, vg = crepe
    (d / "swap" / "prod_vg_hard_negs_swap_complexity_4.csv").write_text(CREPE_HEADER + row)
    with pytest.raises(AutocompError, match=needle) as got:
        open_suite(d, images=vg)
    assert "\n" not in str(got.value)


SYST_ROW = '1,a red car,{box},"[\'a blue car\']","[]",{combined}\n'


@pytest.mark.parametrize("body, needle", [
    ("image_id,caption,x,y,width,height,valid_hard_negs_atom\n1,a car,0,0,4,4,[]\n",
     r"missing column\(s\) valid_hard_negs_comp, valid_hard_negs_combined"),
    (SYST_HEADER + SYST_ROW.replace("1,a red", "../../etc/passwd,a red").format(
        box="0,0,40,30", combined='"[]"'), "field image_id: expected a Visual Genome image id"),
    (SYST_HEADER + SYST_ROW.format(box="0,0,40,30", combined='"{\'a\': 1}"'),
     r"row 2: field valid_hard_negs_combined: expected a list or set of strings"),
    (SYST_HEADER + SYST_ROW.format(box="0,0,40,30", combined='"__import__(\'os\')"'),
     r"field valid_hard_negs_combined: not a Python list or set literal"),
    (SYST_HEADER + SYST_ROW.format(box="nan,0,40,30", combined='"[]"'), "is not finite"),
    (SYST_HEADER + SYST_ROW.format(box="0,0,40,30", combined='"' + "[" * 50_000 + '"'),
     r"field valid_hard_negs_combined: not a Python list or set literal"),
])
def test_hostile_crepe_systematicity_files_are_one_line(crepe, body, needle):  # noqa: F811
    """Issue 53: CREPE's systematicity CSVs with a missing column, a path for an image id,
    a negatives cell that is a dict, code, or nested 50,000 deep, a NaN crop: one line
    naming the file, the row and the column, before anything is scored."""
    d, vg = crepe
    (d / "syst_vg_hard_negs_seen_compounds_in_cc12m.csv").write_text(body)
    with pytest.raises(AutocompError, match=needle) as got:
        open_suite(d, images=vg)
    assert "syst_vg_hard_negs_seen_compounds_in_cc12m.csv" in str(got.value)
    assert "\n" not in str(got.value)


def test_a_crepe_file_linked_from_outside_its_folder_is_not_read(crepe, tmp_path):  # noqa: F811
    """A systematicity file that is a symlink to a file outside the benchmark folder is
    left out (a folder reader reads only its own regular files)."""
    d, vg = crepe
    outside = tmp_path / "elsewhere.csv"
    outside.write_text(SYST_HEADER + SYST_ROW.format(box="0,0,40,30", combined='"[]"'))
    (d / "syst_vg_hard_negs_seen_compounds_in_cc12m.csv").symlink_to(outside)
    names = [b.name for b in open_suite(d, images=vg).benchmarks]
    assert not any("syst" in n for n in names)


def test_crepe_file_that_is_not_utf8_is_one_line(crepe):  # noqa: F811
    d, vg = crepe
    path = d / "swap" / "prod_vg_hard_negs_swap_complexity_4.csv"
    path.write_bytes(CREPE_HEADER.encode() + b'1,a caf\xe9,4,2,1,1,1,"[]",0,0,4,4\n')
    with pytest.raises(AutocompError, match=r"complexity_4.csv: not UTF-8 text"):
        open_suite(d, images=vg)


def test_a_crop_overlapping_the_image_edge_is_kept_as_the_authors_crop_it(crepe):  # noqa: F811
    d, vg = crepe
    (d / "swap" / "prod_vg_hard_negs_swap_complexity_4.csv").write_text(
        CREPE_HEADER + ROW.format(box="-5,50,40,30"))
    suite = open_suite(d, images=vg)
    item = next(iter(next(b for b in suite.benchmarks if b.kind == "swap").items()))
    assert item["crop"] == [-5.0, 50.0, 40.0, 30.0]


SCPP = {"id": 0, "filename": "1.jpg", "caption": "a red car",
        "caption2": "a car that is red", "negative_caption": "a blue car"}


@pytest.mark.parametrize("rows, needle", [
    ([{k: v for k, v in SCPP.items() if k != "caption2"}], r"field caption2: expected a "
                                                            r"non-empty string"),
    ([{**SCPP, "caption": 5}], "field caption: expected a non-empty string"),
    ([{**SCPP, "filename": "../../../etc/passwd"}], "lies outside the image folder"),
    ([{**SCPP, "filename": "link.jpg"}], "lies outside the image folder"),
    ([[1, 2, 3]], "expected an object"),
])
def test_hostile_sugarcrepe_pp_files_are_one_line(tmp_path, rows, needle):
    """Issue 53: missing fields, wrong types, traversal and a link out of the image folder,
    each refused at load in one line naming the file."""
    from PIL import Image

    data = tmp_path / "scpp" / "data"
    data.mkdir(parents=True)
    (data / "swap_att.json").write_text(json.dumps([SCPP, *rows]))  # a good row first
    images = tmp_path / "coco"
    images.mkdir()
    Image.new("RGB", (8, 8), "red").save(images / "1.jpg")
    Image.new("RGB", (8, 8), "red").save(tmp_path / "outside.jpg")
    (images / "link.jpg").symlink_to(tmp_path / "outside.jpg")
    with pytest.raises(AutocompError, match=needle) as got:
        suite = open_suite(tmp_path / "scpp", images=images, fmt="sugarcrepe++")
        for bench in suite.benchmarks:
            list(bench.items())
    assert "\n" not in str(got.value) and "swap_att.json" in str(got.value)


@pytest.mark.parametrize("entry, needle", [
    ({"image_file": "a.jpg", "caption": "x", "foil": "y"}, "expected .*mturk"),
    ({"image_file": "a.jpg", "caption": "x", "foil": "y", "mturk": {"caption": "3"}},
     "field mturk.caption: expected a vote count"),
    ({"image_file": "a.jpg", "caption": [], "foil": "y", "mturk": {"caption": 3}},
     "field caption: expected a non-empty caption"),
    ({"image_file": "../../x.jpg", "caption": "x", "foil": "y", "mturk": {"caption": 3}},
     "lies outside the image folder"),
])
def test_hostile_valse_files_are_one_line(tmp_path, entry, needle):
    data = tmp_path / "VALSE" / "data"
    data.mkdir(parents=True)
    good = {"image_file": "a.jpg", "caption": "x", "foil": "y", "mturk": {"caption": 3}}
    (data / "existence.json").write_text(json.dumps({"e_0": good, "e_1": entry}))
    (tmp_path / "imgs").mkdir()
    with pytest.raises(AutocompError, match=needle) as got:
        suite = open_suite(tmp_path / "VALSE", images=tmp_path / "imgs", fmt="valse")
        for bench in suite.benchmarks:
            list(bench.items())
    assert "\n" not in str(got.value) and "existence.json" in str(got.value)


@pytest.mark.parametrize("row, needle", [
    (["a.jpg"], r"expected \[image path, \{POS, NEG\}\]"),
    (["a.jpg", {"POS": "red car", "NEG": ["blue car"]}], "field POS: expected a non-empty "
                                                          "list of captions"),
    (["a.jpg", {"POS": ["red car"], "NEG": [3]}], "field NEG: expected a non-empty list"),
    (["../../../x.jpg", {"POS": ["red car"], "NEG": ["blue car"]}],
     "lies outside the image folder"),
])
def test_hostile_vlchecklist_files_are_one_line(tmp_path, row, needle):
    data = tmp_path / "VL-CheckList" / "data" / "Attribute" / "vg"
    data.mkdir(parents=True)
    good = ["a.jpg", {"POS": ["red car"], "NEG": ["blue car"]}]
    (data / "color.json").write_text(json.dumps([good, row]))
    (tmp_path / "imgs" / "vg").mkdir(parents=True)
    with pytest.raises(AutocompError, match=needle) as got:
        suite = open_suite(tmp_path / "VL-CheckList", images=tmp_path / "imgs",
                           fmt="vl-checklist")
        for bench in suite.benchmarks:
            list(bench.items())
    assert "\n" not in str(got.value) and "color.json" in str(got.value)
