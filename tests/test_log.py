"""core/log.py: one line per message whatever a library does to the root logger, and
logging given back as it was after a command."""

import subprocess
import sys

from click.testing import CliRunner

from autocomp.cli import main


def test_a_library_configuring_the_root_logger_does_not_double_the_lines(tmp_path):
    """open_clip calls logging.basicConfig: each of autocomp's lines was printed twice."""
    code = ("import logging, sys\n"
            "from autocomp.core.log import attach, package_logger\n"
            "attach()\n"
            "logging.basicConfig(level=logging.INFO)  # what a library does\n"
            "package_logger('autocomp.eval.cells').info('one line')\n")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert got.stderr.splitlines() == ["one line"], got.stderr


def test_a_command_gives_the_log_propagation_back(caplog):
    """The CLI keeps its lines single while a command runs, then leaves logging as it was:
    a caller's own handlers (pytest's caplog too) see autocomp's records again."""
    import logging

    from autocomp.core.log import package_logger

    CliRunner().invoke(main, ["vocab", "list"])
    assert logging.getLogger("autocomp").propagate
    with caplog.at_level("INFO", logger="autocomp"):
        package_logger("autocomp.eval.cells").info("seen by the caller")
    assert "seen by the caller" in caplog.text
