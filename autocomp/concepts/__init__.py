"""Vocabularies, task definitions and concept sampling."""
