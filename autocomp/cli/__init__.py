"""The `autocomp` command. Subcommands live in their own modules, imported only when run,
so `autocomp --help` stays fast and never imports heavy libraries."""

from __future__ import annotations

import importlib

import click

from autocomp import __version__
from autocomp.core.errors import (
    CRASHED,
    DISK_FULL,
    GPU_MEMORY,
    AutocompError,
    disk_full,
    exit_code,
    gpu_out_of_memory,
)

COMMANDS = {
    "run": ("autocomp.cli.run:run", "Run every stage of a run config; print the funnel."),
    "generate": ("autocomp.cli.run:generate", "Concepts, captions and images of a run."),
    "validate": ("autocomp.cli.run:validate", "Validate the images of a run."),
    "build": ("autocomp.cli.run:build", "Build a run's positive sets and benchmarks."),
    "status": ("autocomp.cli.status:status", "Progress and survival funnel of a run."),
    "eval": ("autocomp.cli.eval:eval_cmd", "Score models on a run's benchmarks (or SugarCrepe, "
             "CREPE, tables)."),
    "report": ("autocomp.cli.report:report", "Tables (Auto-Comp layouts) from eval results."),
    "leaderboard": ("autocomp.cli.leaderboard:leaderboard", "A static leaderboard page (and "
                    "its JSON) of results that pass the results schema."),
    "study": ("autocomp.cli.study:study", "A validity study: a models file on a run and on "
              "real benchmarks, their rank agreement (configs/studies/)."),
    "results": ("autocomp.cli.results:results", "Check results against the results schema "
                "(fields, provenance, predictions); verify a sample by re-scoring it."),
    "audit": ("autocomp.cli.audit:audit_cmd", "Blind scorers and caption anomalies per "
              "benchmark (runs, SugarCrepe, CREPE, tables)."),
    "split": ("autocomp.cli.split:split", "Train / val / test by concept; seen / unseen "
              "compounds and atoms of test concepts (against train or a caption corpus)."),
    "export": ("autocomp.cli.export:export", "Publish a run's benchmarks: a dataset folder with "
               "its card and harness adapters."),
    "compass": ("autocomp.cli.compass:compass", "COMPASS: composed vs decomposed, skill load."),
    "vocab": ("autocomp.cli.vocab:vocab", "List built-in vocabularies and tasks; check a file."),
    "concepts": ("autocomp.cli.concepts:concepts", "Sample concepts of a task into records."),
    "preview": ("autocomp.cli.preview:preview_cmd", "Show one concept, its caption and negatives."),
    "chance": ("autocomp.cli.chance:chance", "Chance levels of the built-in tasks (Table 4)."),
    "select": ("autocomp.cli.select:select", "Caption diversity and CLIPScore of runs side by "
               "side (Tables 15, 16)."),
    "t2i": ("autocomp.cli.t2i:t2i", "Score text-to-image models for faithfulness on a run's "
            "prompts (Table 16), each metric checked against exact truth."),
    "judges": ("autocomp.cli.judges:judges", "Answerers, detectors, the validation cascade "
               "and human judgments against a run's exact truth, per skill and N."),
    "review": ("autocomp.cli.review:review", "Human validation page for a run; --report for "
               "concordance and human accuracy (Tables 10, 17)."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return list(COMMANDS)

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        module, attr = COMMANDS[name][0].split(":")
        return getattr(importlib.import_module(module), attr)

    def format_commands(self, ctx, formatter):
        rows = [(name, help_) for name, (_, help_) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx):
        import logging
        import warnings

        from autocomp.core.log import ROOT, attach

        shown = logging.getLogger(ROOT)
        propagates = shown.propagate  # attach() stops it; given back when the command ends
        attach()  # the library's messages and progress lines, to standard error
        before, warnings.formatwarning = warnings.formatwarning, _one_line
        try:
            return super().invoke(ctx)
        except AutocompError as exc:  # its exit status says whether a retry can pass
            _record(exc)
            raise Explained(str(exc), exit_code(exc)) from None
        except BrokenPipeError:  # `autocomp ... | head`: the reader stopped, nothing failed
            _quiet_stdout()
            ctx.exit(141)  # 128 + SIGPIPE, as a shell command cut off by its reader
        except OSError as exc:
            _record(exc)
            if disk_full(exc):
                raise Explained(
                    f"disk full ({exc.strerror}{f': {exc.filename}' if exc.filename else ''})"
                    ": free some space and run the same command again; what was written "
                    "before is kept", DISK_FULL) from None
            _crashed(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:  # noqa: BLE001 (unforeseen: the traceback, then exit 70)
            _record(exc)
            if gpu_out_of_memory(exc):  # the same batch fails alike: not "crashed"
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
                raise Explained(f"out of GPU memory ({first}): run it again with a smaller "
                                "batch (the command's batch option or the config's); what "
                                "was finished is kept", GPU_MEMORY) from None
            _crashed(ctx)
        except KeyboardInterrupt:
            click.echo("\nInterrupted: what was finished is kept; run the same command "
                       "again to resume where it stopped.", err=True)
            ctx.exit(130)
        finally:
            warnings.formatwarning = before
            shown.propagate = propagates


def _quiet_stdout() -> None:
    """Standard output pointed at /dev/null, so the interpreter's last flush into the
    closed pipe prints nothing either."""
    import contextlib
    import os
    import sys

    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


class Explained(click.ClickException):
    """An error autocomp explains, in one line, with the exit status its class has
    (core/errors.py: 1, or 75 retry later, 78 configuration, 80 memory, 81 weights)."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.exit_code = code


def _record(exc: BaseException) -> None:
    """Under a job script ($AUTOCOMP_FAILURES names the run, $AUTOCOMP_LAUNCH this step),
    a command's failure is recorded as a launched worker's is, so the script can tell the
    same failure in two launches (a deterministic crash) from a passing one."""
    import os

    folder = os.environ.get("AUTOCOMP_FAILURES")
    if folder and os.environ.get("AUTOCOMP_LAUNCH"):
        from autocomp.runtime.failures import record

        record(folder, exc)


def _crashed(ctx) -> None:
    """An error autocomp did not foresee: its traceback, then exit 70 (a job may retry)."""
    import traceback

    traceback.print_exc()
    click.echo(f"autocomp: crashed (exit {CRASHED}): an unforeseen error, above; running "
               "the same command again may pass, and resumes where it stopped", err=True)
    ctx.exit(CRASHED)


def _one_line(message, category, filename, lineno, line=None) -> str:
    """Warnings on the command line: "warning: <message>", without source lines."""
    return f"warning: {message}\n"


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="autocomp")
def main():
    """autocomp: controlled compositional image-caption benchmarks for vision-language models."""
