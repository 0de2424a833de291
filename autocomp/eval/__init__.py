"""Evaluation: scorers (a lazy registry), the batched and cached harness, results files."""
