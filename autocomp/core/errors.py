"""One error type for bad user input: it names the file, the entry and the problem; and the
exit statuses a command ends with, so a job script can tell what may succeed if run again
(docs/pipeline.md, "Exit statuses"):

  0   done
  1   an error autocomp explains (bad input, a corrupt file): the same again fails alike
  2   a wrong option or argument (click's usage error)
  3   unfinished (`autocomp status --check`)
  4   held: another process or job is running a stage of this run
  70  crashed: an error autocomp did not foresee (a traceback): a retry may pass
  75  retry later: the disk is full, a server or a peer did not answer, the rendezvous
      timed out
  78  the configuration is refused
  80  refused for memory: the planned peak is larger than the GPU
  81  model weights missing (not in the cache, and the hub not reachable)
  82  out of GPU memory while running: the line names the batch size to try next (the same
      batch fails alike: not requeued)
  83  disk full: the line says how much free space the rest of the stage needs (a job may
      retry once: a scratch purge or a quota raised meanwhile)
"""

from __future__ import annotations


def disk_full(exc: OSError) -> bool:
    """Whether a failed write failed because the disk (or the user's quota, or the file size
    limit) is full."""
    import errno

    return exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def gpu_out_of_memory(exc: BaseException) -> bool:
    """Whether `exc` is the accelerator running out of memory (torch's OutOfMemoryError,
    or the RuntimeError older torch and some kernels raise), told apart without importing
    torch."""
    kind = type(exc)
    if kind.__name__ == "OutOfMemoryError" and kind.__module__.startswith("torch"):
        return True
    return isinstance(exc, RuntimeError) and "CUDA out of memory" in str(exc)


def plain(text) -> str:
    """`text` as one line of plain characters: terminal escapes and control characters
    (newlines included) become spaces, so a string read from a file cannot rewrite a log
    or a terminal when printed."""
    import re
    import unicodedata

    text = re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]", " ", str(text))
    return " ".join("".join(" " if unicodedata.category(c)[0] == "C" else c
                            for c in text).split())


class AutocompError(ValueError):
    """A problem with user input, reported as one line without a traceback."""

    exit_code = 1  # EXPLAINED: subclasses below say when another status fits

    def __init__(self, problem: str, *, file: object = None, entry: object = None,
                 field: str | None = None):
        self.problem = problem
        self.file = None if file is None else str(file)
        self.entry = entry
        self.field = field
        parts = [p for p in (self.file, None if entry is None else f"entry {entry}",
                             None if field is None else f"field {field}") if p]
        super().__init__(": ".join([*parts, problem]))


DONE, EXPLAINED, USAGE, UNFINISHED, HELD = 0, 1, 2, 3, 4
CRASHED, RETRY_LATER, CONFIG, MEMORY, WEIGHTS = 70, 75, 78, 80, 81
GPU_MEMORY, DISK_FULL = 82, 83
RETRYABLE = (CRASHED, RETRY_LATER)  # a job may requeue these; the others fail alike again
MEANING = {DONE: "done", EXPLAINED: "error", USAGE: "usage error", UNFINISHED: "unfinished",
           HELD: "held by another process", CRASHED: "crashed", RETRY_LATER: "retry later",
           CONFIG: "configuration refused", MEMORY: "refused for memory",
           WEIGHTS: "weights missing", GPU_MEMORY: "out of GPU memory",
           DISK_FULL: "disk full"}


class ConfigError(AutocompError):
    """A configuration, task or vocabulary file refused (the same file fails alike)."""

    exit_code = CONFIG


class MemoryRefused(AutocompError):
    """The planned GPU memory of a stage is larger than the card's."""

    exit_code = MEMORY


class WeightsMissing(AutocompError):
    """Model weights are not in the cache and the hub cannot be reached."""

    exit_code = WEIGHTS


class RetryLater(AutocompError):
    """A condition that may pass: a full disk, a server or peer that did not answer."""

    exit_code = RETRY_LATER


class GpuOutOfMemory(AutocompError):
    """The GPU ran out of memory on a batch: the same batch fails alike."""

    exit_code = GPU_MEMORY


class DiskFull(AutocompError):
    """The disk under the run is full, or too full for the rest of a stage."""

    exit_code = DISK_FULL


class Held(AutocompError):
    """Another process or job holds a lock this command needs."""

    exit_code = HELD


class Crashed(AutocompError):
    """An error autocomp did not foresee, reported from another process."""

    exit_code = CRASHED


def error_for(code: int, message: str, **where) -> AutocompError:
    """An AutocompError whose exit status is `code` (a launched worker's, say)."""
    kinds = {CONFIG: ConfigError, MEMORY: MemoryRefused, WEIGHTS: WeightsMissing,
             RETRY_LATER: RetryLater, HELD: Held, CRASHED: Crashed,
             GPU_MEMORY: GpuOutOfMemory, DISK_FULL: DiskFull}
    return kinds.get(code, AutocompError)(message, **where)


def exit_code(exc: BaseException) -> int:
    """The exit status a command ends with for `exc` (see the module's table)."""
    if isinstance(exc, AutocompError):
        return getattr(exc, "exit_code", EXPLAINED)
    if isinstance(exc, OSError) and disk_full(exc):
        return DISK_FULL
    if gpu_out_of_memory(exc):
        return GPU_MEMORY
    return CRASHED
