"""A small Visual Genome-format folder written by hand for the tests: five invented scenes
in the layout of VG v1.2/1.4 (scene_graphs.json, attributes.json, image_data.json,
attribute_synsets.json), with what real records carry: upper-case and padded names, verb
predicates ("WEARING", "parked on", "has"), plurals ("bikes", "pants", "trees"), alternate
names ("man" / "guy"), object and relationship synsets, a relation to a missing object and
an exact duplicate relation triple."""

from __future__ import annotations

import json
from pathlib import Path

# object: (id, names, synset, attributes); relation: (subject id, predicate, synset, object id)
SCENES = {
    1: {"objects": [
        (10, ["man", "guy"], "man.n.01", ["tall", "young"]),
        (11, ["shirt"], "shirt.n.01", ["white", "striped"]),
        (12, ["pants"], "trouser.n.01", ["black"]),
        (13, ["street"], "street.n.01", ["gray", "wet"]),
        (14, ["car"], "car.n.01", ["red", "parked"]),
        (15, ["trees"], "tree.n.01", ["green", "tall"]),
        (16, ["sidewalk"], "sidewalk.n.01", ["concrete"]),
        (17, ["sign"], "sign.n.02", ["white"]),
        (18, ["pole"], "pole.n.01", ["metal", "gray"]),
        (19, ["building"], "building.n.01", ["brick", "tall"]),
        (20, ["window"], "window.n.01", ["large", "glass"]),
        (21, ["bikes"], "bicycle.n.01", ["blue"]),
        (22, ["hat"], "hat.n.01", ["brown"]),
    ], "relations": [
        (10, "WEARING", "wear.v.01", 11), (10, "wears", "wear.v.01", 12),
        (10, "ON", "along.r.01", 16), (14, "parked on", "park.v.02", 13),
        (17, "on", "along.r.01", 18), (20, "ON", "along.r.01", 19),
        (15, "behind", "behind.r.01", 10), (21, "next to", None, 14),
        (10, "has", "have.v.01", 22), (18, "beside", None, 13),
        (16, "near", "near.r.01", 19), (21, "in front of", None, 19),
        (10, "WEARING", "wear.v.01", 11),  # an exact duplicate triple, as VG has
        (10, "holding", "hold.v.02", 99),  # 99 is not among the objects
    ]},
    2: {"objects": [
        (30, ["woman"], "woman.n.01", ["smiling", "young"]),
        (31, ["dress"], "dress.n.01", ["blue", "long"]),
        (32, ["dog"], "dog.n.01", ["brown", "small"]),
        (33, ["grass"], "grass.n.01", ["green"]),
        (34, ["bench"], "bench.n.01", ["wooden"]),
        (35, ["tree"], "tree.n.01", ["tall"]),
        (36, ["leaves"], "leaf.n.01", ["green", "yellow"]),
        (37, ["sky"], "sky.n.01", ["blue", "clear"]),
        (38, ["clouds"], "cloud.n.01", ["white"]),
        (39, ["bag"], "bag.n.01", ["leather", "black"]),
        (40, ["shoes"], "shoe.n.01", ["white"]),
        (41, ["fence"], "fence.n.01", ["wooden", "white"]),
    ], "relations": [
        (30, "wearing", "wear.v.01", 31), (30, "sitting on", "sit.v.01", 34),
        (32, "ON", "along.r.01", 33), (34, "on", "along.r.01", 33),
        (36, "on", "along.r.01", 35), (38, "in", "in.r.01", 37),
        (30, "holding", "hold.v.02", 39), (30, "WEARING", "wear.v.01", 40),
        (32, "near", "near.r.01", 30), (41, "behind", "behind.r.01", 34),
        (35, "behind", "behind.r.01", 41), (39, "on", "along.r.01", 34),
    ]},
    3: {"objects": [
        (50, ["table"], "table.n.02", ["wooden", "brown"]),
        (51, ["plate"], "plate.n.04", ["white", "round"]),
        (52, ["pizza"], "pizza.n.01", ["sliced", "hot"]),
        (53, ["cup"], "cup.n.01", ["red"]),
        (54, ["fork"], "fork.n.01", ["metal", "silver"]),
        (55, ["chair"], "chair.n.01", ["wooden"]),
        (56, ["glasses"], "spectacles.n.01", ["black"]),
        (57, ["napkin"], "napkin.n.01", ["white", "folded"]),
        (58, ["bowl"], "bowl.n.01", ["empty", "blue"]),
        (59, ["lamp"], "lamp.n.01", ["lit"]),
        (60, ["wall"], "wall.n.01", ["yellow"]),
        (61, ["bottle"], "bottle.n.01", ["green", "glass"]),
    ], "relations": [
        (51, "ON", "along.r.01", 50), (52, "on", "along.r.01", 51),
        (53, "on", "along.r.01", 50), (54, "next to", None, 51),
        (55, "next to", None, 50), (56, "on", "along.r.01", 50),
        (57, "under", "under.r.01", 54), (58, "beside", None, 53),
        (59, "above", "above.r.01", 50), (60, "behind", "behind.r.01", 59),
        (61, "on", "along.r.01", 50), (58, "on", "along.r.01", 50),
    ]},
    4: {"objects": [
        (70, ["boy"], "male_child.n.01", ["young", "smiling"]),
        (71, ["skateboard"], "skateboard.n.01", ["black"]),
        (72, ["helmet"], "helmet.n.02", ["red"]),
        (73, ["shorts"], "short_pants.n.01", ["gray"]),
        (74, ["ramp"], "ramp.n.01", ["concrete", "gray"]),
        (75, ["girl"], "female_child.n.01", ["standing"]),
        (76, ["jacket"], "jacket.n.01", ["pink"]),
        (77, ["fence"], "fence.n.01", ["metal"]),
        (78, ["trees"], "tree.n.01", ["green"]),
        (79, ["truck"], "truck.n.01", ["white", "parked"]),
        (80, ["road"], "road.n.01", ["paved"]),
    ], "relations": [
        (70, "riding", "ride.v.01", 71), (70, "WEARING", "wear.v.01", 72),
        (70, "wearing", "wear.v.01", 73), (71, "on", "along.r.01", 74),
        (75, "watching", "watch.v.01", 70), (75, "wearing", "wear.v.01", 76),
        (75, "behind", "behind.r.01", 77), (78, "behind", "behind.r.01", 77),
        (79, "parked on", "park.v.02", 80), (77, "next to", None, 80),
        (80, "behind", "behind.r.01", 74),
    ]},
    5: {"objects": [
        (90, ["cat"], "cat.n.01", ["orange", "sleeping"]),
        (91, ["sofa", "couch"], "sofa.n.01", ["gray", "soft"]),
        (92, ["pillow"], "pillow.n.01", ["white"]),
        (93, ["rug"], "rug.n.01", ["red", "striped"]),
        (94, ["floor"], "floor.n.01", ["wooden"]),
        (95, ["book"], "book.n.01", ["open", "old"]),
        (96, ["shelf"], "shelf.n.01", ["wooden", "white"]),
        (97, ["plant"], "plant.n.02", ["green", "small"]),
        (98, ["pot"], "pot.n.04", ["ceramic", "blue"]),
        (99, ["curtains"], "curtain.n.01", ["long", "white"]),
        (100, ["window"], "window.n.01", ["open"]),
        (101, ["clock"], "clock.n.01", ["round"]),
    ], "relations": [
        (90, "on", "along.r.01", 91), (92, "ON", "along.r.01", 91),
        (93, "on", "along.r.01", 94), (91, "on", "along.r.01", 93),
        (95, "on", "along.r.01", 96), (97, "in", "in.r.01", 98),
        (98, "on", "along.r.01", 96), (99, "hanging on", "hang.v.01", 100),
        (101, "above", "above.r.01", 91), (96, "next to", None, 100),
        (90, "has", "have.v.01", 92),
    ]},
}

ATTRIBUTE_SYNSETS = {
    "tall": "tall.a.01", "young": "young.a.01", "white": "white.a.01", "black": "black.a.01",
    "striped": "striped.a.01", "gray": "gray.s.01", "wet": "wet.a.01", "red": "red.s.01",
    "parked": "park.v.02", "green": "green.s.01", "concrete": "concrete.a.01",
    "metal": "metallic.a.01", "brick": "brick.n.01", "large": "large.a.01",
    "glass": "glass.n.01", "blue": "blue.s.01", "brown": "brown.s.01",
    "smiling": "smile.v.01", "long": "long.a.02", "small": "small.a.01",
    "wooden": "wooden.a.01", "yellow": "yellow.s.01", "clear": "clear.a.01",
    "leather": "leather.n.01", "round": "round.a.01", "sliced": "slice.v.01",
    "hot": "hot.a.01", "silver": "silver.s.01", "folded": "fold.v.01",
    "empty": "empty.a.01", "lit": "light.v.01", "standing": "stand.v.01", "pink": "pink.s.01",
    "paved": "pave.v.01", "orange": "orange.s.01", "sleeping": "sleep.v.01",
    "soft": "soft.a.01", "open": "open.a.01", "old": "old.a.01", "ceramic": "ceramic.a.01",
}


def write_vg(directory: Path) -> Path:
    """Write the scenes as a VG folder (extra attributes of the first scene go to
    attributes.json, as raw VG often keeps them there)."""
    directory.mkdir(parents=True, exist_ok=True)
    graphs, attrs = [], []
    rid = 1000
    for iid, scene in SCENES.items():
        objects = []
        for k, (oid, names, synset, attributes) in enumerate(scene["objects"]):
            obj = {"object_id": oid, "x": 10 * k, "y": 5 * k, "w": 40, "h": 30,
                   "names": [n.upper() if k % 3 == 0 else f" {n} " for n in names],
                   "synsets": [synset]}
            if iid == 1 and k % 2:
                attrs.append({"object_id": oid, "names": names, "attributes": attributes})
            else:
                obj["attributes"] = attributes
            objects.append(obj)
        relations = []
        for s, p, syn, o in scene["relations"]:
            rid += 1
            relations.append({"relationship_id": rid, "predicate": p,
                              "synsets": [syn] if syn else [], "subject_id": s,
                              "object_id": o})
        graphs.append({"image_id": iid, "objects": objects, "relationships": relations})
    (directory / "scene_graphs.json").write_text(json.dumps(graphs))
    (directory / "attributes.json").write_text(json.dumps(
        [{"image_id": 1, "attributes": attrs}]))
    (directory / "image_data.json").write_text(json.dumps(
        [{"image_id": i, "url": f"https://example.org/{i}.jpg", "width": 800, "height": 600,
          "coco_id": None, "flickr_id": None} for i in SCENES]))
    (directory / "attribute_synsets.json").write_text(json.dumps(ATTRIBUTE_SYNSETS))
    return directory
