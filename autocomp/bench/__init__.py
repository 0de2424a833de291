"""Benchmarks: positive sets (minimal, contextual, paired) and hard-negative items."""
