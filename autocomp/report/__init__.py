"""Tables and figures of a run."""
