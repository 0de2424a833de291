"""Caption grammar, minimal templates and the semantic-preservation check."""
