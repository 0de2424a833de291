"""The house plan holds: imports go only down the layers of docs/architecture.md (the
contract in pyproject.toml), no package or module
imports its way back to itself, and neither contract has an ignore list."""

import subprocess
import sys
from pathlib import Path

try:

    import tomllib

except ModuleNotFoundError:  # Python 3.10

    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_import_linter_contracts_are_kept():
    code = "from importlinter.cli import lint_imports_command; lint_imports_command()"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "3 kept, 0 broken" in proc.stdout


def test_contracts_have_no_ignore_lists():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contracts = config["contracts"]
    assert {c["type"] for c in contracts} == {"layers", "acyclic_siblings"}
    assert not any("ignore_imports" in c for c in contracts)
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    assert layers[0] == "autocomp.cli | autocomp.api" and layers[-1] == "autocomp.core"


def test_the_architecture_diagram_is_the_contract():
    """docs/architecture.md draws one row per layer of the contract, in its order, naming
    exactly that layer's modules (a row is a line starting in the first column)."""
    import re

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    want = [sorted(m.strip().removeprefix("autocomp.") for m in line.split("|"))
            for line in layers]
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = re.search(r"```\n(cli/ .*?)```", text, re.S).group(1)
    rows = []
    for line in block.splitlines():
        if line and not line.startswith(" "):
            names = re.match(r"((?:[\w]+(?:/|\.py)\s+)+?)\s{2,}", line + "  ").group(1)
            rows.append(sorted(n.removesuffix("/").removesuffix(".py") for n in names.split()))
    assert rows == want
