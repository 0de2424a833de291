"""Every registered entry of every family passes its family's contract, on the example it
declares beside it (@contract_example, core/families.py): deterministic with a seed, a
batch equals one-by-one calls, a clear error on bad options."""

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import docs_examples
from test_compositional import aro, winoground  # noqa: F401  (fixtures)
from test_external import coco, crepe, released_layout, small_run, sugarcrepe  # noqa: F401
from test_peers import scpp, valse, vlchecklist  # noqa: F401  (fixtures)

from autocomp.captions.writers import CaptionRequest
from autocomp.concepts.load import load_task
from autocomp.concepts.sampling import sample_concepts
from autocomp.core.errors import AutocompError
from autocomp.core.registry import names, resolve
from autocomp.eval.scorers.base import TextScorer
from autocomp.kinds.base import GeometryKind, ValueKind
from autocomp.synth.base import ImageRequest
from autocomp.validators.checks import Check


@pytest.fixture(scope="module")
def concepts():
    out = []
    for name in ("shape_color", "shape_position"):
        task = load_task(name)
        out += [(task, c) for c in sample_concepts(task, 2, 3, seed=11)]
    return out


def _fill(example, request):
    """A contract example with its "{tiny:NAME}" and "{openai}" made real: the suite's tiny
    random models (tiny_backends, tiny_scorers) and its stand-in chat server."""
    if isinstance(example, dict):
        return {k: _fill(v, request) for k, v in example.items()}
    if isinstance(example, (tuple, list)):
        return [_fill(v, request) for v in example]
    if not isinstance(example, str):
        return example
    if "{openai}" in example:
        example = example.replace("{openai}", request.getfixturevalue("fake_openai").url)

    def model(found) -> str:
        models = {**request.getfixturevalue("tiny_backends"),
                  **request.getfixturevalue("tiny_scorers")}
        assert found.group(1) in models, f"the suite has no tiny model '{found.group(1)}'"
        return str(models[found.group(1)])

    return re.sub(r"\{tiny:([\w-]+)\}", model, example)


def _example(family: str, name: str):
    """What the entry declares beside it to be held to its family's contract on."""
    example = getattr(resolve(family, name), "contract_example", None)
    assert example is not None, (f"{family} '{name}' declares no contract example "
                                 "(@contract_example beside it: core/families.py)")
    return example


@pytest.fixture
def make(request, monkeypatch):
    """family, name -> a fresh instance built from the options it declares beside it
    (@contract_example), wired to the suite's tiny models, its stand-in chat server or the
    vLLM stand-in (tests/fake_vllm.py)."""
    from fake_vllm import install

    install(monkeypatch)

    def build(family, name):
        return resolve(family, name)(**_fill(_example(family, name), request))

    return build


BACKEND_FAMILIES = ("generator", "writer", "detector", "answerer")
SAMPLED_WRITERS = {"transformers", "openai"}  # sampling: deterministic per batch only


def _png(img) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


@pytest.mark.parametrize("name", names("generator"))
def test_generator_contract(name, concepts, make):
    reqs = [ImageRequest(c.id, c.graph, t, "minimal", c.seed, "a red cube")
            for t, c in concepts]
    gen = make("generator", name)
    batch = gen.generate(reqs)
    assert [_png(b.image) for b in batch] == [_png(b.image) for b in make(
        "generator", name).generate(reqs)]  # seeded: same bytes
    single = [gen.generate([r])[0] for r in reqs]
    for b, s in zip(batch, single, strict=True):  # batch = one by one (float rounding aside)
        assert np.abs(np.asarray(b.image, int) - np.asarray(s.image, int)).max() <= 2
    assert all(b.image.mode == "RGB" for b in batch)
    with pytest.raises(AutocompError, match="generate.options.nope"):
        resolve("generator", name).check_options({"nope": 1}, field="generate.options")


@pytest.mark.parametrize("name", [*names("writer"), "docs:plain"])
def test_writer_contract(name, concepts, request, tmp_path, monkeypatch):
    if name == "docs:plain":  # docs/extending.md's writer
        docs_examples(tmp_path, monkeypatch)
        request.getfixturevalue("registered")("writer", "plain", "plain_writer:PlainWriter")
        name = "plain"

        def make(family, name):
            return resolve(family, name)()
    else:
        make = request.getfixturevalue("make")
    reqs = [CaptionRequest(c.id, c.graph, t, c.seed, 0, "s", "u") for t, c in concepts]
    batch = make("writer", name).write(reqs)
    assert batch == make("writer", name).write(reqs)
    if name not in SAMPLED_WRITERS:
        assert batch == [make("writer", name).write([r])[0] for r in reqs]
    assert len(batch) == len(reqs) and all(isinstance(x, str) for x in batch)
    with pytest.raises(AutocompError, match="captions.options.nope"):
        resolve("writer", name).check_options({"nope": 1}, field="captions.options")


@pytest.mark.parametrize("name", names("detector"))
def test_detector_contract(name, concepts, make):
    gen = resolve("generator", "procedural")(size=64)
    det = make("detector", name)
    for task, c in concepts[:2]:
        img = np.asarray(gen.generate_one(ImageRequest(c.id, c.graph, task, "minimal", c.seed,
                                                       "")).image)
        a, b = det.detect(img, c.graph.names), make("detector", name).detect(img, c.graph.names)
        assert [d.to_dict() for d in a] == [d.to_dict() for d in b]
        for d in a:
            assert d.mask is None or d.mask.shape == img.shape[:2]
            assert d.label is None or d.label in c.graph.names or name == "color-blobs"
    with pytest.raises(AutocompError, match="validate.detector_options.nope"):
        resolve("detector", name).check_options({"nope": 1}, field="validate.detector_options")


@pytest.mark.parametrize("name", names("answerer"))
def test_answerer_contract(name, concepts, make):
    det = resolve("detector", "color-blobs")()
    gen = resolve("generator", "procedural")()
    ans = make("answerer", name)
    for task, c in concepts[:2]:
        img = np.asarray(gen.generate_one(ImageRequest(c.id, c.graph, task, "minimal", c.seed,
                                                       "")).image)
        dets = det.detect(img, c.graph.names)
        qs = task.questions(c.graph)
        batch = ans.answer(img, qs, dets)
        assert batch == [ans.answer(img, [q], dets)[0] for q in qs]
        assert all(isinstance(a["answer"], str) for a in batch)
        if name == "pixels":
            assert [a["answer"] for a in batch] == [q.expected for q in qs]
    with pytest.raises(AutocompError, match="validate.answerer_options.nope"):
        resolve("answerer", name).check_options({"nope": 1}, field="validate.answerer_options")


def test_unknown_backend_lists_the_known_ones():
    with pytest.raises(AutocompError, match=r"unknown detector 'yolo' \(known: color-blobs, "
                                            r"grounding-dino\+sam2\)"):
        resolve("detector", "yolo")


def _extras() -> set[str]:
    from pathlib import Path

    try:

        import tomllib

    except ModuleNotFoundError:  # Python 3.10

        import tomli as tomllib

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    return set(tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"])


@pytest.mark.parametrize("family", BACKEND_FAMILIES)
def test_backends_declare_options_once_in_their_signature(family):
    """Every backend is a Backend: its options are its __init__ keywords (no second table),
    each with a default; its install extra is a real extra; unknown options and wrong types
    are refused naming the field."""
    import inspect

    from autocomp.core.backend import Backend

    for name in names(family):
        cls = resolve(family, name)
        assert issubclass(cls, Backend), name
        assert not hasattr(cls, "OPTIONS"), f"{name} declares its options twice"
        types = cls.option_types()
        own = [n for n, p in inspect.signature(cls.__init__).parameters.items()
               if n != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
        assert set(own) <= set(types), name
        assert set(cls.defaults()) == set(types), f"{name}: every option has a default"
        assert cls.extra is None or cls.extra in _extras(), (name, cls.extra)
        for key, allowed in types.items():
            wrong = [] if str in allowed else ["text"]
            for value in wrong:
                with pytest.raises(AutocompError, match=f"options.{key}"):
                    cls.check_options({key: value})


def test_every_family_resolves_through_the_one_registry():
    """Stages (ordered, named as registered), scorers, formats: each entry imports."""
    import importlib
    import inspect

    from autocomp.core.families import FAMILY
    from autocomp.core.registry import FAMILIES
    from autocomp.runtime.stage import Stage

    # the paper's cascade comes first, in its order (a plugin's check may join it)
    assert names("check")[:3] == ("objects", "background", "attributes")
    for name in names("check"):
        check = resolve("check", name)()
        assert check.name == name and check.label and set(check.tracks) <= {"minimal",
                                                                           "contextual"}
    assert names("stage") == ("concepts", "captions", "images", "validation", "build")
    for name in names("stage"):
        cls = resolve("stage", name)
        assert issubclass(cls, Stage) and cls.name == name
        assert all(n in names("stage") for n in cls.needs)
    for name in names("scorer"):
        assert callable(resolve("scorer", name))
    for name in names("format"):
        opener = resolve("format", name)
        assert list(inspect.signature(opener).parameters) == [
            "source", "images", "columns", "skip_missing", "text_only"], name
    for name in names("adapter"):
        assert list(inspect.signature(resolve("adapter", name)).parameters) == [
            "folder", "manifest", "dataset_path"], name
    for name in names("metric"):
        assert resolve("metric", name)().column
    for family in FAMILIES:  # each family's contract: a function that exists, or the suite's
        where = FAMILY[family].contract
        if where.startswith("autocomp."):
            module, _, attr = where.partition(":")
            assert callable(getattr(importlib.import_module(module), attr)), where
        elif where.startswith("tests/"):
            assert (Path(__file__).parents[1] / where).is_file(), where


EXAMPLED = ("generator", "writer", "detector", "answerer", "scorer", "format")


@pytest.mark.parametrize("family", EXAMPLED)
def test_every_built_in_declares_its_contract_example(family):
    """Each entry of a family whose contract needs something to run on declares it beside
    itself (@contract_example); the contract tests below run every registered name on it,
    so a new built-in needs no table here. Kinds name theirs as their class's `example`."""
    for name in names(family):
        _example(family, name)


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(AutocompError, match="unknown generator 'paint' .*procedural"):
        resolve("generator", "paint")


# ---- the registry refuses mistakes -------------------------------------------------------

def test_a_duplicate_name_is_refused(registered):
    with pytest.raises(AutocompError, match="scorer 'blind' is registered already"):
        registered("scorer", "blind", "my_blind:make")
    with pytest.raises(AutocompError, match="a plugin target is 'module:attribute'"):
        registered("scorer", "mine", "my_blind.make")
    with pytest.raises(AutocompError, match=r"unknown plugin family 'scorers' \(did you mean "
                                            r"'scorer'\?\)"):
        registered("scorers", "mine", "m:f")


def test_an_unknown_name_suggests_the_nearest():
    with pytest.raises(AutocompError, match=r"unknown scorer 'open-clip' \(did you mean "
                                            r"'open_clip'\?\)"):
        resolve("scorer", "open-clip")


class NotACheck:
    name, label = "loose", "Loose"

    def check(self, sample):
        return True


def bad_opener(source):  # a format opener that cannot take (source, images, ...)
    return None


def test_an_entry_of_the_wrong_shape_is_refused_by_name(registered):
    registered("check", "loose", "test_contracts:NotACheck")
    with pytest.raises(AutocompError, match=r"check 'loose' \(test_contracts:NotACheck\) is "
                                            "not a subclass of Check"):
        resolve("check", "loose")
    registered("format", "bad", "test_contracts:bad_opener")
    with pytest.raises(AutocompError, match=r"cannot be called with \(source, images, "
                                            r"columns, skip_missing\)"):
        resolve("format", "bad")
    registered("scorer", "gone", "test_contracts:nothing_here")
    with pytest.raises(AutocompError, match="test_contracts has no 'nothing_here'"):
        resolve("scorer", "gone")


def test_an_ordered_family_places_an_entry(registered):
    registered("check", "sharp", "autocomp.validators.checks:ObjectsCheck",
               after="objects")
    registered("check", "first", "autocomp.validators.checks:ObjectsCheck",
               before="objects")
    assert names("check")[:4] == ("first", "objects", "sharp", "background")
    with pytest.raises(AutocompError, match="only ordered families"):
        registered("scorer", "x", "m:f", after="hf")
    with pytest.raises(AutocompError, match=r"no check 'atributes' to place it after "
                                            r"\(did you mean 'attributes'\?\)"):
        registered("check", "late", "m:C", after="atributes")


def test_entry_points_of_group_autocomp_plugins_are_loaded(tmp_path, monkeypatch):
    """An installed distribution's entry point (a module that registers) is imported the
    first time the registry is read, as $AUTOCOMP_PLUGINS modules are."""
    from autocomp.core import registry

    (tmp_path / "ep_plugin.py").write_text(
        "from autocomp.core.registry import register\n"
        "register('scorer', 'ep-fewest', 'ep_plugin:make')\n"
        "def make(name, pretrained=None, device='cpu', batch_size=None):\n"
        "    raise NotImplementedError\n")
    info = tmp_path / "ep_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ep-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[autocomp.plugins]\nmine = ep_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    try:
        assert "ep-fewest" in names("scorer")
        assert callable(resolve("scorer", "ep-fewest"))
    finally:
        registry.unregister("scorer", "ep-fewest")


# ---- kinds --------------------------------------------------------------------------------

DOCS_KINDS = {"rim": ("rim:Rim", "rims.yaml"), "distance": ("distance:Distance",
                                                             "distance.yaml")}


@pytest.mark.parametrize("name", [*names("kind"), *(f"docs:{k}" for k in DOCS_KINDS)])
def test_kind_contract(name, registered, tmp_path, monkeypatch):
    """Every registered kind, on the built-in vocabulary it names as its example (declared
    beside the kind), and every kind of docs/extending.md: its values drawn on four shapes
    on both tracks, told apart and read back by the pixels answerer."""
    import yaml

    from autocomp.concepts import drawable
    from autocomp.concepts.vocab import builtin_vocabularies
    from autocomp.contracts import kind_problems

    if name.startswith("docs:"):
        docs_examples(tmp_path, monkeypatch)
        name = name[5:]
        target, vocabulary = DOCS_KINDS[name]
        registered("kind", name, target)
        path = tmp_path / vocabulary
    else:
        example = drawable.kind(name).example
        assert example, f"kind '{name}' names no example vocabulary (its class's example)"
        path = builtin_vocabularies()[example]
    entries = yaml.safe_load(path.read_text())["entries"]
    assert kind_problems(name, entries) == []


def test_the_test_your_plugin_snippet_passes(tmp_path, monkeypatch, registered):
    """docs/extending.md's "Test your plugin" file, run on the page's examples."""
    import sys
    import types

    docs_examples(tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path)  # it reads rims.yaml from the current folder
    monkeypatch.setitem(sys.modules, "my_plugins", types.ModuleType("my_plugins"))
    registered("kind", "rim", "rim:Rim")
    import test_my_plugins

    test_my_plugins.test_the_rim_kind_draws_and_reads_back()
    test_my_plugins.test_the_scorer_keeps_its_contract()


class Unpainted(ValueKind):  # a look field of its own, painted as nothing
    name, noun, question = "unpainted", "finish", "What finish has the {object}?"
    look = {"finish": None}

    def paint(self, pixels, look, surface):
        return None

    def read(self, image, question, subject, detections):
        return {"answer": next(iter(question.hints)), "evidence": {}}


class Unpaintable(Unpainted):  # ... and no paint at all
    name = "unpaintable"
    paint = ValueKind.paint


def test_a_kind_whose_look_does_not_change_the_pixels_fails_the_kind_contract(registered):
    from autocomp.contracts import kind_problems

    registered("kind", "unpainted", "test_contracts:Unpainted")
    problems = kind_problems("unpainted", [{"name": "glossy", "unpainted": "glossy"},
                                           {"name": "matte", "unpainted": "matte"}])
    assert "value 'glossy' does not change the pixels (paint() left the object as it was)" \
        in problems
    assert "'matte' on cube (minimal) draws the same image as 'glossy'" in problems
    assert any(p.startswith("'matte' on sphere (contextual) is read back as 'glossy'")
               for p in problems)


def test_vocab_check_holds_a_plugin_kind_to_the_kind_contract(registered, tmp_path):
    from click.testing import CliRunner

    from autocomp.cli import main

    registered("kind", "unpainted", "test_contracts:Unpainted")
    path = tmp_path / "finishes.yaml"
    path.write_text("name: finishes\nkind: attributes\nentries:\n"
                    "  - {name: glossy, unpainted: glossy}\n  - {name: matte, unpainted: matte}\n")
    out = CliRunner().invoke(main, ["vocab", "check", str(path)])
    assert out.exit_code == 1
    assert out.output.startswith(f"error: {path}: kind 'unpainted' breaks the kind contract "
                                 "(autocomp/contracts.py): 'matte' on cube (minimal) draws "
                                 "the same image as 'glossy'; ")


def test_a_look_field_nothing_draws_is_refused_when_the_vocabulary_is_read(registered):
    from autocomp.concepts.vocab import parse_vocabulary

    registered("kind", "unpaintable", "test_contracts:Unpaintable")
    with pytest.raises(AutocompError) as err:
        parse_vocabulary({"name": "finishes", "kind": "attributes", "entries": [
            {"name": "glossy", "unpaintable": "glossy"}]}, "finishes.yaml")
    assert str(err.value) == (
        "finishes.yaml: entry 1 ('glossy'): field 'unpaintable': value kind 'unpaintable' "
        "sets the look field 'finish', which the procedural generator cannot draw: it reads "
        "only color, rgb, scale, count; give the kind a paint() (docs/extending.md)")

def test_an_unknown_geometry_is_refused_when_the_vocabulary_is_read():
    from autocomp.concepts.vocab import parse_vocabulary

    with pytest.raises(AutocompError, match=r"entry 1 \('near'\): field 'geometry.distance' "
                                            r"is not known \(known: dx, dy, size, depth\)"):
        parse_vocabulary({"name": "d", "kind": "relations", "entries": [
            {"name": "near", "geometry": {"distance": -1}}]})


class Never(GeometryKind):  # a geometry kind whose relation never holds
    name, noun, question = "never", "never", "Is the {subject} by the {object}?"
    keys, places, described = ("never",), True, "never"

    def holds(self, box_s, box_o, g):
        return False

    def place(self, base, sign, dims_s, dims_o, g, size, rng):
        return base[0] + sign * 60, base[1]

    def read(self, box_s, box_o, hints):
        return None


def test_a_layout_that_cannot_be_found_is_one_line_naming_the_task(registered, tmp_path):
    registered("kind", "never", "test_contracts:Never")
    (tmp_path / "never.yaml").write_text(
        "name: never\nkind: relations\nentries:\n"
        "  - {name: by, inverse: past, geometry: {never: 1}}\n"
        "  - {name: past, inverse: by, geometry: {never: -1}}\n")
    (tmp_path / "t.yaml").write_text("name: shape_never\nkind: relation\nobjects: shapes\n"
                                     "values: never.yaml\nn: [2]\n")
    task = load_task(str(tmp_path / "t.yaml"))
    c = sample_concepts(task, 2, 1, seed=3)[0]
    gen = resolve("generator", "procedural")()
    with pytest.raises(AutocompError) as err:
        gen.generate_one(ImageRequest(c.id, c.graph, task, "minimal", c.seed, ""))
    (a, b), rel = c.graph.names, c.graph.relations[0].predicate
    message = str(err.value)
    assert message == (f"task shape_never, concept {c.id}: no layout found for {a}, {b} "
                       f"({a} {rel} {b}) after 2,000 tries")


# ---- behaviour contracts ------------------------------------------------------------------

@pytest.fixture(scope="module")
def pictures():
    from PIL import Image

    return [Image.new("RGB", (40, 40), c) for c in ("red", "navy", "white")]


TEXTS = ["a red cube", "a blue sphere to the left of a red cube", "two cones", "a cube"]


@pytest.mark.parametrize("name", [*names("scorer"), "docs:fewest"])
def test_scorer_contract(name, pictures, request, tmp_path, monkeypatch):
    """Every registered scorer family on the specs it declares beside it
    (@contract_example), and docs/extending.md's: a scorer of captions (dual, text,
    text-embedding, pair) on pictures and captions, an item scorer on a small run's items."""
    from autocomp.contracts import scorer_problems
    from autocomp.eval.scorers import load_scorer

    if name == "docs:fewest":
        docs_examples(tmp_path, monkeypatch)
        import fewest_words

        scorers = [fewest_words.make("words")]
    else:
        specs = _example("scorer", name)
        if any(":openai:" in s for s in specs):  # a chat VLM that always names option A
            server = request.getfixturevalue("fake_openai")
            server.reply = staticmethod(_first_letter)
            monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        scorers = [load_scorer(s) for s in _fill(specs, request)]
    for scorer in scorers:
        if scorer.scoring == "item":
            run = request.getfixturevalue("small_run")
            assert _item_problems(scorer, run, tmp_path) == [], scorer.name
        else:
            assert scorer_problems(scorer, pictures, TEXTS) == [], scorer.name


def _item_problems(scorer, run, tmp_path) -> list[str]:
    """The item scorer contract on every item of the run's shape_color and shape_position
    N=2 benchmarks."""
    from autocomp.contracts import item_scorer_problems
    from autocomp.eval.harness import Harness
    from autocomp.formats.runs import find_benchmarks

    harness = Harness(scorer, run.dir, run.tasks, tmp_path / "cache")
    try:
        return [f"{bench.name}: {p}"
                for bench in find_benchmarks(run.dir, ["shape_color-n2/*", "shape_position-n2/*"])
                for p in item_scorer_problems(scorer, harness.item_entries(list(bench.items())))]
    finally:
        harness.close()


def test_the_scorer_contract_rejects_unnormalised_vectors(pictures):
    from autocomp.contracts import scorer_problems
    from autocomp.eval.scorers.base import DualEncoder

    class Loud(DualEncoder):
        family = "loud"

        def encode_texts(self, texts):
            return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

        def encode_images(self, images):
            return np.array([[1.0, 2.0] for _ in images], dtype=np.float32)

    problems = scorer_problems(Loud("x"), pictures, TEXTS)
    assert any("encode_texts vectors are not L2-normalised" in p for p in problems)

    class Wide(Loud):  # float64, and one size for captions, another for images
        def encode_texts(self, texts):
            return np.ones((len(texts), 3)) / np.sqrt(3)

        def encode_images(self, images):
            return np.ones((len(images), 2), np.float32) / np.sqrt(2)

    problems = scorer_problems(Wide("x"), pictures, TEXTS)
    assert "encode_texts returned float64, not float32" in problems
    assert "caption vectors have 3 dimensions, image vectors 2" in problems


@pytest.fixture(scope="module")
def samples():
    from autocomp.validators.checks import Sample

    det, ans = resolve("detector", "color-blobs")(), resolve("answerer", "pixels")()
    gen = resolve("generator", "procedural")(size=128, faults={"drop_object": 0.5})
    out = []
    for name in ("shape_color", "shape_position"):
        task = load_task(name)
        for c in sample_concepts(task, 2, 3, seed=5):
            for track in ("minimal", "contextual"):
                img = np.asarray(gen.generate_one(ImageRequest(c.id, c.graph, task, track,
                                                               c.seed, "")).image)
                out.append(Sample(img, c.graph, task, track, det.detect(img, c.graph.names),
                                  ans))
    return out


@pytest.mark.parametrize("name", [*names("check"), "docs:min_size"])
def test_check_contract(name, samples, tmp_path, monkeypatch):
    from autocomp.contracts import check_problems

    if name == "docs:min_size":
        docs_examples(tmp_path, monkeypatch)
        import size_check

        check = size_check.MinSize()
    else:
        check = resolve("check", name)()
    mine = [s for s in samples if s.track in check.tracks]
    assert check_problems(check, mine) == []
    assert {check.check(s).passed for s in mine} == {True, False} or name != "objects"


def test_the_check_contract_rejects_a_check_returning_a_bool(samples):
    from autocomp.contracts import check_problems
    from autocomp.validators.checks import Check

    class Yes(Check):
        name, label = "yes", "Yes"

        def check(self, s):
            return True

    assert check_problems(Yes(), samples) == ["check() returned bool, not a CheckResult"]


class SaysYes(Check):  # a plugin check returning a bool, not a CheckResult
    name, label = "says_yes", "Yes"

    def check(self, s):
        return True


def test_a_plugin_check_breaking_its_contract_is_refused_before_its_verdicts(samples,
                                                                             registered):
    from autocomp.validators.checks import cascade, validate_images

    registered("check", "says_yes", "test_contracts:SaysYes")
    with pytest.raises(AutocompError) as err:
        validate_images(samples[:4], cascade())
    assert str(err.value) == ("check 'says_yes' (test_contracts:SaysYes) breaks the check "
                              "contract (autocomp/contracts.py): check() returned bool, not "
                              "a CheckResult")


class IntScores(TextScorer):  # a plugin scorer: one int per caption, not a float32 matrix
    family = "ints"

    def score_texts(self, texts):
        return np.array([len(t) for t in texts])


def make_ints(name, pretrained=None, device="cpu", batch_size=64):
    return IntScores(name, pretrained, device, batch_size)


def test_a_plugin_scorer_of_the_wrong_shape_is_refused_before_scoring(
        registered, small_run, tmp_path):  # noqa: F811 (a fixture)
    from click.testing import CliRunner

    from autocomp.cli import main

    registered("scorer", "ints", "test_contracts:make_ints")
    out = CliRunner().invoke(main, ["eval", str(small_run.dir), "--model", "ints:len",
                                    "--output", str(tmp_path / "results")])
    assert out.exit_code != 0
    assert out.output.strip().splitlines()[-1] == (
        "Error: scorer 'ints' (test_contracts:make_ints) on model 'ints:len' breaks the scorer "
        "contract (autocomp/contracts.py): score_texts returned int64, not float32; "
        "score_texts returned shape (3,) for 3 inputs (rows, size)")
    assert not list((tmp_path / "results").rglob("*.json"))  # nothing was scored


def open_unreadable(source, images, columns, skip_missing):  # a plugin format, broken
    from autocomp.formats.suite import LoadedBenchmark, Suite

    rows = [{"id": "0", "task": "x", "n": 0, "image": str(source), "positive": "a cube",
             "negatives": []}]
    return Suite("unreadable", source, source.parent,
                 [LoadedBenchmark("x/all", "x", 0, "x", "swap", lambda: iter(rows))])


def test_a_plugin_format_breaking_its_contract_is_refused_before_scoring(registered,
                                                                         tmp_path):
    from autocomp.eval.cells import evaluate

    registered("format", "unreadable", "test_contracts:open_unreadable")
    (tmp_path / "x.txt").write_text("x")
    with pytest.raises(AutocompError) as err:
        evaluate(tmp_path / "x.txt", ["blind:unigram"], tmp_path / "out", fmt="unreadable")
    assert str(err.value) == (f"{tmp_path / 'x.txt'}: format 'unreadable' (test_contracts:"
                              "open_unreadable) breaks the format "
                              "contract (autocomp/contracts.py): x/all: item '0': fewer than "
                              "two captions, or an empty one")
    assert not (tmp_path / "out").exists()


# ---- formats: the fixtures their openers name beside them (@contract_example) ---------------

@pytest.fixture
def sugarcrepe_source(sugarcrepe, coco):  # noqa: F811 (fixtures)
    return sugarcrepe, coco


@pytest.fixture
def columns_source(coco, tmp_path):  # noqa: F811 (a fixture)
    from autocomp.formats.columns import parse_mapping

    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"img": "000000000000.jpg", "cap": "a red square",
                                "negs": ["a blue square"]}) + "\n")
    return path, coco, parse_mapping("image=img,positive=cap,negatives=negs")


@pytest.fixture
def exported_run(small_run, tmp_path):  # noqa: F811 (a fixture)
    from autocomp.publish.export import export_benchmarks

    export_benchmarks(small_run.dir, tmp_path / "export", audit=False)
    return tmp_path / "export"


@pytest.fixture
def hf_release(tmp_path):
    return released_layout(tmp_path), tmp_path / "imgs"


@pytest.fixture
def colorswap(tmp_path):
    """Two rows in ColorSwap's parquet layout (images embedded)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from PIL import Image

    def png(color):
        buf = io.BytesIO()
        Image.new("RGB", (8, 8), color).save(buf, format="PNG")
        return {"bytes": buf.getvalue(), "path": None}

    rows = [{"id": i, "image_1": png(a), "image_2": png(b), "caption_1": f"a {x} ball",
             "caption_2": f"a {y} ball", "image_source": "sd", "caption_source": "human"}
            for i, (a, b, x, y) in enumerate([("red", "blue", "red", "blue"),
                                              ("green", "red", "green", "red")])]
    folder = tmp_path / "colorswap" / "data"
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "test-00000-of-00001.parquet")
    return tmp_path / "colorswap"


def _source(made) -> tuple:
    """(source, images, columns) from what a format's example fixture gives: a run, a path,
    or (source, images[, columns])."""
    if hasattr(made, "dir"):
        return made.dir, None, None
    if isinstance(made, tuple):
        return (*made, None)[:3]
    return made, None, None


@pytest.mark.parametrize("name", [*names("format"), "docs:tsv"])
def test_format_contract(name, request, tmp_path, monkeypatch):
    """Every registered format on the fixture it names beside it (@contract_example: a
    hand-written file in its authors' layout), and docs/extending.md's."""
    from autocomp.contracts import suite_problems
    from autocomp.formats import open_suite

    if name == "docs:tsv":
        docs_examples(tmp_path, monkeypatch)
        from PIL import Image

        for f, c in (("a.png", "red"), ("b.png", "blue")):
            Image.new("RGB", (32, 32), c).save(tmp_path / f)
        (tmp_path / "pairs.tsv").write_text("a.png\ta red cube\ta blue cube\n"
                                            "b.png\ta blue sphere\ta red sphere\n")
        import tsv_format

        suite = tsv_format.open_tsv(tmp_path / "pairs.tsv", None, {}, False)
    else:
        (fixture,) = _example("format", name)
        source, images, columns = _source(request.getfixturevalue(fixture))
        suite = open_suite(source, name, images=images, columns=columns)
    assert suite_problems(suite) == []


def test_the_format_contract_rejects_items_the_harness_cannot_read(tmp_path):
    from autocomp.contracts import suite_problems
    from autocomp.formats.suite import LoadedBenchmark, Suite

    rows = [{"id": "1", "image": "gone.png", "positive": "a cube", "negatives": []},
            {"id": "1", "image": "gone.png", "positive": "a cube",
             "negatives": [{"text": "a sphere"}]}]
    bench = LoadedBenchmark("t/all", "t", 0, "t", "swap", lambda: iter(rows))
    problems = suite_problems(Suite("t", tmp_path, tmp_path, [bench]))
    assert "t/all: item '1': fewer than two captions, or an empty one" in problems
    assert "t/all: item '1': image gone.png is not a file" in problems
    assert "t/all: item '1': the id is not a string, or repeats" in problems
    assert any("the harness cannot read it (KeyError('caption'))" in p for p in problems)


def test_autocomp_benchmark_kinds_and_tracks_are_a_closed_set(tmp_path):
    """A typo in an Auto-Comp benchmark's kind or track is named by the suite contract
    (it would be scored and then tabled nowhere); another dataset's subsets are its own."""
    from autocomp.contracts import suite_problems
    from autocomp.formats.suite import LoadedBenchmark, Suite

    def suite(fmt, track, kind):
        return Suite(fmt, tmp_path, tmp_path, [LoadedBenchmark(
            f"t-n2/{track}-{kind}", "t", 2, track, kind, lambda: iter([]))])

    assert suite_problems(suite("run", "minimal", "swapp")) == [
        "t-n2/minimal-swapp: kind 'swapp' is not one of swap, confusion, vary_value, "
        "vary_object (the report tables only those)"]
    assert suite_problems(suite("autocomp-hf", "minmal", "swap")) == [
        "t-n2/minmal-swap: track 'minmal' is not one of minimal, contextual"]
    assert suite_problems(suite("mine", "contextual", "attribute")) != []  # claims a track
    assert suite_problems(suite("valse", "-", "counting")) == []


def test_a_checks_threshold_is_configured_by_a_field_of_its_options(registered, tmp_path,
                                                                  monkeypatch):
    """The docs' min_size check declares `min_share` once (default, range, help): a run
    config sets it under validate.min_size, checked like every option, written back."""
    from autocomp.config import parse_config
    from autocomp.validators.checks import cascade

    docs_examples(tmp_path, monkeypatch)
    registered("check", "min_size", "size_check:MinSize")
    base = {"concepts": [{"task": "shape_color", "n": [2], "count": 2}]}
    cfg = parse_config({**base, "validate": {"min_size": {"min_share": 0.02}}})
    assert cfg.validate.options("min_size").min_share == 0.02
    assert [c.options.min_share for c in cascade(cfg.validate.checks)
            if c.name == "min_size"] == [0.02]
    assert cfg.to_dict()["validate"]["min_size"] == {"min_share": 0.02}
    assert parse_config(cfg.to_dict()).to_dict() == cfg.to_dict()
    assert parse_config(base).validate.options("min_size").min_share == 0.004  # declared
    with pytest.raises(AutocompError, match=r"field validate.min_size.min_share: expected a "
                                            r"number in \[0.0, 1.0\], got 2"):
        parse_config({**base, "validate": {"min_size": {"min_share": 2}}})
    with pytest.raises(AutocompError, match=r"field validate.min_size.share: unknown field "
                                            r"\(known: min_share\)"):
        parse_config({**base, "validate": {"min_size": {"share": 0.1}}})


def test_every_config_default_is_declared_once():
    """A section's defaults live in its declarations: the YAML of an empty config is the
    declared defaults, and the background check's are the paper's."""
    import dataclasses

    from autocomp.config import SECTIONS, parse_config
    from autocomp.core.fields import declared

    cfg = parse_config({"concepts": [{"task": "shape_color", "n": [2], "count": 2}]})
    for key, cls in SECTIONS.items():
        for f in declared(cls):
            assert getattr(getattr(cfg, key), f.name) == f.default and f.metadata["doc"], f
    bg = cfg.validate.options("background")
    assert dataclasses.asdict(bg) == {"min_fraction": 0.7, "min_gray": 190, "region": "boxes"}


def _first_letter(body):  # a chat VLM that always names option A
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [
        {"index": 0, "finish_reason": "stop",
         "message": {"role": "assistant", "content": "The answer is A."}}]}


def test_the_item_scorer_contract_rejects_a_scorer_forgetting_candidates(small_run,  # noqa: F811
                                                                          tmp_path):
    from autocomp.contracts import item_scorer_problems
    from autocomp.eval.harness import Harness
    from autocomp.eval.scorers.base import ItemScorer
    from autocomp.formats.runs import find_benchmarks

    class FirstOnly(ItemScorer):
        family = "first"

        def score_item(self, item, candidates, truth):
            return [1.0]  # the positive alone

    harness = Harness(FirstOnly("x"), small_run.dir, small_run.tasks, tmp_path / "cache")
    bench = find_benchmarks(small_run.dir, ["shape_color-n2/minimal-swap"])[0]
    entries = harness.item_entries(list(bench.items()))
    problems = item_scorer_problems(FirstOnly("x"), entries)
    assert problems and "scores of shape (1,) for 2 candidates" in problems[0]


def test_autocomp_run_holds_a_plugin_kind_to_the_kind_contract(registered, tmp_path):
    """Issue 68: a value kind that draws nothing was refused by `vocab check` but `autocomp
    run` validated it at 100% and built its benchmarks. Now the run stops before drawing,
    in one line naming the vocabulary; the concepts it sampled stay."""
    from click.testing import CliRunner

    from autocomp.cli import main

    registered("kind", "unpainted", "test_contracts:Unpainted")
    (tmp_path / "finishes.yaml").write_text(
        "name: finishes\nkind: attributes\nentries:\n"
        "  - {name: glossy, unpainted: glossy}\n  - {name: matte, unpainted: matte}\n")
    (tmp_path / "finish.yaml").write_text("name: shape_finish\nkind: attribute\n"
                                          "objects: shapes\nvalues: finishes.yaml\nn: [1]\n")
    (tmp_path / "run.yaml").write_text("name: finish\nconcepts:\n"
                                       "  - {task: finish.yaml, n: [1], count: 4}\n")
    out = CliRunner().invoke(main, ["run", str(tmp_path / "run.yaml"), "--output",
                                    str(tmp_path / "runs" / "f")])
    assert out.exit_code == 1, out.output
    assert "finishes.yaml: kind 'unpainted' breaks the kind contract (autocomp/contracts.py)" \
        ": 'matte' on cube (minimal) draws the same image as 'glossy'" in out.output
    run = tmp_path / "runs" / "f"
    assert not list(run.rglob("*.png"))
    out = CliRunner().invoke(main, ["run", str(tmp_path / "run.yaml"), "--output", str(run),
                                    "--stages", "concepts,captions"])
    assert out.exit_code == 0, out.output  # the stages that draw nothing still run
