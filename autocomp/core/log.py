"""Messages and progress lines go through `logging`: one logger per package
("autocomp.eval", "autocomp.compass", ...: `package_logger(__name__)`), children of
"autocomp", and "autocomp.progress" for the lines of core/progress.py. The library
attaches no handler of its own (a NullHandler: a Python user sees what their logging
configuration shows); the CLI attaches `LineHandler` when a command starts: each record's
message, one line, to standard error, so a command's results on standard output stay
clean for pipes and --json.
"""

from __future__ import annotations

import logging
import sys

ROOT = "autocomp"
logging.getLogger(ROOT).addHandler(logging.NullHandler())


def package_logger(module: str) -> logging.Logger:
    """The logger of a module's package: "autocomp.eval.cells" -> "autocomp.eval"."""
    return logging.getLogger(".".join(module.split(".")[:2]))


class LineHandler(logging.Handler):
    """The message alone, to the standard error of the moment (a test runner may swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(record.getMessage() + "\n")
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 (logging's own rule: a handler never raises)
            self.handleError(record)


def attach(level: int = logging.INFO) -> None:
    """Show autocomp's records at `level` and above on standard error (once per process:
    a second call replaces the first handler)."""
    root = logging.getLogger(ROOT)
    for handler in [h for h in root.handlers if isinstance(h, LineHandler)]:
        root.removeHandler(handler)
    root.addHandler(LineHandler(level))
    root.setLevel(min(level, root.level or level))
    # the CLI's lines are shown here alone: a library that configures the root logger
    # (open_clip's logging.basicConfig) must not print each of them a second time
    root.propagate = False
