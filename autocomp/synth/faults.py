"""The faults the procedural generator can inject, what each check should then conclude,
and the palette of colors drawn for objects with no color of their own."""

from __future__ import annotations

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
