"""Hard negatives: graph edits rendered like the positive (swap, confusion, N=1 variations)."""
