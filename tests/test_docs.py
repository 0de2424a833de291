"""Every command shown in README.md and docs/*.md is run by this test.

- Blocks fenced `bash` run in order, one bash process per file (so `export` lines hold for
  the rest of the file), in a scratch folder of the file's own, beside links to the
  repository's configs/, scripts/ and docs/ and a copy of each shipped run it names (runs/demo,
  runs/winoground: built once per test run). A block whose first line is `# file: NAME`
  (any language) is written to NAME there before the commands after it run; `# file: NAME
  (one more line)` appends.
- A block fenced `text` right after a `bash` block is output the guide shows: every line of
  it must appear in what the file's commands print (a line ending in `...` is matched up to
  there). Every file with commands to run shows some.
- Blocks fenced `sh` need GPUs, model weights or outside data: each `autocomp` command in
  them is parsed by the CLI (the command and every option must exist), each script they
  name must exist.
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
FILE = re.compile(r"^# file: (\S+)( \(one more line\))?\s*$")


def blocks(path: Path) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(path.read_text(encoding="utf-8"))]


def commands(body: str) -> list[str]:
    """The block's command lines: continuations joined, comments dropped."""
    out, line = [], ""
    for raw in body.splitlines():
        line += raw.rstrip()
        if line.endswith("\\"):
            line = line[:-1] + " "
            continue
        text = line.split(" #")[0].strip()
        if text and not text.startswith("#"):
            out.append(text)
        line = ""
    return out


def script(path: Path) -> str:
    """The file's `bash` blocks and `# file:` blocks as one bash script."""
    lines = ["set -euo pipefail"]
    for lang, body in blocks(path):
        first, _, rest = body.partition("\n")
        named = FILE.match(first)
        if named:
            mode = ">>" if named.group(2) else ">"
            lines.append(f"cat {mode} {shlex.quote(named.group(1))} <<'AUTOCOMP_DOC_EOF'\n"
                         f"{rest}AUTOCOMP_DOC_EOF")
        elif lang == "bash":
            lines.append(body)
    return "\n".join(lines) + "\n"


def shown_output(path: Path) -> list[str]:
    """The lines of the `text` blocks that follow a `bash` block: output the guide shows."""
    found, lines = blocks(path), []
    for (before, _), (lang, body) in zip(found, found[1:], strict=False):
        if lang == "text" and before == "bash":
            lines += [line.strip() for line in body.splitlines() if line.strip()]
    return lines


SHIPPED = ("demo", "winoground")  # runs of configs/ the test run builds once (conftest.py)


@pytest.fixture
def scratch(tmp_path, request):
    """A folder with links to configs/ and scripts/ and a copy of each shipped run the
    guide names (runs/demo, runs/winoground): its `autocomp run` of them resumes a done run,
    as it does after README's first command."""
    from conftest import copy_run

    for name in ("configs", "scripts", "docs"):  # docs/measured: files a guide reads
        (tmp_path / name).symlink_to(ROOT / name)
    text = script(request.getfixturevalue("path"))  # the guide this scratch is for
    for name in SHIPPED:
        if f"runs/{name}" in text:
            copy_run(request.getfixturevalue(f"{name}_run"), tmp_path / "runs" / name)
    return tmp_path


def _bash(text: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("AUTOCOMP_PLUGINS", None)
    proc = subprocess.run(["bash", "-c", text], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    return proc


RUN = [p for p in DOCS if any(lang == "bash" for lang, _ in blocks(p))]


@pytest.mark.slow
@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_bash_blocks_run(path, request):
    if path not in RUN:
        pytest.skip(f"{path.name} shows no command to run")
    scratch = request.getfixturevalue("scratch")
    shown = shown_output(path)
    assert shown, f"{path.name} runs commands but shows none of their output (a text block)"
    proc = _bash(script(path), scratch)
    printed = [line.strip() for line in (proc.stdout + proc.stderr).splitlines()]
    for line in shown:
        if line.endswith("..."):
            assert any(p.startswith(line[:-3].rstrip()) for p in printed), (path.name, line)
        else:
            assert line in printed, (path.name, line, proc.stdout[-3000:])


def test_guides_without_commands_are_the_reference_pages():
    """The pages that run nothing are reference text; every guide runs its commands."""
    assert sorted(p.name for p in DOCS if p not in RUN) == [
        "differences.md", "methods.md", "review.md"]


def _parse(words: list[str]) -> None:
    """Resolve `autocomp ...` to its command and parse the options (values unchecked)."""
    from autocomp.cli import main

    cmd, args, name = main, list(words), "autocomp"
    while isinstance(cmd, click.Group):
        ctx = click.Context(cmd, info_name=name)
        name, args = args[0], args[1:]
        sub = cmd.get_command(ctx, name)
        assert sub is not None, f"no command '{name}' in {' '.join(words)}"
        cmd = sub
    ctx = click.Context(cmd, info_name=name)
    cmd.make_parser(ctx).parse_args(args)  # unknown options raise; values are not converted


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_sh_blocks_parse(path):
    shown = [c for lang, body in blocks(path) if lang == "sh" for c in commands(body)]
    for line in shown:
        for part in line.split("&&"):
            words = [w for w in shlex.split(part) if not re.match(r"^[A-Z_]+=", w)]
            at = next((i for i, w in enumerate(words)
                       if w == "autocomp" or w.endswith("/autocomp")), None)
            if at is not None:  # also `accelerate launch ... -m autocomp eval ...`
                _parse(words[at + 1:])
            elif any(w.endswith((".py", ".sh", ".sbatch")) for w in words):
                named = next(w for w in words if w.endswith((".py", ".sh", ".sbatch")))
                assert (ROOT / named).is_file(), f"{path.name}: no {named}"


def test_parsing_catches_an_unknown_option():
    with pytest.raises(click.NoSuchOption):
        _parse(["eval", "runs/x", "--format", "run"])
    with pytest.raises(AssertionError, match="no command"):
        _parse(["evaluate", "runs/x"])


def test_every_doc_page_is_linked_from_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"docs/{page.name}" in readme, page.name
    assert len(readme.splitlines()) <= 200


def test_references_point_inside_the_repository():
    """The code and docs cite docs/methods.md by section (each section exists) and never
    files outside the repository (the team's shared notes)."""
    methods = (ROOT / "docs" / "methods.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^## (\d+)\. ", methods, re.M))
    files = [*sorted((ROOT / "autocomp").rglob("*.py")), *DOCS, ROOT / "pyproject.toml"]
    cited = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\b(METHODS|DESIGN)\.md|\.\./shared", text), path
        for number in re.findall(r"methods\.md\s+section\s+(\d+)", text):
            assert number in sections, (path, number)
            cited += 1
    assert cited >= 5


def test_the_result_file_name_shown_is_the_real_one():
    from autocomp.eval.cells import result_file

    text = (ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8")
    shown, spec, bench = re.search(r"e\.g\. `(RESULTS/\S+?\.json)` for `(\S+?)` on `(\S+?)`",
                                   text).groups()
    assert str(result_file("RESULTS", spec, bench)) == shown
