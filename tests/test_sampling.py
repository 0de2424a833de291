import pytest

from autocomp.concepts.load import load_task
from autocomp.concepts.sampling import max_distinct_concepts, sample_concepts
from autocomp.concepts.stage import write_concepts
from autocomp.core.errors import AutocompError


@pytest.mark.parametrize("name", ["color", "position", "shape_color", "relative_size"])
def test_concepts_are_valid_and_unique(tasks, name):
    task = tasks[name]
    for n in task.n:
        count = min(60, max_distinct_concepts(task, n))
        concepts = sample_concepts(task, n, count, seed=7)
        assert len(concepts) == count
        keys = {c.graph.meaning_key(task.inverses) for c in concepts}
        assert len(keys) == count  # no duplicate concepts, not even reordered ones
        assert len({c.id for c in concepts}) == count
        for c in concepts:
            assert c.n == n and len(c.graph.objects) == n
            assert len(set(c.graph.names)) == n  # distinct objects
            if task.is_relation:
                vals = [r.predicate for r in c.graph.relations]
                assert c.graph.is_chain() and len(vals) == n - 1
            else:
                vals = [o.attributes[0] for o in c.graph.objects]
            assert len(set(vals)) == len(vals)  # distinct values
            assert set(vals) <= set(task.values.names)


def test_same_seed_same_bytes_different_seed_different(tmp_path, tasks):
    task = tasks["color"]
    write_concepts(task, task.n, 50, 3, tmp_path / "a")
    write_concepts(task, task.n, 50, 3, tmp_path / "b")
    write_concepts(task, task.n, 50, 4, tmp_path / "c")
    a, b, c = ((tmp_path / d / "concepts" / "color.jsonl").read_bytes() for d in "abc")
    assert a == b
    assert a != c
    ids_a = {line for line in a.splitlines()}
    assert len(ids_a & set(c.splitlines())) < 5


def test_shape_color_n1_can_only_supply_its_vocabulary(tasks):
    task = tasks["shape_color"]
    assert max_distinct_concepts(task, 1) == 8 * 20
    assert len(sample_concepts(task, 1, 160, seed=0)) == 160
    with pytest.raises(AutocompError, match="at most 160 distinct"):
        sample_concepts(task, 1, 161, seed=0)


def test_n_beyond_vocabulary_is_a_clear_error(tmp_path, tasks):
    with pytest.raises(AutocompError, match="N=3 needs 2 distinct values but vocabulary "
                                            "'sizes' has 2|N=4 needs 3 distinct values"):
        sample_concepts(tasks["relative_size"], 4, 1)
    with pytest.raises(AutocompError, match="N=9 needs 9 distinct objects"):
        sample_concepts(tasks["shape_color"], 9, 1)


def test_repeats_allowed_when_task_says_so(tmp_path):
    path = tmp_path / "stack.yaml"
    path.write_text("name: stack\nkind: relation\nobjects: shapes\nvalues: sizes\n"
                    "n: [2, 3, 4]\ndistinct_values: false\n")
    task = load_task(str(path))
    concepts = sample_concepts(task, 4, 40, seed=1)
    assert any(len({r.predicate for r in c.graph.relations}) == 1 for c in concepts)
