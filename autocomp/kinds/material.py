"""`material`: a surface rendering (wood, metal, glass, stone, fabric; synth/materials.py);
read by validators/materials.py: the blob's inner color and spread beside each material
rendered on the same shape and size over what surrounds it."""

from __future__ import annotations

from autocomp.kinds.base import ValueKind
from autocomp.synth.materials import MATERIALS, paint_material


class Material(ValueKind):
    example = "materials"  # the built-in vocabulary its contract draws
    name, noun, question = "material", "material", "What is the {object} made of?"
    look = {"material": None}
    drawn_as, choices = "materials", MATERIALS
    paint_order = 10  # the surface, under a pattern

    def paint(self, pixels, look, surface):
        paint_material(pixels, surface, look["material"])

    def read(self, image, question, subject, detections):
        from autocomp.validators.materials import read_material
        from autocomp.validators.pixels import UNKNOWN

        found, evidence = read_material(image, subject.label, subject.mask, subject.box)
        named = [name for name, m in question.hints.items() if m == found]
        return {"answer": named[0] if named else UNKNOWN, "evidence": evidence}
