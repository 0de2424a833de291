"""Issue 23: hostile SugarCrepe and CREPE files are refused at load, in one line naming the
file and where, before any model scores anything."""

import json

import pytest
from test_external import CREPE_HEADER, coco, crepe, sugarcrepe  # noqa: F401 (fixtures)

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
