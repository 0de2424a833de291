import pytest
from conftest import assert_file_error

from autocomp.concepts.files import builtin_tasks
from autocomp.concepts.load import load_task
from autocomp.core.errors import AutocompError


def test_builtin_tasks(tasks):
    assert set(builtin_tasks()) == {"color", "position", "shape_color", "relative_size",
                                    "shape_position", "shape_size", "shape_material",
                                    "shape_pattern", "shape_scale", "shape_depth",
                                    "shape_count"}
    assert tasks["color"].n == (1, 2, 3) and tasks["color"].kind == "attribute"
    assert tasks["position"].n == (2, 3) and tasks["position"].kind == "relation"
    assert tasks["shape_color"].n == (1, 2, 3) and tasks["shape_color"].objects.name == "shapes"
    assert tasks["relative_size"].n == (2, 3) and tasks["relative_size"].values.name == "sizes"


def test_new_task_from_one_yaml_file_and_no_python(tmp_path):
    (tmp_path / "materials.yaml").write_text(
        "name: materials\nkind: attributes\nentries: [wooden, metal, glass, plastic]\n")
    task_file = tmp_path / "material.yaml"
    task_file.write_text("name: material\nkind: attribute\nobjects: shapes\n"
                         "values: materials.yaml\nn: 1-3\n")
    task = load_task(str(task_file))
    assert task.name == "material" and task.n == (1, 2, 3)
    assert task.values.names == ("wooden", "metal", "glass", "plastic")

    from autocomp.concepts.sampling import sample_concepts
    from autocomp.language.minimal import render_minimal
    from autocomp.negatives.generate import make_negatives

    concept = sample_concepts(task, 2, 1, seed=0)[0]
    caption = render_minimal(concept.graph, task.noun)
    assert caption.endswith("on a white background")
    conf = make_negatives(concept.graph, task, "confusion",
                          lambda g: render_minimal(g, task.noun))
    assert len(conf.negatives) == 15


@pytest.mark.parametrize("body, needle", [
    ("name: t\nkind: binding\nobjects: objects\nvalues: colors\nn: [2]\n",
     "field 'kind' must be attribute, relation, count or scene"),
    ("name: t\nkind: attribute\nobjects: objects\nvalues: relations\nn: [2]\n",
     "field 'values' names vocabulary 'relations' of kind relations; a attribute task needs"),
    ("name: t\nkind: attribute\nobjects: objects\nvalues: nope.yaml\nn: [2]\n",
     "field 'values': no vocabulary 'nope.yaml'"),
    ("name: t\nkind: relation\nobjects: objects\nvalues: sizes\nn: [2, 4]\n",
     "field 'n': N=4 needs 3 distinct values but vocabulary 'sizes' has 2"),
    ("name: t\nkind: attribute\nobjects: shapes\nvalues: colors\nn: [9]\n",
     "field 'n': N=9 needs 9 distinct objects but vocabulary 'shapes' has 8"),
    ("name: t\nkind: relation\nobjects: objects\nvalues: relations\nn: [1, 2]\n",
     "a relation task needs N >= 2"),
    ("name: t\nkind: attribute\nobjects: objects\nvalues: colors\nn: two\n",
     "field 'n' must be integers"),
    ("name: t\nkind: attribute\nobject: objects\nvalues: colors\nn: 2\n", "unknown field 'object'"),
])
def test_bad_task_files(tmp_path, body, needle):
    assert_file_error(load_task, tmp_path, body, needle)


def test_unknown_task_lists_builtins():
    with pytest.raises(AutocompError, match="built-in tasks: color"):
        load_task("colour")


def test_a_new_task_type_needs_one_class():
    """A task type the pipeline has never seen: negatives, questions and the template
    writer work through its methods; the embedded generator refuses it in one line."""
    from dataclasses import dataclass
    from typing import ClassVar

    from autocomp.captions.template import TemplateWriter
    from autocomp.captions.writers import CaptionRequest
    from autocomp.concepts.load import load_task
    from autocomp.concepts.task import AttributeTask
    from autocomp.language.check import check_caption
    from autocomp.negatives.generate import make_negatives
    from autocomp.synth.procedural import ProceduralGenerator

    @dataclass(frozen=True)
    class Tint(AttributeTask):
        kind: ClassVar[str] = "tint"

    color = load_task("shape_color")
    task = Tint("tint", color.objects, color.values, (2,))
    graph = task.graph(["cube", "sphere"], ["red", "blue"])
    assert len(make_negatives(graph, task, "swap", task.minimal_caption).negatives) == 1
    assert [q.expected for q in task.questions(graph)] == ["red", "blue"]
    caption = TemplateWriter().write_one(CaptionRequest("x", graph, task, 0, 0, "", ""))
    assert check_caption(caption, graph, task.noun, task.object_forms).passed, caption
    assert "no drawing for tasks of kind 'tint'" in ProceduralGenerator.cannot_handle(task)
