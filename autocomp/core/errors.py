"""One error type for bad user input: it names the file, the entry and the problem."""

from __future__ import annotations


def disk_full(exc: OSError) -> bool:
    """Whether a failed write failed because the disk (or the user's quota, or the file size
    limit) is full."""
    import errno

    return exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


class AutocompError(ValueError):
    """A problem with user input, reported as one line without a traceback."""

    def __init__(self, problem: str, *, file: object = None, entry: object = None,
                 field: str | None = None):
        self.problem = problem
        self.file = None if file is None else str(file)
        self.entry = entry
        self.field = field
        parts = [p for p in (self.file, None if entry is None else f"entry {entry}",
                             None if field is None else f"field {field}") if p]
        super().__init__(": ".join([*parts, problem]))
