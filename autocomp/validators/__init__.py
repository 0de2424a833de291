"""Validators: object presence and count, background, attributes and relations."""
