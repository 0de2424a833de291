"""autocomp/api.py: the Python functions take what a user would pass and refuse the rest in
one line."""

import pytest

from autocomp.core.errors import AutocompError


@pytest.mark.slow  # the demo run
def test_the_python_api_takes_what_a_user_would_pass(demo_run, tmp_path):
    """Issue 53: api.split took only a folder; api.evaluate read one spec as its letters
    and leaked Request.__init__ on a misspelt option; api.items did not list the names."""
    from conftest import copy_run

    from autocomp import api

    copy_run(demo_run, tmp_path / "demo")  # split() writes into the run
    run = api.open_run(tmp_path / "demo")
    with pytest.raises(AutocompError, match=r"unknown option\(s\) tie \(known: .*ties"):
        api.evaluate(run, "reference:oracle", tmp_path / "r", tie="argmax")
    got = api.evaluate(run, "reference:oracle", tmp_path / "r", "shape_color-n2/minimal-swap")
    assert {r["model"] for r in got} == {"reference:oracle"}
    with pytest.raises(AutocompError, match=r"no benchmark 'nope' \(benchmarks: shape_"):
        api.items(run, "nope")
    with pytest.raises(AutocompError, match="the run has no splits"):  # a Run: no TypeError
        api.split(run)
