"""What a drawable kind owns. A kind is registered in the registry's "kind" family under
the name a vocabulary writes:

  value kinds (attribute entries) by their field: `{name: red, rgb: [220, 30, 30]}` is
      drawn by the kind registered as "rgb";
  geometry kinds (relation entries) by name, found from their geometry's keys:
      `geometry: {dx: 0, dy: 1}` is drawn by the kind whose `keys` are dx and dy.

Each kind parses and checks its field (`parse`), names what its values describe when the
vocabulary does not (`noun`, `question`: the default aspect), and holds what drawing and
reading need: a value kind sets its part of an object's look and reads it back off the
image; a geometry kind places a pair of boxes so a relation holds, says whether it holds,
reads it back from two boxes, and trades the pair for the `swap` fault. Messages for what
cannot be drawn come from the kind too, so the drawing code never asks which kind it has.
"""

from __future__ import annotations

from typing import ClassVar

from autocomp.core.families import required


class Kind:
    name: ClassVar[str] = ""  # its registry name (a value kind: the entry field)
    of: ClassVar[str] = ""  # "attributes" | "relations"
    noun: ClassVar[str] = ""  # the aspect's name when a vocabulary declares none
    question: ClassVar[str] = ""  # ... and its question ({object}; relations: {subject})
    # the built-in vocabulary its contract draws in the suite (contracts.kind_problems on
    # every registered kind), declared beside the kind: no central table to edit
    example: ClassVar[str | None] = None

    def parse(self, raw, fail):
        """The entry's value of this kind, checked; `fail(problem)` makes the error."""
        return raw

    def swatch(self, value) -> tuple[int, int, int] | None:
        """An RGB a report may show beside the value, or None."""
        return None


class ValueKind(Kind):
    """An attribute drawn on the object itself (a color, a size word, a texture, ...)."""

    of: ClassVar[str] = "attributes"
    look: ClassVar[dict] = {}  # the look fields it sets, as an unmarked object has them
    alone: ClassVar[bool] = True  # the generator draws it in attribute and scene tasks
    colors: ClassVar[bool] = False  # its values are the objects' colors (the paper's task)
    needs_blob: ClassVar[bool] = True  # reading it needs the object's one blob
    # the smallest procedural image side at which the pixels answerer reads the kind back
    # (a run config drawing it smaller is warned: its values fail validation)
    min_side: ClassVar[int] = 0
    alone_hint: ClassVar[str] = ""  # said when a task cannot draw it alone
    drawn_as: ClassVar[str] = ""  # its values in the plural, for messages ("colors")
    choices: ClassVar[tuple[str, ...]] = ()  # the values it may take, when it names them
    paint_order: ClassVar[int] = 50  # painted in this order (a surface before its texture)

    @property
    def paints(self) -> bool:
        """Whether the kind draws its look fields itself (it overrides paint)."""
        return type(self).paint is not ValueKind.paint

    def paint(self, pixels, look: dict, surface) -> str | None:
        """Draw this kind's look fields (`look`: the object's whole look) onto the object's
        RGBA pixels, in place (`surface`: synth/shapes.py Surface: where each face is, the
        fill, outline width and texture period); return why the value cannot show at this
        size, or None. Kinds whose fields the generator reads itself (the fill color, the
        size, the copies: synth/looks.py GENERATOR_FIELDS) do not paint."""
        raise NotImplementedError

    def look_problem(self) -> str | None:
        """Why the procedural generator cannot draw this kind's look, or None: a field is
        neither read by the generator nor painted by the kind."""
        from autocomp.synth.looks import GENERATOR_FIELDS

        if not self.look:
            return f"value kind '{self.name}' sets no look field (class attribute look)"
        own = [key for key in self.look if key not in GENERATOR_FIELDS]
        if own and not self.paints:
            return (f"value kind '{self.name}' sets the look field '{own[0]}', which the "
                    f"procedural generator cannot draw: it reads only "
                    f"{', '.join(GENERATOR_FIELDS)}; give the kind a paint() "
                    "(docs/extending.md)")
        return None

    def parse(self, raw, fail):
        if self.choices and raw not in self.choices:
            raise fail(f"field '{self.name}' must be one of {', '.join(self.choices)}, "
                       f"got {raw!r}")
        return raw

    def draw(self, look: dict, name: str, value) -> None:
        """Set this kind's part of an object's look for the value `name` (by default its
        one look field takes the value)."""
        (key,) = self.look
        look[key] = value

    @required
    def read(self, image, question, subject, detections) -> dict:
        """{"answer", "evidence"}: which of question.hints (value -> this kind's value)
        the image shows for `subject` (its blob; None for kinds without needs_blob)."""
        raise NotImplementedError

    def copies(self, value) -> int | None:
        """How many of the object the value asks for (numerals), or None."""
        return None

    def reads_after_shrink(self, name: str, values: dict, box, canvas: int) -> bool:
        """Whether value `name` still reads once the scene was drawn smaller than asked
        (`values`: every value of its vocabulary -> this kind's value)."""
        return True

    def shown(self, value):
        """The value as a message writes it."""
        return list(value) if isinstance(value, tuple) else value


class GeometryKind(Kind):
    """A relation between two objects' boxes, drawn by where (or how large) they are."""

    of: ClassVar[str] = "relations"
    keys: ClassVar[tuple[str, ...]] = ()  # its geometry's keys
    traded: ClassVar[str] = "places"  # what the swap fault's two objects trade
    own_layout: ClassVar[bool] = False  # lays out every object itself (layout())
    places: ClassVar[bool] = False  # places an object's centre from its partner's
    in_scenes: ClassVar[bool] = False  # scene tasks draw it
    symmetric: ClassVar[bool] = False  # "A near B" says what "B near A" says
    described: ClassVar[str] = ""  # what its geometry is, for messages

    @required
    def holds(self, box_s, box_o, g: dict) -> bool:
        """Whether the drawn boxes show the relation with the generator's margin."""
        raise NotImplementedError

    @required
    def read(self, box_s, box_o, hints: dict) -> str | None:
        """Which relation of `hints` (name -> geometry, all of this kind) the two boxes
        show, or None."""
        raise NotImplementedError

    def trade(self, box_s, box_o, name_s: str, name_o: str):
        """The pair's boxes after the swap fault (each takes the other's place), or None
        when trading cannot make the relation false (a symmetric one)."""
        if self.symmetric:
            return None
        from autocomp.synth.layout import trade_places

        return trade_places(box_s, box_o)

    def heights(self, heights: list, s: int, o: int, g: dict, names, rng) -> None:
        """Fix the pair's heights before placing (relative size); most kinds do not."""

    def place(self, base, sign: int, dims_s, dims_o, g: dict, size: int, rng):
        """The centre of the pair's unplaced object (sign -1: the object, placed from the
        subject at `base`; +1: the subject, from the object)."""
        raise NotImplementedError

    def layout(self, names, relations, geometry, size: int, rng, tries: int):
        """Every box, for a kind with own_layout."""
        raise NotImplementedError
