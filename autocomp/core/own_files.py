"""Files in folders others can write to (a run, results, an export, a review): opened with
no link followed and only as regular files, read no further than a bound. A link planted
there made autocomp cut or append to the file it pointed to; a FIFO hung a reader; a link
to /dev/zero or a 400 MB line filled its memory."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from autocomp.core.errors import AutocompError

RESULT_LIMIT = 64 * 2 ** 20  # bytes: a result JSON or a verification record is far smaller
PREDICTIONS_LIMIT = 4 * 2 ** 30  # bytes: a predictions file (a line an item)
LINE_LIMIT = 8 * 2 ** 20  # characters: a predictions line (Confusion at N = 3: ~15 KB)


@contextmanager
def open_regular(path, limit: int = RESULT_LIMIT, text: bool = True):
    """`path` opened for reading only if it is a regular file of at most `limit` bytes
    (OSError otherwise, naming why): a FIFO, a device or a link to /dev/zero dropped in a
    results folder would hang a reader or fill its memory. Opened without blocking and
    checked on the open descriptor, so nothing can be swapped in between."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path}: not a regular file")
        if st.st_size > limit:
            raise OSError(f"{path}: {st.st_size:,} bytes, over the {limit:,} a reader takes")
        os.set_blocking(fd, True)
        fh = os.fdopen(fd, "r", encoding="utf-8") if text else os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        yield fh


def own_fd(path, flags: int, what: str = "a file autocomp writes",
           advice: str | None = None) -> int:
    """A descriptor of `path` opened with `flags` plus no link followed, only if it is a
    regular file (blocking again once checked): see open_own."""
    import errno
    import stat

    def refused(found: str) -> AutocompError:
        tail = advice or ("autocomp writes through no link; remove it"
                          if found == "a symbolic link" else "remove it")
        return AutocompError(f"{found} stands where {what} should be: {tail}", file=path)

    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK, 0o666)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR):
            raise refused("a symbolic link" if exc.errno == errno.ELOOP
                          else "a directory") from None
        raise
    kind = stat.S_IFMT(os.fstat(fd).st_mode)
    if kind != stat.S_IFREG:
        os.close(fd)
        raise refused("a directory" if kind == stat.S_IFDIR else (
            "a FIFO" if kind == stat.S_IFIFO else "something not a regular file"))
    os.set_blocking(fd, True)
    return fd


def open_own(path, mode: str = "a", what: str = "a file autocomp writes",
             advice: str | None = None):
    """A file of a folder autocomp writes (a part file, a records file, a lock entry),
    opened with no link followed and only if it is a regular file: `mode` "a" (append,
    created if missing), "a+" (read and append, created if missing), "rb+" (read and
    rewrite in place) or "rb". A link there made autocomp cut or append to the file it
    pointed to, anywhere; a dangling one created its target; a FIFO hung the reader. One
    line otherwise: "<path>: <a link, a directory...> stands where <what> should be:
    <advice>"."""
    flags = {"a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
             "a+": os.O_RDWR | os.O_CREAT | os.O_APPEND, "rb+": os.O_RDWR,
             "rb": os.O_RDONLY}[mode]
    fd = own_fd(path, flags, what, advice)
    if mode in ("a", "a+"):
        return os.fdopen(fd, mode, encoding="utf-8")
    return os.fdopen(fd, mode)


def create_new(path, mode: str = "w"):
    """`path` made anew for writing ("w" text or "wb"), for a temp or spill file this
    process alone writes: whatever stood at that name (a stale file, a link, a hard link
    to another file) is unlinked, never written through or cut, and the file is created
    exclusively with no link followed."""
    path = Path(path)
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        raise AutocompError("a directory stands where a file autocomp writes should be: "
                            "remove it", file=path) from None
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    return os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"}))


def mark(path) -> None:
    """A marker file whose existence alone is read, created if missing; nothing is
    written or followed (a link standing there counts as there)."""
    import contextlib

    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666))


def bounded_lines(fh, name, limit: int = LINE_LIMIT) -> Iterator[str]:
    """The lines of a text file opened by open_regular, each read no further than `limit`
    characters: a 400 MB line in a predictions file took 820 MB to read. A longer line is
    one line naming the file and the line."""
    for number, line in enumerate(iter(lambda: fh.readline(limit + 1), ""), 1):
        if len(line) > limit:
            raise AutocompError(f"line {number} is over {limit:,} characters (a predictions "
                                "line is a few KB): not read", file=name)
        yield line


def read_small_json(path, limit: int = RESULT_LIMIT):
    """The JSON value of a regular file of at most `limit` bytes (OSError, ValueError)."""
    with open_regular(path, limit) as fh:
        return json.loads(fh.read())
