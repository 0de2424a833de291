"""Drawable kinds: how each kind of value is written in a vocabulary, drawn by the
procedural generator and read back by the pixels answerer, one file per kind (base.py says
what a kind owns). Kinds are the registry's "kind" family: lower layers (concepts, synth,
validators) reach them by name through concepts/drawable.py, never by import."""
