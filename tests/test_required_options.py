"""Every command's required options: left out, click's one-line usage error (exit 2), never
a traceback. click >= 8.2 does not enforce `required` on an option with an explicit
`default=None`, which once let `compass build`, `export` and `concepts` run without -o."""

import click
import pytest
from click.testing import CliRunner

from autocomp.cli import main


def _commands(group=main, prefix=()):
    ctx = click.Context(group, info_name="autocomp")
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*prefix, name))
        else:
            yield (*prefix, name), cmd


def _value(param, folder) -> list[str]:
    kind = param.type
    if isinstance(kind, click.Choice):
        return [str(kind.choices[0])]
    if isinstance(kind, (click.IntRange, click.FloatRange)) or kind in (click.INT, click.FLOAT):
        return ["1"]
    return [str(folder)]


CASES = [(path, cmd, p.name) for path, cmd in _commands() for p in cmd.params
         if isinstance(p, click.Option) and p.required]


def test_some_commands_have_required_options():
    names = {(" ".join(path), opt) for path, _, opt in CASES}
    assert {("export", "output"), ("compass build", "output"), ("concepts", "output")} <= names


@pytest.mark.parametrize("path,cmd,missing", CASES,
                         ids=[f"{' '.join(p)}:{o}" for p, _, o in CASES])
def test_a_missing_required_option_is_clicks_one_line(path, cmd, missing, tmp_path):
    args = list(path)
    for p in cmd.params:
        if isinstance(p, click.Argument) and p.required:
            args += _value(p, tmp_path)
        elif isinstance(p, click.Option) and p.required and p.name != missing:
            args += [p.opts[0], *_value(p, tmp_path)]
    got = CliRunner().invoke(main, args)
    assert got.exit_code == 2, (args, got.output, got.exception)
    assert "Missing option" in got.output and "Traceback" not in got.output
