"""The typed records at the stage boundaries read back exactly what the stages wrote, and a
record missing a field is refused naming it."""

import pytest
from conftest import built_run

from autocomp.core.errors import AutocompError
from autocomp.core.run_records import RECORDS, ConceptRecord, ImageRecord

CONFIG = """name: records
concepts:
  - {task: shape_color, n: [2], count: 6}
  - {task: shape_position, n: [2], count: 6}
generate: {options: {size: 64, faults: {swap: 0.5}}}
"""


def test_every_stage_record_round_trips(tmp_path):
    run = built_run(tmp_path, CONFIG)
    for stage, cls in RECORDS.items():
        raw = run.records(stage)
        assert raw, stage
        typed = run.read(stage)
        assert all(isinstance(r, cls) for r in typed)
        assert [r.to_dict() for r in typed] == raw


def test_a_missing_field_is_named():
    with pytest.raises(AutocompError, match="ConceptRecord without field 'seed'"):
        ConceptRecord.from_dict({"id": "x", "task": "t", "n": 2, "graph": {}, "counts": {}})


def test_optional_fields_are_left_out_when_empty():
    rec = ImageRecord("i", "c", "t", 2, "minimal", 1, "images/i.png", 8, 8, [], {})
    assert "generation" not in rec.to_dict()
    assert ImageRecord.from_dict(rec.to_dict()) == rec
