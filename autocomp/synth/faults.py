"""The faults the procedural generator can inject, how each image draws them, the value
faults of attribute concepts, what each check should then conclude, and the palette of
colors drawn for objects with no color of their own."""

from __future__ import annotations

import random

from autocomp.synth.looks import apply_value, plain_look

FAULTS = ("drop_object", "wrong_color", "swap", "grey_background")
PALETTE = ((230, 25, 75), (60, 130, 230), (60, 180, 75), (255, 200, 25), (245, 130, 48),
           (145, 30, 180), (70, 220, 220), (240, 50, 230))


def expected_outcomes(faults: list[dict], track: str) -> dict:
    """What each validation check should conclude, given the injected faults."""
    kinds = {f["kind"] for f in faults}
    out = {"objects": "drop_object" not in kinds,
           "attributes": not ({"wrong_color", "wrong_value", "swap"} & kinds)}
    if track == "minimal":
        out["background"] = "grey_background" not in kinds
    return out


def fault_draws(req) -> tuple[dict, random.Random]:
    """One draw per fault (whatever applies) and the generator of its picks: the same for
    a concept's track however its faults are applied."""
    rng = random.Random(f"faults:{req.seed}:{req.track}")
    draws = {f: rng.random() for f in FAULTS}
    return draws, random.Random(f"fault-picks:{req.seed}:{req.track}")


def value_faults(req, looks: list[dict], task, rates: dict) -> list[dict]:
    """The swap and wrong-value faults of an attribute concept, applied to its objects'
    looks (before the layout, which then fits the sizes drawn)."""
    draws, picks = fault_draws(req)
    values = [o.attributes[0] for o in req.graph.objects]
    faults = []
    if draws["swap"] < rates.get("swap", 0) and len(values) >= 2:
        pairs = [(a, b) for a in range(len(values)) for b in range(a + 1, len(values))
                 if values[a] != values[b]]
        if pairs:
            a, b = picks.choice(pairs)
            looks[a], looks[b] = looks[b], looks[a]
            values[a], values[b] = values[b], values[a]
            faults.append({"kind": "swap", "slots": [a, b], "what": "values"})
    if draws["wrong_color"] < rates.get("wrong_color", 0) and values:
        slot = picks.randrange(len(values))
        vocab = task.vocab_of(values[slot])
        taken = {values[slot], req.graph.objects[slot].attributes[0]}
        other = picks.choice([v for v in vocab.names if v not in taken])
        faults.append({"kind": "wrong_value", "slot": slot, "from": values[slot], "to": other})
        looks[slot] = plain_look()
        apply_value(looks[slot], other, vocab[other])
    return faults
