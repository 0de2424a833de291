"""COMPASS: composed vs decomposed captions and skill load, on Visual Genome scene graphs
and on autocomp's own synthetic runs (docs/methods.md section 6)."""
